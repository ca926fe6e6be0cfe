r"""Far-tail read-outs of DP-SGD: :math:`\delta(\varepsilon)` and :math:`\varepsilon(\delta)` from the tilted
compositions of :mod:`._tilt`, on grids refined from the width just measured (a fixed number of passes: the same
bits on every call), each pass's grid coarsened to fit the FFT cap before any single-step pair is built.
"""

from __future__ import annotations

import math

import numpy as np

from .. import pld as _pld
from ._chain import _extent, _spread
from ._step import profile
from ._tilt import _PASSES, _U, TILT_MAX_FFT, tilted_pairs


def _one_tail(run, d, tol):
    r"""Where the single-step grids may end: each step may leave that much mass beyond, a ``tol / 100``
    share of ``d`` over all steps."""
    return max(min(1e-2 * tol * d / run.steps, 1e-12), 1e-310)


def _reach(run, e, one_tail):
    r"""``one_tail``, or less where the single-step grid it sets would end below the loss a read-out at ``e``
    needs: the tilt puts the composed mass near ``e`` by tilting each step's to its mean :math:`e/T`, and a
    grid ending below that (sized from a floor far below the value sought, at few steps and large sigma)
    leaves only a tilt onto its top atom, and a vacuous read-out. Then a thousandth of one step's (add)
    profile at :math:`\min(e, 4e/T)`."""
    x = min(e, 4.0 * e / run.steps)
    if not 0.0 < x < math.inf or _extent(run, max(one_tail, 1e-310))[1] >= x:
        return one_tail
    return min(one_tail, max(1e-3 * float(profile(np.array([x]), run.q, run.sigma)[0][0]), 1e-310))


def _step_after(h, w, tol, size, cap):
    r"""The next grid step from the relative width ``w`` just measured (second order in ``h``), no finer
    than the FFT cap allows (the window, ``size`` points at ``h``, keeps its width); ``None`` if that is
    not finer."""
    nxt = max(h * min(0.7, max(0.1, 0.8 * math.sqrt(tol / w))), size * h / (0.9 * cap))
    return nxt if nxt < 0.95 * h else None


def _fit(run, h, one_tail, cap):
    """``h`` coarsened where the single-step grid (to ``one_tail``) or the composed window (about 24 spreads)
    would not fit ``cap`` points: decided before any grid is built (a too fine one costs seconds)."""
    lo, hi = _extent(run, max(one_tail, 1e-310))
    return max(h, (hi - lo) / (0.45 * cap), 24.0 * _spread(run) / (0.9 * cap))


def _coarser(h, exc):
    """After a composition refused for its FFT length: the step that fits (a little coarser than the window
    asks), or ``None`` for any other refusal."""
    if not isinstance(exc, _pld.FFTCapError):
        return None
    return h * min(8.0, 1.05 * exc.points / exc.cap)


def _attempt(run, h, centre, lo, tol, one_tail, cap):
    """``(pairs, h)``: the tilted pairs on step ``h``; or ``(None, coarser h)`` after an FFT cap (try again),
    ``(None, h / 2)`` where this grid cannot carry them (a single-step pair without reference values, or x = 0
    pinned inside a cell: a finer grid usually can), ``(None, None)`` where no grid does."""
    try:
        tp = tilted_pairs(run, h, centre, lo, 1e-4 * tol, one_tail, cap)
    except _pld.FFTCapError as exc:
        return None, _coarser(h, exc)
    except ValueError:
        tp = None
    if tp is None:
        return None, (0.5 * h if 0.5 * h >= _min_step(run, one_tail, cap) else None)
    return tp, h


def _min_step(run, one_tail, cap):
    """The finest step whose single-step grid fits ``cap`` points (see :func:`_fit`)."""
    lo, hi = _extent(run, max(one_tail, 1e-310))
    return (hi - lo) / (0.45 * cap)


def _remove_top(run):
    r"""The largest loss of :math:`T` remove-direction steps, :math:`-T\ln(1-q)` (one step's
    :math:`P/Q \le 1/(1-q)`), rounded up; ``inf`` at :math:`q = 1`."""
    q, _, steps = run
    if q >= 1.0:
        return math.inf
    return -steps * math.log1p(-q) * (1.0 + 8.0 * _U) + 1e-300


