"""One visual style for every chapter, and the plots chapters share.

Call :func:`use_style` once at the top of a chapter. Colours have fixed meanings across the
book (``COLORS``): the exact/tight quantity, a generic DP bound, a simulated attack, and a
value printed in a paper.

**Legible in the page.** The book's text column is :data:`COLUMN_PX` CSS pixels wide in a 1280-px
browser window; a wider figure is scaled down to it. :func:`check_legible` computes the smallest
text of a figure *as displayed* and refuses one below :data:`MIN_TEXT_PX` or with more than two
panels in a row. Figures are SVG (glyphs as outlines, each text's size recorded in its transform, so
the browser test can measure every label), and PNG for the PDF.

**Explorers without a kernel.** :func:`static_explorer` draws a figure on a grid of slider values
once, at build time, and returns HTML with range sliders and a few lines of local JavaScript that
switch between the frames, so a reader of the static page can move them (the live ipywidgets
explorer needs a running kernel: Binder or JupyterLab).
"""

from __future__ import annotations

import math
import re

import numpy as np
from matplotlib.figure import Figure

__all__ = ["COLORS", "use_style", "tradeoff_axes", "roc_axes", "plot_curve", "plot_band",
           "mark_paper_value", "widget_figure", "lighten", "COLUMN_PX", "MIN_TEXT_PX", "text_px",
           "check_legible", "static_explorer", "StaticExplorer", "WidgetFigure", "widget_png"]


class WidgetFigure(Figure):
    """A figure drawn by a widget callback (:func:`widget_figure`): a notebook shows it as PNG only
    (:func:`widget_png`, which renders faster than SVG, so a slider move stays quick)."""

#: Width of the book's text column in CSS pixels at a 1280-px window (checked by the browser test).
COLUMN_PX = 688
#: Smallest text a figure may show on screen, in CSS pixels.
MIN_TEXT_PX = 9.0
#: CSS pixels per inch: an SVG figure W inches wide is displayed 96·W pixels wide (at most the column).
CSS_PX_PER_INCH = 96.0

COLORS = {
    "exact": "#1f4e9e",      # tight / exact quantity
    "bound": "#c0392b",      # a generic DP bound
    "bound2": "#e67e22",     # a second bound
    "bound3": "#8e44ad",     # a third bound
    "empirical": "#2e8b57",  # simulated attack
    "paper": "#111111",      # value printed in a paper
    "neutral": "#888888",    # chance line, guides
}

_STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 10.5,
    "axes.titlesize": 11,
    "axes.labelsize": 10.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 9,
    "lines.linewidth": 1.8,
    "figure.constrained_layout.use": True,
    "svg.fonttype": "path",      # glyphs as outlines: identical in every browser (no font needed)
    "svg.hashsalt": "dpmia",     # the same element ids in every build
}


def use_style() -> None:
    """Apply the book's matplotlib style (idempotent).

    In a notebook, figures are emitted as SVG (shown in the HTML book) and PNG (used by the PDF
    build); widget figures (:class:`WidgetFigure`) as PNG only.
    """
    import matplotlib as mpl

    mpl.rcParams.update(_STYLE)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with every notebook environment
        return
    ip = get_ipython()
    if ip is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("svg", "png")
        ip.display_formatter.formatters["image/svg+xml"].for_type(WidgetFigure, lambda fig: None)
        ip.display_formatter.formatters["image/png"].for_type(WidgetFigure, widget_png)


def widget_png(fig) -> bytes:
    """PNG of a widget figure (as the notebook shows it) that records its smallest text size.

    A ``tEXt`` chunk ``Comment`` holds ``dpmia min-text-pt=<points> dpi=<dpi>``, so a test can measure
    the text as displayed (points × dpi / 72 × displayed width / natural width) without fonts in
    the image. The figure is drawn once, by the save itself.
    """
    import io
    import struct
    import zlib

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight" if getattr(fig, "dpmia_crop", True) else None)
    sizes = [t.get_fontsize() for t in _visible_texts(fig, draw=False)]
    note = f"dpmia min-text-pt={min(sizes) if sizes else 0:.3f} dpi={fig.dpi:g}".encode()
    body = b"tEXt" + b"Comment\x00" + note
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    data = buf.getvalue()
    end = data.rfind(b"IEND") - 4
    return data[:end] + chunk + data[end:]


def _visible_texts(fig, draw=True):
    from matplotlib.text import Text

    if draw:
        fig.draw_without_rendering()  # creates the tick labels that a draw would show
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        out.append(t)
    return out


