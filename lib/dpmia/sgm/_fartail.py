r"""Far-tail read-outs of DP-SGD: :math:`\delta(\varepsilon)` and :math:`\varepsilon(\delta)` from the tilted
compositions of :mod:`._tilt`, on grids refined from the width just measured (a fixed number of passes: the same
bits on every call), each pass's grid coarsened to fit the FFT cap before any single-step pair is built.
"""

from __future__ import annotations

import math

import numpy as np

from .. import pld as _pld
from ._chain import _extent, _spread
from ._rdp import _WIDTH, _saddle_epsilon, _saddle_log_delta
from ._readout import _clt_eps
from ._removebound import _remove_chernoff
from ._step import profile
from ._tilt import _PASSES, _U, TILT_MAX_FFT, tilted_pairs, tilted_width
from ._tiltlevels import leveled_direction

#: The longest FFT a tilted delta read-out with a ``wide_cap`` goes to, for one pass only, and only where the width
#: model puts that pass within tol while ``wide_cap`` keeps it from the step the model asks:
#: far-tail deltas at a few thousand steps stopped 1.0 to 3.4 times tol wide at ``wide_cap``, their windows about
#: four million points at the step tol asks (q 2.4e-3, sigma 2.07, T 9174, eps 13.05: 3.4e-3 at ``wide_cap``, 9.1e-4
#: here). A pass at this length takes two to three seconds and about a gigabyte; where the model has it miss tol it is
#: not run.
_LAST_CAP = 4 * TILT_MAX_FFT


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
    return min(one_tail, max(1e-3 * one_profile(run, x), 1e-310))


def one_profile(run, e):
    """One step's exact profile at ``e``: the add direction's (add/remove), or the replace-one pair's (its upper
    end)."""
    with np.errstate(all="ignore"):
        return float(profile(np.array([e]), run.q, run.sigma, neighbours=run.neighbours)[0][0])


def _step_after(h, w, tol, size, cap):
    r"""The next grid step from the relative width ``w`` just measured (second order in ``h``), no finer
    than the FFT cap allows (the window, ``size`` points at ``h``, keeps its width); ``None`` if that is
    not finer. At most 10 times finer, 20 where ``w`` is at most 0.3 (there the model holds: 0.143 at
    q = 0.01, sigma = 1, T = 1e4, delta 1e-300, gave 1.4e-3 on a grid ten times finer, as it predicts)."""
    nxt = max(h * min(0.7, max(0.05 if w <= 0.3 else 0.1, 0.8 * math.sqrt(tol / w))), size * h / (0.9 * cap))
    return nxt if nxt < 0.95 * h else None


def _fit(run, h, one_tail, cap):
    """``h`` coarsened where the single-step grid (to ``one_tail``) or the composed window (about 24 spreads)
    would not fit ``cap`` points: decided before any grid is built (a too fine one costs seconds)."""
    lo, hi = _extent(run, max(one_tail, 1e-310))
    return max(h, (hi - lo) / (0.45 * cap), 24.0 * _spread(run) / (0.9 * cap))


def _probe(run, h, centre, tol, one_tail, cap, d_est):
    """``h``, or coarser where the tilted composition's window, measured on a grid of at most 8192 single-step points
    (:func:`._tilt.tilted_width`), would not fit ``cap`` points at ``h``: a grid that fails the cap costs its whole
    single-step construction (at two million points, over half a second) before the composition refuses it. The
    add/remove direction's (or replace-one's) dominating pair only (the pass itself still checks the cap for all of its
    pairs)."""
    lo, hi = _extent(run, max(one_tail, 1e-310))
    coarse = (hi - lo) / 8192.0
    if coarse <= 4.0 * h:
        return h                          # (a single-step grid of at most 32768 points: the pass costs little)
    try:
        width = tilted_width(run, coarse, centre, 1e-4 * tol, one_tail, d_est)
    except ValueError:
        return h
    return max(h, width / (0.93 * cap))


def _coarser(h, exc):
    """After a composition refused for its FFT length: the step that fits (a little coarser than the window
    asks), or ``None`` for any other refusal."""
    if not isinstance(exc, _pld.FFTCapError):
        return None
    return h * min(8.0, 1.05 * exc.points / exc.cap)


