r"""The per-round energy adversary under per-round Poisson subsampling (Kaissis et al., Sec. 4.6, reading B of
Fig. 7): both directions' one-round pairs on one loss grid, discretised and composed in :mod:`dpmia.pld`.

One round is the pair :math:`(M, Q)`, :math:`Q = \chi^2_d` (target absent) and
:math:`M = (1-\gamma)\chi^2_d + \gamma\chi^2_d(\lambda)`, with the loss
:math:`\ell(T) = \log(1 - \gamma + \gamma\Lambda(T))`, increasing in :math:`T`. The add direction is
:math:`H_{e^x}(M\|Q)`, the remove direction :math:`H_{e^x}(Q\|M)`; both optimal tests are thresholds on
:math:`T`, at the same :math:`t` for the loss :math:`x` of one and :math:`-x` of the other, so one threshold
search and one set of chi-square tails serve both.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import special

from .. import _checks, chisq
from .. import pld as _pld
from ._profile import SAFETY_MARGIN, epsilon
from ._subsampling import _amplify, _deamplify


def _loss_min(ll, g):
    """The smallest one-round loss, log(1 - g + g e^{-lam/2}), to a few ulps of the larger of its terms' logs."""
    v = g * math.expm1(-0.5 * ll)
    if v >= -0.5:
        return math.log1p(v)                        # 1 + v >= 1/2: well conditioned
    # 1 + v cancels (g near 1 and lam large: from lam ~ 75 at g = 1 it is 0); each term's log is exact to an ulp
    return float(np.logaddexp(math.log1p(-g) if g < 1.0 else -math.inf, math.log(g) - 0.5 * ll))


def _loss_bounds(ll, g):
    """``(lo, hi)`` with ``lo`` <= the least one-round loss < ``hi``: :func:`_loss_min` widened by eight ulps of the
    larger of its terms (|v| = g (1 - e^{-lam/2}), or the logs of 1 - g and g e^{-lam/2}) and of itself."""
    s = _loss_min(ll, g)
    v = g * math.expm1(-0.5 * ll)
    if v >= -0.5:
        terms = abs(v)
    else:
        terms = max(-math.log1p(-g) if g < 1.0 else 0.0, -math.log(g) + 0.5 * ll)
    margin = 8.0 * 2.0**-52 * (terms + abs(s)) + 1e-300
    return s - margin, s + margin


def _energy_spread(d, lam, g, n):
    r"""Standard deviation of the ``n``-round energy privacy loss (to second order in ``g``).

    One round's loss is :math:`\log(1 - g + g\,\Lambda(T))` with :math:`\Lambda` the likelihood ratio of
    :math:`\chi^2_d(\lambda)` to :math:`\chi^2_d`, so its variance under :math:`\chi^2_d` is about
    :math:`g^2\chi^2`, with the chi-square divergence of the two laws (average over the unknown
    direction of :math:`e^{\langle\theta, \theta'\rangle}`):
    :math:`1 + \chi^2 = \Gamma(\nu + 1)(2/\lambda)^\nu I_\nu(\lambda)`, :math:`\nu = d/2 - 1`
    (:math:`\cosh\lambda` for :math:`d = 1`; about :math:`e^{\lambda^2/(2d)}` for large ``d``, where the
    known-direction attacker's :math:`e^\lambda` is far too wide). Used only to size the grid.
    """
    nu = 0.5 * d - 1.0
    with np.errstate(all="ignore"):
        lg = (special.gammaln(nu + 1.0) + nu * math.log(2.0 / lam) + math.log(special.ive(nu, lam)) + lam
              if lam < 700.0 and special.ive(nu, lam) > 0.0 else math.inf)
    chi2 = math.expm1(lg) if lg < 700.0 else math.inf
    if not (math.isfinite(chi2) and chi2 > 0.0):
        chi2 = math.expm1(min(lam * lam / (2.0 * d + 4.0 * lam), 700.0))
    return math.sqrt(n) * g * math.sqrt(min(chi2, 1e300))


class _Tails(NamedTuple):
    """Logs of the tails at each grid point's threshold bracket: the alternative's sf and cdf at ``t_lo``, the
    null's at ``t_lo`` and ``t_hi`` (at points below the least loss, t = 0)."""
    alt_sf: np.ndarray
    alt_cdf: np.ndarray
    null_sf_lo: np.ndarray
    null_cdf_lo: np.ndarray
    null_sf_hi: np.ndarray
    null_cdf_hi: np.ndarray


