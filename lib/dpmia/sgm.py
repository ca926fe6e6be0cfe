r"""The subsampled Gaussian mechanism (SGM) and DP-SGD: membership advantage, ε, ROC.

One DP-SGD step with Poisson sampling rate :math:`q` and noise multiplier :math:`\sigma`
(sensitivity 1, noise std :math:`\sigma`) is, in the worst case for a target, the pair

.. math:: P = \mathcal N(0, \sigma^2),\qquad Q = (1-q)\,\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)

(without / with the target). Mahloujifar et al. (Theorem 6) show that :math:`T` *adaptive* steps
give an attacker no more than :math:`\mathrm{TV}(P^{\otimes T}, Q^{\otimes T})`, attained by a
real attack. This module computes that bound and the related read-outs with the certified PLD
engine of :mod:`dpmia.pld`:

* :func:`advantage_bound` / :func:`advantage_bracket` - Theorem 6 (upper end / certified bracket);
* :func:`epsilon` / :func:`epsilon_bracket` - tight :math:`\varepsilon(\delta)`, add/remove adjacency;
* :func:`tpr_at_fpr` - the exact ROC of the dominating pair (Corollary 11, infimum over :math:`a`).

Single-step profile (exact): with :math:`\mu = 1/\sigma` and
:math:`\varepsilon' = \ln(1 + (e^\varepsilon - 1)/q)`,
:math:`H_{e^\varepsilon}(Q\|P) = q\,H_{e^{\varepsilon'}}(\mathcal N(\mu,1)\|\mathcal N(0,1))` for
:math:`\varepsilon > \ln(1-q)`, and :math:`1 - e^{\varepsilon}` below.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from . import _checks, gaussian, pld as _pld

__all__ = ["profile", "plds", "advantage_bound", "advantage_bracket", "epsilon", "epsilon_bracket",
           "tpr_at_fpr", "single_step_tv", "kl", "pinsker_bound", "rdp", "epsilon_rdp", "OPACUS_ORDERS",
           "clt_mu", "clt_advantage", "mc_advantage", "prior_advantage", "advantage_bound_schedule",
           "final_model_tv"]


def _validate(q, sigma, steps):
    qq = _checks.real("q", q, lo=0.0, hi=1.0)
    ss = _checks.positive("sigma", sigma)
    tt = _checks.integer("steps", steps, lo=0)
    return float(qq), float(ss), tt


def _gauss_hs(eps, mu):
    r""":math:`H_{e^\varepsilon}(\mathcal N(\mu,1)\|\mathcal N(0,1))` for every real :math:`\varepsilon`."""
    e = np.asarray(eps, float)
    pos = np.maximum(e, 0.0)
    neg = np.maximum(-e, 0.0)
    d_pos = np.exp(gaussian._log_delta_array(pos, np.full_like(pos, mu)))
    d_neg = np.exp(gaussian._log_delta_array(neg, np.full_like(neg, mu)))
    a = np.exp(np.minimum(e, 0.0))
    # a < 1: H_a(Q||P) = 1 - a + a H_{1/a}(P||Q) = 1 - a + a delta(-ln a) (the Gaussian pair is symmetric)
    return np.where(e >= 0.0, d_pos, (1.0 - a) + a * d_neg)


def profile(eps, q, sigma):
    r"""Exact single-step profile :math:`H_{e^\varepsilon}(Q\|P)` of the SGM, and :math:`P(L > \varepsilon)`.

    Returns ``(delta, p_tail)`` for an array of real ``eps``. ``p_tail`` is the :math:`P`-probability
    that the privacy loss exceeds ``eps`` (minus the profile's slope in :math:`e^\varepsilon`).
    """
    e = np.asarray(eps, float)
    mu = 1.0 / sigma
    if q >= 1.0:
        eps_p = e
        lin = np.zeros(e.shape, bool)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            arg = np.expm1(e) / q
            eps_p = np.where(arg > -1.0, np.log1p(np.maximum(arg, -1.0)), -np.inf)
        lin = e <= math.log1p(-q)
    with np.errstate(invalid="ignore", over="ignore"):
        hs = np.where(lin, 0.0, _gauss_hs(np.where(lin, 0.0, eps_p), mu))
        delta = np.where(lin, -np.expm1(e), q * hs)
        t_star = sigma * sigma * eps_p + 0.5          # loss > eps  <=>  t > t_star
        p_tail = np.where(lin, 1.0, special.ndtr(-t_star / sigma))
    return delta, p_tail


def single_step_tv(q, sigma):
    r"""One step (Lemma 7 with :math:`a=1`): :math:`q\,(2\Phi(1/(2\sigma)) - 1)` (spec 002 C5)."""
    qq, ss, _ = _validate(q, sigma, 1)
    return qq * gaussian.tv(1.0 / ss)


def _grid(q, sigma, h, tail=1e-15):
    """Loss grid x_j = j h from below log(1 - q) to where the single-step profile drops below ``tail``."""
    mu = 1.0 / sigma
    # below the loss at t = sigma * Phi^{-1}(1e-30) there is no P-mass worth a float: start there
    # (or at log(1 - q), below which there is no loss at all, whichever is higher)
    t_min = sigma * float(special.ndtri(1e-30))
    l_min = float(_loss(t_min, q, sigma))
    lo = math.floor(max(math.log1p(-q) if q < 1 else -np.inf, l_min) / h) * h
    # beyond eps_hi the single-step profile is below tail: delta_G(eps') <= Phi(mu/2 - eps'/mu)
    eps_hi = mu * (0.5 * mu - float(special.ndtri(tail / q)))
    hi = math.log1p(q * math.expm1(eps_hi))
    n = int(math.ceil((hi - lo) / h)) + 2
    if n > _pld.MAX_FFT:
        raise ValueError(f"the single-step grid needs {n} points at h = {h:g}; use a coarser h")
    return lo + h * np.arange(n)


#: FFT length used while choosing the grid automatically with the default time budget (keeps every
#: call under 0.5 s); calls with a budget above 0.5 s may use MAX_FFT / 4.
AUTO_MAX_FFT = 2**20


@lru_cache(maxsize=32)
def _reverse_cached(q, sigma, steps, h, max_fft=None):
    """Composed (pessimistic, optimistic) PLDs of the remove direction (the reflected single step)."""
    x = _grid(q, sigma, h)
    d, tail = profile(x, q, sigma)
    return tuple(_pld.compose(_pld.from_profile(x, d, tail, k).reflect(), steps, max_fft=max_fft)
                 for k in ("pessimistic", "optimistic"))


@lru_cache(maxsize=64)
def _plds_cached(q, sigma, steps, h, max_fft=None):
    x = _grid(q, sigma, h)
    d, tail = profile(x, q, sigma)
    pess = _pld.from_profile(x, d, tail, "pessimistic")
    opt = _pld.from_profile(x, d, tail, "optimistic")
    return (_pld.compose(pess, steps, max_fft=max_fft), _pld.compose(opt, steps, max_fft=max_fft))


def _auto_h(q, sigma, steps):
    """Grid step from the spread of the composed loss: about 1/2000 of its standard deviation."""
    mu = 1.0 / sigma
    # variance of the single-step loss under P, second order in q: q^2 (e^{mu^2} - 1)
    var1 = q * q * math.expm1(min(mu * mu, 700.0))
    sd = math.sqrt(max(steps, 1) * var1)
    return float(min(1e-2, max(sd / 3000.0, 1e-7)))


def plds(q, sigma, steps, *, h=None):
    r"""Composed (pessimistic, optimistic) PLDs of :math:`T` SGM steps on grid step ``h`` (automatic if None)."""
    qq, ss, tt = _validate(q, sigma, steps)
    if qq == 0.0 or tt == 0:
        raise ValueError("q = 0 or steps = 0 releases nothing: every read-out is 0")
    hh = _auto_h(qq, ss, tt) if h is None else float(_checks.positive("h", h))
    return _plds_cached(qq, ss, tt, hh)


def _composed(q, sigma, steps, tol, time_budget=0.15):
    """Pessimistic and optimistic PLDs, refining h until the TV bracket is narrower than ``tol``.

    Each refinement predicts the step from the observed width (about quadratic in h). Refinement
    stops when the bracket meets ``tol``, when the FFT would exceed its cap, or after
    ``time_budget`` seconds; the narrowest certified bracket found is returned.
    """
    import time

    t0 = time.perf_counter()
    h = _auto_h(q, sigma, steps)
    # keep the single-step grid and the composed window within the automatic FFT cap
    mu = 1.0 / sigma
    sd_t = math.sqrt(max(steps, 1) * q * q * math.expm1(min(mu * mu, 700.0)))
    span = _grid(q, sigma, 1.0)[-1] - math.log1p(-q)
    cap = AUTO_MAX_FFT if time_budget <= 0.5 else _pld.MAX_FFT // 4
    h = max(h, 40.0 * sd_t / cap, span / (2**15 if time_budget <= 0.5 else 2**18))
    if h > 0.01:  # the loss spreads over > 260 standard units: TV is within 1e-9 of 1 (fallback in caller)
        raise ValueError("no grid fits the automatic FFT cap")
    best, best_w = None, np.inf
    for _ in range(12):
        try:
            pe, op = _plds_cached(q, sigma, steps, h, cap)
        except ValueError:                     # FFT cap: coarsen
            if best is not None or h > 0.01:
                break
            h *= 2.0
            continue
        width = pe.tv() - op.tv()
        if width < best_w:
            best, best_w = (pe, op), width
        if width <= tol or time.perf_counter() - t0 > time_budget:
            break
        h *= min(0.7, max(0.2, 0.8 * (tol / max(width, 1e-300)) ** 0.45))
    if best is None:
        raise ValueError(f"no grid fits the FFT cap for q={q}, sigma={sigma}, steps={steps}")
    return best


def advantage_bracket(q, sigma, steps, *, tol=1e-4, time_budget=0.15):
    r"""Certified bracket ``(lower, upper)`` on Theorem 6's bound :math:`\mathrm{TV}(P^{\otimes T},Q^{\otimes T})`.

    The true value lies in the bracket up to the floating-point allowance recorded in the PLDs.
    ``q`` in [0, 1], ``sigma`` > 0 (noise multiplier), ``steps`` integer >= 0; ``tol`` the target width
    (the grid is refined until it is met, the automatic FFT cap is reached, or ``time_budget``
    seconds have passed; a larger budget buys a narrower bracket in the hard corners).
    Closed forms: :math:`q = 1` gives :math:`2\Phi(\sqrt T/(2\sigma)) - 1`, :math:`T = 1` gives
    :math:`q(2\Phi(1/(2\sigma)) - 1)`. If no grid fits (:math:`T` huge and :math:`\sigma` small, where
    the value is within about 1e-6 of 1), the bracket is ``(TV at fewer steps, 1)``: TV increases in :math:`T`.
    """
    qq, ss, tt = _validate(q, sigma, steps)
    t = _checks.positive("tol", tol)
    if qq == 0.0 or tt == 0:
        return 0.0, 0.0
    if qq == 1.0:
        v = gaussian.tv(math.sqrt(tt) / ss)
        return v, v
    if tt == 1:
        v = qq * gaussian.tv(1.0 / ss)
        return v, v
    try:
        pe, op = _composed(qq, ss, tt, t, _checks.positive("time_budget", time_budget))
        return op.tv(), pe.tv()
    except ValueError:
        fewer = tt // 2
        while fewer > 1:
            try:
                _, op = _composed(qq, ss, fewer, 1.0, time_budget=0.05)
                return op.tv(), 1.0
            except ValueError:
                fewer //= 2
        return 0.0, 1.0


def advantage_bound(q, sigma, steps):
    r"""Theorem 6 of Mahloujifar et al.: the largest membership advantage against :math:`T` DP-SGD steps.

    .. math:: \mathrm{Adv} \le \mathrm{TV}\big(\mathcal N(0,\sigma^2)^{\otimes T},\
              [(1-q)\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)]^{\otimes T}\big)

    Returns the upper end of :func:`advantage_bracket` (never below the exact value, never above 1).
    """
    return advantage_bracket(q, sigma, steps)[1]


def epsilon_bracket(q, sigma, steps, delta):
    r"""Certified bracket on the tight :math:`\varepsilon(\delta)` of :math:`T` SGM steps (add/remove adjacency)."""
    qq, ss, tt = _validate(q, sigma, steps)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if qq == 0.0 or tt == 0:
        return 0.0, 0.0
    if qq == 1.0:
        v = gaussian.epsilon(d, math.sqrt(tt) / ss)
        return v, v
    pe, op = _composed(qq, ss, tt, 1e-4)
    rpe, rop = _reverse_cached(qq, ss, tt, pe.h, _pld.MAX_FFT)
    lower = max(op.epsilon(d, direction="add"), rop.epsilon(d, direction="add"))
    upper = max(pe.epsilon(d, direction="add"), rpe.epsilon(d, direction="add"))
    return lower, upper


def epsilon(q, sigma, steps, delta):
    r"""Tight :math:`\varepsilon(\delta)` of DP-SGD (add/remove), never understated (upper end of the bracket)."""
    return epsilon_bracket(q, sigma, steps, delta)[1]


def tpr_at_fpr(fpr, q, sigma, steps):
    r"""Largest TPR at ``fpr`` of any attack on :math:`T` DP-SGD steps (Corollary 11; exact ROC of the dominating pair).

    Upper bound from the pessimistic PLD: :math:`\inf_\varepsilon[e^\varepsilon\,\mathrm{fpr} + \delta(\varepsilon)]`.
    ``fpr`` in [0, 1] (scalar or array).
    """
    f = _checks.probability("fpr", fpr)
    qq, ss, tt = _validate(q, sigma, steps)
    if qq == 0.0 or tt == 0:
        return _checks.scalar_or_array(np.asarray(f), fpr)
    if qq == 1.0:
        return gaussian.tpr_at_fpr(f, math.sqrt(tt) / ss)
    pe, _ = _composed(qq, ss, tt, 1e-4)
    return pe.roc(f)


# --------------------------------------------------------------------------------------
# other read-outs and other ways to compute the bound
# --------------------------------------------------------------------------------------
def _loss(t, q, sigma):
    """Privacy loss log(dQ/dP)(t) = log(1 - q + q exp((2t - 1)/(2 sigma^2))), overflow-free."""
    z = (2.0 * np.asarray(t, float) - 1.0) / (2.0 * sigma * sigma)
    if q >= 1.0:
        return z
    return np.logaddexp(math.log1p(-q), math.log(q) + z)


def _t_grid(sigma, n=200_001):
    return np.linspace(-30.0 * sigma, 1.0 + 30.0 * sigma, n)


def kl(q, sigma, *, direction="QP"):
    r"""One-step KL divergence of the SGM by quadrature (spec 002 §2.5, C15).

    ``"QP"``: :math:`\mathrm{KL}(Q\|P) = \mathbb E_Q[\ell]` (Opacus' RDP direction, the limit
    :math:`\alpha\to1`); ``"PQ"``: :math:`\mathrm{KL}(P\|Q) = -\mathbb E_P[\ell]`. Simpson's rule on
    :math:`t \in [-30\sigma, 1 + 30\sigma]` with 200 001 points (the integrand is smooth). Cached.
    """
    qq, ss, _ = _validate(q, sigma, 1)
    if direction not in ("QP", "PQ"):
        raise ValueError(f"direction must be 'QP' or 'PQ', got {direction!r}")
    return _kl(qq, ss, direction)


@lru_cache(maxsize=256)
def _kl(q, sigma, direction):
    r"""One-step KL divergence of the SGM by quadrature (spec 002 §2.5, C15).

    ``"QP"``: :math:`\mathrm{KL}(Q\|P) = \mathbb E_Q[\ell]` (Opacus' RDP direction, the limit
    :math:`\alpha\to1`); ``"PQ"``: :math:`\mathrm{KL}(P\|Q) = -\mathbb E_P[\ell]`. Simpson's rule on
    :math:`t \in [-30\sigma, 1 + 30\sigma]` with 200 001 points (the integrand is smooth).
    """
    from scipy import integrate

    qq, ss = q, sigma
    t = _t_grid(ss)
    lo = _loss(t, qq, ss)
    p = np.exp(-0.5 * (t / ss) ** 2) / (ss * math.sqrt(2 * math.pi))
    if direction == "PQ":
        return float(-integrate.simpson(p * lo, x=t))
    qd = (1 - qq) * p + qq * np.exp(-0.5 * ((t - 1) / ss) ** 2) / (ss * math.sqrt(2 * math.pi))
    return float(integrate.simpson(qd * lo, x=t))


def pinsker_bound(q, sigma, steps, *, direction="QP"):
    r"""Pinsker's bound on the advantage: :math:`\min\{1, \sqrt{T\,\mathrm{KL}/2}\}` (Mahloujifar et al., Eq. 5)."""
    qq, ss, tt = _validate(q, sigma, steps)
    return float(min(1.0, math.sqrt(tt * kl(qq, ss, direction=direction) / 2.0)))