def _attempt(run, h, centre, lo, tol, one_tail, cap, d_est=None, directions=("add", "remove")):
    """``(pairs, h)``: the tilted pairs on step ``h``; or ``(None, coarser h)`` after an FFT cap (try again),
    ``(None, h / 2)`` where this grid cannot carry them (a single-step pair without reference values, or x = 0
    pinned inside a cell: a finer grid usually can), ``(None, None)`` where no grid does."""
    try:
        tp = tilted_pairs(run, h, centre, lo, 1e-4 * tol, one_tail, cap, d_est=d_est, directions=directions,
                          levels=leveled_direction)
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
    if q >= 1.0 or run.symmetric:
        return math.inf
    return -steps * math.log1p(-q) * (1.0 + 8.0 * _U) + 1e-300


def _ends(tp, kind, x, top=math.inf, rem=None):
    """The bound of ``kind`` on delta at each ``x`` (an array, or a number): the larger of the two directions; the
    remove direction's is exactly 0 at ``x`` >= ``top`` (:func:`_remove_top`: no remove loss reaches it), where its
    tilted read-out (tilted onto the top atom of a grid that rounds losses up) would leave only its slack. ``rem``:
    a certified upper bound on the remove direction's delta (:func:`_remove_chernoff`), which also caps the
    dominating pair's remove read-out, and stands for it where the remove direction was not composed (``tp``
    without it: the lower bound then has the add direction's alone)."""
    xs = np.atleast_1d(np.asarray(x, float))
    add = tp[kind, "add"].delta(xs)
    if (kind, "remove") in tp:
        r = tp[kind, "remove"].delta(xs)
        if kind == "pessimistic" and rem is not None:
            r = np.minimum(r, [rem(v) for v in xs])
    elif rem is None:
        r = np.zeros(xs.size)             # (a replace-one pair: symmetric, its one direction is the whole profile)
    else:
        r = np.array([rem(v) for v in xs]) if kind == "pessimistic" else np.zeros(xs.size)
    out = np.maximum(add, np.where(xs >= top, 0.0, r))
    return out if np.ndim(x) else float(out[0])


def _negligible_remove(rem, x, d):
    """Whether the remove direction's Chernoff bound at ``x`` is at most ``d`` (a lower end of delta, or the delta an
    eps read-out seeks, ``x`` at or below the eps sought): then the bound stands for that direction
    (:func:`_ends`), which is not composed (half the work of a pass), and the bracket is the one the add
    direction alone gives (where the remove direction could reach ``d``, its bound is still a safe upper end)."""
    return rem is not None and rem(x) <= d


def _remove_settled(tp, rem, x, d, top):
    r"""A stand-in for the remove direction once a pass has shown it at most ``d`` at ``x``: the constant function of
    this pass's bound on it there (its dominating pair's tilted read-out, capped by ``rem``, the Chernoff bound, and 0
    at or above ``top``), capped by ``rem`` as well; ``None`` where that bound exceeds ``d`` or the pass did not compose
    that direction.

    The profile decreases, so the true remove profile is at most that bound at every point at or above ``x``. In a
    delta read-out at ``x`` with ``d`` a lower end of :math:`\delta = \max(\delta_{add}, \delta_{remove})`, delta is
    then the add direction's (or equal to the bound, which the stand-in gives as the upper end); in an eps read-out
    with ``x`` its lower end and ``d`` the delta sought, the remove direction is at most ``d`` wherever the later passes
    look (at or above that end). Either way the later passes compose the add direction alone, half the work of a pass,
    with the stand-in as the dominating side's remove read-out (:func:`_ends`); the dominated side's is left out, which
    only lowers a lower bound. At (1e-4, 1, 1e7), delta at eps 2.5456, the first pass bounds the remove direction by
    8.5e-11 and the add direction's lower end is 9.9e-11: the second pass, of 3.8 M points, composes one direction."""
    if ("pessimistic", "remove") not in tp:
        return None
    r = 0.0 if x >= top else float(tp["pessimistic", "remove"].delta(x)[0])
    if rem is not None:
        r = min(r, rem(x))
    if not r <= d:
        return None
    return (lambda v, r=r: r) if rem is None else (lambda v, r=r, c=rem: min(r, c(v)))


