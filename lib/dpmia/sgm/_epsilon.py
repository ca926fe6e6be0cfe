r"""The tight :math:`\varepsilon(\delta)` and :math:`\delta(\varepsilon)` of DP-SGD (add/remove adjacency),
as certified brackets: the four composed grid pairs (both kinds, both directions) refined to ``tol``,
the bulk pairs where few steps are sampled (:mod:`._bulk`), the exact single step, Rényi accounting
and the sampling-pattern bound as safe ends where a grid cannot be tight."""

from __future__ import annotations

import math

import numpy as np

from .. import _checks, gaussian
from ._accountant import _advantage_bracket
from ._bulk import _bulk_epsilon
from ._chain import _composed, _composed_alone, _initial_step, _refine
from ._fartail import tilted_epsilon_bracket
from ._onestep import _TINY, _delta_one_step, _epsilon_one_step, _epsilon_one_step_add, _epsilon_one_step_r, _outward
from ._rdp import _epsilon_rdp_certified, _epsilon_rdp_replace_one, _log_delta_rdp, _rdp_cap_replace_one
from ._readout import TOL_EPS, TOL_PROB, _clt_eps, _eps_of, _eps_tail, _eps_width, _four, _prob_width
from ._replace import replace_one_profile
from ._setting import Run, _check_tol, check_run
from ._splitread import far_delta, split_epsilon_bracket, split_first
from ._tvbounds import (
    _beyond_float,
    _chi2_tv_upper,
    _clt_mu,
    _eps_tail_lower,
    _mixture_delta_upper,
    _sampled_cap,
    _tail_delta_lower,
)


def _eps_readout(run, d, tail, tol, far=True):
    """Read-out for :func:`refine`: eps(delta) = max(eps_add, eps_remove) from both directions, until
    one grid shows one direction's lower end at or above the other's upper end. Then eps is that
    direction's (certified by that grid), and finer grids compose only it: half the work. Before the first
    grid, the remove direction is read on a grid four times coarser (:func:`_remove_below_add`).

    ``readout.tail_needed``: the window budget under which the dominating pair's slack moves eps by
    at most a tenth of ``tol`` (relative), from the profile's measured slope at the upper end; where
    the profile is flat (eps set by a few far sampled steps) that is far below ``tail``. ``far``: the far-tail
    read-outs follow (a grid whose slack sets the width is then given up before the remove direction)."""
    dirs = ["add", "remove"]

    def readout(h, cap):
        if len(dirs) == 2 and not run.symmetric and not readout.coarse_tried:
            add = _four(run, h, tail, cap, ("add",))
            pe = add["pessimistic", "add"]
            if pe.epsilon(d) == math.inf or (far and pe.inf_mass + pe.slack_q > 0.25 * d and run.sampler == "poisson"):
                # the add direction's dominating pair leaves eps unbounded on this grid (its slack and its mass at
                # +infinity reach delta), or its slack sets the width (below; Poisson: the far-tail read-outs follow):
                # the grid is hopeless whatever the remove direction reads, which could only add a lower end. The add
                # direction's lower end is one for the maximum; the upper end is left to the caller's other bounds
                readout.hopeless = True
                return add["optimistic", "add"].epsilon(d), math.inf
            readout.coarse_tried = True
            if _remove_below_add(run, h, tail, cap, lambda p: p.epsilon(d)):
                dirs[:] = ["add"]
        c = _four(run, h, tail, cap, tuple(dirs))
        # a dominating pair whose mass at +infinity and slack already reach a quarter of delta sets
        # the width by them, and a finer grid only adds float error (measured at delta = 1e-9 and T =
        # 1e7: 2.8 s for a wider bracket): stop refining (the caller tries its other bounds)
        readout.hopeless = any(v.inf_mass + v.slack_q > 0.25 * d for k, v in c.items() if k[0] == "pessimistic")
        if len(dirs) == 2:
            e = {k: v.epsilon(d) for k, v in c.items()}
            for a, b in (("add", "remove"), ("remove", "add")):
                if e["optimistic", a] >= e["pessimistic", b]:
                    dirs[:] = [a]
                    break
            res = (max(e["optimistic", "add"], e["optimistic", "remove"]),
                   max(e["pessimistic", "add"], e["pessimistic", "remove"]))
        else:
            res = _eps_of(c, d)
        hi = res[1]
        if 0.0 < hi < math.inf:
            for x in dirs:
                pe = c["pessimistic", x]
                # (from the tables the eps read-out built: no O(n) sums of their own)
                d_at = pe._delta_table(np.array([hi * (1.0 - 1e-3), hi]))
                slope = (d_at[0] - d_at[1]) / (1e-3 * hi)
                # (only where the windows' budget is a good part of that slack: float error is not
                # lowered by a smaller budget)
                if pe.slack_q > 0.1 * tol * hi * slope and tail >= 0.25 * pe.slack_q:
                    readout.tail_needed = min(readout.tail_needed, 0.1 * tol * hi * slope)
                # slack beyond the windows' budget (the single steps' float error grown T-fold, the FFT's)
                # that alone moves the ends apart by half the tol: a finer grid cannot narrow the bracket
                # (at q = 1e-4, T = 1e6, delta = 1e-9 the next grid cost 2.8 s for a wider one)
                excess = sum(max(c[k, x].slack_q - tail, 0.0) for k in ("pessimistic", "optimistic"))
                if excess > 0.5 * tol * hi * slope:
                    readout.hopeless = True
        return res
    readout.tail_needed, readout.coarse_tried = tail, False
    return readout


