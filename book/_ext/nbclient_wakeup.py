"""Repair a lost wake-up in nbclient's Output-widget handling (nbclient issue #312).

Symptom: executing a chapter headlessly (jupyter-book, papermill, nbconvert) sometimes "hangs" in
an ``interact`` cell for exactly the execution timeout (forever without one), then completes;
the kernel is idle and the client waits.

Cause: while nbclient awaits a cell's ``execute_reply`` on the shell socket, its stand-in for the
ipywidgets Output widget answers each captured output with a ``comm_msg`` sent on that same
socket. jupyter_client's ``Session.send`` sends through a blocking shadow of the ``zmq.asyncio``
socket; libzmq processes the socket's pending notifications during that send and consumes the
edge-triggered signal of an ``execute_reply`` that has just arrived, so pyzmq's asyncio poller is
never woken. Measured: 7 of 27 chapter runs stalled before this repair, 0 of 50 after.

Repair: after the stand-in sends, read ``EVENTS`` through the asyncio socket; pyzmq then
re-checks the socket and wakes the pending poll (``zmq.asyncio.Socket.get(EVENTS)``). Applied by
the book's Sphinx extension (jupyter-book executes the chapters in its own process) and by the
tests' conftest (papermill runs inside pytest). From the shell, run papermill through this module:

    python book/_ext/nbclient_wakeup.py IN.ipynb OUT.ipynb -p FAST True --execution-timeout 600
"""
import sys

import zmq
import zmq.asyncio


def apply() -> None:
    """Patch nbclient's OutputWidget so that every send it makes re-arms the shell poller."""
    from nbclient import output_widget

    cls = output_widget.OutputWidget
    if getattr(cls._publish_msg, "_dpmia_rearm", False):
        return
    original = cls._publish_msg

    def _publish_msg(self, *args, **kwargs):
        original(self, *args, **kwargs)
        sock = self.kernel_client.shell_channel.socket
        if isinstance(sock, zmq.asyncio.Socket) and not sock.closed:
            sock.get(zmq.EVENTS)  # wakes a poll whose notification the blocking send consumed

    _publish_msg._dpmia_rearm = True
    cls._publish_msg = _publish_msg


if __name__ == "__main__":
    apply()
    from papermill.cli import papermill

    sys.exit(papermill())