#: Opacus' default RDP orders.
OPACUS_ORDERS = tuple([1.0 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))


def rdp(q, sigma, alpha):
    r"""Rényi divergence :math:`D_\alpha(Q\|P)` of one SGM step (Mironov, Talwar & Zhang 2019).

    Integer :math:`\alpha`: the binomial expansion
    :math:`\frac{1}{\alpha-1}\log\sum_k\binom{\alpha}{k}(1-q)^{\alpha-k}q^k e^{(k^2-k)/(2\sigma^2)}`.
    Fractional :math:`\alpha`: :math:`\frac1{\alpha-1}\log\mathbb E_P[e^{\alpha\ell}]` by quadrature, *not*
    the absolute-value series dp-accounting uses, which overstates it (spec 002 §2.5).
    ``alpha`` > 1 (scalar or array).
    """
    from scipy import integrate

    qq, ss, _ = _validate(q, sigma, 1)
    a = np.atleast_1d(_checks.real("alpha", alpha, lo=1.0, lo_open=True))
    out = np.empty(a.size)
    t = None
    for i, al in enumerate(a):
        if qq >= 1.0:                    # the Gaussian mechanism: D_alpha = alpha / (2 sigma^2)
            out[i] = al / (2.0 * ss * ss)
        elif float(al).is_integer() and al <= 256:
            k = np.arange(int(al) + 1)
            logc = (special.gammaln(al + 1) - special.gammaln(k + 1) - special.gammaln(al - k + 1))
            with np.errstate(divide="ignore"):
                terms = logc + (al - k) * np.log1p(-qq) + k * np.log(qq) + (k * k - k) / (2 * ss * ss)
            out[i] = special.logsumexp(terms) / (al - 1)
        else:
            if t is None:
                t = _t_grid(ss)
                lp = -0.5 * (t / ss) ** 2 - math.log(ss * math.sqrt(2 * math.pi))
                lo = _loss(t, qq, ss)
            g = lp + al * lo
            mx = g.max()
            out[i] = (mx + math.log(integrate.simpson(np.exp(g - mx), x=t))) / (al - 1)
    return float(out[0]) if np.ndim(alpha) == 0 else out


