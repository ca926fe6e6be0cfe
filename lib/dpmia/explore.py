r"""Explorers that work wherever the book is read: one ``draw`` function and one grid of slider values give both
the static explorer (frames drawn at build time: the site, offline, the PDF's figure) and the live widget
(JupyterLab, Binder), in one output.

An :class:`Explorer` displays as a single output with several representations: the live ipywidget (which
JupyterLab prefers), the static explorer's HTML (which the site prefers: its ``_config.yml`` ranks ``text/html``
above widget views) and the starting frame as PNG (which the PDF takes). A control on the page therefore either
works without a kernel or is not there.

:func:`needs_kernel` does the same for a widget that cannot be precomputed (a calibration button, a Monte Carlo
run): JupyterLab shows the widget; the site and the PDF show it greyed out, with a one-line notice that it runs
in JupyterLab or Binder and the launch link, never as a control that moves while nothing happens.
"""

from __future__ import annotations

import base64
import html

from . import plotting

__all__ = ["explorer", "needs_kernel", "Explorer", "KernelOnly", "BINDER_URL"]

#: Where "runs in Lab/Binder" notices point: the repository's Binder launch (the site's rocket button).
BINDER_URL = "https://mybinder.org/v2/gh/dpmia-book/what-does-epsilon-say/main?urlpath=lab"


class Explorer:
    """One explorer, static and live (made by :func:`explorer`); ``static`` is the
    :class:`~dpmia.plotting.StaticExplorer`, ``widget`` the live ipywidget (``None`` without ipywidgets)."""

    def __init__(self, static, widget):
        self.static, self.widget = static, widget

    def _repr_mimebundle_(self, include=None, exclude=None):
        first = self.static.texts[_start_index(self.static)]
        # text/plain is what a reader without the page's script sees of a text-only explorer (the PDF)
        plain = first if self.static.png is None and first else repr(self.static)
        bundle = {"text/plain": plain, "text/html": self.static._repr_html_()}
        if self.static.png is not None:
            bundle["image/png"] = base64.b64encode(self.static.png).decode("ascii")
        if self.widget is not None:
            view = self.widget._repr_mimebundle_()
            bundle.update({k: v for k, v in view.items() if k != "text/plain"})
        return bundle

    def __repr__(self) -> str:
        return f"Explorer({self.static!r})"


def _start_index(static):
    """Index of the starting frame (the sliders' starting values, last slider fastest)."""
    k = 0
    for vals, i in zip(static.values, static.initial):
        k = k * len(vals) + i
    return k


def _live_control(label, values, live):
    """The live widget's control: a slider over ``live = (min, max, step)`` if given, else over the grid's values."""
    import ipywidgets as widgets

    first = values[0]
    if isinstance(first, bool):
        return widgets.Checkbox(value=first, description=label)
    if isinstance(first, str):
        return widgets.Dropdown(options=values, value=first, description=label)
    if live is not None:
        lo, hi, step = live
        cls = widgets.IntSlider if all(isinstance(x, int) for x in (lo, hi, step)) else widgets.FloatSlider
        return cls(value=first, min=lo, max=hi, step=step, continuous_update=False, description=label)
    return widgets.SelectionSlider(options=list(values), value=first, continuous_update=False, description=label)