def _ends(tp, kind, x, top=math.inf):
    """The bound of ``kind`` on delta at ``x``: the larger of the two directions; the remove direction's is
    exactly 0 at ``x`` >= ``top`` (:func:`_remove_top`: no remove loss reaches it), where its tilted
    read-out (tilted onto the top atom of a grid that rounds losses up) would leave only its slack."""
    return max(float(tp[kind, k].delta(np.array([x]))[0]) if k == "add" or x < top else 0.0
               for k in ("add", "remove"))


def _rel(lo, hi):
    return (hi - lo) / hi if hi > 0 else 0.0


def tilted_delta_bracket(run, e, tol, h0, d_scale, cap=TILT_MAX_FFT):
    r"""Certified bracket on :math:`\delta_T(e)` (the larger of both directions) of an add/remove Poisson run
    from tilted compositions, refined from step ``h0`` at most three times, or ``None`` if no grid
    carries it. ``d_scale``: a lower estimate of the value (sets how far the single-step grids reach)."""
    best = None
    one_tail = _reach(run, e, _one_tail(run, d_scale, tol))
    h = _fit(run, h0, one_tail, cap)
    for _ in range(_PASSES):
        tp, h = _attempt(run, h, e, e, tol, one_tail, cap)
        if tp is None:
            if h is None:
                break
            continue
        lo, hi = _ends(tp, "optimistic", e, _remove_top(run)), _ends(tp, "pessimistic", e, _remove_top(run))
        if not 0.0 <= lo <= hi:
            raise AssertionError(f"tilted bracket out of order at {run}, eps {e!r}: ({lo!r}, {hi!r})")
        if best is None or _rel(lo, hi) < _rel(*best):
            best = (lo, hi)
        w = _rel(*best)
        if w <= tol or not 0.0 < w:
            break
        # (a vacuous bracket, lower end 0: no error model applies; a finer grid, moderately)
        h = _step_after(h, min(w, 0.99), tol, tp["pessimistic", "add"].y.size, cap) if w < 1.0 else (
            0.25 * h if 0.25 * h >= _min_step(run, one_tail, cap) else None)
        if h is None:
            break
    return best


def _crossing(f, a, b, d, above):
    r"""In [a, b], where the decreasing bound ``f`` crosses ``d``: with ``above`` the largest point
    found with f > d (``a`` if none), else the smallest with f <= d (``b`` if none); bisection to
    1e-12 relative."""
    fa, fb = f(a), f(b)
    if above:
        if not fa > d:
            return a
        if fb > d:
            return b
    else:
        if fb > d:
            return b
        if fa <= d:
            return a
    for _ in range(100):
        if b - a <= 1e-12 * max(abs(b), 1e-300):
            break
        mid = 0.5 * (a + b)
        if f(mid) > d:
            a = mid
        else:
            b = mid
    return a if above else b


def tilted_epsilon_bracket(run, d, lo, hi, tol, h0, cap=TILT_MAX_FFT):
    r"""Certified bracket on :math:`\varepsilon(\delta)` of an add/remove Poisson run inside the bracket
    ``(lo, hi)`` already known, from tilted compositions centred in it, refined from step ``h0`` at
    most three times; ``(lo, hi)`` itself if no grid improves it."""
    one_tail = _one_tail(run, d, tol)
    h = _fit(run, h0, one_tail, cap)
    for _ in range(_PASSES):
        centre = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * max(lo, 1.0)
        top = hi if math.isfinite(hi) else 4.0 * centre
        tp, h = _attempt(run, h, centre, lo, tol, one_tail, cap)
        if tp is None:
            if h is None:
                break
            continue

        def up(x, tp=tp):
            return _ends(tp, "pessimistic", x, _remove_top(run))

        def down(x, tp=tp):
            return _ends(tp, "optimistic", x, _remove_top(run))
        new_hi = _crossing(up, lo, top, d, above=False)
        if new_hi < top or up(top) <= d:
            hi = min(hi, new_hi)
        lo = max(lo, min(_crossing(down, lo, top, d, above=True), hi))
        w = _rel(lo, hi)
        if w <= tol or not 0.0 < w < 1.0:
            break
        h = _step_after(h, w, tol, tp["pessimistic", "add"].y.size, cap)
        if h is None:
            break
    return lo, hi