def _rel(lo, hi):
    return (hi - lo) / hi if hi > 0 else 0.0


def tilted_delta_bracket(run, e, tol, h0, d_scale, cap=TILT_MAX_FFT, wide_cap=None, first=None, last_cap=_LAST_CAP):
    r"""Certified bracket on :math:`\delta_T(e)` (the larger of both directions) of an add/remove Poisson run
    from tilted compositions, refined from step ``h0`` at most three times, or ``None`` if no grid
    carries it. ``d_scale``: a lower estimate of the value (sets how far the single-step grids reach); where a
    pass finds a lower end more than twice it, the grids of the passes after it reach only as far as that lower end
    asks (shorter: finer steps fit the cap). ``wide_cap``: a longer FFT the passes may go to where ``cap`` stops the
    step the error model asks for (a read-out still wider than tol: the longer transforms only where they help);
    ``first``: a step predicted to bring the first pass within tol, taken where finer than the first grid's step
    (``h0`` fitted to the caps) but not 3.5 times finer, with ``wide_cap`` as the cap from then on: one pass instead
    of two where the first would be costly and just miss tol; where it is much finer, a first pass on the first grid
    costs a tenth of the fine one and finds a lower end that sizes its grids shorter (at q = 0.01, sigma = 2,
    T = 1e4, delta 1e-200: 2.6 s, against 5.0 s at once); under replace-one also where coarser (``h0`` is sized by
    the bulk's spread, at small q far finer than a far tail needs). ``last_cap`` (with ``wide_cap`` only): the cap of
    one more pass where ``wide_cap`` stops the step (:func:`_last_step`), or of the first where ``first`` fits it and
    not ``wide_cap``. The bracket is where the passes' brackets meet; no pass follows one that brings it within tol."""
    best = meet = None
    rem = _remove_chernoff(run)
    one_tail = _reach(run, e, _one_tail(run, d_scale, tol))
    h = _probe(run, _fit(run, h0, one_tail, cap), e, tol, one_tail, cap, d_scale)
    if first is not None and h / 3.5 < first < h and wide_cap is not None:
        hw = _probe(run, _fit(run, first, one_tail, wide_cap), e, tol, one_tail, wide_cap, d_scale)
        h, cap = (hw, wide_cap) if hw < h else (h, cap)
        if h > 1.2 * first and last_cap is not None and last_cap > wide_cap:
            # (``first`` is sized for 0.7 tol: a step 1.2 times coarser is still within tol by the width model)
            hl = _probe(run, _fit(run, first, one_tail, last_cap), e, tol, one_tail, last_cap, d_scale)
            h, cap = (hl, last_cap) if hl <= 1.05 * first else (h, cap)
    elif first is not None and h < first and run.symmetric:
        h = _probe(run, _fit(run, first, one_tail, cap), e, tol, one_tail, cap, d_scale)
    last = None
    vacuous = 0
    dirs = ("add",) if _negligible_remove(rem, e, d_scale) else ("add", "remove")
    widened, seen = 0, None
    for _ in range(_PASSES + 4):
        if _ >= _PASSES + vacuous + widened:
            break
        tp, h_next = _attempt(run, h, e, e, tol, one_tail, cap, d_scale, dirs)
        if tp is None:
            if h_next is not None and h_next > h and best is not None and wide_cap is not None and cap < wide_cap:
                # (a composition refused for the cap after a pass wider than tol: widen it, this try not counted)
                cap, widened = wide_cap, 1
            else:
                h = h_next
            if h is None:
                break
            continue
        lo, hi = _ends(tp, "optimistic", e, _remove_top(run)), _ends(tp, "pessimistic", e, _remove_top(run), rem)
        if not 0.0 <= lo <= hi:
            raise AssertionError(f"tilted bracket out of order at {run}, eps {e!r}: ({lo!r}, {hi!r})")
        if best is None or _rel(lo, hi) < _rel(*best):
            best = (lo, hi)
        meet = (lo, hi) if meet is None else (max(meet[0], lo), min(meet[1], hi))
        if not meet[0] <= meet[1]:
            raise AssertionError(f"tilted brackets disjoint at {run}, eps {e!r}: ({lo!r}, {hi!r}), {meet!r}")
        if _rel(*meet) <= tol:
            break
        settled = _remove_settled(tp, rem, e, lo, _remove_top(run)) if lo > 0.0 else None
        if settled is not None:
            dirs, rem = ("add",), settled
        w = _rel(*best)
        hl = _last_step(h, w, tol, 0 if lo > 2.0 * d_scale else tp["pessimistic", "add"].y.size, cap, wide_cap,
                        last_cap, seen)
        seen = (h, _rel(lo, hi)) if 0.0 < _rel(lo, hi) < 1.0 else seen
        if hl is not None:
            # (one more pass, at the longest cap: not counted against the passes, whatever this one narrowed)
            h, cap, widened = hl, last_cap, widened + 1
            continue
        if w <= tol or not 0.0 < w or (last is not None and w > 0.7 * last) or cap == last_cap:
            break           # (the last: a finer grid did not narrow it as the error model has it; no step will)
        resized = lo > 2.0 * d_scale
        if resized:
            # the grids were sized from far below the value: size the next ones from the lower end found (shorter:
            # the window this pass needed no longer bounds the next step; an FFT cap coarsens it in _attempt)
            d_scale = lo
            one_tail = _reach(run, e, _one_tail(run, d_scale, tol))
        last = w if w < 1.0 else None
        # (a vacuous bracket, lower end 0: no error model applies; a finer grid, moderately. Vacuous passes on
        # grids coarse and cheap, a sixteenth of the cap, do not count against the passes, at most three of them;
        # one on a longer grid is a far tail the tilt cannot centre, which no finer grid helps: stop)
        if w >= 1.0 and 16 * tp["pessimistic", "add"].y.size > cap:
            break
        vacuous += w >= 1.0 and vacuous < 3
        size = 0 if resized else tp["pessimistic", "add"].y.size
        nxt = _step_after(h, min(w, 0.99), tol, size, cap) if w < 1.0 else None
        if w < 1.0 and wide_cap is not None and cap < wide_cap and nxt != _step_after(h, min(w, 0.99), tol, 0, cap):
            cap = wide_cap                  # (the cap, not the error model, sets the next step: widen it)
            nxt = _step_after(h, min(w, 0.99), tol, size, cap)
        h = nxt if w < 1.0 else (
            0.25 * h if 0.25 * h >= _min_step(run, one_tail, cap) else None)
        if h is None:
            break
        if resized:
            hp = _probe(run, h, e, tol, one_tail, cap, d_scale)
            if hp > h and w < 1.0 and wide_cap is not None and cap < wide_cap:
                # (the re-sized window needs a coarser step at this cap than the error model asks: widen the cap)
                cap = wide_cap
                hp = _probe(run, h, e, tol, one_tail, cap, d_scale)
            h = hp
    return meet


