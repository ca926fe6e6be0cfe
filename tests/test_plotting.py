"""The figure style's legibility rule and the static explorer (sliders without a kernel)."""
import base64
import json
import math
import re

import matplotlib
import matplotlib.text

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dpmia import plotting  # noqa: E402

plotting.use_style()


def _fig(width, ncols=1, fontsize=None):
    fig, axs = plt.subplots(1, ncols, figsize=(width, 3.0))
    for ax in np.atleast_1d(axs):
        ax.plot([0, 1], [0, 1], label="a line")
        ax.legend(fontsize=fontsize)
    return fig


def test_text_px_follows_the_display_scale():
    # 9-point legend at natural size: 9 * 96/72 = 12 px; a 14-inch figure is shown at 688/1344 of it
    narrow, wide = _fig(6.0, fontsize=9), _fig(14.0, fontsize=9)
    assert plotting.text_px(narrow) == pytest.approx(12.0)
    assert plotting.text_px(wide) == pytest.approx(12.0 * plotting.COLUMN_PX / (14.0 * 96))
    assert plotting.check_legible(narrow) == pytest.approx(12.0)
    with pytest.raises(ValueError, match="px on screen"):
        plotting.check_legible(wide)
    plt.close("all")


def test_at_most_two_panels_a_row():
    with pytest.raises(ValueError, match="3 panels in a row"):
        plotting.check_legible(_fig(7.0, ncols=3))
    fig, axs = plt.subplots(2, 2, figsize=(7.0, 6.0))
    assert plotting.check_legible(fig) >= plotting.MIN_TEXT_PX
    inset = axs[0, 0].inset_axes([0.5, 0.5, 0.4, 0.4])
    inset.plot([0, 1])
    assert plotting.check_legible(fig) >= plotting.MIN_TEXT_PX   # an inset is not a panel
    plt.close("all")


def _draw(a, b):
    fig, ax = plotting.widget_figure(figsize=(5.0, 3.0))
    ax.plot([0, 1], [0, a * b])
    ax.set_title(f"a = {a}, b = {b}")
    return fig, f"product {a * b}"


def test_static_explorer_frames_and_page():
    ex = plotting.static_explorer(_draw, {"a": ("a", [1, 2, 3]), "b": ("b", [10, 20])},
                                  initial={"a": 2, "b": 20}, title="demo")
    assert len(ex.frames) == 6 and ex.texts[0] == "product 10" and ex.texts[-1] == "product 60"
    assert ex.initial == [1, 1] and ex.min_text_px >= plotting.MIN_TEXT_PX
    svg = base64.b64decode(ex.frames[3]).decode()   # row-major: a = 2, b = 20
    assert svg.lstrip().startswith("<?xml") and "<!-- a = 2, b = 20 -->" in svg and "<text" not in svg
    page = ex._repr_html_()
    assert page.count('type="range"') == 2 and 'value="1"' in page and "<script>" in page
    assert not re.search(r'(src|href)="(https?:)?//', page)           # nothing fetched from outside
    payload = re.search(r'<script type="application/json" class="dpmia-frames">(.*?)</script>', page).group(1)
    data = json.loads(payload.replace("<\\/", "</"))
    assert data["sizes"] == [3, 2] and data["labels"] == [["1", "2", "3"], ["10", "20"]]
    assert ex._repr_png_().startswith(b"\x89PNG")                    # the PDF shows the starting frame
    assert ex._repr_html_() == page                                   # the same page every build
    # the width at which the smallest text (the figure's, in points) is MIN_TEXT_PX on screen: kept on a phone
    fig = _draw(1, 10)[0]
    fig.draw_without_rendering()
    smallest = min(t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip())
    want = fig.get_figwidth() * 96 * plotting.MIN_TEXT_PX / (smallest * 96 / 72)
    plt.close(fig)
    assert ex.legible_px == pytest.approx(want) and want < plotting.COLUMN_PX
    assert f'style="min-width: {math.ceil(want)}px"' in page and "dpmia-explorer-scroll" in page


def test_static_explorer_fast_keeps_two_values():
    ex = plotting.static_explorer(_draw, {"a": ("a", [1, 2, 3]), "b": ("b", [10, 20])},
                                  initial={"a": 2}, fast=True)
    assert ex.values == [[2, 3], [10, 20]] and len(ex.frames) == 4


def test_static_explorer_bad_input():
    ok = {"a": ("a", [1, 2])}
    with pytest.raises(TypeError, match="draw"):
        plotting.static_explorer(42, ok)
    with pytest.raises(ValueError, match="sliders"):
        plotting.static_explorer(_draw, {})
    with pytest.raises(ValueError, match=r"sliders\['a'\]"):
        plotting.static_explorer(_draw, {"a": [1, 2]})
    with pytest.raises(ValueError, match="initial"):
        plotting.static_explorer(_draw, {"a": ("a", [1]), "b": ("b", [1])}, initial={"a": 5})
    with pytest.raises(ValueError, match="max_frames"):
        plotting.static_explorer(_draw, {"a": ("a", range(30)), "b": ("b", range(30))})
    with pytest.raises(TypeError, match="Figure"):
        plotting.static_explorer(lambda a: None, ok)
    with pytest.raises(ValueError, match="panels in a row"):
        plotting.static_explorer(lambda a: plt.subplots(1, 3, figsize=(7, 3))[0], ok)
    assert plt.get_fignums() == []                                    # no figure left open


def test_widget_figures_are_png_only_figures():
    fig, ax = plotting.widget_figure()
    assert isinstance(fig, plotting.WidgetFigure)
    plt.close(fig)


def test_widget_png_records_its_smallest_text():
    import re
    fig, ax = plotting.widget_figure(figsize=(5.0, 3.0))
    ax.plot([0, 1], [0, 1], label="x")
    ax.legend(fontsize=8)
    png = plotting.widget_png(fig)
    assert png.startswith(b"\x89PNG") and png.endswith(b"IEND\xaeB`\x82")
    m = re.search(rb"tEXtComment\x00dpmia min-text-pt=([\d.]+) dpi=([\d.]+)", png)
    assert m and float(m.group(1)) == 8.0 and float(m.group(2)) == fig.dpi
    import io

    from PIL import Image
    Image.open(io.BytesIO(png)).verify()          # the chunk keeps the file valid (CRC)
    plt.close(fig)
