r"""How far the dominated (optimistic) grid pair lowers the exact profile: the chord-over-curve gap of each cell.

Writing :math:`y = e^{\varepsilon}`, the chord of the convex profile over cell :math:`j`, :math:`(x_j, x_{j+1}]`,
rises above it by at most :math:`\tfrac14 (e^h - 1)\,e^{x_j} P(\text{cell}_j)`, and at the fraction :math:`t` of
the cell by at most :math:`\min(t A_j, (1-t) D_j)` with :math:`D_j = Q(\text{cell}_j) - y_j P(\text{cell}_j)` and
:math:`A_j = y_{j+1} P(\text{cell}_j) - Q(\text{cell}_j)`; :mod:`._discretise` lowers each grid value by these
bounds.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _checks
from ._lossdist import _UNIT_ROUNDOFF, GridError


def _chord_gaps(xg, h, nu_tail, log_cell, gap):
    r"""Bound on the chord-over-curve gap of each cell: :math:`\tfrac14 (e^h - 1)\,e^{x_j} P(\text{cell}_j)`, or ``gap``
    where smaller.

    The cell's :math:`P`-mass is ``exp(log_cell - x_j)``, or the difference of ``nu_tail`` when
    ``log_cell`` is not given.
    """
    if log_cell is None:
        nu = np.asarray(nu_tail, float)
        with np.errstate(divide="ignore", over="ignore"):
            log_cell = xg[:-1] + np.log(np.maximum(nu[:-1] - nu[1:], 0.0))
    with np.errstate(over="ignore", under="ignore"):
        E = np.exp(np.minimum(np.asarray(log_cell, float), 0.0))   # e^{x_j} P(cell_j) <= Q(cell_j) <= 1
    gap_c = 0.25 * math.expm1(h) * E                              # chord-over-curve gap on cell j
    if gap is not None:
        gap_c = np.minimum(gap_c, np.asarray(gap, float))
    return gap_c


def chord_lowering(v, gap, sides=None, share=0.25, rise=None):
    r"""How far the dominated grid pair lowers each value ``v[j]`` (an array, one more than ``gap``), so that the
    chord of the lowered values lies below the profile on every cell.

    On cell j the chord rises above the profile by at most :math:`\min(tA_j, (1-t)D_j)` at the fraction :math:`t` of
    the cell (module docstring). Lowering its ends by :math:`c_j` and :math:`c_{j+1}` lowers the chord by
    :math:`(1-t)c_j + t c_{j+1}`; the difference of the two is piecewise linear with its one kink at
    :math:`t^* = D_j/(A_j + D_j)` and :math:`\ge 0` at both ends, so the chord lies below the profile if the lowering
    covers the rise at :math:`t^*`, that is if

    .. math:: c_j / D_j + c_{j+1} / A_j \ge 1.

    Both ends lowered by the cell's ``gap`` (at most :math:`D_jA_j/(D_j + A_j)`) is one choice. Where that would take
    more than ``share`` of an end's value and ``sides`` = ``(d, a)``, upper bounds on :math:`D_j` and :math:`A_j`, are
    given, the cell's ends share the lowering in proportion to their values instead:
    :math:`c = \lambda v` with :math:`\lambda = 1/(v_j/D_j + v_{j+1}/A_j)`, the least relative lowering of both
    (raised by 1e-12 for its rounding). That is the first cell of a far tail's grid pair where most of the loss's mass
    lies within one step of 0 (replace-one at small q: there the gap exceeds the profile at :math:`h`, and lowering by
    it leaves the pair 0 above :math:`h`). Where that would still take more than half of the right end's value and
    ``rise`` is given (per cell, :math:`r_j \ge 0` such that the line through :math:`(y_{j+1}, v_{j+1})` and
    :math:`(y_j, v_{j+1} + r_j)` lies below the profile on the cell: :math:`r_j = (y_{j+1} - y_j)\,\nu` with
    :math:`\nu` at most :math:`P(L > x_{j+1})`, minus the profile's slope there, by convexity), the left end drops
    to that line (:math:`c_j = v_j - v_{j+1} - r_j`, :math:`c_{j+1} = 0`, where that is at least 0): the chord lies on
    a line below the profile, and the right end is kept. Each value is lowered by the larger of its two cells'
    lowerings.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([5e-5, 1.6e-5, 1e-5])
    >>> c = chord_lowering(v, np.array([2.5e-5, 1e-7]), (np.array([3e-5, 2e-7]), np.array([2e-4, 2e-7])))
    >>> [round(float(r), 3) for r in c / v]      # the gap, 2.5e-5, would take more than all of v[1]
    [0.573, 0.573, 0.01]
    >>> bool(c[0] / 3e-5 + c[1] / 2e-4 >= 1.0)
    True
    """
    v = _checks.real("v", v, lo=0.0, hi=1.0)
    if np.ndim(v) != 1 or np.size(v) < 2:
        raise ValueError(f"v must be a 1-d array of at least 2 profile values, got shape {np.shape(v)}")
    gap = _checks.real("gap", gap, lo=0.0, allow_inf=True)
    if np.shape(gap) != (v.size - 1,):
        raise ValueError(f"gap must hold one value per cell, shape ({v.size - 1},), got {np.shape(gap)}")
    if sides is not None:
        if not isinstance(sides, (tuple, list)) or len(sides) != 2:
            raise TypeError("sides must be a pair (d, a) of arrays, one value per cell")
        sides = tuple(_checks.real(n_, s_, lo=0.0, allow_inf=True) for n_, s_ in zip(("sides[0]", "sides[1]"), sides))
        if any(np.shape(s_) != gap.shape for s_ in sides):
            raise ValueError(f"sides must hold one value per cell, shape {gap.shape}")
    if rise is not None:
        rise = _checks.real("rise", rise, lo=0.0)
        if np.shape(rise) != gap.shape:
            raise ValueError(f"rise must hold one value per cell, shape {gap.shape}")
    return _chord_lowering(v, gap, sides, _checks.scalar("share", share, lo=0.0), rise)[0]


def _chord_lowering(v, gap, sides=None, share=0.25, rise=None):
    """``(c, on_line)``: :func:`chord_lowering`'s lowering, and which points sit on their cell's line (lowered to
    :math:`v_{j+1} + r_j` by their own cell, and by no more from the cell before)."""
    c = np.zeros(gap.size + 1)
    on_line = np.zeros(gap.size + 1, bool)
    left, right = gap, gap
    if sides is not None and gap.size:
        d, a = (np.asarray(s_, float) for s_ in sides)
        vl, vr = v[:-1], v[1:]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lam = (1.0 + 1e-12) / (vl / d + vr / a)
        share_it = (vl > 0.0) & (vr > 0.0) & (gap > share * np.minimum(vl, vr)) & np.isfinite(lam) & (lam >= 0.0)
        if share_it.any():
            left, right = np.where(share_it, lam * vl, gap), np.where(share_it, lam * vr, gap)
            if rise is not None:
                r = np.asarray(rise, float)
                to_line = share_it & (lam > 0.5) & (r > 0.0) & (vl - vr >= r)
                left = np.where(to_line, vl - vr - r, left)
                right = np.where(to_line, 0.0, right)
                on_line[:-1] = to_line
    c[:-1] = left
    c[1:] = np.maximum(c[1:], right)
    # (a point on its cell's line is lowered by no more from the cell before: else the larger lowering holds)
    on_line[1:] &= right <= 0.0
    return c, on_line


def _lowered_values(v, xg, line, gap, sides=None, rise=None, share=0.25):
    r"""``(w, lowered, c, on_line)``: the optimistic values :math:`w_j = v_j - c_j` (or :math:`1 - y_j` where they
    would cross it), which of them are lowered, the lowering :math:`c_j`, and which sit on their cell's line
    (:func:`chord_lowering`'s ``rise``: there :math:`w_j = v_{j+1} + r_j`; ``share`` as there).

    :math:`c_j` is the larger lowering of the two cells at :math:`x_j` (:func:`chord_lowering`); next to a point
    stuck on :math:`1 - y` it is the one-sided bound (slope change) x (width) = 4 gap. The ends are pinned to
    :math:`1 - y` (full :math:`Q`-mass, none at :math:`+\infty`) and a run of zeros at the top is
    reached along a tangent (``_tail_tangent``). Raises :class:`dpmia.pld.GridError` where 0 lies inside a
    cell pinned at both ends.
    """
    c, on_line = _chord_lowering(v, np.asarray(gap, float), sides, share, rise=rise)
    # a point on its cell's line: the line's value v_{j+1} + r_j itself, not v_j less the lowering (which cancels to
    # the ulp of v_j: a far tail's first cell drops v_j by 1e-9 of itself), and never above it (where a pin lowers it
    # further: v_j - c_j, or the line's value where lower)
    lv = np.full(v.size, np.inf)
    if on_line.any():
        j = np.flatnonzero(on_line)
        lv[j] = v[j + 1] + np.asarray(rise, float)[j]
    c_own = c

    def values(c):
        return np.where(on_line & (c == c_own), lv, np.minimum(v - c, lv))
    # A point that cannot be lowered by its full gap (it would cross 1 - y: P has mass 1) leaves
    # the chord of its cells unlowered at that end; the other end then needs the one-sided
    # bound (slope change) x (width) = 4 gap.
    if sides is None:
        d_side = a_side = 4.0 * gap
    else:
        d_side, a_side = (np.asarray(v_, float) for v_ in sides)
    # points within float noise of 1 - y count as on it (w = 1 - y there, which is never above the
    # profile): left to noise, stuck and free points would alternate at the bottom of the grid
    # and their mixed increments give negative atoms
    # (a value on its line carries no such noise: its own size, not v_j's)
    noise = 64.0 * _UNIT_ROUNDOFF * np.maximum(np.abs(np.where(on_line, lv, v)), np.abs(line))

    def online_profile(c):
        # strictly below, or within noise of 1 - y in the run that starts at x_0
        val = values(c)
        return (val < line) | np.logical_and.accumulate(val < line + 4.0 * noise)

    for _ in range(4):
        stuck = online_profile(c)
        need = np.zeros(xg.size)
        need[1:] = np.where(stuck[:-1], a_side, 0.0)                       # left end pinned: A
        need[:-1] = np.maximum(need[:-1], np.where(stuck[1:], d_side, 0.0))   # right end pinned: D
        if np.all(c >= need):
            break
        c = np.maximum(c, need)
    stuck = online_profile(c)
    w = np.where(stuck, line, values(c))
    on_line &= ~stuck & (w == lv)
    w[0] = line[0]                                                  # pinned: Q-mass exactly 1
    w[-1] = line[-1]                                               # no mass at +infinity
    # 1 - y bends at x = 0: if 0 lies strictly inside a cell whose ends both sit on 1 - y, the
    # chord there is above 1 - y and may be above the profile; no grid pair fixes that
    a = int(np.searchsorted(xg, 0.0)) - 1
    if 0 <= a < xg.size - 1 and xg[a] < 0.0 < xg[a + 1] and w[a] <= line[a] and w[a + 1] <= line[a + 1]:
        raise GridError("x = 0 is not a grid point and both ends of its cell are pinned to 1 - y; "
                        "use a grid with a point at 0")
    lowered = ~stuck
    lowered[0] = lowered[-1] = False
    on_line[0] = False
    _tail_tangent(xg, w, lowered)
    return w, lowered, c, on_line & lowered


def _tail_tangent(xg, w, lowered):
    r"""Where the lowered values end in a run on 0 (the optimistic curve has no mass at
    :math:`+\infty`), replace the last ones by the tangent from the run's first point :math:`y_e` to the
    values before it, in place.

    Dropping from the last value :math:`w_r` to 0 within one cell takes an atom of slope change
    :math:`w_r/(y_e - y_r)`, far steeper than the curve's own slope where the tail is wider than the
    step: convexity fails, and the negative atom clipped would raise the curve by about
    :math:`w_r/h`, T-fold once composed. The tangent line of slope :math:`-\min_j w_j/(y_e - y_j)` lies
    below every value, so the curve stays dominated and convex.
    """
    idx = np.flatnonzero(lowered)
    if idx.size == 0:
        return
    e = int(idx[-1]) + 1
    if e >= w.size or xg[e] < 0.0 or w[e] != 0.0:
        return
    j = np.arange(e)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # log of w_j / (y_e - y_j)
        log_r = np.log(np.maximum(w[:e], 0.0)) - xg[:e] - np.log(np.expm1(xg[e] - xg[:e]))
    j0 = int(np.argmin(log_r))
    if j0 >= e - 1 or not np.isfinite(log_r[j0]):
        return
    jj = j[j0 + 1:]
    with np.errstate(over="ignore", under="ignore"):
        w[jj] = np.minimum(np.exp(log_r[j0] + xg[jj] + np.log(np.expm1(xg[e] - xg[jj]))), w[jj])
    lowered[jj] = False
