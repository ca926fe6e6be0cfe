r"""Far-tail read-outs by the split of :mod:`._tiltsplit`: :math:`\delta(\varepsilon)` and :math:`\varepsilon(\delta)`
where a far tail is set by one large step (small q, sigma of a few), on grids refined from the width measured (the
grid pairs' error is second order in the step), a fixed number of passes (the same bits on every call).

They run after the tilted read-outs of :mod:`._fartail` where those leave the bracket wider than tol, and are
intersected with them (every bracket is certified); a read-out tries the split first where one large step can set the
tail and its grid is short (:func:`split_first`: a tenth of a second against seconds). Under add/remove the split
reads the add direction and the remove direction stands in by its Chernoff bound
(:func:`._removebound._remove_chernoff`; 0 at or above :func:`._fartail._remove_top`); under replace-one (Poisson) it
reads the symmetric pair (:func:`._symmetric._symmetric_pair`), which is both directions: the split's expansion
holds for any grid pair, a measure on losses read through the profile, which is linear in it.
"""

from __future__ import annotations

import math

import numpy as np

from .. import pld as _pld
from ._chain import _extent, _initial_step, _single_pair, _sym_pair
from ._fartail import (
    _crossing,
    _fit,
    _min_step,
    _one_tail,
    _reach,
    _rel,
    _remove_top,
    one_profile,
    tilted_delta_bracket,
)
from ._rdp import _WIDTH, _saddle_log_delta
from ._removebound import _remove_chernoff
from ._tilt import TILT_MAX_FFT, _tilted, tilted_width
from ._tiltjoin import JoinedPair
from ._tiltsplit import SplitTiltedPair, _bulk_from, split_tilts
from ._tiltstep import _reference, _symmetric_reference

#: The longest single-step grid a split read-out builds (its construction, linear in the length, bounds its time), and
#: for a delta read-out (read at one point: within tol on 0.93 M points at q = 1e-3, sigma = 2, T = 1e4, eps 8.38, on
#: 1.5 M at q = 1e-4, sigma = 5, eps 0.0623).
_SPLIT_POINTS = 2**19
_SPLIT_POINTS_DELTA = 2**21
#: The budget of tilted mass the bulk's window may leave out: the mass outside the transform's array is charged at
#: its own weight (:meth:`._tiltsplit.SplitTiltedPair._log_out`), the aliased mass only against the lower end.
_TAIL = 1e-20
#: Where the bulk below :func:`._tiltsplit.split_index`'s split needs a window beyond the cap, the split moves down to
#: where the bulk's window is at most this many times the one below 0 (:func:`_fitting_split`).
_LOW_SPLIT = 4.0
#: The most a delta read-out's tilts after the first may have of the first one's bulk (:meth:`_Setup.pairs`).
_OTHERS = 8.0
#: The most grids a split read-out tries (the same bits on every call).
_SPLIT_PASSES = 4
#: The longest first single-step grid for which the split read-out runs before the tilted one (:func:`split_first`).
_FIRST_POINTS = 2**15
#: The longest composed bulk array a pass builds for a delta read-out (read at one point), and for an eps read-out
#: (read at some twenty points a pass, its crossings' scans and bisections): the read-out's time is about linear in it.
_ARRAY_DELTA = 2**20
_ARRAY_EPS = 2**17
#: The longest FFT the tilted delta read-out goes to where the eps read-out's cap stops its refinement: twice that.
#: A relative tol on delta is a tol on eps times the tilt (delta falls as e^(-lam eps), lam from about 8 to 400 in far
#: tails) and the grid pairs' width is second order in the step, so where the window is long (many steps) that cap
#: left delta's bracket up to twice too wide (1.2e-3 at q = 0.01, sigma = 1, T = 1e4, delta 1e-300; 6.6e-4 here).
_DELTA_CAP = 2 * TILT_MAX_FFT
#: The tilted delta read-out's grids are sized from this share of the saddle-point estimate (within a factor 25 of
#: the value where it is used: a lower estimate still, whose grids reach a little further than the value needs).
_SADDLE_MARGIN = 1e-3