def _last_step(h, w, tol, size, cap, wide_cap, last_cap, seen=None):
    r"""The step of a pass at ``last_cap`` after one of relative width ``w`` on step ``h`` at ``cap``, or ``None``: only
    where ``cap`` is ``wide_cap`` and sets the next step (the window, ``size`` points, would not fit the one the width
    model asks) too coarse for tol, and the width, of order :func:`_order` in the step (``seen``: the pass before's
    step and width), is within tol at the step ``last_cap`` allows. (A window re-sized after this pass, ``size`` 0, is
    left to the passes' own probe.)"""
    if (last_cap is None or wide_cap is None or cap != wide_cap or not last_cap > cap or size == 0
            or not tol < w < 1.0):
        return None
    return _capped_step(h, w, tol, size, cap, last_cap, _order(seen, h, w))


def _capped_step(h, w, tol, size, cap, last_cap, p):
    """The step ``last_cap`` allows after a pass of width ``w`` on step ``h`` (``size`` points), where ``cap`` keeps the
    next pass from a step within tol and ``last_cap`` does not, the width taken as of order ``p`` in the step; else
    ``None``."""
    hc = _step_after(h, w, tol, size, cap)
    if hc == _step_after(h, w, tol, 0, cap) or (hc is not None and w * (hc / h) ** p <= tol):
        return None                                 # (the model, not the cap, sets the step; or it fits tol)
    hl = _step_after(h, w, tol, size, last_cap)
    return hl if hl is not None and w * (hl / h) ** p <= tol else None