class _Bounds(NamedTuple):
    """One pair's upper and lower profile values on its grid, their increments, the P-tail and the cells' log mass."""
    up: np.ndarray
    low: np.ndarray
    d_up: np.ndarray
    d_low: np.ndarray
    tail: np.ndarray
    log_cell: np.ndarray


def _log_tails(x, dd, ll, g, loss_lo):
    """:class:`_Tails` at the forward losses ``x``: one threshold search, the noncentral law once (its cdf below
    its mean, its sf above, the other as the complement, which is then at least about 0.3)."""
    n = x.size
    zero, minf = np.zeros(n), np.full(n, -np.inf)
    out = [zero.copy(), minf.copy(), zero.copy(), minf.copy(), zero.copy(), minf.copy()]
    mid = x > loss_lo
    if np.any(mid):
        # thresholds are sought at least 1e-12 (relative) above -lam/2 = L(0); below that floor the threshold lies
        # in [0, t_hi], so the profile is still read at the loss itself (fmax: a NaN where x rounds below s)
        e_t = np.fmax(_deamplify(x[mid], g), -0.5 * ll)
        e_m = np.maximum(e_t, -0.5 * ll * (1 - 1e-12))
        t_lo, t_hi = (np.atleast_1d(v) for v in chisq.likelihood_ratio_inverse(e_m, dd, ll))
        t_lo = np.where(e_m > e_t, 0.0, t_lo)
        below = t_lo < ll + dd
        a_sf, a_cdf = np.zeros(t_lo.size), np.full(t_lo.size, -np.inf)
        with np.errstate(divide="ignore"):
            if np.any(below):
                a_cdf[below] = chisq.log_cdf(t_lo[below], dd, ll)
                a_sf[below] = np.log(-np.expm1(a_cdf[below]))
            if np.any(~below):
                a_sf[~below] = chisq.log_sf(t_lo[~below], dd, ll)
                a_cdf[~below] = np.log(-np.expm1(a_sf[~below]))
        vals = (a_sf, a_cdf, chisq.log_sf(t_lo, dd, 0.0), chisq.log_cdf(t_lo, dd, 0.0),
                chisq.log_sf(t_hi, dd, 0.0), chisq.log_cdf(t_hi, dd, 0.0))
        for o, v in zip(out, vals):
            o[mid] = np.asarray(v, float)
    return _Tails(*out)


def _bound(x, h, p, dp, s1, c1, log_n, s2, c2, side, exact=None):
    r"""Values and increments of :math:`p S_1 - n S_2` (``side`` +1: rounded up, -1: down), where
    :math:`p - n = 1 - e^x` and :math:`C_i = 1 - S_i`; ``dp`` the increments of ``p`` along the grid.

    Three forms of it, each point taking the one with the least error bound (``SAFETY_MARGIN`` times its terms;
    the leading terms :math:`1 - e^x` and :math:`p` count as exact, as :mod:`dpmia.pld` counts :math:`1 - y`, and
    an ulp of them added here would be a step in the curve, an atom of u / (e^{x_j} h) of either sign):
    (a) :math:`p S_1 - n S_2` in the tail; (b) :math:`(1 - e^x) + n C_2 - p C_1`
    where the value is :math:`1 - e^x` plus small terms; (c) :math:`p - (p C_1 + n S_2)` on a plateau just
    below :math:`p`. Where neighbours take the same form (b) or (c), the increment is that of the leading term,
    :math:`-e^{x_j}(e^h - 1)` or ``dp``, plus the difference of the small terms: as differences of the values
    they would keep only the values' rounding, and the atoms (second differences over :math:`e^{x_j} h`) would be
    noise, clipped where negative, which raises the curve (slack, T-fold). Where ``exact``, the value is
    :math:`1 - e^x` itself."""
    line = -np.expm1(np.minimum(x, 700.0))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        log_p = np.log(p)
        d1, d2 = np.exp(np.minimum(log_p + s1, 700.0)), np.exp(np.minimum(log_n + s2, 700.0))
        e1, e2 = np.exp(np.minimum(log_p + c1, 700.0)), np.exp(np.minimum(log_n + c2, 700.0))
        errs = [SAFETY_MARGIN * (d1 + d2), SAFETY_MARGIN * (e1 + e2), SAFETY_MARGIN * (e1 + d2)]
        small_b, small_c = (e2 - e1) + side * errs[1], -(e1 + d2) + side * errs[2]
        if side < 0:
            small_b = np.maximum(small_b, 0.0)    # every profile is at least 1 - e^x
        vals = [(d1 - d2) + side * errs[0], line + small_b, p + small_c]
    errs = [np.where(np.isfinite(v_) & np.isfinite(e_), e_, np.inf) for v_, e_ in zip(vals, errs)]
    form = np.argmin(np.stack(errs), axis=0)
    if exact is not None:
        form, small_b = np.where(exact, 1, form), np.where(exact, 0.0, small_b)
        vals[1] = np.where(exact, line, vals[1])
    v = np.choose(form, [np.nan_to_num(v_, nan=0.0, posinf=0.0, neginf=0.0) for v_ in vals])
    inc = np.diff(v)
    for f, lead, small in ((1, lambda: -np.exp(np.minimum(x[:-1], 700.0)) * math.expm1(h), small_b),
                           (2, lambda: dp, small_c)):
        both = (form[:-1] == f) & (form[1:] == f)
        if np.any(both):
            inc[both] = (lead() + np.diff(small))[both]
    return v, inc