class _Setup:
    """What every pass of one split read-out shares: the single-step grids' reach, the remove direction's bound,
    the grid pairs with their reference values on a step ``h``."""

    def __init__(self, run, e, tol, d_scale, cap):
        self.run, self.cap = run, cap
        self.beyond = False
        self.rem = _remove_chernoff(run)
        self.top = _remove_top(run)
        self.one_tail = min(_reach(run, e, _one_tail(run, d_scale, tol)),
                            max(1e-6 * one_profile(run, e), 1e-310))   # (well beyond e: its large steps)
        lo_x, hi_x = _extent(run, max(self.one_tail, 1e-310))
        # (the single-step grid's cost: the replace-one pair is built on x >= 0 and mirrored)
        self.length = hi_x - max(lo_x, 0.0) if run.symmetric else hi_x - lo_x

    def r_up(self, x):
        """The remove direction's upper bound at each ``x``."""
        xs = np.atleast_1d(np.asarray(x, float))
        if self.run.symmetric:
            return np.zeros(xs.size)           # (replace-one: the symmetric pair is both directions)
        if self.rem is None:
            return np.where(xs >= self.top, 0.0, 1.0)
        return np.array([0.0 if v >= self.top else self.rem(v) for v in xs])

    def pairs(self, h, e, d_est, lam=None, most=None, others=None, lower=False):
        r"""``[(down, up, lam), ...]``: the dominated and dominating :class:`._tiltsplit.SplitTiltedPair` on step
        ``h`` for a read-out near ``e``, one per tilt (:func:`._tiltsplit.split_tilts`, or ``lam`` alone); ``[]``
        where the split does not apply. ``most``: the longest composed bulk a tilt may have (a tilt whose window
        needs more is left out, before its transform; ``FFTCapError`` where every tilt's does); ``others``: the tilts
        after the first may have at most that many times the first one's (at least 65536 points: at q = 1e-4,
        sigma = 2, T = 1e4, eps 5.95 the bulk's saddle point asked for 2 M points, the profile's slope 61 k, and
        read no narrower); ``lower``: split lower where the bulk's window would not fit (:func:`_fitting_split`; for
        a read at one point: an eps read-out reads a long bulk at many)."""
        q, sigma, steps = self.run
        self.beyond, built = False, []
        for kind in ("pessimistic", "optimistic"):
            if self.run.symmetric:
                one = _sym_pair(q, sigma, self.run.sampler, h, kind, self.one_tail)
                built.append((one, _symmetric_reference(self.run, one)))
            else:
                one = _single_pair(q, sigma, h, kind, "add", self.one_tail)
                built.append((one, _reference(self.run, one, kind, "add", self.one_tail)))
        (pe, rp), (op, ro) = built
        if rp is None or ro is None:
            return []
        cap = self.cap if most is None else min(self.cap, most)
        st = split_tilts(pe, steps, e, d_est, fit=_fitting_split(pe, steps, cap) if lower else None)
        # (no split where the single-step grid ends below e: its reach, not its step, leaves one large step out)
        self.beyond = st is None and float(pe.losses[-1]) <= e
        if st is None or op.pmf.size <= st[0] + 1:
            return []
        b, lams = st
        cuts = [e * k for k in (1.0, 1.25, 1.5, 2.0, 3.0)]
        out, refused = [], None
        tilts = [lam] if lam is not None else lams
        for i, lm in enumerate(tilts):
            c = cap if i == 0 or others is None else min(cap, max(int(others * _bulk_length(pe, steps, tilts[0], b)),
                                                                  2**16))
            try:
                out.append((SplitTiltedPair(op, ro, steps, lm, b, e, _TAIL, c),
                            SplitTiltedPair(pe, rp, steps, lm, b, e, _TAIL, c, cuts=cuts), lm))
            except _pld.FFTCapError as exc:
                refused = exc
        if not out and refused is not None:
            raise refused
        return out

    def next_step(self, h, w, tol, got, most, points=_SPLIT_POINTS):
        """The next step from the relative width ``w`` (second order in ``h``, as :func:`._fartail._step_after`; a
        quarter after a vacuous pass), no finer than the single-step grid (``points``) and the bulk's composed array
        (``got``'s pairs, ``most`` points: read once per point) allow; ``None`` where that is not below 0.7 ``h``."""
        nxt = 0.25 * h if w >= 1.0 else h * min(0.7, max(0.05 if w <= 0.3 else 0.1, 0.8 * math.sqrt(tol / w)))
        # (at (1.47e-4, 2.0, 45686), eps 8.69, a pass 7.3e-2 wide asked 3.4e-6 where 2^21 points allow 4.3e-6)
        floor = max(_min_step(self.run, self.one_tail, max(self.cap, int(points / 0.45))), self.length / points)
        if got:
            floor = max(floor, h * max(p[1].y.size for p in got) / most)
        nxt = max(nxt, floor)
        return nxt if nxt <= 0.7 * h else None