def _order(seen, h, w):
    r"""The order :math:`p` of a width ``w`` in the step ``h`` (:math:`w \propto h^p`) from the pass before's step and
    width (``seen``), within [1, 2]; 2, the error model's, without one, where the steps differ by less than 5 %, or
    where the pass before was wider than 0.1 (a width of order 1, a log-ratio of the bounds, is not yet a power of the
    step: at (1e-6, 0.8, 1e6), eps at delta 1e-10, 0.38 and then 0.012 on a step 7 times finer gave 1.8, and the pass
    at the longest cap read 2.3e-4, as the second order has it). (At (1e-6, 0.7, 1e6), eps at delta 1e-12, a tenfold
    finer step narrowed the grid's own width from 0.054 only 9.4 times: a pass predicted by the second order within tol
    read 2.7e-3.)"""
    if seen is None or not (seen[0] > 1.05 * h and 0.0 < seen[1] <= 0.1 and w > 0.0):
        return 2.0
    return min(max(math.log(seen[1] / w) / math.log(seen[0] / h), 1.0), 2.0)


def _crossing(f, a, b, d, above, points=257, rtol=1e-12):
    r"""In [a, b], a point where the bound ``f`` (of arrays) is on the side of ``d`` that certifies: with ``above``
    the largest found with f > d (``a`` if none), else the smallest found with f <= d (``b`` if none). The bounds
    decrease where they are accurate but not far from their tilt's centre, where their error terms take over (an
    optimistic read-out falls to 0 there): so ``f`` is read on 257 points first (geometric where ``a`` > 0), and
    the crossing found there refined by bisection to ``rtol`` relative, keeping one point on each side (``points``:
    fewer where the bounds are accurate across ``[a, b]``)."""
    xs = np.geomspace(a, b, points) if a > 0.0 else np.linspace(a, b, points)
    xs[0], xs[-1] = a, b
    v = f(xs)
    if above:
        hit = np.flatnonzero(v > d)
        if hit.size == 0:
            return a
        i = int(hit[-1])
        if i == xs.size - 1:
            return b
        lo, hi = float(xs[i]), float(xs[i + 1])
    else:
        hit = np.flatnonzero(v <= d)
        if hit.size == 0:
            return b
        i = int(hit[0])
        if i == 0:
            return a
        lo, hi = float(xs[i - 1]), float(xs[i])
    for _ in range(100):
        if hi - lo <= rtol * max(abs(hi), 1e-300):
            break
        mid = 0.5 * (lo + hi)
        if f(np.array([mid]))[0] > d:
            lo = mid
        else:
            hi = mid
    return lo if above else hi


def _midway(lo, hi):
    return 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * max(lo, 1.0)


