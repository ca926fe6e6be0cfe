r"""Bounds and estimates of Theorem 6's TV that need no PLD: exact attacks, divergences, CLT, Monte Carlo.

Mahloujifar et al. (Theorem 6) bound the membership advantage against :math:`T` DP-SGD steps by
:math:`\mathrm{TV}(P^{\otimes T}, Q^{\otimes T})` with :math:`P = \mathcal N(0,\sigma^2)` and
:math:`Q = (1-q)\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)`. :mod:`dpmia.sgm` brackets it with
the certified PLD engine; the functions here are other ways to bound or approximate it:

* **lower bounds from concrete attacks** whose success is computed exactly (any test's
  :math:`Q(A) - P(A)` is at most the TV): :func:`threshold_count_tv` counts the steps with
  :math:`t > 1/2` (tight for small :math:`\sigma`), :func:`sum_test_tv` thresholds the sum of the
  outputs (tight for large :math:`\sigma`, where the privacy loss is nearly linear);
* **an upper bound from a divergence**: :func:`chi2_tv_upper`, from the closed-form
  :math:`\chi^2` divergence of one step (within a factor of about 1.25 where the TV is tiny);
* **approximations** that are not bounds: :func:`clt_mu` / :func:`clt_advantage` (CLT / GDP) and
  :func:`mc_advantage` (Monte Carlo, Algorithm 1 of the paper);
* :func:`final_model_tv`, the best attack on the final model alone (App. I).

All are deterministic; the bounds are rounded to the safe side of their float error.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, optimize, special, stats

from .. import _checks, gaussian
from ._rdp import privacy_loss
from ._setting import check_run

__all__ = ["threshold_count_tv", "sum_test_tv", "chi2_tv_upper", "mixture_delta_upper", "sampled_cap", "clt_mu",
           "clt_advantage", "mc_advantage", "final_model_tv"]

def _binom_err(steps):
    """Relative error allowance for scipy's binomial log-pmf at ``steps`` trials (about 1e-16 lg(T!))."""
    return 1e-15 * max(1.0, float(special.gammaln(steps + 1.0))) * 10.0 + 1e-12


def sampled_cap(q, steps):
    r""":math:`1 - (1-q)^T` rounded up: the TV never exceeds the probability that the target is ever sampled."""
    return _sampled_cap(check_run(q, 1.0, steps))


def _sampled_cap(run):
    q, _, steps = run
    if q >= 1.0:
        return 1.0 if steps > 0 else 0.0
    return min(1.0, -math.expm1(steps * math.log1p(-q)) * (1.0 + 1e-14))


def _count_tv(q, sigma, steps, c):
    r"""TV of :math:`\mathrm{Bin}(T, a)` against :math:`\mathrm{Bin}(T, b)` for the per-step event :math:`t > c`,
    rounded down.

    The binomial family has a monotone likelihood ratio in :math:`k`, so the TV is
    :math:`P_b(K \ge k^*) - P_a(K \ge k^*)` at the crossing :math:`k^*`; both tails come from the
    regularised incomplete beta function (accurate to a few ulps), and any :math:`k` gives a valid bound.
    """
    a = float(special.ndtr(-c / sigma))
    b = (1.0 - q) * a + q * float(special.ndtr((1.0 - c) / sigma))
    if not b > a:
        return 0.0
    if a == 0.0:
        ks = [1]
    else:
        r = math.log1p(-a) - math.log1p(-b)
        k_star = steps * r / (math.log(b) - math.log(a) + r)
        ks = sorted({min(max(int(math.floor(k_star)) + d, 1), steps) for d in (0, 1, 2)})
    k = np.array(ks)
    val = float(np.max(stats.binom.sf(k - 1, steps, b) - stats.binom.sf(k - 1, steps, a)))
    # a few ulps in each tail, and the float error of a and b moved through the tails
    return val - 1e-12