def _remove_below_add(run, h, tail, cap, read):
    """Whether the remove direction's read-out (``read`` of a composed pair: eps(delta) or delta(eps), either
    increasing in the pair's dominance) is certainly at most the add direction's: the remove direction's
    dominating grid pair on a grid four times coarser (its single step the pair on ``h`` re-gridded) reads an upper
    end at or below the add direction's lower end on ``h`` (the add pairs are read on ``h`` anyway). Then the
    read-out, the larger of the two directions', is the add direction's, and the remove one need not be composed."""
    try:
        return (read(_composed_alone(run, 4.0 * h, "pessimistic", "remove", tail, cap, coarsen=4))
                <= read(_composed(run, h, "optimistic", "add", tail, cap)))
    except ValueError:
        return False


def _eps_refined(run, d, tol, rdp_hi=None, one_step=0.0, far=False):
    """The refined grid bracket on eps(delta) of ``steps`` steps (``ValueError`` if no grid fits);
    ``rdp_hi``, Renyi accounting's upper bound, helps guess the grid where the CLT cannot."""
    e_clt = _clt_eps(run, d)
    tail = _eps_tail(run, d, e_clt)
    # measured: the grid of an advantage bracket 1e-4 wide gives eps brackets under 1e-3 relative at
    # the papers' settings (eps up to about 6), so start from the advantage model at tol / 10. The
    # grid error moves eps by about 0.11 T h^2 / sd in absolute terms (the same as it moves the TV, in
    # units of the loss's density there), so a relative tol on a larger eps allows a coarser grid:
    # scale by the CLT estimate of eps (a large eps at ten million steps needs a grid 100x coarser)
    if e_clt is not None:
        e_est = e_clt
    else:
        # (sigma so small that the CLT overflows: Renyi accounting, about 10x above the tight eps there)
        e_est = 6.0 if rdp_hi is None or not math.isfinite(rdp_hi) else max(rdp_hi / 10.0, 6.0)
    res = None
    for _ in range(2):
        readout = _eps_readout(run, d, tail, tol, far)
        r = _refine(run, tol, readout,
                    lambda r, readout=readout: 0.0 if getattr(readout, "hopeless", False) else _eps_width(r),
                   model_tol=1e-1 * tol * min(max(1.0, e_est / 6.0), 1e4), tail=tail, scale=one_step)
        res = r if res is None else (max(res[0], r[0]), min(res[1], r[1]))
        w = _eps_width(res)
        if w is not None and w <= tol or not readout.tail_needed < 0.5 * tail:
            break
        # the slack of the windows set the width (a flat profile): once more with the budget it asked for
        tail = readout.tail_needed
    return res