def tilted_epsilon_bracket(run, d, lo, hi, tol, h0, cap=TILT_MAX_FFT, last_cap=_LAST_CAP):
    r"""Certified bracket on :math:`\varepsilon(\delta)` of a Poisson run inside the bracket ``(lo, hi)`` already
    known, from tilted compositions centred in it, from step ``h0``: each pass intersects the bracket with its own.
    At most four passes refine the grid from the width read (and stop when a finer grid barely narrowed it); as many
    more re-centre the tilt where it read one end only or fell outside the bracket, on grids at most twice as fine
    (:func:`_next_pass`). ``(lo, hi)`` itself if no grid improves it. ``last_cap``: the cap of one last pass where
    ``cap`` keeps the next one from the step the width model asks, and the model puts it within tol at that cap
    (:func:`_last_eps_step`)."""
    one_tail = _one_tail(run, d, tol)
    rem = _remove_chernoff(run)
    h = _fit(run, h0, one_tail, cap)
    # the first tilt's centre: the CLT estimate where it lies inside (near the truth where the loss is close to
    # Gaussian, large sigma: the lower end known there is often far too low, and a tilt centred midway reads
    # nothing accurate at the upper end), else midway; then midway once a pass has brought the ends within a
    # factor 2 (both read near the truth), else the same centre on a finer grid while it stays inside, or next to
    # the end it fell out of (that end was read near the centre, so near the truth)
    # (the saddle-point estimate first, where it is to be trusted and inside: within 2e-3 of the value at delta 1e-30
    # ... 1e-300 under both relations, where the CLT's and the midpoint were far off: 137 and 65 for 269.5 and 12.37)
    sad = _saddle_epsilon(run, d)
    clt = sad if sad is not None and lo < sad < hi else _clt_eps(run, d)
    centre = clt if clt is not None and lo < clt < hi else _midway(lo, hi)
    # (the saddle point's tilt at the centre sets the first step by the width model, _WIDTH T (lam h)^2 at half the tol
    # in eps, tol lam eps in delta, not 3.5 times finer: one pass where one just missed; replace-one also coarser
    # (1.4e-7 wide on 2.1e-5 at (1e-5, 0.8, 10, 1e-30); add/remove tails at sigma 2 read nothing on coarser grids)
    est = _saddle_log_delta(run, centre, max_skew=3.0, with_tilt=True)
    first = math.sqrt(0.5 * tol * centre / (_WIDTH * run.steps * est[1])) if est is not None and est[1] > 0.0 else 0.0
    first = first if run.symmetric else min(first, h)
    h = _probe(run, _fit(run, first, one_tail, cap) if first > h / 3.5 else h, centre, tol, one_tail, cap, d)
    recentred, refined_from, seen = 0, None, None
    for _ in range(2 * _PASSES):
        if _ >= _PASSES + recentred:
            break
        top = hi if math.isfinite(hi) else 4.0 * centre
        # (the remove bound decreases: at most d at lo, it is at most d wherever a crossing is sought)
        dirs = ("add",) if _negligible_remove(rem, lo, d) else ("add", "remove")
        tp, h = _attempt(run, h, centre, lo, tol, one_tail, cap, d, dirs)
        if tp is None:
            if h is None:
                break
            continue

        def up(x, tp=tp, rem=rem):
            return _ends(tp, "pessimistic", x, _remove_top(run), rem)

        def down(x, tp=tp):
            return _ends(tp, "optimistic", x, _remove_top(run))
        was = lo, hi
        new_hi = _crossing(up, lo, top, d, above=False)
        if new_hi < top or up(top) <= d:
            hi = min(hi, new_hi)
        lo = max(lo, min(_crossing(down, lo, top, d, above=True), hi))
        settled = _remove_settled(tp, rem, lo, d, _remove_top(run)) if lo > 0.0 else None
        rem = rem if settled is None else settled
        w = _rel(lo, hi)
        if w <= tol or (math.isfinite(hi) and not 0.0 < w < 1.0) or cap == last_cap:
            break
        own = max(w, _own_width(tp, up, down, (centre,))) if lo < centre < hi else None
        hl = None if own is None else _last_eps_step(own, tp, h, tol, cap, last_cap, seen)
        seen = seen if own is None or not own < 1.0 else (h, own)
        if hl is not None:
            # (one last pass, at the longest cap, centred midway: not counted against the passes)
            h, cap, centre, recentred = hl, last_cap, _midway(lo, hi), recentred + 1
            continue
        if refined_from is not None and w > 0.9 * refined_from:
            break           # (the last: a finer grid barely narrowed it, nor will the next)
        counted = recentred
        h, centre, recentred = _next_pass(tp, up, down, was, (lo, hi), centre, h, tol, cap, recentred)
        # (a pass that moved neither end read nothing inside the bracket: its grid is no guide to the next one's)
        refined_from = w if recentred == counted and (lo > was[0] + tol * hi or hi < was[1] - tol * hi) else None
        if h is None:
            break
    return lo, hi