def threshold_count_tv(q, sigma, steps):
    r"""Lower bound on the TV: the attacker who counts the steps whose output exceeds a threshold :math:`c`.

    Post-processing (each step reduced to :math:`\mathbf 1\{t > c\}`) turns the pair into
    :math:`\mathrm{Bin}(T, a)` against :math:`\mathrm{Bin}(T, b)` with :math:`a = \Phi(-c/\sigma)`,
    :math:`b = (1-q)a + q\,\Phi((1-c)/\sigma)`, whose TV is computed exactly from two binomial tails.
    :math:`c` is optimised over :math:`[1/2, 1/2 + 8\sigma]` (any value gives a valid
    bound); raising it above 1/2 trades a little power for far fewer false counts when :math:`T` is
    large. Tight when the two mixture components are far apart (small sigma), whatever T.
    """
    return _threshold_count_tv(check_run(q, sigma, steps))


def _threshold_count_tv(run):
    q, sigma, steps = run
    if steps <= 0 or q == 0.0:
        return 0.0
    if run.symmetric:
        return _count_tv_r(run)
    val = _best_threshold(lambda c: _count_tv(q, sigma, steps, c), sigma)
    return float(min(max(val, 0.0), _sampled_cap(run)))


def _best_threshold(advantage_at, sigma):
    """The counting attackers' threshold search: the best of nine thresholds on :math:`[1/2, 1/2 + 8\\sigma]`,
    then a bounded search between the best one's neighbours (any threshold gives a valid lower bound, so the
    maximum found is one). ``advantage_at(c)`` is the attacker's certified advantage at the threshold ``c``."""
    cs = 0.5 + sigma * np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0])
    vals = [advantage_at(c) for c in cs]
    best = int(np.argmax(vals))
    val = vals[best]
    if val > 0.0:
        lo_c, hi_c = cs[max(best - 1, 0)], cs[min(best + 1, cs.size - 1)]
        res = optimize.minimize_scalar(lambda c: -advantage_at(c), bounds=(lo_c, hi_c),
                                       method="bounded", options={"xatol": 1e-4 * sigma, "maxiter": 40})
        val = max(val, -float(res.fun))
    return val


def _count_tv_r(run):
    r"""The counting attacker under replace-one, on the worst-case dataset (other gradients 0, the target's
    +1 against its replacement's -1, the slot in each step with probability q): call a step "up" when its
    output exceeds :math:`c` and "down" below :math:`-c`, with per-step probabilities :math:`(a, b)` in one world
    and :math:`(b, a)` in the other. The likelihood ratio of the counts depends on ups minus downs only; by
    symmetry "up > down" is the best test on them, and with :math:`N` the number of up-or-down steps
    (:math:`\mathrm{Bin}(T, a+b)`, the same in both worlds) and :math:`p = a/(a+b)` its advantage is
    :math:`E_N[P(\mathrm{Bin}(N,p) > N/2) - P(\mathrm{Bin}(N,1-p) > N/2)]`, a certified lower bound on the TV
    (rounded down; any :math:`c` gives one). Near the TV where sigma is small; :math:`c` optimised over
    :math:`[1/2, 1/2 + 8\sigma]` as for add/remove (:func:`threshold_count_tv`)."""
    q, sigma, steps = run
    val = _best_threshold(lambda c: _count_tv_r_at(q, sigma, steps, c), sigma)
    return float(min(max(val, 0.0), _sampled_cap(run)))


def _count_tv_r_at(q, sigma, steps, c):
    """:func:`_count_tv_r`'s advantage at the threshold ``c`` (rounded down; 0 where the binomial bulk needs more
    than 2e6 terms)."""
    a = (1 - q) * special.ndtr(-c / sigma) + q * special.ndtr((1 - c) / sigma)
    b = (1 - q) * special.ndtr(-c / sigma) + q * special.ndtr(-(1 + c) / sigma)
    if a <= b or a + b <= 0:
        return 0.0
    m = a + b
    p = a / m
    mean, sd = steps * m, math.sqrt(steps * m * (1 - m))
    # (the terms are positive, p > 1/2: leaving out those beyond 12 sd, a share below 1e-30, keeps a lower bound)
    n_lo = max(1, int(math.floor(mean - 12 * sd - 40)))
    n_hi = min(steps, int(math.ceil(mean + 12 * sd + 40)))
    if n_hi - n_lo > 2_000_000:
        return 0.0
    n = np.arange(n_lo, n_hi + 1, dtype=float)
    w = stats.binom.pmf(n, steps, m)
    half = np.floor(n / 2.0)
    gain = stats.binom.sf(half, n, p) - stats.binom.sf(half, n, 1.0 - p)     # P(U > N/2), both worlds
    val = float(np.sum(w * gain))
    err = 8.0 * np.finfo(float).eps * (n_hi - n_lo + 1) ** 0.5 + 1e-13
    return val * (1.0 - _binom_err(steps)) - err