def epsilon_bracket(q, sigma, steps, delta, *, tol=TOL_EPS, neighbours="add-remove", sampler="poisson"):
    r"""Certified bracket on the tight :math:`\varepsilon(\delta)` of :math:`T` SGM steps (add/remove adjacency).

    ``tol`` is the target relative width, met down to ``delta`` = 1e-300 where the far tail is not set by several
    large steps (tilted compositions; the split of each step at a large loss where one large step sets it).
    The upper end never understates the tight value and, with Poisson sampling, is never above Rényi accounting's
    certified bound (:func:`epsilon_rdp_certified`; under replace-one the same divergences plus
    :math:`\ln(1/(1-q))` a step; where the two are equal, that bound answered); ``inf`` only if no finite
    :math:`\varepsilon` reaches ``delta``. ``neighbours`` and ``sampler`` as in :func:`advantage_bracket` (under
    replace-one the ε of the replace-one pair; with fixed-size batches a bracket on the bound, upper end certified)."""
    run = check_run(q, sigma, steps, neighbours=neighbours, sampler=sampler)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    return _epsilon_bracket(run, d, _check_tol("tol", tol))


def _closed(v, rel=1e-11):
    """The bracket of a closed form rounded up (its root or value found to about 1e-15 relative, then stepped
    to the safe side): ``(v (1 - rel), v)``, each end also moved outward by four units of the least subnormal (below
    the normal range, where the relative steps do nothing: :func:`._onestep._outward`)."""
    return _outward(float(v), rel, 0.0)


#: Below this delta no plain composition bounds eps (its slack is at least 4u, about 4.4e-16)
_PLAIN_FLOOR = 1e-16
#: A plain T-fold composition's slack per step, at the least (0.40 ... 1.5 u measured on the first grid of eps reads
#: over q 1e-5 ... 0.1, sigma 0.5 ... 5, T 1e4 ... 1e7): below T times it the grid is hopeless (see _eps_readout)
_STEP_SLACK = np.finfo(float).eps / 2.0
#: Below this times T u (at tol 1e-3; in proportion to tol) the plain composition's float slack, about 0.4 u a step in
#: extended precision, is predicted to set its eps bracket's width (it moves eps by about slack / (delta lambda), with
#: eps lambda up to about 60): where the far-tail read-outs follow, the plain one is read at ten times the tol, else
#: at three times the default at the finest (q = 1e-4, sigma 0.671, T = 1e6, delta 1e-9: at tol 1e-3 0.84 % wide, in
#: 0.46 s; at 3e-3 0.85 %, in 0.22 s; at 1e-2 1.3 %, in 0.12 s)
_FLOAT_LIMITED = 30.0


