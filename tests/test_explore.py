"""Explorers that work on the static page, in JupyterLab and in the PDF from one draw function."""
import base64
import contextlib
import io

import ipywidgets as widgets
import pytest

from dpmia import explore, plotting


def draw(a=1.0, kind="line"):
    fig, ax = plotting.widget_figure(figsize=(4.0, 3.0))
    ax.plot([0, 1], [0, a] if kind == "line" else [a, a])
    return fig, f"a = {a}, {kind}"


def build(**kw):
    with contextlib.redirect_stdout(io.StringIO()):
        return explore.explorer(draw, {"a": ("a", [1.0, 2.0, 3.0]), "kind": ("kind", ["line", "flat"])}, **kw)


def test_one_output_for_page_lab_and_pdf():
    ex = build(initial={"a": 2.0, "kind": "flat"}, live={"a": (0.0, 5.0, 0.5)}, title="t")
    b = ex._repr_mimebundle_()
    assert set(b) == {"text/plain", "text/html", "image/png", "application/vnd.jupyter.widget-view+json"}
    assert 'class="dpmia-explorer"' in b["text/html"] and len(ex.static.frames) == 6
    assert base64.b64decode(b["image/png"])[:4] == b"\x89PNG"
    a_ctl, kind_ctl = ex.widget.kwargs_widgets
    assert isinstance(a_ctl, widgets.FloatSlider) and (a_ctl.min, a_ctl.max, a_ctl.value) == (0.0, 5.0, 2.0)
    assert isinstance(kind_ctl, widgets.Dropdown) and kind_ctl.value == "flat"


def test_text_only_explorer_and_its_plain_text():
    with contextlib.redirect_stdout(io.StringIO()):
        ex = explore.explorer(lambda n=1: f"n = {n}", {"n": ("n", [1, 2])})
    assert ex.static.frames == ["", ""] and ex.static.texts == ["n = 1", "n = 2"]
    assert ex._repr_mimebundle_()["text/plain"] == "n = 1" and "image/png" not in ex._repr_mimebundle_()


def test_bad_live_ranges_are_refused():
    with pytest.raises(ValueError, match="live names unknown"):
        build(live={"b": (0, 1, 0.1)})
    with pytest.raises(ValueError, match=r"live\['a'\] must be"):
        build(live={"a": (1.0, 0.0, 0.1)})


def test_kernel_only_widget_is_inactive_on_the_page():
    w = widgets.interactive(lambda x=1: x, {"manual": True}, x=widgets.IntSlider(description="x"))
    k = explore.needs_kernel(w, "The run")
    b = k._repr_mimebundle_()
    assert 'aria-disabled="true"' in b["text/html"] and explore.BINDER_URL in b["text/html"]
    assert ">x<" in b["text/html"] and "application/vnd.jupyter.widget-view+json" in b
    with pytest.raises(ValueError, match="what"):
        explore.needs_kernel(w, " ")