def text_px(fig, column_px: float = COLUMN_PX) -> float:
    """Smallest visible text of ``fig`` on screen, in CSS pixels.

    A figure ``W`` inches wide is shown ``min(96·W, column_px)`` pixels wide, so a text of ``s``
    points appears ``s · 96/72 · min(1, column_px / (96·W))`` pixels tall.
    """
    texts = _visible_texts(fig)
    if not texts:
        return float("inf")
    width = fig.get_figwidth() * CSS_PX_PER_INCH
    scale = min(1.0, column_px / width)
    return min(t.get_fontsize() for t in texts) * CSS_PX_PER_INCH / 72.0 * scale


def _panels_per_row(fig) -> int:
    """Largest number of side-by-side panels (insets, colour bars and twin axes not counted)."""
    boxes = []
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        b = ax.get_position()
        if b.width < 0.12 or any(abs(b.x0 - c.x0) < 1e-6 and abs(b.y0 - c.y0) < 1e-6 for c in boxes):
            continue
        if any(c.x0 <= b.x0 and b.x1 <= c.x1 and c.y0 <= b.y0 and b.y1 <= c.y1 for c in boxes):
            continue  # an inset
        boxes.append(b)
    best = 0
    for b in boxes:
        mid = 0.5 * (b.y0 + b.y1)
        best = max(best, sum(c.y0 <= mid <= c.y1 for c in boxes))
    return best


def check_legible(fig, column_px: float = COLUMN_PX, min_px: float = MIN_TEXT_PX) -> float:
    """Raise ``ValueError`` unless every text of ``fig`` is at least ``min_px`` on screen and no
    row holds more than two panels; return the smallest text size in CSS pixels (:func:`text_px`)."""
    px = text_px(fig, column_px)
    if px < min_px:
        raise ValueError(f"figure text would be {px:.1f} px on screen (< {min_px} px): use a narrower "
                         f"figure (now {fig.get_figwidth():.2f} in) or larger fonts")
    n = _panels_per_row(fig)
    if n > 2:
        raise ValueError(f"{n} panels in a row: at most two fit the book's column; use two rows")
    return px


def tradeoff_axes(ax, *, title=None):
    """Square axes for a trade-off curve: FPR (alpha) against FNR (beta), both in [0, 1]."""
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel(r"false-positive rate $\alpha$ (type I)")
    ax.set_ylabel(r"false-negative rate $\beta$ (type II)")
    ax.plot([0, 1], [1, 0], ls=":", color=COLORS["neutral"], lw=1, label="random guessing")
    if title:
        ax.set_title(title)
    return ax


def roc_axes(ax, *, log=False, fpr_min=1e-5, title=None):
    """ROC axes (FPR against TPR); ``log=True`` gives the log-log view used for low FPR."""
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(fpr_min, 1)
        ax.set_ylim(fpr_min, 1)
        grid = np.logspace(np.log10(fpr_min), 0, 50)
        ax.plot(grid, grid, ls=":", color=COLORS["neutral"], lw=1, label="random guessing")
    else:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.plot([0, 1], [0, 1], ls=":", color=COLORS["neutral"], lw=1, label="random guessing")
    ax.set_xlabel("false-positive rate (FPR)")
    ax.set_ylabel("true-positive rate (TPR)")
    if title:
        ax.set_title(title)
    return ax


def _color(kind):
    if kind not in COLORS:
        raise ValueError(f"kind must be one of {sorted(COLORS)}, got {kind!r}")
    return COLORS[kind]


def plot_curve(ax, x, y, kind="exact", label=None, **kw):
    """Plot a curve in the colour of its ``kind`` (a key of ``COLORS``)."""
    kw.setdefault("color", _color(kind))
    return ax.plot(x, y, label=label, **kw)


def plot_band(ax, x, lo, hi, kind="empirical", label=None, alpha=0.2):
    """Shade a confidence band between ``lo`` and ``hi``."""
    return ax.fill_between(x, lo, hi, color=_color(kind), alpha=alpha, lw=0, label=label)


def mark_paper_value(ax, x, y, label="paper", **kw):
    """Mark a number printed in a paper (black open diamond)."""
    kw.setdefault("marker", "D")
    kw.setdefault("mfc", "none")
    kw.setdefault("mec", COLORS["paper"])
    kw.setdefault("ms", 7)
    kw.setdefault("ls", "none")
    return ax.plot([x], [y], label=label, **kw)


def widget_figure(nrows=1, ncols=1, figsize=(7.5, 4.0), *, crop=True, **kw):
    """``plt.subplots`` for widget callbacks: fixed margins instead of the constrained layout.

    The constrained layout engine costs most of a redraw (about 0.3 s for three panels); interactive
    callbacks use fixed margins so that a slider move redraws in well under 200 ms. ``crop=False``
    saves the PNG without cropping to the drawn content (one draw instead of two, about 30 ms less):
    for figures whose title, labels and legend lie inside the fixed margins.
    """
    import matplotlib.pyplot as plt

    fig, axs = plt.subplots(nrows, ncols, figsize=figsize, layout="none", FigureClass=WidgetFigure, **kw)
    fig.subplots_adjust(left=0.08 if ncols == 1 else 0.06, right=0.97, bottom=0.16, top=0.88,
                        wspace=0.35, hspace=0.35)
    fig.dpmia_crop = bool(crop)
    return fig, axs