def _epsilon_bracket(run, d, t, far=True):
    qq, ss, tt = run
    if qq == 0.0 or tt == 0:
        return 0.0, 0.0
    if run.symmetric:
        return _epsilon_bracket_r(run, d, t)
    if qq == 1.0:
        return _closed(gaussian.epsilon(d, math.sqrt(tt) / ss))
    if tt == 1:
        return _closed(_epsilon_one_step(qq, ss, d))
    # delta(eps) <= TV <= min(1 - (1-q)^T, chi-square bound) for every eps >= 0: below delta, eps = 0
    if min(_sampled_cap(run), _chi2_tv_upper(run)) <= d:
        return 0.0, 0.0
    rdp_hi = _epsilon_rdp_certified([run], d)[0]
    one = _epsilon_one_step(qq, ss, d)
    if qq * tt <= 0.05:
        # few sampled steps: eps may be set by the composed loss near 0 at the scale of q, which the
        # bulk pairs resolve on a grid over [ln(1 - q), b] only (see ._bulk)
        bulk = _bulk_epsilon(run, d, t, eps_lo=one)
        if bulk is not None and bulk[1] - bulk[0] <= t * bulk[1]:
            return float(max(bulk[0], one)), float(min(bulk[1], rdp_hi))
    if d < _PLAIN_FLOOR or (far and d < run.steps * _STEP_SLACK and qq * tt > 1.0 and run.sampler == "poisson"):
        # every composed dominating pair carries at least 4u of its mass as slack (each atom's rounding to double,
        # see pld.compose_pair), and T-fold ones about T u: no plain composition is read (its lower end, eps at its
        # slack, is far below delta's; where few steps are sampled the split read-out below starts from it)
        lo, hi = 0.0, rdp_hi
    else:
        limited = qq * tt > 1.0 and run.sampler == "poisson" and d < _FLOAT_LIMITED * tt * _STEP_SLACK * 1e-3 / t
        try:
            lo, hi = _eps_refined(run, d, (10.0 * t if far else max(t, 3.0 * TOL_EPS)) if limited else t, rdp_hi, one,
                                  far)
        except ValueError:
            # no grid fits the caps: Renyi accounting (closed form, convexity between orders) is a certified
            # upper bound (the add direction dominates for the subsampled Gaussian); eps(delta) grows
            # with T, so the bracket at the most steps T / 4^k whose grid fits is a lower end
            lo, hi = _eps_lower_fewer(run, d, t), rdp_hi
    hi = min(hi, rdp_hi)
    if not lo <= hi:        # the grid could not resolve the far tail: fall back to a safe lower end
        lo = 0.0
    lo = max(lo, one)   # eps(delta) increases with T: one step is a lower end
    if hi - lo > t * hi:
        # not tight (delta below the grid's float slack, or no grid fits): the sampling-pattern bound
        hi = _eps_mixture(run, d, lo, hi)
    if hi - lo > t * hi:
        # and the far-tail floor from sub-mixtures of heavily sampled patterns
        lo = max(lo, _eps_tail_lower(run, d, lo, hi))
    if far and hi - lo > t * hi and run.sampler == "poisson":
        lo, hi = _far_epsilon(run, d, lo, hi, t)
    return float(lo), float(hi)


def _far_epsilon(run, d, lo, hi, t):
    """The far tail's eps(delta) inside ``(lo, hi)``, where the grids' float slack hides delta: tilted compositions
    (:mod:`._tilt`) and the split read-out (:mod:`._splitread`, for a far tail set by one large step), each certified,
    intersected. The split goes first where few steps are sampled (qT <= 1: a far tail is then set by the one or two
    that are; add/remove) and its first grid is short (:func:`._splitread.split_first` at the lower end): one pass finds
    where eps lies; re-centred there (its grids' reach is sized from the centre), the full read-out where that pass
    narrowed the bracket fourfold. Where the bracket is still wider than tol the tilted read-out (fast on a narrow
    bracket) goes next, and the split after it."""
    q, sigma, steps = run
    h0 = _initial_step(run, t)
    if q * steps <= 1.0 and 0.0 < lo < hi < math.inf and not run.symmetric and split_first(run, lo, t, h0, d):
        w0 = hi - lo
        lo, hi = split_epsilon_bracket(run, d, lo, hi, t, h0, passes=1)
        if t * hi < hi - lo <= 0.25 * w0:
            lo, hi = split_epsilon_bracket(run, d, lo, hi, t, h0)
    if not math.isfinite(hi) or hi - lo > t * hi:
        lo, hi = tilted_epsilon_bracket(run, d, lo, hi, t, h0)
    if hi - lo > t * hi:
        lo, hi = split_epsilon_bracket(run, d, lo, hi, t, h0)
    return lo, hi