def epsilon_rdp(q, sigma, steps, delta, *, orders=OPACUS_ORDERS, conversion="balle2020"):
    r""":math:`\varepsilon(\delta)` from RDP accounting, minimised over ``orders``. Returns ``(eps, best_order)``.

    ``"balle2020"`` (Balle et al. 2020, Opacus' current default):
    :math:`\varepsilon = T D_\alpha + \log((\alpha-1)/\alpha) - (\log\delta + \log\alpha)/(\alpha-1)`;
    ``"classic"`` (Mironov 2017): :math:`T D_\alpha + \log(1/\delta)/(\alpha-1)`.
    """
    qq, ss, tt = _validate(q, sigma, steps)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    a = np.asarray(orders, float)
    r = tt * rdp(qq, ss, a)
    if conversion == "balle2020":
        eps = r + np.log((a - 1) / a) - (math.log(d) + np.log(a)) / (a - 1)
    elif conversion == "classic":
        eps = r + math.log(1 / d) / (a - 1)
    else:
        raise ValueError(f"conversion must be 'balle2020' or 'classic', got {conversion!r}")
    i = int(np.argmin(eps))
    return float(max(eps[i], 0.0)), float(a[i])


def clt_mu(q, sigma, steps):
    r"""CLT / Gaussian-DP approximation :math:`\mu = q\sqrt{T(e^{1/\sigma^2}-1)}` (Bu et al. 2020; Dong et al. 2022).

    Not a bound: accurate for :math:`\sigma \gtrsim 1`, badly pessimistic for small :math:`\sigma`.
    """
    qq, ss, tt = _validate(q, sigma, steps)
    return float(qq * math.sqrt(tt * math.expm1(min(1.0 / (ss * ss), 700.0))))