def _forward(x, h, g, tails, loss_lo):
    """:class:`_Bounds` of the add pair :math:`H_{e^x}(M\\|Q) = \\gamma\\Psi_\\lambda(t) - c\\,\\Psi_0(t)`,
    :math:`c = e^x - 1 + \\gamma`: upper at (t_lo, t_hi) (the optimum lies between), lower at t_lo (any test is a
    lower bound)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_c = np.where(x > 1.0, x + np.log1p(-(1.0 - g) * np.exp(-np.maximum(x, 1.0))),
                         np.log(np.expm1(np.minimum(x, 1.0)) + g))
    log_c = np.where(x > loss_lo, log_c, -np.inf)
    below, p, dp = ~(x > loss_lo), np.full(x.size, g), np.zeros(x.size - 1)   # below the least loss: 1 - e^x
    up, d_up = _bound(x, h, p, dp, tails.alt_sf, tails.alt_cdf, log_c, tails.null_sf_hi, tails.null_cdf_hi, 1.0,
                      below)
    low, d_low = _bound(x, h, p, dp, tails.alt_sf, tails.alt_cdf, log_c, tails.null_sf_lo, tails.null_cdf_lo, -1.0,
                        below)
    with np.errstate(divide="ignore", invalid="ignore"):
        # the null's mass of cell j, at most its tail at t_lo(x_j) less its tail at t_hi(x_{j+1}), in log space
        log_cell = (x[:-1] + tails.null_sf_lo[:-1] + SAFETY_MARGIN
                    + np.log(-np.expm1(np.minimum(tails.null_sf_hi[1:] - tails.null_sf_lo[:-1], 0.0))))
    return _Bounds(np.clip(up, 0.0, 1.0), np.clip(low, 0.0, 1.0), d_up, d_low, np.exp(tails.null_sf_hi), log_cell)


def _reverse(x, h, g, tails, log_cell_add):
    """:class:`_Bounds` of the remove pair on the grid ``-x`` (ascending): at its loss :math:`z = -x`,
    :math:`H_{e^z}(Q\\|M) = a\\,\\Phi_0(t) - b\\,\\Phi_\\lambda(t)`, :math:`a = 1 - (1-\\gamma)e^z`,
    :math:`b = \\gamma e^z` (0 beyond its greatest loss, -s)."""
    z = -x[::-1]
    r = {k: v[::-1] for k, v in tails._asdict().items()}
    with np.errstate(over="ignore"):
        a = np.maximum(-(1.0 - g) * np.expm1(np.minimum(z, 700.0)) + g, 0.0)   # 1 - (1 - g) e^z
        da = -(1.0 - g) * np.exp(np.minimum(z[:-1], 700.0)) * math.expm1(h)
    log_b = math.log(g) + z
    up, d_up = _bound(z, h, a, da, r["null_cdf_hi"], r["null_sf_hi"], log_b, r["alt_cdf"], r["alt_sf"], 1.0)
    low, d_low = _bound(z, h, a, da, r["null_cdf_lo"], r["null_sf_lo"], log_b, r["alt_cdf"], r["alt_sf"], -1.0)
    # M's mass below the threshold: the remove pair's P-tail
    with np.errstate(divide="ignore"):
        l1g = math.log1p(-g) if g < 1.0 else -np.inf
    m_cdf = np.logaddexp(l1g + r["null_cdf_lo"], math.log(g) + r["alt_cdf"])
    # its cell j is the add pair's cell k = N - 2 - j, whose M-mass is E_Q[e^l; cell] <= e^{x_{k+1}} Q(cell): so
    # z_j + log M(cell) <= log Q(cell) = the add pair's log_cell_k - x_k
    log_cell = (log_cell_add - x[:-1])[::-1]
    return _Bounds(np.clip(up, 0.0, 1.0), np.clip(low, 0.0, 1.0), d_up, d_low, np.exp(m_cdf), log_cell)


def _pair_eps(x, h, b, n, dl, cap):
    """``(lower, upper)`` eps(``dl``) of the ``n``-fold composition of the pairs on ``x`` from :class:`_Bounds`
    ``b``; ``cap`` bounds the upper end (the composed loss's greatest value)."""
    out = []
    for kind in ("pessimistic", "optimistic"):
        one = (_pld.from_profile(x, b.up, b.tail, kind, h=h, dprofile=b.d_up) if kind == "pessimistic"
               else _pld.from_profile(x, b.low, b.tail, kind, h=h, dprofile=b.d_low, log_cell=b.log_cell))
        try:
            e = _pld.compose(one, n).epsilon(dl, direction="add")
        except ValueError:             # no window fits the FFT cap: the cap (upper end) or nothing (lower end)
            e = cap if kind == "pessimistic" else 0.0
        out.append(min(e, cap) if kind == "pessimistic" else e)
    return out[1], out[0]


def _one_round_lower(dl, dd, ll, g, loss_lo):
    r"""A lower end on eps(``dl``) of any number of rounds: one round's, since an adversary may ignore the others
    (:math:`H_{e^x}(M^{\otimes n}\|Q^{\otimes n}) \ge H_{e^x}(M\|Q)`). It is the largest loss :math:`x` found where
    the add direction's certified lower bound (the test at the threshold bracket's lower end, :func:`_forward`)
    exceeds ``dl``: scanned below reading A's value (the one-coin pair of one round, its symmetrised eps) on 48
    points, geometric in the distance, then on 33 between the crossing's neighbours; 0 where none does. Where the
    grid pairs' lower end is far too low (rounds included rarely, :math:`\gamma \ll h`) this keeps the bracket
    informative."""
    if dl >= g:
        return 0.0
    c = float(_amplify(epsilon(min(dl / g, 0.5), dd, ll), g))
    if not 0.0 < c < math.inf:
        return 0.0

    def above(xs):
        return _forward(xs, 1.0, g, _log_tails(xs, dd, ll, g, loss_lo), loss_lo).low > dl

    xs = c * (1.0 - np.geomspace(1.0, 1e-12, 48))
    ok = above(xs)
    if not ok[0]:
        return 0.0
    k = int(np.flatnonzero(ok)[-1])
    if k == xs.size - 1:
        return float(xs[-1])
    fine = np.linspace(xs[k], xs[k + 1], 33)
    ok = above(fine)
    return float(fine[int(np.flatnonzero(ok)[-1])]) if ok[0] else float(xs[k])


def _energy_span(dd, ll, g):
    """``(loss_lo, loss_hi, e_hi)``: the bounds about the least one-round loss and where the profile falls below
    1e-16 (the grid's upper end: the dominating pair puts what lies above at infinity)."""
    return (*_loss_bounds(ll, g), float(_amplify(epsilon(min(1e-16 / g, 0.5), dd, ll), g)))


def _energy_grid(span, hh, through_zero=False):
    r"""The one-round loss grid of step ``hh`` over ``span``, with a point just above the least loss.

    At large :math:`\lambda` the null keeps almost all its mass within 1e-150 of the least loss, :math:`s`; with
    :math:`s` inside a cell, the dominated pair's curve must run along :math:`1 - y` from the cell's left end to its
    right one (no grid pair lies below the exact profile there otherwise), which sits :math:`(1 - \gamma)
    (e^{x_{j+1} - s} - 1)` below the profile, and its convex continuation takes that much mass from the included
    rounds' losses (1.4 % of the 10-round eps at (3, 800, 0.1)); a point just above :math:`s` makes it an ulp. The
    remove pair's grid is this one negated: its greatest loss, -s, lies just above a point. ``through_zero``: the
    multiples of ``hh`` instead (where the dominated pairs need a point at 0: both ends of its cell on 1 - y).
    """
    loss_lo, loss_hi, e_hi = span
    if through_zero:
        k, top = -math.floor(loss_lo / hh) + 1, 0.0
    else:
        k, top = math.ceil((loss_hi - loss_lo) / hh + 1.0), loss_hi
    # (the point k is top itself: the others rounded from it, not it from x_0, which could cross the least loss)
    return top + hh * (np.arange(int(math.ceil((e_hi - top) / hh)) + k + 2) - k)


def _energy_pairs(dl, dd, ll, g, n, hh, span):
    """The ``n``-round bracket ``(lower, upper)`` on eps(``dl``) on the loss grid of step ``hh`` over ``span``:
    the larger of the two directions' (add/remove adjacency)."""
    try:
        return _pairs_on(_energy_grid(span, hh), dl, dd, ll, g, n, hh, span[0])
    except _pld.GridError:
        return _pairs_on(_energy_grid(span, hh, through_zero=True), dl, dd, ll, g, n, hh, span[0])


def _pairs_on(x, dl, dd, ll, g, n, hh, loss_lo):
    """:func:`_energy_pairs` on the grid ``x``."""
    tails = _log_tails(x, dd, ll, g, loss_lo)
    fwd = _forward(x, hh, g, tails, loss_lo)
    add = _pair_eps(x, hh, fwd, n, dl, math.inf)
    # the remove pair's losses are at most -loss_lo each round: its eps is at most -n loss_lo (rounded up)
    rem = _pair_eps(-x[::-1], hh, _reverse(x, hh, g, tails, fwd.log_cell), n, dl, -n * loss_lo * (1.0 + 1e-15))
    return max(add[0], rem[0]), max(add[1], rem[1])


def energy_epsilon_bracket(delta, d, lam_round, gamma, rounds, *, h=None, tol=1e-3):
    r"""Certified bracket on :math:`\varepsilon(\delta)` of the per-round energy adversary under per-round subsampling
    (reading B of Fig. 7).

    DP-SGD semantics: each of ``rounds`` releases includes the target with probability ``gamma``
    (fresh coin), and the adversary sees the energies :math:`T_i = \|y_i\|^2/\sigma^2` (noncentrality
    ``lam_round`` = :math:`\Delta^2/\sigma^2` each). One round is the pair
    :math:`(M, Q) = ((1-\gamma)\chi^2_d + \gamma\chi^2_d(\lambda),\ \chi^2_d)`; the optimal tests of both
    directions are thresholds on :math:`T`, at :math:`t` with :math:`\log(1 - \gamma + \gamma\Lambda(t)) = x`
    (bracketed to 1e-14), so each profile is bounded above by the tails at the bracket's ends and below by the
    test at one end, e.g. :math:`H_{e^x}(M\|Q) \ge \gamma\Psi_\lambda(t) - (e^x - 1 + \gamma)\Psi_0(t)`; the
    dominating grid pairs are built from the upper bounds and the dominated ones from the lower bounds (on a grid
    with a point just above the least loss, where the null's mass gathers at large :math:`\lambda`), and composed
    by FFT in :mod:`dpmia.pld`. Returns ``(lower, upper)`` for add/remove adjacency.

    ``h`` fixes the loss grid step. By default the grid starts at 1/1500 of the composed energy loss's
    spread (from the chi-square divergence of one round, not the known-direction attacker's spread), but
    no coarser than the larger of 1e-2 and 1/4096 of the one-round loss range and no finer than the latter, and
    is refined, at most three times and while the
    one-round grid stays below :math:`2^{16}` points, until the bracket is at most ``tol`` wide relative to its
    upper end; the brackets of all grids tried are intersected (each is certified). Where that stays wider than
    ``tol``, one round's certified lower end (a threshold test) stands for any number of rounds: an adversary may
    ignore the other rounds; and the full-output adversary's certified :math:`\varepsilon` (the same releases,
    DP-SGD's subsampled Gaussian at noise multiplier :math:`1/\sqrt\lambda`) caps the upper end, since the energies
    are a function of the releases (finite where the grid pairs' float slack, about 1e-13, hides a smaller
    :math:`\delta`; loose at large ``d``).

    Examples
    --------
    >>> lo, hi = energy_epsilon_bracket(1e-5, 650, 1.0, 0.02, 2500)
    >>> round(lo, 3), round(hi, 3), (hi - lo) <= 1e-3 * hi
    (0.084, 0.084, True)
    """
    dl = _checks.scalar("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.scalar("lam_round", lam_round, lo=0.0, lo_open=True)
    g = _checks.scalar("gamma", gamma, lo=0.0, hi=1.0, lo_open=True)
    n = _checks.integer("rounds", rounds, lo=1)
    tl = _checks.scalar("tol", tol, lo=0.0, hi=1.0, lo_open=True)
    span = _energy_span(dd, ll, g)

    def size(step):
        return _energy_grid(span, step).size

    if h is not None:
        hh = float(_checks.positive("h", h))
        if size(hh) > _pld.MAX_FFT // 4:
            raise ValueError(f"the one-round grid needs {size(hh)} points at h = {hh:g}; pass a coarser h")
        return _energy_pairs(dl, dd, ll, g, n, hh, span)
    # from the spread, but no coarser than 1e-2 unless the one-round range needs 4096 points at that (where the
    # spread is vast: a large noncentrality puts the included rounds' losses far above the rest), and never finer
    # than 1/4096 of the range at first (the values' rounding, u / h in the atoms, outgrows the step's error)
    step = (span[2] - span[0]) / 4096.0
    hh = min(max(1e-2, step), max(_energy_spread(dd, ll, g, n) / 1500.0, step, 1e-7))
    while size(hh) > 2**16:
        hh *= 2.0
    lo, hi = _energy_pairs(dl, dd, ll, g, n, hh, span)
    for _ in range(3):
        if hi - lo <= tl * hi:
            break
        # the width shrinks about as h^2: aim at half the tol, in steps of 1/2 ... 1/8
        hh *= min(0.5, max(0.125, 0.9 * math.sqrt(0.5 * tl * hi / (hi - lo))))
        if size(hh) > 2**16:
            break
        lo2, hi2 = _energy_pairs(dl, dd, ll, g, n, hh, span)
        lo, hi = max(lo, lo2), min(hi, hi2)
    # (an upper end of inf is wider than any tol: inf - lo > tol * inf is False)
    if not math.isfinite(hi) or hi - lo > tl * hi:
        lo = max(lo, min(_one_round_lower(dl, dd, ll, g, span[0]), hi))
    if not math.isfinite(hi) or hi - lo > tl * hi:
        hi = min(hi, _full_output_upper(dl, ll, g, n))
    return lo, hi


def _full_output_upper(dl, ll, g, n):
    r"""The full-output adversary's certified upper end (:func:`dpmia.sgm.epsilon_bracket` at rate :math:`\gamma`,
    noise multiplier :math:`1/\sqrt\lambda`, ``n`` steps, add/remove), or ``inf`` where that noise multiplier (or
    the rounds) lies outside the accountant's range. The energies are a function of the releases :math:`y_i`, and
    the releases with and without the target are, rotated onto :math:`\Delta`'s direction, the subsampled Gaussian
    pair of DP-SGD with sensitivity :math:`\sqrt\lambda` in units of the noise; post-processing cannot raise any
    hockey-stick divergence (either direction), so its :math:`\varepsilon(\delta)` bounds the energy adversary's.
    Loose where ``d`` is large (the energy hides the direction), but finite where the grid pairs' float slack (about
    1e-13 of the mass) hides :math:`\delta`."""
    from .. import sgm

    try:
        return float(sgm.epsilon_bracket(g, 1.0 / math.sqrt(ll), n, dl)[1])
    except ValueError:              # (noise multiplier or steps outside the accountant's range: no cap)
        return math.inf