def _bulk_length(one, steps, lam, b):
    """The points of the window the bulk below index ``b`` of the single-step pair ``one`` needs, tilted by ``lam`` and
    composed ``steps - 1`` times (:class:`._tiltsplit.SplitTiltedPair`'s, known without its transform)."""
    k0, bulk = _bulk_from(one.pmf[:b + 1], one.kind)
    tb = _tilted(_pld.PLD(one.h, one.offset + k0, bulk, 0.0, 0.0, one.kind, shift=one.shift), lam)[0]
    return _pld.composed_length(tb, steps - 1, tail=_TAIL) if steps > 1 else bulk.size


def _fitting_split(one, steps, cap):
    r"""``fit(b, lam)`` for :func:`._tiltsplit.split_tilts`: ``b`` where the bulk's window fits ``cap``; else the
    largest split at or above 0 whose bulk's window is at most :data:`_LOW_SPLIT` times the window of the split at 0
    (the bulk's top atoms, tilted, are large steps themselves: at q = 1e-3, sigma = 2, T = 1e4, eps 8.38 the bulk
    below 4.09 needs 30 M points, below 0, 0.5, 1, 2 and 3: 4.4 k, 12 k, 16 k, 39 k and 172 k: the split lands near 1,
    at the same loss on any grid), ``b`` where none fits the cap. Any split gives certified bounds; a lower one leaves
    more runs to the bound on two or more large steps, which stays far below the value where one large step sets the
    tail (there 2.9e-208 against 9.0e-201 at splits 0.5 to 3)."""
    def fit(b, lam):
        if _bulk_length(one, steps, lam, b) <= cap:
            return b
        lo = int(np.searchsorted(one.losses, 0.0, side="left"))
        if lo >= b:
            return b
        target = _LOW_SPLIT * _bulk_length(one, steps, lam, lo)
        if target > cap:
            return b
        hi = b                                   # (the window at lo fits the target, at hi it does not)
        while hi - lo > max(1, b // 4096):
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if _bulk_length(one, steps, lam, mid) <= target else (lo, mid)
        return lo
    return fit


def _pick(scored):
    """The tilt whose bracket was narrowest, kept for finer grids once within a factor 2; else ``None`` (try all: also
    where the two tilts read together were narrowest, :func:`_joined`)."""
    if not scored:
        return None
    sc, lam = min(scored, key=lambda t: (t[0], t[1] is None))
    return lam if sc < math.log(2.0) else None


def _joined_best(scored):
    """Whether the two tilts read together (:func:`_joined`) gave the narrowest bracket of a pass, within a factor 2
    (as :func:`_pick` ranks them)."""
    if not scored:
        return False
    sc, lam = min(scored, key=lambda t: (t[0], t[1] is None))
    return lam is None and sc < math.log(2.0)


def _joined(got):
    """``[(down, up, None)]``: the pass's two tilts read together (:class:`._tiltjoin.JoinedPair`, the larger tilt's
    array above a cut, the smaller's below it), where it has two; else ``[]``."""
    if len(got) != 2:
        return []
    (d1, u1, l1), (d2, u2, l2) = sorted(got, key=lambda g: g[2], reverse=True)
    return [(JoinedPair(d1, d2), JoinedPair(u1, u2), None)]


def split_delta_bracket(run, e, tol, h0, d_scale, cap=TILT_MAX_FFT, give_up=math.inf):
    r"""Certified bracket on :math:`\delta_T(e)` of an add/remove Poisson run from the split read-out, refined from
    step ``h0`` at most four times; ``None`` where the split does not apply or no grid carries it.

    ``d_scale``: a lower estimate of the value, which sizes the grids' reach. Where a pass finds a lower end more
    than twice it (an estimate far below the value: one step's delta times T, at a far tail set by several steps),
    the passes after it are sized from that lower end, starting again from ``h0`` where that pass was nearly vacuous
    (at least half wide): grids sized from far below the value leave a nearly vacuous bracket that no finer step
    narrows (at q = 0.01, sigma = 5, T = 1000, eps 2.1164: (1.5e-204, 5.9e-193) sized from 1.6e-238,
    (8.13e-201, 8.36e-201) from 1.5e-204); else refined from its width as any pass. ``give_up``: no pass after a first
    one whose lower end is 0 and upper end above it (several large steps set the tail: the tilted read-out reads it)."""
    st = _Setup(run, e, tol, d_scale, cap)
    r_up = float(st.r_up(e)[0])
    best, lam, last = None, None, None
    h = _fit(run, h0, st.one_tail, cap)
    resized, others = False, _OTHERS
    for _ in range(_SPLIT_PASSES):
        try:
            got = st.pairs(h, e, d_scale if best is None else max(best[0], d_scale), lam, others=others, lower=True)
        except (_pld.FFTCapError, ValueError):
            got = []
        if not got and st.beyond:
            break                           # (no finer grid reaches further)
        scored = []
        for down, up, lm in got + _joined(got):
            lo, hi = float(down.delta(np.array([e]))[0]), max(float(up.delta(np.array([e]))[0]), r_up)
            if not 0.0 <= lo <= hi:
                raise AssertionError(f"split bracket out of order at {run}, eps {e!r}: ({lo!r}, {hi!r})")
            scored.append((math.log(hi / lo) if lo > 0.0 else math.inf, lm))
            best = (lo, hi) if best is None else (max(best[0], lo), min(best[1], hi))
        lam = _pick(scored)
        # (where the two tilts read together were narrowest, the next pass needs both, the second's bulk uncapped: at
        # (0.01, 5, 100), eps 0.5791, the cap left out the larger tilt (8.3 times the bulk): 3.6e-3; with it 6.3e-4)
        others = None if _joined_best(scored) else _OTHERS
        w = _rel(*best) if best is not None else 1.0
        if w <= tol or (last is not None and w > 0.7 * last) or (best is not None and best[0] == 0.0
                                                                 and best[1] > give_up):
            break
        if not resized and best is not None and best[0] > 2.0 * d_scale:
            resized, d_scale = True, best[0]
            st = _Setup(run, e, tol, d_scale, cap)
            if w >= 0.5:
                # (a nearly vacuous pass: its width says nothing of the grid's; again from the first step)
                lam, last = None, None
                h = _fit(run, h0, st.one_tail, cap)
                continue
        last = w if w < 1.0 else None
        # (the next pass reads the picked tilt alone, where one is picked: only its array sets the next one's)
        h = st.next_step(h, w, tol, [g for g in got if lam is None or g[2] == lam], _ARRAY_DELTA, _SPLIT_POINTS_DELTA)
        if h is None:
            break
    return best


def _centre(lo, hi):
    """Where a pass centres its grids in ``(lo, hi)``: midway, or at the geometric mean where the ends are more than a
    factor 4 apart (a first bracket from far-apart bounds, whose value lies near its lower end: grids centred midway
    can miss the value's large steps altogether)."""
    return 0.5 * (lo + hi) if hi <= 4.0 * lo else math.sqrt(lo * hi)


def split_epsilon_bracket(run, d, lo, hi, tol, h0, cap=TILT_MAX_FFT, passes=_SPLIT_PASSES):
    r"""Certified bracket on :math:`\varepsilon(\delta)` of an add/remove Poisson run inside ``(lo, hi)`` (finite)
    from the split read-out centred midway, refined from step ``h0`` at most four times: the upper end where the
    dominating bounds (the smallest over the tilts, and the remove direction's bound) fall to ``d``, the lower end
    where a dominated one is still above it (:func:`._fartail._crossing`); ``(lo, hi)`` where no grid improves it.
    Each pass centres its grids in the bracket (:func:`_centre`), their reach sized from that centre: where the
    split does not apply there (one step's profile beyond it below the float range) the first centre moves towards
    the lower end (at most three times), and where a pass moves the bracket's centre by a tenth the reach is sized
    again. ``passes``: the most grids read (fewer where the read-out goes before the tilted one). The next pass's step
    is bounded by the picked tilt's array, else by those of the tilts whose lower bound is off 0 (a second tilt
    reading 0 to 7.5e-197 stopped eps at (1.17e-3, 4.0, 25473), delta 1e-264, at 4.8e-3)."""
    if not 0.0 < lo < hi < math.inf:
        return lo, hi
    centre = _centre(lo, hi)
    st = _Setup(run, centre, tol, d, cap)
    lam, last = None, None
    h = _fit(run, h0, st.one_tail, cap)
    done, moved = 0, 0
    while done < passes:
        try:
            # (a bulk longer than this is not read at the many points a crossing needs: that tilt is left out)
            got = st.pairs(h, centre, d, lam, most=4 * _ARRAY_EPS)
        except (_pld.FFTCapError, ValueError):
            got = []
        if not got and done == 0 and moved < 3 and centre > 1.1 * lo:
            moved += 1
            # no split at this centre (one step's profile beyond it is below the float range, or its grid too long):
            # a first bracket from far-apart bounds, whose value lies nearer its lower end; move the centre there
            centre = math.sqrt(lo * centre)
            st = _Setup(run, centre, tol, d, cap)
            h = _fit(run, h0, st.one_tail, cap)
            continue
        done += 1
        if got:
            def up(x, got=got, st=st):
                xs = np.atleast_1d(np.asarray(x, float))
                v = np.min([p[1].delta(xs) for p in got], axis=0)
                return np.maximum(v, st.r_up(xs))

            def down(x, got=got):
                xs = np.atleast_1d(np.asarray(x, float))
                return np.max([p[0].delta(xs) for p in got], axis=0)
            new_hi = _crossing(up, lo, hi, d, above=False, points=9, rtol=1e-3 * tol)
            if new_hi < hi or float(up(hi)[0]) <= d:
                hi = min(hi, new_hi)
            lo = max(lo, min(_crossing(down, lo, hi, d, above=True, points=9, rtol=1e-3 * tol), hi))
            uc, dc = float(up(centre)[0]), float(down(centre)[0])
            scored = []
            for dn_p, up_p, lm in got:
                a, b = float(up_p.delta(np.array([centre]))[0]), float(dn_p.delta(np.array([centre]))[0])
                scored.append((math.log(a / b) if a > 0.0 and b > 0.0 else math.inf, lm))
            lam = _pick(scored)
        w = _rel(lo, hi)
        if w <= tol or (last is not None and w > 0.7 * last):
            break           # (the last: a finer grid did not narrow it as the error model has it; no step will)
        last = w if w < 1.0 else None
        # (the grid's own width in eps, from its two bounds at the centre: about e^(lam width))
        lam_c = max(p[2] for p in got) * centre if got else 0.0
        own = math.log(uc / dc) / lam_c if lam_c > 0.0 and dc > 0.0 else 1.0
        live = [g for g, (sc, _) in zip(got, scored) if math.isfinite(sc)] if got else []
        h = st.next_step(h, min(max(w, own), 1.0), tol,
                         [g for g in got if g[2] == lam] if lam is not None else live or got, _ARRAY_EPS)
        if h is None:
            break
        if abs(_centre(lo, hi) - centre) > 0.1 * centre:
            # the value lies well away from where this setup sized the grids' reach: size them again there
            st = _Setup(run, _centre(lo, hi), tol, d, cap)
            h = _fit(run, h, st.one_tail, cap)
        centre = _centre(lo, hi)
    return lo, hi


def split_first(run, e, tol, h0, d, cap=TILT_MAX_FFT):
    r"""Whether the split read-out goes first at ``e`` (``d`` an estimate of the value): where one large step can set
    the tail (:math:`T\delta_1(e)`, one step's profile in any of :math:`T` places, reaches a thousandth of ``d``) and
    the split's first single-step grid is short (at most :data:`_FIRST_POINTS`), it costs a tenth of a second and,
    where it meets tol, saves the tilted read-out (seconds there); elsewhere the tilted read-out goes first and the
    split only where that misses tol (and one step can set the tail)."""
    if not _one_step_sets(run, e, d):
        return False
    st = _Setup(run, e, tol, d, cap)
    return st.length / _fit(run, h0, st.one_tail, cap) <= _FIRST_POINTS


def _tilted_capped(run, e, tol, h_model, d):
    r"""Whether the tilted delta read-out at ``e`` would stop at its longest FFT (:data:`_DELTA_CAP`) wider than tol
    (``tol`` relative; ``d`` an estimate of the value) where the split read-out can do better: its window (in loss
    units, :func:`._tilt.tilted_width` on a coarse grid) over the step ``h_model`` the width model asks for (where the
    saddle-point estimate gave none, from the largest tilt the split would read with, :func:`_bulk_width`). The split
    read-out then goes first where one large step can set the tail (at q = 1e-3, sigma = 2, T = 1e4, eps 8.38: the
    tilted one stops 4.9e-3 wide, the split one meets tol), or where its composed bulk at that step fits
    :data:`_ARRAY_DELTA` points: at q = 1e-3, sigma = 5, T = 1e4, eps 0.6246 one step's delta, T-fold, is 1e-49 of
    the value, but the whole step tilted to 1200 holds large steps up to its grid's end, whose window spans 4.3 nats,
    the bulk's 0.43 (the tilted read-out stopped 3.8e-3 wide in 2.8 s, the split one reads 6.8e-4 in 3.4 s); under
    replace-one at (1e-3, 5, 1000), eps 0.9949 (delta 9.1e-301) the tilted read-outs took 4 s and left the lower end
    ten times low, the split reads 6.3e-4 in 0.6 s. Elsewhere (a long run's tail, set by the bulk, at q = 1e-4,
    sigma = 1, T = 1e7) the split's bulk is the whole step's, and it would cost seconds for nothing."""
    one_sets = _one_step_sets(run, e, d)
    bulk = None
    if h_model is None:
        # (no saddle-point estimate: the tilt from one step's profile slope at e where one large step sets the tail,
        # else the split's largest tilt)
        lo1, hi1 = one_profile(run, e - 1e-3), one_profile(run, e + 1e-3)
        if one_sets:
            lam = math.log(lo1 / hi1) / 2e-3 if 0.0 < hi1 < lo1 else 0.0
        else:
            bulk = _bulk_width(run, e, tol, d)
            lam = bulk[1]
        if not lam > 0.0:
            return False
        h_model = math.sqrt(0.7 * tol / (_WIDTH * run.steps)) / lam
    one_tail = _reach(run, e, _one_tail(run, d, tol))
    lo, hi = _extent(run, max(one_tail, 1e-310))
    try:
        width = tilted_width(run, (hi - lo) / 8192.0, e, 1e-4 * tol, one_tail, d)
    except ValueError:
        return False
    if width / h_model <= _DELTA_CAP:
        return False
    return one_sets or (bulk if bulk is not None else _bulk_width(run, e, tol, d))[0] / h_model <= _ARRAY_DELTA


def _bulk_width(run, e, tol, d):
    """``(width, lam)``: the width in loss units of the split read-out's composed bulk at ``e`` (``d`` an estimate of
    the value), the least over its tilts, on a single-step grid of 8192 points (:func:`_bulk_length`: about the same
    on any grid), and its largest tilt; ``(inf, 0)`` where the split does not apply or no such grid can be built (a
    reach near the float resolution of the losses: q = 5e-324)."""
    st = _Setup(run, e, tol, d, TILT_MAX_FFT)
    h = st.length / 8192.0
    try:
        one = (_sym_pair(run.q, run.sigma, run.sampler, h, "pessimistic", st.one_tail) if run.symmetric else
               _single_pair(run.q, run.sigma, h, "pessimistic", "add", st.one_tail))
    except ValueError:
        return math.inf, 0.0
    sp = split_tilts(one, run.steps, e, d)
    if sp is None:
        return math.inf, 0.0
    b, lams = sp
    return min(_bulk_length(one, run.steps, lam, b) for lam in lams) * one.h, max(lams)


def _one_step_sets(run, e, d, share=1e-3):
    r"""Whether one large step can set the tail at ``e`` (``d`` an estimate of delta there): :math:`T\delta_1(e)`, one
    step's profile (add direction, or the replace-one pair) in any of :math:`T` places, reaches a ``share`` of ``d``.
    Elsewhere (a tail of the bulk, many steps each a little above its mean: long runs) the split read-out, built for
    the other kind, is left out."""
    return run.steps * one_profile(run, e) >= share * d


def _split_step(run, e, tol, h0):
    r"""The split read-out's first step at ``e`` (``tol`` relative): the width model, :data:`_WIDTH` :math:`T(\lambda
    h)^2`, at a tenth of ``tol``, with :math:`\lambda` the slope of one step's log profile at ``e`` (the tilt of the
    large step that sets the tail); ``h0`` where that is finer or the profile has no slope there."""
    a, b = max(e - 1e-3, 0.5 * e), e + 1e-3
    lo1, hi1 = one_profile(run, a), one_profile(run, b)
    if not 0.0 < hi1 < lo1:
        return h0
    lam = math.log(lo1 / hi1) / (b - a)
    return max(h0, math.sqrt(0.1 * tol / (_WIDTH * run.steps)) / lam)


def far_delta(run, e, t, d_scale, d_max=1.0):
    r"""The far tail's :math:`\delta(e)` at relative tol ``t / 0.01``: the tilted read-out
    (:func:`._fartail.tilted_delta_bracket`, its single-step grids sized from ``d_scale``) and the split one
    (:func:`split_delta_bracket`: first where :func:`split_first` or :func:`_tilted_capped` says so, alone where it
    then meets tol; after the tilted one where that stays wider than tol and one large step can set
    the tail, :func:`_one_step_sets`), each certified, intersected; ``None`` where neither carries it.

    The tilted grids end where the profile falls to a small share of ``d_scale``: a lower floor far below the value
    makes them long and the read-out vacuous (two steps at q = 0.01, sigma = 5: (0, 7.7e-40) around 1e-50 from a
    floor of 2.7e-129, [9.98e-51, 1.0006e-50] when sized from 1e-50); a lower end found above twice the size re-sizes
    the tilted read-out's next grids itself. Where the bracket stays wider than tol with a lower end below half the
    size, read again sized from it (from the upper end where the lower is 0; at most three times, and not where that
    is within a factor 2 of the last size). The tilted read-out is sized from the saddle-point estimate
    (:func:`._rdp._saddle_log_delta`) times ``_SADDLE_MARGIN``, at most ``d_max`` (an upper bound), where that is
    larger: a lower estimate far below the value costs a window that much wider (1.1 to 1.5 s of 1.4 to 2.2 s at
    delta 1e-100 ... 1e-200, q = 0.01, sigma 1 to 2, where the estimates it had were 1e-66 ... 1e-80 of the value), one
    above it a read-out again. The split read-out's place is decided from ``d_scale``, the
    estimate built for it; under replace-one it starts from :func:`_split_step` (at q = 1e-5, sigma 1.5, T = 2, eps
    5.754 it reads 3e-6 wide in 0.5 s, where the tilted read-outs took 13 s and the split one after them 3 s)."""
    tr = t / 1e-2
    h0 = _initial_step(run, t)
    est = _saddle_log_delta(run, e, with_tilt=True)
    # (the step at which the width model, _WIDTH * T (lam h)^2, puts the first tilted pass at 0.7 tol)
    h_model = None if est is None else math.sqrt(0.7 * tr / (_WIDTH * run.steps)) / est[1]
    # (the first tilted pass's step: from the tilt alone also where the sum is skewed, not an estimate of delta)
    tilt = est if est is not None else _saddle_log_delta(run, e, max_skew=3.0, with_tilt=True)
    first_step = None if tilt is None else math.sqrt(0.7 * tr / (_WIDTH * run.steps)) / tilt[1]
    # (the tilted read-out's size: also from the saddle-point estimate, see above)
    d_tilt = d_scale if est is None else max(d_scale, min(_SADDLE_MARGIN * math.exp(max(est[0], -745.0)), d_max))
    # (replace-one: the split's first step from the width model, where coarser; add/remove keeps h0: its dominated
    # pair read 0 on grids up to 16 times finer than the model's at q = 1e-5, sigma 1.5, T = 2)
    hs = _split_step(run, e, tr, h0) if run.symmetric else h0
    first, d0 = split_first(run, e, tr, hs, d_scale) or _tilted_capped(run, e, tr, h_model, d_tilt), d_scale
    # (replace-one: no second pass where the first reads 0 and above twice T times one step's delta: at (1e-4, 0.5,
    # 10), eps 14.2, several large steps set the tail; the split read 0 in 0.5 s, the tilted one 2e-4 in 0.02 s)
    s = (split_delta_bracket(run, e, tr, hs, d_scale, give_up=2.0 * d_scale if run.symmetric else math.inf)
         if first else None)
    if s is not None and s[1] - s[0] <= tr * s[1]:
        return s
    d_scale = d_tilt
    b = tilted_delta_bracket(run, e, tr, h0, d_scale, wide_cap=_DELTA_CAP, first=first_step)
    for k in range(3):
        if b is None or not b[1] > 0.0 or b[1] - b[0] <= tr * b[1] or (k > 0 and b[0] == 0.0):
            break                                   # (a lower end still 0 after re-sizing: a tail the tilt misses)
        # the lower end found where it is off 0 (a lower estimate, as the sizing asks), else the upper end
        nxt = b[0] if b[0] > 0.0 else b[1]
        if 0.5 * d_scale <= nxt <= 2.0 * d_scale or b[0] > 2.0 * d_scale:
            break       # (sized from about that already; a lower end above: the read-out re-sized its grids from it)
        d_scale = nxt
        b2 = tilted_delta_bracket(run, e, tr, h0, d_scale, wide_cap=_DELTA_CAP)
        if b2 is None:
            break
        b = (max(b[0], b2[0]), min(b[1], b2[1]))
    size = max(b[0], d_scale) if b is not None else d_scale
    if ((b is None or not b[1] - b[0] <= tr * b[1]) and (not first or size > 2.0 * d0)
            and (b is None or not b[1] <= 2.0 * b[0] or _one_step_sets(run, e, size, 1e-6))):
        # a far tail set by one large step: the split read-out, sized from the best lower end known (again where the
        # tilted read-outs were sized from well above what the first one was built for); also where the tilted one
        # left the ends more than a factor 2 apart, as where a few steps just below e set the tail with the bulk
        # (q = 1e-4, sigma = 5, T = 1e4, eps 0.06225: T times one step's delta at e is 1e-30 of the value, the tilted
        # read-out (8.5e-201, 6.2e-198), the split one (1.18e-200, 1.34e-200))
        s2 = split_delta_bracket(run, e, tr, hs, size)
        s = s2 if s is None or s2 is None else (max(s[0], s2[0]), min(s[1], s2[1]))
    if s is not None:
        b = s if b is None else (max(b[0], s[0]), min(b[1], s[1]))
        if not b[0] <= b[1]:
            raise AssertionError(f"split bracket disjoint from the tilted one at {run}, eps {e!r}: {b!r}")
    return b