def clt_advantage(q, sigma, steps):
    r"""CLT approximation of the advantage: :math:`2\Phi(\mu/2) - 1` with :func:`clt_mu`."""
    return gaussian.tv(clt_mu(q, sigma, steps))


def mc_advantage(q, sigma, steps, m, *, variant="corrected", rng=None, seed=None, chunk=20_000):
    r"""Monte Carlo estimate of Theorem 6's TV (Mahloujifar et al., Algorithm 1). Returns ``(estimate, se)``.

    Draw :math:`t_{ij}\sim\mathcal N(0,\sigma^2)`, :math:`L_j=\sum_i\ell(t_{ij})`, average
    :math:`1 - e^{\min(L_j, 0)}` (``"corrected"``: :math:`\mathbb E_P[(1-e^L)_+]`, terms in [0, 1], so
    Proposition 8's bound applies). ``"as_printed"`` uses ``max`` as in line 9 of the paper's
    Algorithm 1, which estimates :math:`-\mathbb E_P[(e^L-1)_+] = -\mathrm{TV}` with unbounded,
    heavy-tailed terms.
    """
    from .attacks import _rng

    qq, ss, tt = _validate(q, sigma, steps)
    mm = _checks.integer("m", m, lo=2)
    if variant not in ("corrected", "as_printed"):
        raise ValueError(f"variant must be 'corrected' or 'as_printed', got {variant!r}")
    g = _rng(rng, seed)
    vals = []
    done = 0
    per = max(1, min(chunk, int(4e6 // max(tt, 1))))
    while done < mm:
        k = min(per, mm - done)
        L = _loss(ss * g.standard_normal((k, tt)), qq, ss).sum(axis=1)
        eta = np.minimum(L, 0.0) if variant == "corrected" else np.maximum(L, 0.0)
        vals.append(-np.expm1(eta))
        done += k
    v = np.concatenate(vals)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def prior_advantage(q, sigma, steps, prior):
    r"""Largest advantage over the best prior guess under membership prior :math:`p` (corrected Theorem 21).

    :math:`\mathrm{Adv}(p) = 2\Pr[b=b'] - 2\max(p,1-p) = 2(1-p)\,\mathrm{TV}_{p/(1-p)}(P,Q) - |1-2p|`,
    with :math:`P` the output law without the target. The paper prints :math:`+1-2p`, which is
    positive even for identical :math:`P = Q` (spec 002 §2.17). Upper end of the certified bracket.
    """
    qq, ss, tt = _validate(q, sigma, steps)
    p = _checks.real("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    a = p / (1 - p)
    if qq == 0.0 or tt == 0:
        return 0.0
    if qq == 1.0:
        tva = gaussian.tv_a(a, math.sqrt(tt) / ss)
    else:
        pe, _ = _composed(qq, ss, tt, 1e-4)
        tva = pe.tv_a(a)
    return float(min(max(2 * (1 - p) * tva - abs(1 - 2 * p), 0.0), 2 * min(p, 1 - p)))


def advantage_bound_schedule(schedule, *, h=None):
    r"""Advantage bound for a non-adaptive schedule ``[(q_i, sigma_i, T_i), ...]`` (Sec. 3, "varying noise").

    Composes the per-stage PLDs on a common grid (pessimistic and optimistic) and returns the
    certified bracket ``(lower, upper)``.
    """
    stages = [_validate(*st) for st in schedule]
    stages = [st for st in stages if st[0] > 0 and st[2] > 0]
    if not stages:
        return 0.0, 0.0
    hh = min(_auto_h(*st) for st in stages) if h is None else float(_checks.positive("h", h))
    pes, ops = [], []
    for qq, ss, tt in stages:
        x = _grid(qq, ss, hh)
        d, tail = profile(x, qq, ss)
        pes.append(_pld.compose(_pld.from_profile(x, d, tail, "pessimistic"), tt))
        ops.append(_pld.compose(_pld.from_profile(x, d, tail, "optimistic"), tt))
    return _pld.compose_many(ops).tv(), _pld.compose_many(pes).tv()


def final_model_tv(q, sigma, steps):
    r"""Best attack that sees only the *final* model (Mahloujifar et al., App. I; spec 002 C30).

    With one-hot features and no bias, the target's coordinate of the final model is, in units of
    the clipped gradient, :math:`\mathcal N(0, T\sigma^2)` without the target and
    :math:`K + \mathcal N(0, T\sigma^2)`, :math:`K\sim\mathrm{Bin}(T, q)`, with it. Returns the total
    variation between the two (trapezoidal rule on a fine grid, binomial terms above 1e-18): the
    largest advantage of a final-model attack, which Theorem 6's transcript bound dominates.
    """
    from scipy import stats

    qq, ss, tt = _validate(q, sigma, steps)
    if qq == 0.0 or tt == 0:
        return 0.0
    sd = math.sqrt(tt) * ss
    k = np.arange(tt + 1)
    pk = stats.binom.pmf(k, tt, qq)
    keep = pk > 1e-18
    k, pk = k[keep], pk[keep]
    x = np.linspace(-12 * sd, k.max() + 12 * sd, 200_001)
    p = stats.norm.pdf(x, scale=sd)
    qd = np.zeros_like(x)
    for kk, w in zip(k, pk):
        qd += w * stats.norm.pdf(x, loc=kk, scale=sd)
    return float(0.5 * np.trapezoid(np.abs(qd - p), x))