def lighten(fig):
    """Make a widget figure cheap to redraw: no minor ticks, plain (non-mathtext) log tick labels."""
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}" if 1e-2 <= v <= 1e3 else f"{v:.0e}")
    for ax in fig.axes:
        ax.minorticks_off()
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale == "log":
                axis.set_major_formatter(plain)
    return fig


# --------------------------------------------------------------------------- static explorers
_EXPLORER_JS = """(function () {
  var root = document.getElementById("%(id)s");
  var data = JSON.parse(root.querySelector("script.dpmia-frames").textContent);
  var img = root.querySelector("img"), text = root.querySelector(".dpmia-explorer-text");
  var inputs = root.querySelectorAll("input[type=range]");
  function show() {
    var k = 0;
    inputs.forEach(function (inp, j) {
      var i = +inp.value;
      inp.parentNode.querySelector("output").textContent = data.labels[j][i];
      k = k * data.sizes[j] + i;
    });
    if (img && data.frames[k]) { img.src = "data:image/svg+xml;base64," + data.frames[k]; img.style.display = ""; }
    else if (img) { img.src = "data:image/gif;base64,R0lGODlhAQABAAAAACw="; img.style.display = "none"; }
    text.textContent = data.texts[k];
    root.dataset.frame = k;
  }
  inputs.forEach(function (inp) { inp.addEventListener("input", show); });
  var pane = root.querySelector(".dpmia-explorer-scroll");
  function scrolls() {
    if (pane) root.classList.toggle("dpmia-scrolls", pane.scrollWidth > pane.clientWidth + 1);
  }
  if (img) img.addEventListener("load", scrolls);
  window.addEventListener("resize", scrolls);
  show();
})();"""


_DECIMALS = re.compile(r"\d+\.\d{3,}")


def _format_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


class StaticExplorer:
    """Frames of a figure over a grid of slider values, shown as HTML with working sliders.

    Made by :func:`static_explorer`; ``frames`` (base64 SVG), ``texts`` and ``grid`` are kept for
    inspection and tests. In a notebook it renders through ``_repr_html_``. ``legible_px`` is the
    narrowest width, in CSS pixels, at which every frame's smallest text is :data:`MIN_TEXT_PX`: on a
    narrower screen (a phone) the figure keeps that width and scrolls sideways under a hint instead of
    shrinking past legibility.
    """

    def __init__(self, names, labels, values, frames, texts, initial, min_text, title, png=None, legible_px=0.0):
        self.names, self.labels, self.values, self.png = names, labels, values, png
        self.frames, self.texts, self.initial = frames, texts, initial
        self.min_text_px, self.title = min_text, title
        self.legible_px = legible_px

    @property
    def size_bytes(self) -> int:
        return sum(len(f) for f in self.frames)

    def _repr_html_(self) -> str:
        import hashlib
        import html
        import json

        digest = hashlib.sha256("".join(self.frames).encode()).hexdigest()[:12]
        uid = f"dpmia-explorer-{digest}"
        data = {"frames": self.frames, "texts": self.texts, "sizes": [len(v) for v in self.values],
                "labels": [[_format_value(x) for x in v] for v in self.values]}
        rows = []
        for j, (label, vals) in enumerate(zip(self.labels, self.values)):
            rows.append(
                f'<label class="dpmia-explorer-slider"><span>{html.escape(label)}</span>'
                f'<input type="range" min="0" max="{len(vals) - 1}" step="1" value="{self.initial[j]}" '
                f'aria-label="{html.escape(label)}"><output></output></label>')
        title = f'<div class="dpmia-explorer-title">{html.escape(self.title)}</div>' if self.title else ""
        payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
        return (f'<div class="dpmia-explorer" id="{uid}" data-min-text-px="{self.min_text_px:.2f}">{title}'
                f'<div class="dpmia-explorer-controls">{"".join(rows)}</div>'
                + (f'<div class="dpmia-explorer-scroll"><img alt="{html.escape(self.title or "explorer figure")}" '
                   f'class="dpmia-explorer-figure" style="min-width: {math.ceil(self.legible_px)}px"></div>'
                   '<div class="dpmia-explorer-hint">The figure is wider than the screen: swipe it sideways.</div>'
                   if any(self.frames) else "")     # (a text-only explorer has no figure)
                + f'<div class="dpmia-explorer-text"></div>'
                f'<script type="application/json" class="dpmia-frames">{payload}</script>'
                f'<script>{_EXPLORER_JS % {"id": uid}}</script></div>')

    def _repr_png_(self):
        """The starting frame as PNG, for outputs that cannot run the page's script (the PDF)."""
        return self.png

    def __repr__(self) -> str:
        return (f"StaticExplorer({len(self.frames)} frames over "
                f"{', '.join(f'{n} ({len(v)})' for n, v in zip(self.names, self.values))}, "
                f"{self.size_bytes / 1e6:.2f} MB)")