def _epsilon_bracket_r(run, d, t):
    """:func:`epsilon_bracket` under replace-one: the closed form at q = 1 (Poisson), the exact single step as a lower
    end (Poisson), the grid pairs of the symmetric pair (one direction), the sampling-pattern bound and (Poisson) the
    tilted compositions where the grid cannot be tight, capped by :func:`._rdp._epsilon_rdp_replace_one`."""
    qq, ss, tt = run
    if qq == 1.0 and run.sampler == "poisson":
        return _closed(gaussian.epsilon(d, 2.0 * math.sqrt(tt) / ss))
    # delta(eps) <= TV <= the cap (and twice the add/remove chi-square bound, Poisson) for every eps >= 0
    if min(_sampled_cap(run), 2.0 * _chi2_tv_upper(Run(qq, ss, tt)) if run.sampler == "poisson" else 1.0) <= d:
        return 0.0, 0.0
    if tt == 1:
        if run.sampler == "poisson":
            return _epsilon_one_step_r(qq, ss, d)
        # the fixed-batch bound's one step: for eps >= 0 the add/remove pair's H(Q || P) at sigma / 2
        return _closed(_epsilon_one_step_add(qq, 0.5 * ss, d))
    one = _epsilon_one_step_r(qq, ss, d)[0] if run.sampler == "poisson" else 0.0
    if run.sampler == "poisson" and (d < _PLAIN_FLOOR or (d < tt * _STEP_SLACK and qq * tt > 1.0)):
        # below every plain composition's float slack (as in _epsilon_bracket): its read-out bounds nothing
        lo, hi = 0.0, _epsilon_rdp_replace_one(run, d)
    else:
        try:
            lo, hi = _eps_refined(run, d, t, None, one)
        except ValueError:
            lo, hi = _eps_lower_fewer(run, d, t), math.inf
    if not lo <= hi:
        lo = 0.0
    lo = max(lo, one)
    if not math.isfinite(hi) or hi - lo > t * hi:
        hi = _eps_mixture(run, d, lo, hi)
    if (not math.isfinite(hi) or hi - lo > t * hi) and run.sampler == "poisson":      # the far tail
        lo, hi = _far_epsilon(run, d, lo, hi, t)
    if run.sampler == "poisson":
        hi = _rdp_cap_replace_one(run, d, lo, hi)     # (where a far tail lies beyond one step's grids: not inf)
    else:
        # the grid pairs bound the run from above only: the lower end is what a concrete dataset attains
        # (sgm._accountant._attained), the add/remove run at sigma / 2 (without its far-tail refinement)
        lo = min(_epsilon_bracket(Run(qq, 0.5 * ss, tt), d, t, far=False)[0], hi)
    return float(lo), float(hi)


def _eps_mixture(run, d, lo, hi):
    """The smallest eps in [lo, hi] (to 1e-12 relative, rounded up) whose :func:`~dpmia.sgm.mixture_delta_upper`
    is at most ``d``; ``hi`` if none (a certified upper end either way: the bound is one on delta)."""
    if not math.isfinite(hi):
        hi = max(2.0 * lo, 1.0)
        for _ in range(200):
            if _mixture_delta_upper(run, hi) <= d:
                break
            hi *= 2.0
        else:
            return math.inf
    elif _mixture_delta_upper(run, hi) > d:
        return hi
    a = lo
    for _ in range(80):
        if hi - a <= 1e-12 * hi:
            break
        mid = 0.5 * (a + hi)
        if _mixture_delta_upper(run, mid) <= d:
            hi = mid
        else:
            a = mid
    return hi


def _eps_lower_fewer(run, d, tol, depth=6):
    """A lower end on eps(delta) after ``steps`` steps from the bracket at steps / 4, / 16, ... (the
    first whose grid fits the caps; 0 if none within ``depth``)."""
    fewer = run.steps
    for _ in range(depth):
        fewer //= 4
        if fewer < 2:
            return 0.0
        try:
            lo, hi = _eps_refined(run.with_steps(fewer), d, tol)
        except ValueError:
            continue
        return float(lo) if lo <= hi else 0.0
    return 0.0


def epsilon(q, sigma, steps, delta, *, tol=TOL_EPS, neighbours="add-remove", sampler="poisson"):
    r"""Tight :math:`\varepsilon(\delta)` of DP-SGD (add/remove), never understated (upper end of the bracket).

    Examples
    --------
    >>> from dpmia import sgm
    >>> round(sgm.epsilon(0.01, 1.0, 1000, 1e-5), 3)
    1.829
    """
    return epsilon_bracket(q, sigma, steps, delta, tol=tol, neighbours=neighbours, sampler=sampler)[1]