def sum_test_tv(q, sigma, steps):
    r"""Lower bound on the TV: the attacker who thresholds the sum :math:`S = \sum_i t_i` of the outputs.

    Under :math:`P`, :math:`S \sim \mathcal N(0, T\sigma^2)`; under :math:`Q`,
    :math:`S \sim K + \mathcal N(0, T\sigma^2)` with :math:`K \sim \mathrm{Bin}(T, q)` the number of steps that
    sampled the target. For any threshold
    :math:`\tau`, :math:`\mathrm{TV} \ge Q(S>\tau) - P(S>\tau) = \sum_k b_k\,[\Phi((k-\tau)/s) - \Phi(-\tau/s)]`,
    :math:`s = \sigma\sqrt T`; :math:`\tau` is optimised numerically (any value gives a valid bound). Near
    optimal when :math:`\sigma` is large (the privacy loss is then almost linear in :math:`t`, so
    :math:`S` is almost sufficient). Rounded down by the float error of the sum. Returns 0 when the
    binomial bulk needs more than 2e6 terms.
    """
    return _sum_test_tv(check_run(q, sigma, steps))


def _sum_test_tv(run):
    q, sigma, steps = run
    if q == 0.0 or steps == 0:
        return 0.0
    if run.symmetric:
        return _sum_test_tv_r(run)
    s = sigma * math.sqrt(steps)
    mean, sd_k = steps * q, math.sqrt(steps * q * (1.0 - q))
    k_lo = max(0, int(math.floor(mean - 40 * sd_k - 40)))
    k_hi = min(steps, int(math.ceil(mean + 40 * sd_k + 40)))
    if k_hi - k_lo > 2_000_000:
        return 0.0
    k = np.arange(k_lo, k_hi + 1, dtype=float)
    b = stats.binom.pmf(k, steps, q)

    def gain(tau):
        # Phi((k - tau)/s) - Phi(-tau/s) = Phi(tau/s) - Phi((tau - k)/s): differences of upper tails
        # computed on the side where both are small (no cancellation against 1)
        z0, zk = tau / s, (tau - k) / s
        return float(np.sum(b * (special.ndtr(-zk) - special.ndtr(-z0)))) if tau >= 0.5 * mean else \
            float(np.sum(b * (special.ndtr(z0) - special.ndtr(zk))))

    hi_tau = float(k[-1]) + 10.0 * s
    res = optimize.minimize_scalar(lambda t: -gain(t), bounds=(-10.0 * s, hi_tau), method="bounded",
                                   options={"xatol": 1e-6 * max(s, 1.0), "maxiter": 200})
    tau = float(res.x)
    val = max(gain(tau), gain(0.5 * mean))
    # float error: each term's tail difference is off by a few ulps of the larger tail (<= 1),
    # and the pmfs by _binom_err relative
    err = 8.0 * np.finfo(float).eps * (k_hi - k_lo + 1) ** 0.5 + 1e-15
    val = val * (1.0 - _binom_err(steps)) - err
    return float(min(max(val, 0.0), _sampled_cap(run)))