def _last_eps_step(own, tp, h, tol, cap, last_cap, seen):
    r"""The step of a last pass of :func:`tilted_epsilon_bracket` at ``last_cap`` after one on step ``h`` at ``cap``
    (its pairs ``tp``) centred inside the bracket it read, or ``None``: only where ``cap`` sets the next step (the
    window would not fit the one the width model asks, from ``own``, the larger of the bracket's relative width and the
    grid's own at the centre) too coarse for tol, and that width, of order :func:`_order` in the step (``seen``: an
    earlier centred pass's step and width), is within tol at the step ``last_cap`` allows."""
    if last_cap is None or not last_cap > cap or not tol < own < 1.0:
        return None
    return _capped_step(h, own, tol, tp["pessimistic", "add"].y.size, cap, last_cap, _order(seen, h, own))


def _own_width(tp, up, down, xs):
    r"""A grid's own relative width in eps at the points ``xs`` (the least over them; ``inf`` where its lower bound
    is 0 at one): its bounds there differ by a factor of about :math:`e^{\lambda\,\Delta\varepsilon}`."""
    lam = tp["pessimistic", "add"].lam
    out = math.inf
    for x in xs:
        u, d = up(x), down(x)
        if not (d > 0.0 and lam > 0.0 and 0.0 < x < math.inf):
            return math.inf
        out = min(out, math.log(u / d) / (lam * x))
    return out


def _next_pass(tp, up, down, was, now, centre, h, tol, cap, recentred):
    """``(h, centre, recentred)`` of the next pass of :func:`tilted_epsilon_bracket` after one that turned the
    bracket ``was`` into ``now`` with a tilt centred at ``centre`` on step ``h`` (``up``, ``down``: its bounds)."""
    lo, hi = now
    size = tp["pessimistic", "add"].y.size
    if not math.isfinite(hi):
        # no upper end yet: the dominating pair's floor (its single step's absolute excess, T-fold) above d, which
        # finer grids lower, or a tilt centred below the value: a grid half as fine, centred above the lower end
        # (``None`` where no finer grid fits, or after as many such passes as counted ones)
        nxt = _step_after(h, 2.56 * tol, tol, size, cap) if recentred < _PASSES else None
        return nxt, max(centre, 2.0 * lo), recentred + 1
    w = _rel(lo, hi)
    # (an end moved: by more than tol, a mere re-read of the same end does not count)
    moved_lo, moved_hi = lo > was[0] + tol * hi, hi < was[1] - tol * hi
    one_end = w >= 0.5 and moved_lo != moved_hi
    if (lo < centre < hi and not one_end) or recentred >= _PASSES:
        # the next step from this grid's own width, from its two bounds at the centre, whose ratio is about
        # e^{lam (width in eps)} (the bracket, intersected with the ends known before, can be far narrower than what
        # this grid resolves: at a million steps it stepped h by 0.34 a pass, too slowly)
        h = _step_after(h, min(max(w, _own_width(tp, up, down, (centre,))), 0.99), tol, size, cap)
    else:
        # the tilt was centred outside the bracket it read, or read one end only: the width is more the centre's
        # than the grid's, whose own width at that centre is no guide either (delta there may be far below the
        # value the grid was sized for). Where it moved both ends (it resolves the value), re-centred on the same
        # grid, or a finer one where its own width at both ends (read there from its bounds, as above) is wider than
        # tol: a re-centred tilt reads the ends no better; else one half as fine (kept at the cap; lower ends often
        # need finer grids than upper ones), in a pass that does not count
        recentred += 1
        if not (moved_lo and moved_hi):
            h = _step_after(h, 2.56 * tol, tol, size, cap) or h
        else:
            own = _own_width(tp, up, down, (lo, hi))
            if own > tol:
                h = _step_after(h, min(own, 0.99), tol, size, cap) or h
    if w < 0.5:
        centre = _midway(lo, hi)
    elif centre <= lo or (one_end and moved_lo):
        centre = min(_midway(lo, hi), 1.1 * lo)
    elif centre >= hi or one_end:
        centre = max(_midway(lo, hi), hi / 1.1)
    return h, centre, recentred