def _clt_delta(run, e):
    """The CLT estimate of delta at ``e`` (uncertified), or 0: a tenth of it sizes the tilted read-out's grids where
    one step's delta is far below the value (near Gaussian; too high a size gives a looser bracket, which the read-out
    re-sizes from), and it sends values far below the plain grid's reach to the tilted read-out first."""
    mu = _clt_mu(run)
    if not 0.0 < mu < 1e6:
        return 0.0
    with np.errstate(all="ignore"):
        ld = float(gaussian.log_delta(e, mu))
    return math.exp(ld) if math.isfinite(ld) else 0.0


def delta_bracket(q, sigma, steps, eps, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Certified bracket on the tight
    :math:`\delta(\varepsilon) = \max(H_{e^\varepsilon}(Q\|P), H_{e^\varepsilon}(P\|Q))`.

    Add/remove adjacency for :math:`T` steps; ``eps`` a real number (negative values give the
    profile below 0); ``tol`` the width, absolute for values of at least 0.01 and
    relative (``tol`` / 0.01) below. ``neighbours`` and ``sampler`` as in :func:`epsilon_bracket`. Within the
    tolerance of 0, where :math:`\mathrm{TV} - (e^\varepsilon - 1) \le \delta(\varepsilon) \le \mathrm{TV}`, from the
    total variation (:func:`advantage_bracket`, Poisson sampling).
    """
    run = check_run(q, sigma, steps, neighbours=neighbours, sampler=sampler)
    qq, ss, tt = run
    e = _checks.scalar("eps", eps)
    t = _check_tol("tol", tol)
    if qq == 0.0 or tt == 0:
        return (0.0, 0.0) if e >= 0 else (-math.expm1(e), -math.expm1(e))
    if qq == 1.0 and run.sampler == "poisson":
        mu = (2.0 if run.symmetric else 1.0) * math.sqrt(tt) / ss
        v = gaussian.delta(e, mu) if e >= 0 else -math.expm1(e) + math.exp(e) * gaussian.delta(-e, mu)
        return _closed(v)

    if tt == 1 and not run.symmetric and e >= 0.0:
        return _delta_one_step(qq, ss, e)
    if tt == 1 and run.symmetric and run.sampler == "poisson":
        lo1, hi1, _ = replace_one_profile(np.array([e]), qq, ss)        # (its closed form, bracketed: ._replace)
        return float(lo1[0]), max(float(hi1[0]), _TINY)
    if run.sampler == "poisson" and e >= _beyond_float(run):
        return 0.0, _TINY
    near = _near_zero(run, e, t) if e >= 0.0 and run.sampler == "poisson" else None
    if near is not None and _prob_width(t)(near) <= t:
        return float(near[0]), float(near[1])

    state = {"dirs": ("add", "remove"), "checked": run.symmetric or e < 0.0}

    def readout(h, cap):
        # the remove direction's dominating pair on a grid four times coarser, once: where it reads delta at or
        # below the add direction's lower end, delta is the add direction's and the remove one is left out
        if not state["checked"]:
            state["checked"] = True
            if _remove_below_add(run, h, 1e-3 * t, cap, lambda p: p.delta(e)):
                state["dirs"] = ("add",)
        c = _four(run, h, 1e-3 * t, cap, state["dirs"])
        lo = max(v.delta(e) for k, v in c.items() if k[0] == "optimistic")
        hi = max(v.delta(e) for k, v in c.items() if k[0] == "pessimistic")
        return lo, hi

    # A plain composition's window leaves 1e-3 t of mass (and its float error) as slack, so its bracket is
    # at least that wide: relative to delta within tol (t / 0.01) only where delta >= 1e-5. Where a
    # certified upper bound (Renyi accounting under add/remove, the sampling patterns) puts delta below a tenth of
    # that, or the CLT estimate below 1e-8 after 1000 steps or more, go straight to the tilted compositions below (the
    # plain one cannot meet tol there, and at a million steps costs seconds); if those fail, the plain one answers.
    clt = _clt_delta(run, e) if e >= 0.0 else 0.0
    far = e >= 0.0 and run.sampler == "poisson" and (
        (not run.symmetric and _log_delta_rdp(run, e) < math.log(1e-6)) or _mixture_delta_upper(run, e) < 1e-6
        or (tt >= 1000 and 0.0 < clt < 1e-8))
    lo, hi = (0.0, 1.0) if far else _refine(run, t, readout, _prob_width(t), tail=1e-3 * t)
    if e >= 0.0:
        # below the grid's float slack the sampling-pattern bound is far tighter; the sub-mixture floor keeps lo off 0
        hi = min(hi, _mixture_delta_upper(run, e))
        # and one step (replace-one: its outward-rounded profile): delta grows with T (the later steps may be ignored)
        one = (_delta_one_step(qq, ss, e)[0] if not run.symmetric else
               float(replace_one_profile(np.array([e]), qq, ss)[0][0]) if run.sampler == "poisson" else 0.0)
        lo = max(lo, min(one, hi), min(_tail_delta_lower(run, e), hi) if not run.symmetric else 0.0)
        if run.sampler == "poisson" and _prob_width(t)((lo, hi)) > t:
            # still wider than tol: the far tail, read from tilted compositions (._tilt), their grids sized from T
            # times one step's delta where that is larger (a tail set by one large step, in any of T steps: an
            # estimate only, which the read-out corrects from the lower end it finds)
            b = far_delta(run, e, t, max(lo, min(tt * one, hi), min(0.1 * clt, hi), 1e-300), hi)
            if b is None and far:
                b = _refine(run, t, readout, _prob_width(t), tail=1e-3 * t)
            if b is not None:
                lo, hi = max(lo, min(b[0], hi)), min(hi, max(b[1], lo))
    if near is not None:
        lo, hi = max(lo, min(near[0], hi)), min(hi, max(near[1], lo))
    if run.sampler == "fixed":
        # the grid pairs bound from above only: the lower end is what a concrete dataset attains, the
        # add/remove run at sigma / 2 (sgm._accountant._attained)
        lo = min(delta_bracket(qq, 0.5 * ss, tt, e, tol=t)[0], hi)
    return float(lo), float(hi)


def _near_zero(run, e, t):
    r"""A bracket on :math:`\delta(\varepsilon)` from the total variation where ``e`` is within the tolerance of 0, or
    ``None``: :math:`\delta(\varepsilon) = \sup_S Q(S) - e^\varepsilon P(S)` lies between :math:`\mathrm{TV} -
    (e^\varepsilon - 1)` (the set of TV, its P-mass at most 1) and TV (both directions share it), and the TV read-out
    (:func:`._accountant._advantage_bracket`) keeps relative accuracy at the absolute width asked. A first look at
    its default width (where cheap bounds often answer) gives the scale; where :math:`e^\varepsilon - 1` is within a
    quarter of the width the tol allows there, a second read at half that width (at q = 3.5e-6, sigma = 12.3,
    T = 3, delta(0) of 2e-7: (1.17e-7, 2.96e-7) from the tilted read-outs, which have no tilt at 0, and
    (1.98836e-7, 1.98916e-7) from it in 0.01 s)."""
    # (TV is at most the chance the target is sampled at all, so the width is at most t / 0.01 times that, and t:
    # farther from 0 no TV read-out is made)
    cap = min(_sampled_cap(run), 1.0)
    if not e <= 0.25 * min(t / 1e-2 * cap, t):
        return None
    gap = math.expm1(e) * (1.0 + 1e-12)
    a_lo, a_hi = _advantage_bracket(run, TOL_PROB)
    # (the width tol allows at the scale: relative t / 0.01 below 0.01, absolute t above)
    width = min(t / 1e-2 * (a_lo - gap), t)
    if not (width > 0.0 and gap <= 0.25 * width):
        return None
    if a_hi - a_lo > 0.5 * width:
        # (its absolute floor, a tenth of its tol, at half the width asked)
        a_lo, a_hi = _advantage_bracket(run, 5.0 * width)
    return max(a_lo - gap, 0.0), a_hi