def _sum_test_tv_r(run):
    r"""The sum test under replace-one: on the worst-case dataset (the other records' gradients 0, the
    target's +1 against its replacement's -1) the sum of the outputs is :math:`\pm K + \mathcal N(0, T\sigma^2)`,
    :math:`K \sim \mathrm{Bin}(T, q)` the steps that hold the slot (Poisson sampling, or fixed-size batches
    drawn afresh each step). The two laws are mirror images, so "member if the sum is positive" is the
    best threshold and its advantage is :math:`E_K[\mathrm{erf}(K/(\sigma\sqrt{2T}))]`, rounded down."""
    q, sigma, steps = run
    mean, sd_k = steps * q, math.sqrt(steps * q * (1.0 - q))
    k_lo = max(0, int(math.floor(mean - 40 * sd_k - 40)))
    k_hi = min(steps, int(math.ceil(mean + 40 * sd_k + 40)))
    if k_hi - k_lo > 2_000_000:
        return 0.0
    k = np.arange(k_lo, k_hi + 1, dtype=float)
    b = stats.binom.pmf(k, steps, q)
    val = float(np.sum(b * special.erf(k / (sigma * math.sqrt(2.0 * steps)))))
    err = 8.0 * np.finfo(float).eps * (k_hi - k_lo + 1) ** 0.5 + 1e-15
    val = val * (1.0 - _binom_err(steps)) - err
    return float(min(max(val, 0.0), _sampled_cap(run)))


def chi2_tv_upper(q, sigma, steps):
    r"""Upper bound on the TV from the :math:`\chi^2` divergence, which tensorises in closed form.

    One step: :math:`\chi^2(Q\|P) = q^2(e^{1/\sigma^2} - 1)` (the Gaussian pair's
    :math:`\chi^2 = e^{\mu^2}-1`, scaled by :math:`q^2` for the mixture). For products
    :math:`1 + \chi^2_T = (1+\chi^2_1)^T`, and :math:`\mathrm{TV} \le \tfrac12\sqrt{\chi^2_T}` (Cauchy-Schwarz).
    Useful only where the TV is small (large sigma, small q): in the Gaussian limit it is
    :math:`\mu/2` against the exact :math:`\approx\mu/\sqrt{2\pi}`, a factor of about 1.25. Rounded up;
    1 where the divergence overflows.
    """
    return _chi2_tv_upper(check_run(q, sigma, steps))


def _chi2_tv_upper(run):
    q, sigma, steps = run
    if q == 0.0 or steps == 0:
        return 0.0
    mu2 = 1.0 / (sigma * sigma)
    if mu2 > 700.0:
        return 1.0
    chi1 = q * q * math.expm1(mu2)
    log_t = steps * math.log1p(chi1)
    if log_t > 700.0:
        return 1.0
    val = 0.5 * math.sqrt(math.expm1(log_t)) * (1.0 + 1e-12)
    return float(min(val, _sampled_cap(run), 1.0))


def mixture_delta_upper(q, sigma, steps, eps):
    r"""Upper bound on the tight :math:`\delta(\varepsilon)` of :math:`T` DP-SGD steps (both directions)
    from the joint convexity of the hockey-stick divergence over which steps sample the target:

    .. math:: \delta(\varepsilon) \le \sum_{k} \binom{T}{k} q^k (1-q)^{T-k}\,
              \delta_{\mathcal N}\big(\varepsilon;\ \sqrt k/\sigma\big)

    (an adversary told the sampling pattern faces the Gaussian mechanism with :math:`\mu = \sqrt k/\sigma`,
    :math:`2\sqrt k/\sigma` under replace-one, where it holds for fixed-size batches too;
    :math:`\delta_{\mathcal N}` is :func:`dpmia.gaussian.delta`). Loose where sampling hides the
    target (large sigma), far below Renyi accounting at small sigma or tiny delta, where the grid
    accountant's float slack exceeds delta. The binomial sum runs over the mean +- 20 sd, the rest
    counted with delta = 1; each Gaussian term is rounded up by its float error (or replaced by
    :math:`\mu/\sqrt{2\pi} \ge` the TV where that error is large). ``eps`` >= 0.
    """
    return _mixture_delta_upper(check_run(q, sigma, steps), _checks.scalar("eps", eps, lo=0.0))


