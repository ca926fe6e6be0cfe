"""One visual style for every chapter, and the plots chapters share.

Call :func:`use_style` once at the top of a chapter. Colours have fixed meanings across the
book (:data:`COLORS`): the exact/tight quantity, a generic DP bound, a simulated attack, and a
value printed in a paper.
"""

from __future__ import annotations

import numpy as np

__all__ = ["COLORS", "use_style", "tradeoff_axes", "roc_axes", "plot_curve", "plot_band",
           "mark_paper_value", "widget_figure", "lighten"]

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
}


def use_style() -> None:
    """Apply the book's matplotlib style (idempotent)."""
    import matplotlib as mpl

    mpl.rcParams.update(_STYLE)


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
    """Plot a curve in the colour of its ``kind`` (a key of :data:`COLORS`)."""
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


def widget_figure(nrows=1, ncols=1, figsize=(7.5, 4.0), **kw):
    """``plt.subplots`` for widget callbacks: fixed margins instead of the constrained layout.

    The constrained layout engine costs most of a redraw (about 0.3 s for three panels); interactive
    callbacks use fixed margins so that a slider move redraws in well under 200 ms.
    """
    import matplotlib.pyplot as plt

    fig, axs = plt.subplots(nrows, ncols, figsize=figsize, layout="none", **kw)
    fig.subplots_adjust(left=0.08 if ncols == 1 else 0.06, right=0.97, bottom=0.16, top=0.88,
                        wspace=0.35, hspace=0.35)
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
