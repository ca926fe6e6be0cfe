r"""Poisson subsampling of the GLRT adversary (Kaissis et al., Sec. 4.6; Balle et al. 2018).

Reading A of Fig. 7: one inclusion coin for all releases, the pair :math:`(Q, (1-\gamma)Q + \gamma P)`,
whose profile follows from the unsubsampled one in closed form (forward) and by root-finding
(reverse). Reading B: a fresh coin per round, the one-round pair discretised and composed by FFT in
:mod:`dpmia.pld` to a certified bracket on :math:`\varepsilon(\delta)`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from .. import _checks, chisq, gaussian
from .. import pld as _pld
from ._curves import _d_lam
from ._profile import _eps_arr, delta_forward, delta_reverse, epsilon, epsilon_bracket


def _gamma(gamma):
    return _checks.scalar("gamma", gamma, lo=0.0, hi=1.0, lo_open=True)


def _amplify(e, g):
    """log(1 + g (e^e - 1)) for e >= 0, without overflow (= logaddexp(log(1-g), log g + e))."""
    e = np.asarray(e, float)
    if g >= 1.0:
        return e
    return np.logaddexp(math.log1p(-g), math.log(g) + e)


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


def energy_epsilon_bracket(delta, d, lam_round, gamma, rounds, *, h=None):
    r"""Certified bracket on :math:`\varepsilon(\delta)` of the per-round energy adversary under per-round subsampling
    (reading B of Fig. 7).

    DP-SGD semantics: each of ``rounds`` releases includes the target with probability ``gamma``
    (fresh coin), and the adversary sees the energies :math:`T_i = \|y_i\|^2/\sigma^2` (noncentrality
    ``lam_round`` = :math:`\Delta^2/\sigma^2` each). One round is the pair
    :math:`(\chi^2_d,\ (1-\gamma)\chi^2_d + \gamma\chi^2_d(\lambda))`; its exact profile
    (:func:`dpmia.glrt.amplified_delta`'s forward identity) is discretised with pessimistic and optimistic rounding
    and composed by FFT in :mod:`dpmia.pld`. Returns ``(lower, upper)`` for add/remove adjacency.
    ``h`` is the loss grid step (default: 1/4000 of the composed loss's spread).
    """
    dl = _checks.scalar("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.scalar("lam_round", lam_round, lo=0.0, lo_open=True)
    g = _checks.scalar("gamma", gamma, lo=0.0, hi=1.0, lo_open=True)
    n = _checks.integer("rounds", rounds, lo=1)
    loss_min = math.log1p(g * math.expm1(-0.5 * ll))
    # spread of the composed loss: per-round variance ~ g^2 (e^{lam} - 1) (second order), as for the SGM
    sd = math.sqrt(n * g * g * math.expm1(min(ll, 700.0)))
    hh = float(_checks.positive("h", h)) if h is not None else min(1e-2, max(sd / 4000.0, 1e-6))
    # upper end: where the one-round profile falls below 1e-16
    e_hi = float(_amplify(epsilon(min(1e-16 / g, 0.5), dd, ll), g))
    lo = math.floor(loss_min / hh) * hh
    x = lo + hh * np.arange(int(math.ceil((e_hi - lo) / hh)) + 2)
    if x.size > _pld.MAX_FFT // 4:
        raise ValueError(f"the one-round grid needs {x.size} points at h = {hh:g}; pass a coarser h")
    ef = _deamplify(np.maximum(x, loss_min), g)
    prof = np.where(x <= loss_min, -np.expm1(x), g * np.asarray(delta_forward(np.maximum(ef, -0.5 * ll), dd, ll)))
    prof = np.clip(prof, 0.0, 1.0)
    t_lo = np.atleast_1d(chisq.likelihood_ratio_inverse(np.maximum(ef, -0.5 * ll * (1 - 1e-12)), dd, ll)[1])
    tail = np.where(x <= loss_min, 1.0, np.exp(np.asarray(chisq.log_sf(t_lo, dd, 0.0), float)))
    out = []
    for kind in ("pessimistic", "optimistic"):
        one = _pld.from_profile(x, prof, tail, kind)
        add = _pld.compose(one, n)
        rem = _pld.compose(one.reflect(), n)
        out.append(max(add.epsilon(dl, direction="add"), rem.epsilon(dl, direction="add")))
    return out[1], out[0]
