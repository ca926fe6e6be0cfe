r"""Poisson subsampling of the GLRT adversary (Kaissis et al., Sec. 4.6; Balle et al. 2018).

Reading A of Fig. 7: one inclusion coin for all releases, the pair :math:`(Q, (1-\gamma)Q + \gamma P)`,
whose profile follows from the unsubsampled one in closed form (forward) and by root-finding
(reverse). Reading B: a fresh coin per round, the one-round pair discretised and composed by FFT in
:mod:`dpmia.pld` to a certified bracket on :math:`\varepsilon(\delta)`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .. import _checks, chisq, gaussian
from .. import pld as _pld
from ._curves import _d_lam
from ._profile import SAFETY_MARGIN, _eps_arr, _fwd_upper_from, delta_forward, delta_reverse, epsilon, epsilon_bracket


def _gamma(gamma):
    return _checks.scalar("gamma", gamma, lo=0.0, hi=1.0, lo_open=True)


def _amplify(e, g):
    """log(1 + g (e^e - 1)) for e >= 0, without overflow (= logaddexp(log(1-g), log g + e))."""
    e = np.asarray(e, float)
    if g >= 1.0:
        return e
    return np.logaddexp(math.log1p(-g), math.log(g) + e)


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


def _deamplify(x, g):
    """log(1 + (e^x - 1)/g) for real x > log(1 - g), without overflow."""
    x = np.asarray(x, float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        small = np.log1p(np.expm1(np.minimum(x, 1.0)) / g)
        big = x - math.log(g) + np.log1p(-(1.0 - g) * np.exp(-np.maximum(x, 1.0)))
    return np.where(x <= 1.0, small, big)


def _profiles(d, lam, adversary):
    if adversary == "glrt":
        return (lambda e: np.asarray(delta_forward(e, d, lam), float),
                lambda e: np.asarray(delta_reverse(e, d, lam), float),
                lambda dl: epsilon_bracket(dl, d, lam)[0])
    if adversary == "npo":
        mu = math.sqrt(lam)
        fwd = lambda e: np.asarray(gaussian.delta(np.maximum(e, 0.0), mu), float)  # noqa: E731
        return fwd, fwd, lambda dl: float(gaussian.epsilon(dl, mu))
    raise ValueError(f"adversary must be 'glrt' or 'npo', got {adversary!r}")


def amplified_delta(eps, d, lam, gamma, *, adversary="glrt"):
    r"""Tight profile after Poisson subsampling with rate ``gamma``, one inclusion coin (reading A of Fig. 7).

    With :math:`M = (1-\gamma)Q + \gamma P` (a post-processing of :math:`y`, so exact for the energy
    statistic): :math:`H_{e^{\varepsilon'}}(M\|Q) = \gamma\,\delta_{\rm fwd}(\varepsilon)`,
    :math:`e^\varepsilon = 1 + (e^{\varepsilon'}-1)/\gamma`;
    :math:`H_{e^{\varepsilon'}}(Q\|M) = c\,\delta_{\rm rev}(\tilde\varepsilon)`,
    :math:`c = 1 - e^{\varepsilon'}(1-\gamma)`, :math:`e^{\tilde\varepsilon} = \gamma e^{\varepsilon'}/c`.
    Returns the max. ``adversary`` "glrt" (energy test) or "npo" (the Gaussian pair, :math:`\mu=\sqrt\lambda`).
    """
    e = _eps_arr(eps)
    dd, ll = _d_lam(d, lam)
    g = _gamma(gamma)
    fwd, rev, _ = _profiles(dd, ll, adversary)
    ef = _deamplify(e, g)
    out = g * fwd(ef)
    with np.errstate(over="ignore"):
        c = -np.expm1(e + math.log1p(-g)) if g < 1.0 else np.ones_like(e)
    act = c > 0
    if np.any(act):
        et = np.log(g) + e[act] - np.log(c[act])
        out[act] = np.maximum(out[act], c[act] * rev(np.maximum(et, 0.0)))
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0).reshape(np.shape(eps)), eps)


def amplified_epsilon(delta, d, lam, gamma, *, adversary="glrt"):
    r"""Smallest :math:`\varepsilon'` of the subsampled pair (reading A) with profile <= ``delta``; never understated.

    Forward direction in closed form, :math:`\varepsilon' = \log(1 + \gamma(e^{\varepsilon(\delta/\gamma)} - 1))`
    (Balle et al. 2018, the amplification the paper applies); the reverse direction by root-finding.
    """
    dl = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dd, ll = _d_lam(d, lam)
    g = _gamma(gamma)
    if ll == 0.0:
        return 0.0
    _, rev, eps_fwd = _profiles(dd, ll, adversary)
    e_f = eps_fwd(dl / g) if dl / g < 1.0 else 0.0
    out_f = float(_amplify(e_f, g))

    def rev_amp(ep):
        c = -math.expm1(ep + math.log1p(-g)) if g < 1.0 else 1.0
        if c <= 0.0:
            return 0.0
        et = max(math.log(g) + ep - math.log(c), 0.0)
        return c * float(rev(np.array([et]))[0])

    if g < 1.0:
        hi = -math.log1p(-g)          # c = 0 there: the reverse profile vanishes
    else:
        hi = 1.0
        while rev_amp(hi) > dl:       # no subsampling: expand until the reverse profile is below delta
            hi *= 2.0
    if rev_amp(0.0) <= dl:
        out_r = 0.0
    else:
        root = optimize.brentq(lambda ep: rev_amp(ep) - dl, 0.0, hi, xtol=1e-14, rtol=8.9e-16)
        out_r = root
        step = 1e-15 * max(root, 1.0)
        while rev_amp(out_r) > dl:
            out_r += step
            step *= 2.0
    return max(out_f, out_r)


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


def _energy_profile(x, dd, ll, g, loss_lo):
    r"""One round's profile at the losses ``x``: ``(upper, lower, tail, log_cell)``, an upper and a lower bound (each
    rounded to its side), the null's tail at the threshold, and an upper bound on :math:`x_j + \log P(\text{cell}_j)`
    (the null's mass between neighbouring points, in log space: it underflows where the losses pass 700);
    ``loss_lo`` <= the least loss.

    Above the least loss the forward identity gives the upper bound (:func:`_fwd_upper_from`, at the bracket's
    ends); the lower bound is the test :math:`\{T > t\}` at the bracket's lower end :math:`t`, any set giving
    :math:`H_{e^x}(M \| Q) \ge M(S) - e^x Q(S) = \gamma\Psi_\lambda(t) - (e^x - 1 + \gamma)\Psi_0(t)`, and at
    least :math:`1 - e^x`.
    """
    ef = _deamplify(np.maximum(x, loss_lo), g)
    mid = x > loss_lo
    up = -np.expm1(np.minimum(x, 0.0))      # 1 - e^x where x <= loss_lo (the rest is set below)
    low = up.copy()
    log_tail_hi = np.zeros_like(x)          # log of the null's tail above the threshold: at most, at least
    log_tail_lo = np.zeros_like(x)
    if np.any(mid):
        # one threshold search serves both bounds and the tails; thresholds are sought at least 1e-12 (relative)
        # above -lam/2 = L(0), and below that floor the threshold lies in [0, t_hi], so the profile is still read
        # at the loss itself (reading it higher would understate it)
        e_t = np.fmax(ef[mid], -0.5 * ll)       # (fmax: a NaN where x rounds below the least loss)
        e_m = np.maximum(e_t, -0.5 * ll * (1 - 1e-12))
        t_lo, t_hi = (np.atleast_1d(v) for v in chisq.likelihood_ratio_inverse(e_m, dd, ll))
        t_lo = np.where(e_m > e_t, 0.0, t_lo)
        log_alt = np.asarray(chisq.log_sf(t_lo, dd, ll), float)
        log_tail_lo[mid] = np.asarray(chisq.log_sf(t_hi, dd, 0.0), float)
        log_tail_hi[mid] = np.asarray(chisq.log_sf(t_lo, dd, 0.0), float)
        up[mid] = g * _fwd_upper_from(log_alt, log_tail_lo[mid], e_t)
        low[mid] = np.maximum(_set_lower(x[mid], g, log_alt, log_tail_hi[mid]), -np.expm1(np.minimum(x[mid], 0.0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_cell = (x[:-1] + log_tail_hi[:-1] + np.log1p(-np.exp(np.minimum(log_tail_lo[1:] - log_tail_hi[:-1], 0.0)))
                    + SAFETY_MARGIN)
    return np.clip(up, 0.0, 1.0), np.clip(low, 0.0, 1.0), np.exp(log_tail_lo), log_cell


def _set_lower(x, g, log_alt, log_null):
    """gamma Psi_lam(t) - (e^x - 1 + gamma) Psi_0(t) from the logs of the tails, rounded down (-inf where the
    second factor is not positive: x at or below the least loss)."""
    # log(e^x - 1 + g), about -lam/2 + log g and up
    with np.errstate(divide="ignore", invalid="ignore"):
        log_c = np.where(x > 1.0, x + np.log1p(-(1.0 - g) * np.exp(-np.maximum(x, 1.0))),
                         np.log(np.expm1(np.minimum(x, 1.0)) + g))
    out = (g * np.exp(log_alt) * (1.0 - SAFETY_MARGIN)
           - np.exp(np.minimum(log_c + log_null, 700.0)) * (1.0 + SAFETY_MARGIN))
    return np.where(np.isnan(out), -np.inf, out)


def _energy_span(dd, ll, g):
    """``(loss_lo, loss_hi, e_hi)``: the bounds about the least one-round loss and where the profile falls below
    1e-16 (the grid's upper end)."""
    return (*_loss_bounds(ll, g), float(_amplify(epsilon(min(1e-16 / g, 0.5), dd, ll), g)))


def _energy_grid(span, hh):
    r"""The one-round loss grid of step ``hh`` over ``span``, with a point just above the least loss.

    At large :math:`\lambda` the null keeps almost all its mass within 1e-150 of the least loss, :math:`s`; with
    :math:`s` inside a cell, the dominated pair's curve must run along :math:`1 - y` from the cell's left end to its
    right one (no grid pair lies below the exact profile there otherwise), which sits :math:`(1 - \gamma)
    (e^{x_{j+1} - s} - 1)` below the profile, and its convex continuation takes that much mass from the included
    rounds' losses (1.4 % of the 10-round eps at (3, 800, 0.1)); a point just above :math:`s` makes it an ulp.
    """
    loss_lo, loss_hi, e_hi = span
    x0 = loss_hi - hh * math.ceil((loss_hi - loss_lo) / hh + 1.0)
    return x0 + hh * np.arange(int(math.ceil((e_hi - x0) / hh)) + 2)


def _energy_pairs(dl, dd, ll, g, n, hh, span):
    """The ``n``-round bracket ``(lower, upper)`` on eps(``dl``) on the loss grid of step ``hh`` over ``span``."""
    x = _energy_grid(span, hh)
    loss_lo = span[0]
    up, low, tail, log_cell = _energy_profile(x, dd, ll, g, loss_lo)
    out = []
    for kind in ("pessimistic", "optimistic"):
        # the dominating pair from the upper bounds, the dominated one from the lower bounds and the null's cell
        # masses in log space (as differences of tails they vanish beyond loss 700, and with them the chord gaps)
        one = (_pld.from_profile(x, up, tail, kind, h=hh) if kind == "pessimistic"
               else _pld.from_profile(x, low, tail, kind, h=hh, log_cell=log_cell))
        add = _pld.compose(one, n)
        # the remove pair's losses are at most -loss_lo each round, so its delta vanishes beyond
        # -n loss_lo (rounded up): a cap that holds where its P-side slack (weighed by e^-x) is vacuous,
        # or where its P-masses (e^-x times the Q-masses) overflow a double (lam/2 beyond 709; the
        # lower end then leaves the remove pair out, which keeps it a lower end)
        cap = -n * loss_lo * (1.0 + 1e-15) if kind == "pessimistic" else 0.0
        try:
            rem_eps = _pld.compose(one.reflect(), n).epsilon(dl, direction="add")
            rem_eps = min(rem_eps, cap) if kind == "pessimistic" else rem_eps
        except ValueError:
            rem_eps = cap
        out.append(max(add.epsilon(dl, direction="add"), rem_eps))
    return out[1], out[0]


def energy_epsilon_bracket(delta, d, lam_round, gamma, rounds, *, h=None, tol=1e-3):
    r"""Certified bracket on :math:`\varepsilon(\delta)` of the per-round energy adversary under per-round subsampling
    (reading B of Fig. 7).

    DP-SGD semantics: each of ``rounds`` releases includes the target with probability ``gamma``
    (fresh coin), and the adversary sees the energies :math:`T_i = \|y_i\|^2/\sigma^2` (noncentrality
    ``lam_round`` = :math:`\Delta^2/\sigma^2` each). One round is the pair
    :math:`(\chi^2_d,\ (1-\gamma)\chi^2_d + \gamma\chi^2_d(\lambda))`; its profile is bounded above by
    :func:`dpmia.glrt.amplified_delta`'s forward identity and below by the test :math:`\{T > t\}` at the
    threshold, :math:`\gamma\Psi_\lambda(t) - (e^x - 1 + \gamma)\Psi_0(t)`; the dominating grid pair is
    built from the upper bounds and the dominated one from the lower bounds (on a grid with a point just above
    the least loss, where the null's mass gathers at large :math:`\lambda`), and both are composed by FFT in
    :mod:`dpmia.pld`. Returns ``(lower, upper)`` for add/remove adjacency.

    ``h`` fixes the loss grid step. By default the grid starts at 1/1500 of the composed energy loss's
    spread (from the chi-square divergence of one round, not the known-direction attacker's spread), but
    no finer than 1e-2 or 1/4096 of the one-round loss range, and is refined, at most three times and while the
    one-round grid stays below :math:`2^{16}` points, until the bracket is at most ``tol`` wide relative to its
    upper end; the brackets of all grids tried are intersected (each is certified).

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
    # from the spread, but never finer than 1e-2 or 1/4096 of the one-round range (where the spread is vast: a
    # large noncentrality puts the included rounds' losses far above the rest)
    hh = min(max(1e-2, (span[2] - span[0]) / 4096.0), max(_energy_spread(dd, ll, g, n) / 1500.0, 1e-7))
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
    return lo, hi