def _mixture_delta_upper(run, eps):
    q, sigma, steps = run
    e = float(eps)
    if q == 0.0 or steps == 0:
        return 0.0
    mean, sd = steps * q, math.sqrt(steps * q * (1.0 - q))
    k_lo = max(0, int(math.floor(mean - 20.0 * sd - 10.0)))
    k_hi = min(steps, int(math.ceil(mean + 20.0 * sd + 10.0)))
    k = np.arange(max(k_lo, 1), k_hi + 1, dtype=float)
    w = np.exp(stats.binom.logpmf(k, steps, q)) * (1.0 + _binom_err(steps))
    # replace-one (either sampler): given the steps that hold the replaced slot, and the same other
    # records in them, the two runs differ by a shift of at most two clipping norms on those steps
    mu = (2.0 if run.symmetric else 1.0) * np.sqrt(k) / sigma
    with np.errstate(divide="ignore", over="ignore"):
        d = np.exp(gaussian.log_delta_kernel(np.full(k.size, e), mu))
        err = 8.9e-16 * (4.0 + np.maximum(1.0, e / mu) / mu + np.abs(np.log(np.maximum(d, 1e-300))))
    tv_cap = mu / math.sqrt(2.0 * math.pi) * (1.0 + 1e-15)
    d = np.where(err < 0.5, np.minimum(d * (1.0 + 2.0 * err), tv_cap), tv_cap)
    total = float(np.sum(w * d))
    # outside the range: above it delta <= 1; below it delta <= its value at k_lo (it grows with k)
    total += float(stats.binom.sf(k_hi, steps, q)) * (1.0 + _binom_err(steps))
    if k_lo > 1:
        total += float(stats.binom.cdf(k_lo - 1, steps, q)) * (1.0 + _binom_err(steps)) * float(d[0])
    return float(min(1.0, total * (1.0 + 1e-12) + 1e-300 * (k_hi > 0)))


def _beyond_float(run):
    r"""An eps beyond which a Poisson run's delta lies below the least double (``inf`` where none is known): for
    either direction's pair :math:`(A, B)`, :math:`H_{e^\varepsilon}(A^T\|B^T) \le A^T(L_T > \varepsilon)
    \le E_A[A/B]^T e^{-\varepsilon}` (Markov on :math:`e^{L_T}`), with :math:`E_Q[Q/P] = 1 + q^2(e^{1/\sigma^2} - 1)`
    (add), :math:`E_P[P/Q] \le 1/(1 - q)` (remove: :math:`Q \ge (1 - q)P`) and, under replace-one,
    :math:`E_A[A/B] \le 1 + q + q^2 e^{1/\sigma^2}/(1 - q)` (:math:`B \ge (1 - q)\mathcal N(0, \sigma^2)`); each
    bounded as :math:`\ln(1 + x) \le \ln 3 + \max(0, \ln x)`, the sum rounded up by a factor 1 + 1e-9, plus 746."""
    q, sigma, steps = run
    if not 0.0 < q < 1.0:
        return math.inf
    big = 2.0 * math.log(q) + 1.0 / (sigma * sigma) - (math.log1p(-q) if run.symmetric else 0.0)
    log_c = math.log(3.0) + max(0.0, big, -math.log1p(-q))
    return steps * log_c * (1.0 + 1e-9) + 746.0


def clt_mu(q, sigma, steps):
    r"""CLT / Gaussian-DP approximation :math:`\mu = q\sqrt{T(e^{1/\sigma^2}-1)}` (Bu et al. 2020; Dong et al. 2022).

    Not a bound: accurate for :math:`\sigma \gtrsim 1`, badly pessimistic for small :math:`\sigma`.
    Computed in log space; ``inf`` only where the value exceeds the float range.
    """
    return _clt_mu(check_run(q, sigma, steps))