def static_explorer(draw, sliders, *, initial=None, title=None, fast=False, max_frames=200,
                    max_bytes=3_000_000) -> StaticExplorer:
    """Precompute ``draw`` on every combination of slider values; return an explorer for the page.

    ``draw(**values)`` makes a matplotlib figure and returns it, or ``(figure, text)`` with a line
    of text shown under it, or only the text (a text-only explorer). ``sliders`` maps each argument
    name to ``(label, values)``; ``initial`` maps names to the starting values (default: the first of
    each); ``fast=True`` keeps only the
    starting value and one other per slider (for quick test runs). Every frame must pass
    :func:`check_legible`. The frames are SVG, embedded in the page with a few lines
    of JavaScript and no external resource; ``max_frames`` and ``max_bytes`` keep the page light.
    """
    import base64
    import io
    import itertools

    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    if not callable(draw):
        raise TypeError(f"draw must be callable, got {type(draw).__name__}")
    if not isinstance(sliders, dict) or not sliders:
        raise ValueError("sliders must be a non-empty dict {name: (label, values)}")
    names, labels, values = [], [], []
    for name, spec in sliders.items():
        if not (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str)):
            raise ValueError(f"sliders[{name!r}] must be (label, values), got {spec!r}")
        vals = list(spec[1])
        if not vals:
            raise ValueError(f"sliders[{name!r}] has no values")
        names.append(name)
        labels.append(spec[0])
        values.append(vals)
    initial = dict(initial or {})
    if fast:
        for j, (name, vals) in enumerate(zip(names, values)):
            first = initial.get(name, vals[0])
            other = vals[-1] if vals[-1] != first else vals[0]
            values[j] = [first] if other == first else sorted([first, other], key=vals.index)
    n_frames = int(np.prod([len(v) for v in values]))
    if n_frames > max_frames:
        raise ValueError(f"{n_frames} frames exceed max_frames = {max_frames}: use fewer slider values")
    unknown = set(initial) - set(names)
    if unknown:
        raise ValueError(f"initial names unknown sliders: {sorted(unknown)}")
    start = []
    for name, vals in zip(names, values):
        if name in initial:
            if initial[name] not in vals:
                raise ValueError(f"initial[{name!r}] = {initial[name]!r} is not one of the slider's values")
            start.append(vals.index(initial[name]))
        else:
            start.append(0)

    frames, texts, min_px, total, png, legible = [], [], float("inf"), 0, None, 0.0
    start_combo = tuple(v[i] for v, i in zip(values, start))
    for combo in itertools.product(*values):
        out = draw(**dict(zip(names, combo)))
        if isinstance(out, str):                  # a text-only explorer: no figure, its line of text
            texts.append(out)
            frames.append("")
            continue
        fig, text = (out if isinstance(out, tuple) else (out, ""))
        if not isinstance(fig, Figure):
            raise TypeError(f"draw must return a matplotlib Figure, (Figure, str) or str, got {type(fig).__name__}")
        try:
            # widget figures use fixed margins for speed; at build time the layout engine places
            # labels properly (same figure size, so frames do not jump)
            fig.set_layout_engine("constrained")
            min_px = min(min_px, check_legible(fig))
            # shown w px wide, a text of s pt is s·96/72·w/(96·width) px: MIN_TEXT_PX from w = 72·width·MIN/s on
            sizes = [t.get_fontsize() for t in _visible_texts(fig, draw=False)]
            if sizes:
                legible = max(legible, 72.0 * fig.get_figwidth() * MIN_TEXT_PX / min(sizes))
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
            if combo == start_combo:
                raster = io.BytesIO()
                fig.savefig(raster, format="png", dpi=150)
                png = raster.getvalue()
        finally:
            plt.close(fig)
        # five significant digits (at most 0.01 pt on a figure below 1000 pt) are far below a screen
        # pixel and make the page about a third lighter
        svg = _DECIMALS.sub(lambda m: f"{float(m.group(0)):.5g}", buf.getvalue())
        frame = base64.b64encode(svg.encode()).decode("ascii")
        total += len(frame)
        if total > max_bytes:
            raise ValueError(f"frames exceed max_bytes = {max_bytes}: use fewer slider values or lighter figures")
        frames.append(frame)
        texts.append(str(text))
    return StaticExplorer(names, labels, values, frames, texts, start, min_px if math.isfinite(min_px) else 0.0,
                          title, png, legible)