def explorer(draw, sliders, *, initial=None, title=None, live=None, fast=False, max_frames=200,
             max_bytes=3_000_000) -> Explorer:
    """The static explorer of ``draw`` over the grid ``sliders`` (:func:`dpmia.plotting.static_explorer`, same
    arguments) and its live widget, displayed as one output (module docstring). ``live`` maps slider names to
    ``(min, max, step)`` ranges for the live widget (default: the grid's own values); it starts at ``initial``.
    The live callback shows the figure and its text line.

    Examples
    --------
    >>> from dpmia import explore, plotting
    >>> def draw(a=1.0):
    ...     fig, ax = plotting.widget_figure(figsize=(4.0, 3.0))
    ...     ax.plot([0, 1], [0, a])
    ...     return fig
    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):    # (outside a notebook the live callback prints)
    ...     ex = explore.explorer(draw, {"a": ("a", [1.0, 2.0])}, live={"a": (0.0, 3.0, 0.1)})
    >>> sorted(ex._repr_mimebundle_())[:3]
    ['application/vnd.jupyter.widget-view+json', 'image/png', 'text/html']
    """
    static = plotting.static_explorer(draw, sliders, initial=initial, title=title, fast=fast,
                                      max_frames=max_frames, max_bytes=max_bytes)
    try:
        import ipywidgets as widgets
    except ImportError:  # pragma: no cover - ipywidgets is a runtime dependency
        return Explorer(static, None)
    import matplotlib.pyplot as plt

    live = dict(live or {})
    unknown = set(live) - set(static.names)
    if unknown:
        raise ValueError(f"live names unknown sliders: {sorted(unknown)}")
    controls = {}
    for name, label, vals, i in zip(static.names, static.labels, static.values, static.initial):
        rng = live.get(name)
        if rng is not None and not (isinstance(rng, tuple) and len(rng) == 3 and rng[0] < rng[1] and rng[2] > 0):
            raise ValueError(f"live[{name!r}] must be (min, max, step) with min < max and step > 0, got {rng!r}")
        c = _live_control(label, vals, rng)
        c.value = vals[i]
        controls[name] = c

    def show(**kw):
        out = draw(**kw)
        text = out if isinstance(out, str) else (out[1] if isinstance(out, tuple) else "")
        if not isinstance(out, str):
            plt.show()
        if text:
            print(text)

    widget = widgets.interactive(show, **controls)
    if title:
        widget.children = (widgets.HTML(f"<b>{html.escape(title)}</b>"),) + tuple(widget.children)
    return Explorer(static, widget)


class KernelOnly:
    """A widget that needs a running kernel (made by :func:`needs_kernel`)."""

    def __init__(self, widget, what, labels):
        self.widget, self.what, self.labels = widget, what, labels

    def _html(self) -> str:
        rows = "".join(f'<span class="dpmia-inactive-control">{html.escape(lab)}</span>' for lab in self.labels)
        return (f'<div class="dpmia-inactive" aria-disabled="true"><div class="dpmia-inactive-controls">{rows}</div>'
                f'<p class="dpmia-inactive-note">{html.escape(self.what)} runs in JupyterLab or Binder: '
                f'<a href="{BINDER_URL}">launch it on Binder</a>, or open this chapter with <code>make lab</code>.'
                f'</p></div>')

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": f"[{self.what}: runs in JupyterLab or Binder]", "text/html": self._html()}
        if self.widget is not None:
            view = self.widget._repr_mimebundle_()
            bundle.update({k: v for k, v in view.items() if k != "text/plain"})
        return bundle


def needs_kernel(widget, what) -> KernelOnly:
    """``widget`` shown live in JupyterLab and, on the static site and in the PDF, as a greyed box naming its
    controls with the notice "``what`` runs in JupyterLab or Binder" and the launch link.

    Examples
    --------
    >>> import ipywidgets as widgets
    >>> from dpmia import explore
    >>> k = explore.needs_kernel(widgets.Button(description="calibrate"), "The calibration")
    >>> "runs in JupyterLab or Binder" in k._repr_mimebundle_()["text/html"]
    True
    """
    if not isinstance(what, str) or not what.strip():
        raise ValueError("what must name the widget's task (e.g. 'The calibration')")
    labels = []

    def walk(w):
        desc = getattr(w, "description", "")
        if desc:
            labels.append(desc)
        for c in getattr(w, "children", ()):
            walk(c)
    walk(widget)
    return KernelOnly(widget, what.strip(), labels or [what.strip()])