def _clt_mu(run):
    qq, ss, tt = run
    if qq == 0.0 or tt == 0:
        return 0.0
    mu2 = 1.0 / (ss * ss)
    log_em1 = mu2 + math.log(-math.expm1(-mu2)) if mu2 > 1e-300 else math.log(max(mu2, 1e-320))
    lv = 2 * math.log(qq) + math.log(tt) + log_em1
    if run.symmetric:
        lv += math.log(2.0)          # replace-one: the loss's variance is about twice the add/remove one
    return float(math.exp(0.5 * lv)) if 0.5 * lv < 709 else math.inf


def clt_advantage(q, sigma, steps):
    r"""CLT approximation of the advantage: :math:`2\Phi(\mu/2) - 1` with :func:`clt_mu`."""
    return gaussian.tv(_clt_mu(check_run(q, sigma, steps)))


def mc_advantage(q, sigma, steps, m, *, variant="corrected", rng=None, seed=None, chunk=20_000):
    r"""Monte Carlo estimate of Theorem 6's TV (Mahloujifar et al., Algorithm 1). Returns ``(estimate, se)``.

    Draw :math:`t_{ij}\sim\mathcal N(0,\sigma^2)`, :math:`L_j=\sum_i\ell(t_{ij})`, average
    :math:`1 - e^{\min(L_j, 0)}` (``"corrected"``: :math:`\mathbb E_P[(1-e^L)_+]`, terms in [0, 1], so
    Proposition 8's bound applies). ``"as_printed"`` uses ``max`` as in line 9 of the paper's
    Algorithm 1, which estimates :math:`-\mathbb E_P[(e^L-1)_+] = -\mathrm{TV}` with unbounded,
    heavy-tailed terms (clipped at -1e300 so the average stays finite).
    """
    qq, ss, tt = check_run(q, sigma, steps)
    mm = _checks.integer("m", m, lo=2)
    ch = _checks.integer("chunk", chunk, lo=1)
    if variant not in ("corrected", "as_printed"):
        raise ValueError(f"variant must be 'corrected' or 'as_printed', got {variant!r}")
    g = _checks.generator(rng, seed)
    vals = []
    done = 0
    per = max(1, min(ch, int(4e6 // max(tt, 1))))
    while done < mm:
        k = min(per, mm - done)
        L = np.asarray(privacy_loss(ss * g.standard_normal((k, tt)), qq, ss)).reshape(k, tt).sum(axis=1)
        eta = np.minimum(L, 0.0) if variant == "corrected" else np.minimum(np.maximum(L, 0.0), 690.0)
        vals.append(-np.expm1(eta))
        done += k
    v = np.concatenate(vals)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def final_model_tv(q, sigma, steps):
    r"""Best attack that sees only the *final* model (Mahloujifar et al., App. I).

    With one-hot features and no bias, the target's coordinate of the final model is, in units of
    the clipped gradient, :math:`\mathcal N(0, T\sigma^2)` without the target and
    :math:`K + \mathcal N(0, T\sigma^2)`, :math:`K\sim\mathrm{Bin}(T, q)`, with it. Returns the total
    variation :math:`\tfrac12\int|\sum_k b_k\varphi_k - \varphi_0|`, by Simpson's rule on a grid
    that resolves every binomial component (binomial terms below 1e-18 are dropped and their mass
    added back, so the value never understates). At most :math:`\mathrm{TV} \le 1-(1-q)^T`.
    ``steps`` up to 1e5.
    """
    qq, ss, tt = check_run(q, sigma, steps)
    if tt > 100_000:
        raise ValueError(f"steps must be <= 100000 for final_model_tv (the binomial sum), got {tt}")
    if qq == 0.0 or tt == 0:
        return 0.0
    sd = math.sqrt(tt) * ss
    k = np.arange(tt + 1)
    pk = stats.binom.pmf(k, tt, qq)
    keep = pk > 1e-18
    dropped = float(max(1.0 - pk[keep].sum(), 0.0))
    k, pk = k[keep], pk[keep]
    step = min(sd / 20.0, 0.05)
    lo, hi = -12 * sd, k.max() + 12 * sd
    n = int(min(4_000_001, math.ceil((hi - lo) / step) + 1))
    n += (n + 1) % 2
    x = np.linspace(lo, hi, n)
    p = stats.norm.pdf(x, scale=sd)
    qd = np.zeros_like(x)
    for kk, w in zip(k, pk):
        qd += w * stats.norm.pdf(x, loc=kk, scale=sd)
    val = 0.5 * float(integrate.simpson(np.abs(qd - p), x=x)) + dropped
    cap = -math.expm1(tt * math.log1p(-qq)) if qq < 1 else 1.0
    return float(min(max(val, 0.0), cap, 1.0))


def _tail_delta_lower(run, eps):
    r"""Certified lower bound on :math:`\delta(\varepsilon)` of add/remove DP-SGD from sub-mixtures, for the far tail.

    :math:`Q^{\otimes T} \ge w\,Q_A` for any part :math:`Q_A` of the mixture over sampling patterns with weight
    :math:`w`, so :math:`H_{e^\varepsilon}(Q\|P) \ge \sup_S [w Q_A(S) - e^\varepsilon P(S)]`, and a statistic gives a
    set: (i) one pattern with :math:`k` sampled steps, :math:`w = q^k(1-q)^{T-k}`, is the Gaussian mechanism at
    :math:`\mu = \sqrt k/\sigma`; (ii) all patterns with :math:`k`, :math:`w = \mathrm{Bin}(k; T, q)`, seen through
    the sum of the outputs, at :math:`\mu = k/(\sigma\sqrt T)`. Either way
    :math:`\delta(\varepsilon) \ge w\,\delta_{\mathcal N}(\varepsilon + \ln(1/w); \mu)`; the largest over k and both,
    rounded down by the float error of the log-space evaluation. Where the far tail is set by heavily
    sampled patterns (small T q, or small sigma) this is near the truth; elsewhere it is only a floor.
    """
    q, sigma, steps = run
    if q == 0.0 or steps == 0 or eps < 0.0:
        return 0.0
    # any set of k gives a valid bound: all k for short runs, else 400 spread geometrically
    k = np.arange(1, steps + 1, dtype=float) if steps <= 400 else np.unique(np.round(np.geomspace(1, steps, 400)))
    lq, lq1 = math.log(q), (math.log1p(-q) if q < 1.0 else -np.inf)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        log_w1 = k * lq + np.where(steps - k > 0, (steps - k) * lq1, 0.0)
        log_w2 = stats.binom.logpmf(k, steps, q)
        best = -np.inf
        for log_w, mu in ((log_w1, np.sqrt(k) / sigma), (log_w2, k / (sigma * math.sqrt(steps)))):
            ok = np.isfinite(log_w) & (mu > 0)
            if not ok.any():
                continue
            e2 = eps - log_w[ok]
            ld = gaussian.log_delta_kernel(e2, mu[ok])
            # error: the kernel's (a few ulps of its log's size, plus its own cancellation where mu is tiny)
            err = 8.9e-16 * (8.0 + np.abs(ld) + np.maximum(1.0, e2 / mu[ok]) / mu[ok] + np.abs(log_w[ok]))
            good = err < 1e-3
            if good.any():
                best = max(best, float(np.max((log_w[ok] + ld - 2.0 * err)[good])))
    return float(math.exp(best)) if best > -745.0 else 0.0


def _eps_tail_lower(run, d, lo, hi):
    """The largest eps in [lo, hi] (to 1e-12 relative, rounded down) at which :func:`_tail_delta_lower` still
    exceeds ``d``: a certified lower end on eps(d) (the true delta there is above d); ``lo`` if none."""
    if not _tail_delta_lower(run, lo) > d:
        return lo
    a, b = lo, (hi if math.isfinite(hi) else max(2.0 * lo, 1.0))
    while math.isinf(hi) and _tail_delta_lower(run, b) > d and b < 1e300:
        a, b = b, 2.0 * b
    for _ in range(80):
        if b - a <= 1e-12 * b:
            break
        mid = 0.5 * (a + b)
        if _tail_delta_lower(run, mid) > d:
            a = mid
        else:
            b = mid
    return a
