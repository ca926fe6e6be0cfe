r"""Composed grid pairs of DP-SGD runs, and the choice of their grid (the engine of :mod:`dpmia.sgm`).

:func:`composed_pairs` gives the dominating and dominated grid pairs of :math:`T` subsampled Gaussian
steps on grid step ``h``: one FFT composition of the single step (``_step``,
:func:`dpmia.pld.from_profile`), or for long runs two levels (:func:`split_plan`). :func:`refine`
chooses ``h`` from an accuracy target by an error model and refines it from the measured width, a
bounded number of times: no clock anywhere, so the same call gives the same bits.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np

from .. import pld as _pld
from ._step import _SINGLE_MAX, _cached_grid, _loss_range, _merged_first
from ._symmetric import _symmetric_extent, _symmetric_grid, _symmetric_pair, _symmetric_range

#: Largest FFT length the automatic grid uses for one composition (about 0.3 s per transform).
AUTO_MAX_FFT = 2**21
#: Coarsest grid step (in privacy loss) the accountant uses. Small sigma over many steps needs coarse
#: grids (each sampled step adds about 1/(2 sigma^2) to the loss, e.g. 5000 at sigma = 0.01); the
#: construction forms e^h, so h stays well below 709.
_H_MAX = 600.0
#: Share of a composition's ``tail`` budget that its single-step grids may leave beyond their ends.
_ONE_SHARE = 0.1
#: Runs of at least this many steps are composed in two levels (see :func:`_split`).
_SPLIT_STEPS = 4096


def clear_caches():
    """Empty the caches of single-step grids and composed pairs (for timing runs)."""
    _add_pair.cache_clear()
    _remove_pair.cache_clear()
    _composed_pairs.cache_clear()
    _composed_alone.cache_clear()
    _cached_grid.cache_clear()
    _sym_pair.cache_clear()
    _symmetric_grid.cache_clear()
    _symmetric_range.cache_clear()


def _extent(run, tail):
    """Loss range of the run's single-step grid: from the smallest loss (add/remove) or symmetric about 0
    (replace-one), to where the profile falls below ``tail``."""
    if run.symmetric:
        return _symmetric_extent(run.q, run.sigma, run.sampler, tail)
    return _loss_range(run.q, run.sigma, tail)


@lru_cache(maxsize=32)
def _sym_pair(q, sigma, sampler, h, kind, tail):
    return _symmetric_pair(q, sigma, sampler, h, kind, tail)


def _single_pair(q, sigma, h, kind, direction, tail, anchor=True, kinks="clip"):
    """Single-step grid pair (add direction, or its reflection for remove).

    ``anchor``: try the grid anchored at the merged first cell (``_step.merged_anchor``)
    first; if it leaves x = 0 inside a cell that the optimistic pair cannot lower (see
    :func:`dpmia.pld.from_profile`), use the grid j h. ``kinks``: as :func:`dpmia.pld.from_profile` takes it (the
    dominated pair; ``"minorant"`` for the far tails' tilted read-outs).
    """
    one = _add_pair(q, sigma, h, kind, tail, anchor, kinks)
    return one if direction == "add" else _remove_pair(q, sigma, h, kind, tail, anchor, kinks)


@lru_cache(maxsize=32)
def _remove_pair(q, sigma, h, kind, tail, anchor, kinks="clip"):
    return _reflected(_add_pair(q, sigma, h, kind, tail, anchor, kinks))


def _reflected(pair):
    """The single-step pair of the remove direction: ``pair`` reflected, and for a dominating pair
    any P-mass excess shed (reflected, the atoms' P-mass comes from rounded products)."""
    r = pair.reflect()
    if r.kind == "optimistic":
        return r
    pmf, _ = _pld.shed_p_excess(r.pmf, r.losses, r.h, 1.0 - r.neg_inf_mass)
    return _pld.PLD(r.h, r.offset, pmf, r.inf_mass, r.neg_inf_mass, r.kind, r.slack_q, r.slack_p, r.shift)


@lru_cache(maxsize=32)
def _add_pair(q, sigma, h, kind, tail, anchor, kinks="clip"):
    try:
        return _from_grid(_cached_grid(q, sigma, h, tail, anchor), kind, q, sigma, h, kinks)
    except _pld.GridError:
        return _from_grid(_cached_grid(q, sigma, h, tail, False), kind, q, sigma, h, kinks)


def _from_grid(grid, kind, q, sigma, h, kinks="clip"):
    """The grid pair of ``kind`` from the single-step grid arrays; a dominated one carries the profile's own values at
    its points (:attr:`dpmia.pld.PLD.ref_points`: those of the grid, not of its merged first cell, and 1 - y at the
    points it gained below the grid, where the profile is that)."""
    arrays, k = grid[:6], grid[6]
    if kind == "optimistic" and k >= 0:
        arrays = _merged_first(arrays, k, q, sigma, h)
    x, d, log_nu, log_cell, dv, gap = arrays
    if kind != "optimistic":
        return _pld.from_profile(x, d, np.exp(log_nu), kind, log_cell=log_cell, dprofile=dv, gap=gap, h=h,
                                 minorant=False)
    sides, rise = _one_sided(grid, k, h, gap)
    pair = _pld.from_profile(x, d, np.exp(log_nu), kind, log_cell=log_cell, dprofile=dv, gap=gap, h=h,
                             minorant=False, one_sided=sides, rise=rise, share=1.0, kinks=kinks)
    if pair.pmf.size < x.size:
        return pair
    below = -np.expm1(np.minimum(pair.losses[:pair.pmf.size - x.size], 0.0))
    own = np.concatenate([below, np.maximum(grid[1], -np.expm1(np.minimum(x, 0.0)))])
    return dataclasses.replace(pair, ref_points=(own, own))


def _one_sided(grid, k, h, gap):
    r"""``((d, a), rise)`` for the dominated pair's cells (:func:`dpmia.pld.from_profile`): upper bounds on
    :math:`D_j = Q(\text{cell}_j) - y_j P(\text{cell}_j)` and :math:`A_j = y_{j+1}P(\text{cell}_j) - Q(\text{cell}_j)`
    from the grid's cell masses (rounded up by 1e-9 of their terms and 1e-10 of the cell's Q-mass, as the gaps), and
    the rise :math:`(y_{j+1} - y_j)\,P(L > x_{j+1})` (rounded down) of the line through the cell's right end along
    which the profile's tangent there runs. With them a cell whose gap exceeds one of its ends' values lowers both
    in proportion (:func:`dpmia.pld.chord_lowering`, taken with ``share=1``), instead of taking that end to 0: next
    to the bulk at tiny q (6.8e-6, sigma 0.89, h = 1.19e-4) that 0 made the minorant flat at 0 above it, and the pair
    lost its tail (a share of 1/4, as replace-one's, also shared far tails' cells at sigma 100, 3.6 times wider).
    Cells up to the merged one (``k``) keep the bound it takes without sides (4 ``gap``, no rise)."""
    x, log_nu, log_cell, D = grid[0], grid[2], grid[3], grid[7]
    em = math.expm1(h)
    with np.errstate(over="ignore", under="ignore"):
        E = np.exp(np.minimum(log_cell, 0.0))
        pad = 1e-10 * (np.abs(D) + E) + 1e-300
        d_side = np.maximum(D, 0.0) * (1.0 + 1e-9) + pad
        a_side = np.maximum(em * E * (1.0 + 1e-9) - D * (1.0 - 1e-9), 0.0) + pad
        rise = np.exp(np.minimum(x[:-1] + math.log(em) + log_nu[1:], 700.0)) * (1.0 - 1e-9)
    if k >= 0:
        # (the one-sided bound from_profile takes without sides: slope change x width, 4 gaps)
        d_side[:k + 1] = a_side[:k + 1] = 4.0 * gap[:k + 1]
        rise[:k + 1] = 0.0
    return (d_side, a_side), np.where(np.isfinite(rise), rise, 0.0)


def _split_plan(run, h, cap):
    r"""``(T1, m)`` of a two-level composition on the final step ``h``, or ``None`` (one level).

    Each level adds a discretisation error of about (its steps) x (its step)^2: one level gives
    :math:`T h^2`, two levels (:math:`T_1` steps on the grid :math:`h/m`, re-gridded to :math:`h`,
    composed :math:`K = T/T_1` times) :math:`T h^2/m^2 + K h^2`. With :math:`T_1 = \sqrt T` and
    :math:`m^2 = T_1/4` that is :math:`5\sqrt T h^2`, with the fine FFT about half as long as the
    coarse one: at :math:`T = 10^7` the same accuracy needs grids 25 times coarser than one level.
    """
    q, sigma, steps = run
    if steps < _SPLIT_STEPS:
        return None
    t1 = _near_root_divisor(steps)
    lo, hi = _extent(run, 1e-12)
    # T1 steps must have a bulk: where the T1-step window is set by rare, far single-step losses (tiny
    # q), the fine level would need a grid as long as one level's. Then take T1 larger (K = T / T1
    # smaller: the error 2 K h^2 is smaller still), as long as K >= 16.
    if sigma < 0.5 and q * t1 < 3.0:
        # a sampled step's loss (about 1 / (2 sigma^2) >= 2) is a jump far above the unsampled steps'
        # narrow bulk; with few jumps in T1 steps the fine grid would have to resolve that bulk across
        # several jumps (measured at q 1e-4, sigma 0.01, T 1e7: one level 0.2 s, two levels 1.5-2.6 s)
        return None
    t_bulk = math.ceil((4.0 * (hi - lo) / 24.0 / _spread(run.with_steps(1))) ** 2)
    if t1 < t_bulk:
        if 16 * t_bulk > steps:
            return None
        t1 = _near_root_divisor(steps, t_bulk)
    # m^2 = T1 / 4: the fine level's error 4 K h^2 against the coarse level's K h^2, for a fine FFT half
    # as long as at the balance m^2 = T1 (measured faster overall at equal or better brackets)
    m = min(int(math.sqrt(t1) / 2.0), int(h / _min_step(run.with_steps(t1), cap)))
    return (t1, m) if m >= 2 else None


def _near_root_divisor(steps, near=None):
    """The divisor of ``steps`` nearest ``near`` (default its square root) within a factor 2 (no
    remainder to compose separately: 1e7 = 3125 x 3200), else ``near`` rounded."""
    r = math.sqrt(steps) if near is None else float(near)
    small = [d for d in range(1, math.isqrt(steps) + 1) if steps % d == 0]
    near_r = [d for d in small + [steps // d for d in small] if r / 2 <= d <= 2 * r]
    return min(near_r, key=lambda d: (abs(d - r), d)) if near_r else int(round(r))


def _top_atom(pair):
    """Loss of the largest atom of a grid pair: the anchor of its coarse grid (see :func:`dpmia.pld.regrid`)."""
    return float(pair.losses[int(np.argmax(pair.pmf))])


@lru_cache(maxsize=64)
def _composed_pairs(run, h, direction, tail, cap, anchor=True):
    """Composed (pessimistic, optimistic) grid pairs of ``steps`` SGM steps, transformed together
    (``anchor=False``: the plain grid j h, shared by schedules). Long runs are composed in two levels
    (:func:`split_plan`): the pair of ``T1`` steps on a finer grid, re-gridded to ``h``
    (:func:`dpmia.pld.regrid`), composed ``steps // T1`` times, then with the remaining steps."""
    q, sigma, steps = run
    if run.symmetric:
        direction = "add"                  # a symmetric pair: the remove direction is the same
    split = _split_plan(run, h, cap)
    if split is not None:
        t1, m = split
        k, r = divmod(steps, t1)
        fine = _composed_pairs(run.with_steps(t1), h / m, direction, tail / (2 * k), cap, anchor)
        a = _top_atom(fine[0])
        pe, op = _pld.same_support(_pld.regrid(fine[0], h, a), _pld.regrid(fine[1], h, a))
        pe, op = _pld.compose_pair(pe, op, k, tail=tail / 2, max_fft=cap)
        if r:
            # the remaining r < T1 steps on the fine grid too (a single step on the coarse grid can be
            # far coarser than its own loss distribution)
            rest = _composed_pairs(run.with_steps(r), h / m, direction, tail / 4, cap, anchor)
            a = _top_atom(rest[0])
            pe = _pld.compose_many([pe, _pld.regrid(rest[0], h, a)])
            op = _pld.compose_many([op, _pld.regrid(rest[1], h, a)])
        return pe, op
    # the single-step grid ends where the profile falls below this: each step may put that much mass
    # beyond it (at +infinity in the dominating pair), a tenth of the window's budget in all
    one_tail = tail * _ONE_SHARE / max(steps, 1)
    if run.symmetric:
        pe, op = _pld.same_support(_sym_pair(q, sigma, run.sampler, h, "pessimistic", one_tail),
                                   _sym_pair(q, sigma, run.sampler, h, "optimistic", one_tail))
        return _pld.compose_pair(pe, op, steps, tail=tail, max_fft=cap)
    pe = _single_pair(q, sigma, h, "pessimistic", direction, one_tail, anchor)
    op = _single_pair(q, sigma, h, "optimistic", direction, one_tail, anchor)
    if pe.shift == op.shift:
        # same grid up to its ends (the optimistic pair may reach a few points lower): pad both
        pe, op = _pld.same_support(pe, op)
        return _pld.compose_pair(pe, op, steps, tail=tail, max_fft=cap)
    # one fell back to the grid j h
    return (_pld.compose(pe, steps, tail=tail, max_fft=cap), _pld.compose(op, steps, tail=tail, max_fft=cap))


@lru_cache(maxsize=16)
def _composed_alone(run, h, kind, direction, tail, cap, coarsen=1):
    """One kind of :func:`composed_pairs` composed alone (its own window, one FFT row), for a read-out that needs
    only that kind (a check on a coarse grid); long runs (two levels) and symmetric pairs as the pair does.

    ``coarsen``: the single step is the pair on step ``h / coarsen`` (the read-out's own grid, whose single-step
    pairs it has built already) re-gridded to ``h`` (:func:`dpmia.pld.regrid`, anchored at its largest atom: a
    dominating pair stays dominating, a dominated one dominated), not a grid built anew on ``h``."""
    if run.symmetric or _split_plan(run, h, cap) is not None:
        return _composed(run, h, kind, direction, tail, cap)
    one_tail = tail * _ONE_SHARE / max(run.steps, 1)
    one = _single_pair(run.q, run.sigma, h / coarsen if coarsen > 1 else h, kind, direction, one_tail)
    if coarsen > 1:
        one = _pld.regrid(one, h, _top_atom(one))
    return _pld.compose(one, run.steps, tail=tail, max_fft=cap)


def _composed(run, h, kind, direction, tail, cap, anchor=True):
    """One of the two composed grid pairs of :func:`composed_pairs`."""
    if run.symmetric:
        direction = "add"
    return _composed_pairs(run, h, direction, tail, cap, anchor)[0 if kind == "pessimistic" else 1]


def _spread(run):
    """Standard deviation of the composed privacy loss (second order in q; capped for huge mu)."""
    q, sigma, steps = run
    if run.sampler == "fixed":
        sigma = 0.5 * sigma                 # fixed-size batches: the add/remove pair at sigma / 2, symmetrised
    mu2 = 1.0 / (sigma * sigma)
    var1 = min(q * q * math.expm1(min(mu2, 700.0)), q * (1 - q) * (0.5 * mu2 + 4 * math.sqrt(mu2)) ** 2 + q * mu2)
    if run.symmetric:
        # replace-one: about 2 (1 + e^{-mu^2}) times the add/remove variance for small q, 4 times at q = 1
        var1 *= 4.0
    return math.sqrt(max(steps, 1) * max(var1, 1e-300))


def _initial_step(run, tol, cap=None, scale=0.0):
    r"""Grid step predicted by the error model: bracket width :math:`\approx 0.11\,n h^2/\mathrm{sd}_T`, with
    :math:`n = T` for one level and :math:`T/m^2 + T/T_1` for two (:func:`split_plan`, which depends on h:
    two passes), and at most 1/20 of the larger of the spread and ``scale`` (the loss at which the
    read-out looks: a far tail, e.g. eps at delta = 1e-9 after two steps, needs no grid finer than
    the bulk's spread)."""
    q, sigma, steps = run
    sd = _spread(run)
    # and at most 1/50 of one step's loss range: a coarser grid cannot resolve one step at all (tiny q
    # with large sigma, where T steps spread far wider than one), and its dominated pair is vacuous
    lo, hi = _extent(run, 1e-12)

    def model(n):
        return float(min(math.sqrt(tol * sd / (0.11 * n)), max(sd, scale) / 20.0, _H_MAX / 4.0, (hi - lo) / 50.0))
    h = model(max(steps, 1))
    for _ in range(2):
        split = _split_plan(run, h, AUTO_MAX_FFT if cap is None else cap)
        if split is None:
            break
        h = model(steps / split[1] ** 2 + steps / split[0])
    return h


def _min_step(run, cap, tail=None):
    """Smallest grid step whose single-step grid and (predicted) composed window fit the caps.

    ``tail``: the Q-mass the composition may leave outside its window (as given to
    :func:`composed_pairs`); the single-step grid then ends where the profile falls below
    ``tail * ONE_SHARE / (2 steps)`` (the smallest share a level gives one step). Default: 1e-30.
    """
    q, sigma, steps = run
    one_tail = 1e-30 if tail is None else min(max(tail * _ONE_SHARE / (2.0 * max(steps, 1)), 1e-300), 1e-3)
    lo, hi = _extent(run, one_tail)
    one = hi - lo
    # the FFT covers the larger of the single-step grid and the composed window (about 24 sd wide
    # by the Chernoff bounds); a window that turns out wider raises and the refinement stops there
    window = max(one, 24.0 * _spread(run))
    return max(one / (_SINGLE_MAX / 2), window / (0.9 * cap), 1e-12)


def _fit_step(run, h, cap, tail=None):
    """``h`` coarsened (by factors of 2) until the single-step grid and composed window fit ``cap``."""
    q, sigma, steps = run
    floor = _min_step(run, cap, tail)
    if floor > _H_MAX:
        raise ValueError(f"no grid fits the FFT caps at q={q:g}, sigma={sigma:g}, steps={steps} (the privacy "
                         f"loss spans more than {cap} steps of {_H_MAX:g}); use epsilon_rdp or fewer steps")
    while h < floor:
        h *= 2.0
    return h


def _refine_step(h, tol, readout, width_of, min_h):
    """Deterministic refinement from a predicted step ``h``: at most five refinements, each from the
    width just measured (the width is second order in h; a vacuous or infinite width steps h by 0.25),
    never below ``min_h`` (the FFT caps). It stops early where a finer grid widened the bracket or
    narrowed it by less than 20 % (then the slack, not the grid, sets the width), and after two
    infinite widths in a row. A ``ValueError`` from ``readout`` (window above the cap) coarsens h.
    Returns the narrowest result."""
    best, best_w = None, math.inf
    stuck = False
    prev = None
    for _ in range(6):
        try:
            res = readout(h)
        except ValueError as exc:
            if best is not None and not isinstance(exc, _pld.FFTCapError):
                # this grid cannot be built (x = 0 pinned inside a cell): try a slightly finer one
                if max(h * 0.8, min_h) >= h * 0.9:
                    break
                h = max(h * 0.8, min_h)
                continue
            # window above the cap: coarsen by what the window asked for (a little more), or by 2
            grow = (min(2.0, max(1.05, 1.02 * exc.points / exc.cap)) if isinstance(exc, _pld.FFTCapError)
                    else 2.0)
            if best is not None or grow * h > _H_MAX:
                break
            h *= grow
            continue
        w = width_of(res)
        if w is None:
            # no finite bracket (an infinite eps upper end: mass beyond the grid or slack above delta).
            # A finer grid helps only if the grid was the cause: try once more, never prefer it
            if best is None:
                best = res
            if stuck:
                break
            stuck = True
            w = math.inf
        else:
            stuck = False
        if w > 1.5 * best_w and math.isfinite(w):
            # a finer grid made the bracket wider: its slack (float error, grown T-fold) now dominates
            # the discretisation, and finer grids would only add to it
            break
        stalled = w > 0.8 * best_w and best_w < 0.5
        if w < best_w:
            best, best_w = res, w
        if w <= tol or stalled:
            # (stalled: a finer grid gained less than 20 %; the slack, not the grid, sets the width)
            break
        # a vacuous bracket (the optimistic end lost everything: its grid is coarser than the loss's
        # concentration near 0, as at tiny q) says nothing about the h^2 model: step down moderately.
        # Otherwise the width goes as h^p: p = 2 where the loss has a density; near-atoms (the
        # unsampled steps' peak at tiny q) make it first order there, and p about 1.6 was measured.
        # Take p from the last two widths once there are two, else 1.6 for a large jump (a grid a
        # little finer than needed costs less than another read-out at the finest grids) and 2 for
        # a small one
        if w >= 0.99:
            shrink = 0.25
        else:
            p = 2.0 if w <= 4.0 * tol else 1.6
            if prev is not None and prev[1] > w > 0.0 and math.isfinite(prev[1]):
                p = min(max(math.log(prev[1] / w) / math.log(prev[0] / h), 1.0), 2.5)
            shrink = min(0.7, max(0.08, 0.9 * (tol / max(w, 1e-300)) ** (1.0 / p)))
        prev = (h, w)
        h_next = max(h * shrink, min_h)
        if h_next >= h * 0.9:                                 # the caps stop refinement here
            break
        h = h_next
    if best is None:
        raise ValueError("no grid fits the FFT caps")
    return best


def _refine(run, tol, readout, width_of, cap=None, model_tol=None, tail=None, scale=0.0):
    """:func:`refine_step` for one (q, sigma, steps), starting from the error model's step for an
    advantage bracket of width ``model_tol`` (default ``tol``); ``tail`` as ``readout`` passes it to
    :func:`composed_pairs` (it sets how long the single-step grid is, see :func:`min_step`); ``scale``
    as in :func:`initial_step`."""
    cap = AUTO_MAX_FFT if cap is None else cap
    h = _initial_step(run, tol if model_tol is None else model_tol, cap, scale)
    h = _fit_step(run, h, cap, tail)
    try:
        return _refine_step(h, tol, lambda hh: readout(hh, cap), width_of, _min_step(run, cap, tail))
    except ValueError as exc:
        if str(exc) != "no grid fits the FFT caps":
            raise
        raise ValueError(f"no grid fits the FFT caps at q={run.q:g}, sigma={run.sigma:g}, steps={run.steps} (the "
                         f"privacy loss is too spread for {cap} points at any step tried); try fewer steps, a "
                         f"larger sigma, or epsilon_rdp") from None
