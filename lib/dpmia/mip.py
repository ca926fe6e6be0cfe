r"""Membership inference privacy (MIP): Izzo, Yoon, Arık and Zou, *Provable Membership Inference Privacy* (TMLR 2024).

A private set :math:`D` of :math:`n` records is split uniformly at random into :math:`D_{\rm train}`
(:math:`k = n/2` records) and a holdout. An algorithm is :math:`\eta`-MIP if no attacker who sees
:math:`A(D_{\rm train})` and a target :math:`x^*\in D` guesses whether :math:`x^*\in D_{\rm train}` with
accuracy above :math:`\max(k/n, 1-k/n) + \eta` (Definition 1). With :math:`P_{\rm in}`, :math:`P_{\rm out}` the
laws of the output given that :math:`x^*` is in or out, the Bayes attacker (Prop. 2) reaches
:math:`\tfrac12 + \tfrac12\mathrm{TV}(P_{\rm in}, P_{\rm out})` when :math:`k = n/2`, so
:math:`\eta = \max_{x^*}\tfrac12\mathrm{TV}(P_{\rm in}, P_{\rm out})`.

* :func:`eta_from_dp` / :func:`eps_from_eta` - Theorem 4 (DP implies MIP, tight) and its inverse;
  :func:`tpr_upper_bound` - Theorem 8 corrected (TPR <= FPR + 2 eta);
* :func:`exact_eta` - Prop. 2 by enumerating the halves of a small data set, with the paper's example
  mechanisms (:func:`tight_dp_mechanism`, :func:`randomized_response_mechanism`,
  :func:`indicator_mechanism`, :func:`release_record_mechanism`);
* :func:`noise_multiplier`, :func:`cor14_constant`, :func:`laplace_scale_theorem9`,
  :func:`laplace_scale_dp`, :func:`laplace_scale_coupling` - the noise of Theorem 9 / Cor. 10 / Cor. 14,
  of the DP route, and of the book's coupling bound; :func:`sample_noise` (both samplers) and
  :func:`algorithm1`;
* :func:`mean_laws`, :func:`exact_eta_laplace`, :func:`min_laplace_scale` - the exact :math:`\eta` of
  releasing the mean of a random half of integer data plus Laplace noise (subset sums, the TV of two
  Laplace mixtures integrated in closed form between atoms), implemented in :mod:`dpmia.noisy_mean`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from . import _checks
from .noisy_mean import MeanLaws, exact_eta_laplace, mean_laws, min_laplace_scale, tv_laplace_lattice

__all__ = ["eta_from_dp", "eps_from_eta", "tpr_upper_bound", "MIPResult", "exact_eta", "MAX_ENUMERATION_N",
           "tight_dp_mechanism", "randomized_response_mechanism", "indicator_mechanism",
           "release_record_mechanism", "noise_multiplier", "cor14_constant", "cor14_fixed_point",
           "laplace_scale_theorem9", "laplace_scale_dp", "laplace_scale_coupling", "breakeven_ratio",
           "norm_sigma_m", "sample_noise", "algorithm1", "MeanLaws", "mean_laws", "tv_laplace_lattice",
           "exact_eta_laplace", "min_laplace_scale", "prop11_sensitivity"]

#: Largest n for which :func:`exact_eta` enumerates all C(n, n/2) halves (184,756 at n = 20).
MAX_ENUMERATION_N = 20


# ------------------------------------------------------------------------------------------
# Theorem 4 and its inverse; Theorem 8 corrected
# ------------------------------------------------------------------------------------------
def eta_from_dp(eps, delta=0.0):
    r"""Theorem 4: an :math:`(\varepsilon,\delta)`-DP algorithm is :math:`\eta`-MIP with (tight)

    .. math:: \eta = \delta + \frac{1-\delta}{1+e^{-\varepsilon}} - \frac12
       = \frac\delta2 + \frac{1-\delta}{2}\tanh\frac\varepsilon2 .

    Computed through :math:`\tanh` (stable for large :math:`\varepsilon`; ``eps = inf`` gives 1/2).
    :math:`2\eta` equals Humphries et al.'s advantage bound (:func:`dpmia.bounds.humphries_advantage`).
    ``eps`` >= 0, ``delta`` in [0, 1].

    Examples
    --------
    >>> from dpmia import mip
    >>> round(mip.eta_from_dp(1.0), 4)
    0.2311
    """
    e = _checks.nonnegative("eps", eps, allow_inf=True)
    d = _checks.probability("delta", delta)
    out = 0.5 * np.asarray(d) + 0.5 * (1.0 - np.asarray(d)) * np.tanh(0.5 * np.asarray(e))
    return _checks.scalar_or_array(np.clip(out, 0.0, 0.5), eps, delta)


def eps_from_eta(eta, delta=0.0):
    r"""Inverse of Theorem 4: the :math:`\varepsilon` at which :math:`(\varepsilon,\delta)`-DP gives exactly
    :math:`\eta`-MIP.

    .. math:: \varepsilon = \log\frac{\tfrac12 + \eta - \delta}{\tfrac12 - \eta}
       = \operatorname{log1p}\frac{2\eta-\delta}{\tfrac12-\eta},

    ``eta`` in (0, 1/2) and ``delta`` in [0, 1) with :math:`\eta \ge \delta/2` (at :math:`\varepsilon=0`
    the bound is already :math:`\delta/2`). For :math:`\delta = 0`, :math:`\varepsilon = 2\,\mathrm{artanh}(2\eta)`.

    Examples
    --------
    >>> from dpmia import mip
    >>> round(mip.eps_from_eta(0.1), 4)                  # the eps-DP that guarantees 0.1-MIP
    0.4055
    """
    h = _checks.real("eta", eta, lo=0.0, hi=0.5, lo_open=True, hi_open=True)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, hi_open=True)
    hb, db = np.broadcast_arrays(np.asarray(h, float), np.asarray(d, float))
    if np.any(hb < 0.5 * db):
        bad = np.flatnonzero((hb < 0.5 * db).ravel())[0]
        raise ValueError(f"eta must be >= delta/2 (the MIP bound of (0, delta)-DP), got eta = {hb.ravel()[bad]!r} "
                         f"with delta = {db.ravel()[bad]!r}")
    out = np.log1p((2.0 * hb - db) / (0.5 - hb))
    return _checks.scalar_or_array(out, eta, delta)


def tpr_upper_bound(fpr, eta):
    r"""Theorem 8, corrected: an :math:`\eta`-MIP algorithm allows :math:`\mathrm{TPR} \le \mathrm{FPR} + 2\eta`
    (capped at 1).

    With :math:`k = n/2`, accuracy :math:`= \tfrac12\mathrm{TPR} + \tfrac12(1-\mathrm{FPR})`, so
    :math:`\eta`-MIP is exactly :math:`\mathrm{TPR}-\mathrm{FPR}\le2\eta`. The paper prints
    :math:`\mathrm{FPR}+\eta`, which randomized response violates. ``fpr`` in [0, 1], ``eta`` in [0, 1/2].
    """
    f = _checks.probability("fpr", fpr)
    h = _checks.real("eta", eta, lo=0.0, hi=0.5)
    return _checks.scalar_or_array(np.minimum(1.0, np.asarray(f) + 2.0 * np.asarray(h)), fpr, eta)


# ------------------------------------------------------------------------------------------
# exact enumeration (Prop. 2) and the paper's example mechanisms
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MIPResult:
    """Exact MIP of a discrete mechanism: ``eta`` (max over targets), ``per_target`` and the Bayes accuracy."""

    eta: float
    per_target: np.ndarray
    accuracy: float
    baseline: float


def exact_eta(mechanism, n, k=None, targets=None) -> MIPResult:
    r"""Exact :math:`\eta` of a discrete mechanism by enumerating all :math:`\binom nk` training sets (Prop. 2).

    ``mechanism(half)`` receives a sorted tuple of record indices in ``range(n)`` and returns a dict
    ``{output: probability}``. For each target :math:`x^*` the Bayes attacker's accuracy is
    :math:`\sum_a \max(\Pr[a, x^*\in D_{\rm train}], \Pr[a, x^*\notin D_{\rm train}])`, and
    :math:`\eta(x^*)` is that minus the baseline :math:`\max(k/n, 1-k/n)`. ``n`` <= :data:`MAX_ENUMERATION_N`.
    """
    nn = _checks.integer("n", n, lo=2)
    if nn > MAX_ENUMERATION_N:
        raise ValueError(f"n = {nn} is too large to enumerate the C(n, n/2) training sets (limit n <= "
                         f"{MAX_ENUMERATION_N}); for the mean of integer data with Laplace noise use "
                         f"mip.exact_eta_laplace, otherwise estimate eta by Monte Carlo")
    kk = nn // 2 if k is None else _checks.integer("k", k, lo=1, hi=nn - 1)
    if not callable(mechanism):
        raise TypeError("mechanism must be callable: half (tuple of indices) -> {output: probability}")
    tg = list(range(nn)) if targets is None else [_checks.integer("target", t, lo=0, hi=nn - 1) for t in targets]
    from scipy import sparse

    halves = list(itertools.combinations(range(nn), kk))
    index, rows, cols, vals = {}, [], [], []
    for h_i, half in enumerate(halves):
        dist = mechanism(half)
        tot = math.fsum(dist.values())
        if not (abs(tot - 1.0) <= 1e-9 and min(dist.values()) >= -1e-12):   # also false for NaN
            raise ValueError(f"mechanism({half}) must return non-negative probabilities summing to 1, "
                             f"got sum {tot!r}")
        for a, p in dist.items():
            rows.append(h_i)
            cols.append(index.setdefault(a, len(index)))
            vals.append(p)
    w = 1.0 / len(halves)
    out_probs = sparse.csr_matrix((np.asarray(vals) * w, (rows, cols)), shape=(len(halves), len(index)))
    member = np.zeros((len(halves), nn))
    hv = np.asarray(halves)
    member[np.repeat(np.arange(len(halves)), kk), hv.ravel()] = 1.0
    member = member[:, tg]
    joint_in = np.asarray((out_probs.T @ member).T)                  # (targets, outputs): Pr[a, x* in]
    joint_out = np.asarray((out_probs.T @ (1.0 - member)).T)
    base = max(kk / nn, 1 - kk / nn)
    per = np.maximum(np.maximum(joint_in, joint_out).sum(axis=1) - base, 0.0)
    j = int(np.argmax(per))
    return MIPResult(float(per[j]), per, float(per[j] + base), base)


def tight_dp_mechanism(eps, delta=0.0):
    r"""Theorem 4's tightness example (n = 2, k = 1): with :math:`a = (1-\delta)/(1+e^{-\varepsilon})`,
    :math:`b = (1-\delta)/(1+e^{\varepsilon})`,

    :math:`A(\{0\})` outputs "0" w.p. :math:`\delta`, :math:`\bot_0` w.p. :math:`a`, :math:`\bot_1` w.p. :math:`b`;
    :math:`A(\{1\})` outputs "1" w.p. :math:`\delta`, :math:`\bot_0` w.p. :math:`b`, :math:`\bot_1` w.p. :math:`a`.
    It is :math:`(\varepsilon,\delta)`-DP and exactly :func:`eta_from_dp` -MIP.
    """
    e = _checks.scalar("eps", eps, lo=0.0)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0)
    a, b = (1 - d) / (1 + math.exp(-e)), (1 - d) / (1 + math.exp(e))

    def mech(half):
        if len(half) != 1 or half[0] not in (0, 1):
            raise ValueError("tight_dp_mechanism is defined for n = 2, k = 1")
        x = half[0]
        return {str(x): d, "bot0": a if x == 0 else b, "bot1": b if x == 0 else a}

    return mech


def randomized_response_mechanism(eps, delta=0.0, record=0):
    r"""Randomized response on the membership of ``record``, plus "reveal" with probability :math:`\delta`.

    Reports the true bit :math:`1\{\text{record}\in D_{\rm train}\}` w.p.
    :math:`(1-\delta)e^\varepsilon/(1+e^\varepsilon)`, the flipped bit w.p. :math:`(1-\delta)/(1+e^\varepsilon)`, and
    "reveal" plus the bit w.p. :math:`\delta`.
    :math:`(\varepsilon,\delta)`-DP under replacement and exactly Theorem 4-tight for every even n.
    """
    e = _checks.scalar("eps", eps, lo=0.0)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0)
    r = _checks.integer("record", record, lo=0)
    p_true = (1 - d) / (1 + math.exp(-e))

    def mech(half):
        bit = int(r in half)
        return {bit: p_true, 1 - bit: 1 - d - p_true, ("reveal", bit): d}

    return mech


def indicator_mechanism(n):
    r"""Theorem 5: :math:`A(D_{\rm train}) = 1\{D_{\rm train} = \{0,\dots,n/2-1\}\}`. Exactly
    :math:`1/\binom{n}{n/2}`-MIP, never DP."""
    nn = _checks.integer("n", n, lo=2)
    star = tuple(range(nn // 2))
    return lambda half: {int(tuple(half) == star): 1.0}


def release_record_mechanism(q):
    r"""With probability ``q`` release one uniformly chosen training record, else nothing. Exactly :math:`q/n`-MIP."""
    qq = _checks.probability("q", q)

    def mech(half):
        out = {None: 1.0 - qq}
        for i in half:
            out[i] = out.get(i, 0.0) + qq / len(half)
        return out

    return mech


# ------------------------------------------------------------------------------------------
# noise calibration (Theorem 9, Cor. 10, Cor. 14) and the book's coupling bound
# ------------------------------------------------------------------------------------------
def noise_multiplier(eta, m=2, constant=6.16):
    r"""Theorem 9's multiplier :math:`c = (\text{constant}/\eta)^{1+2/M}`; constant 7.5 (Thm 9) or 6.16
    (Cor. 14, :math:`M \ge 2`)."""
    h = _checks.real("eta", eta, lo=0.0, hi=0.5, lo_open=True)
    mm = _checks.positive("m", m, allow_inf=True)
    cst = _checks.positive("constant", constant)
    if cst < 7.5 and mm < 2:
        raise ValueError(f"the constant 6.16 of Cor. 14 needs M >= 2, got m = {mm!r}; use constant=7.5")
    expo = 1.0 + (0.0 if math.isinf(mm) else 2.0 / mm)
    return _checks.scalar_or_array((cst / np.asarray(h)) ** expo, eta)


def cor14_constant(c):
    r"""Cor. 14's bound constant :math:`K(c) = (4 + e + 2c^{-1/2})/2 + e + 2c^{-3/2}`
    (:math:`\eta \le K(c)\,c^{-1/2}` with M = 2)."""
    cc = _checks.positive("c", c)
    v = np.asarray(cc)
    return _checks.scalar_or_array((4 + math.e + 2 * v**-0.5) / 2 + math.e + 2 * v**-1.5, c)


def cor14_fixed_point():
    r"""The smallest constant Cor. 14's proof admits: :math:`K^* = K((2K^*)^2)` (:math:`\eta \le 1/2` forces
    :math:`c \ge (2K)^2`); 6.15967."""
    return float(optimize.brentq(lambda k: cor14_constant((2 * k) ** 2) - k, 6.0, 7.0, xtol=1e-14))


def laplace_scale_theorem9(eta, sigma, m=2, constant=6.16):
    r"""Theorem 9: Laplace scale :math:`c\,\sigma`, :math:`c` from :func:`noise_multiplier` (1-d; ``sigma`` the M-th
    moment root)."""
    s = _checks.positive("sigma", sigma)
    return _checks.scalar_or_array(np.asarray(noise_multiplier(eta, m, constant)) * np.asarray(s), eta, sigma)


def laplace_scale_dp(eta, sensitivity):
    r"""The DP route: Laplace scale :math:`\Delta/\varepsilon(\eta)` with
    :math:`\varepsilon(\eta) = \log\frac{1+2\eta}{1-2\eta}` (Theorem 4 inverse).

    ``sensitivity`` is the replace-one sensitivity :math:`\Delta` over halves.
    """
    s = _checks.positive("sensitivity", sensitivity)
    return _checks.scalar_or_array(np.asarray(s) / np.asarray(eps_from_eta(eta)), eta, sensitivity)


def laplace_scale_coupling(eta, w1):
    r"""The book's coupling bound (not in the paper): Laplace scale :math:`W_1(P_{\rm in}, P_{\rm out})/(4\eta)`
    suffices.

    For noise with density :math:`\propto e^{-\|x\|/b}`,
    :math:`\mathrm{TV}(p(\cdot-a), p(\cdot-a')) \le \tanh(\|a-a'\|/(2b)) \le \|a-a'\|/(2b)`; joint convexity of
    TV over the optimal coupling gives :math:`\eta \le W_1/(4b)`.
    """
    h = _checks.real("eta", eta, lo=0.0, hi=0.5, lo_open=True)
    w = _checks.nonnegative("w1", w1)
    return _checks.scalar_or_array(np.asarray(w) / (4.0 * np.asarray(h)), eta, w1)


def breakeven_ratio(eta, m=2, constant=6.16):
    r""":math:`R^*(\eta) = c(\eta)\log\frac{1+2\eta}{1-2\eta}`: Theorem 9 needs less noise than DP iff
    :math:`\Delta/\sigma > R^*`."""
    return _checks.scalar_or_array(np.asarray(noise_multiplier(eta, m, constant)) * np.asarray(eps_from_eta(eta)), eta)


def prop11_sensitivity(n):
    r"""The sensitivity in Prop. 11's proof: :math:`\sqrt{\binom{n}{n/2}} - 1` (exact integer binomial), ``n`` even
    >= 2."""
    nn = _checks.integer("n", n, lo=2, hi=2000)
    if nn % 2:
        raise ValueError(f"n must be even, got {nn}")
    return math.sqrt(math.comb(nn, nn // 2)) - 1.0


def norm_sigma_m(x, sigma, m):
    r""":math:`\|x\|_{\sigma,M} = \big(\tfrac1d\sum_i |x_i/\sigma_i|^M\big)^{1/M}` (Cor. 10), along the last axis."""
    xa = np.asarray(_checks.real("x", x), float)
    s = np.atleast_1d(_checks.positive("sigma", sigma))
    mm = _checks.real("m", m, lo=1.0)
    if xa.shape[-1:] != s.shape:
        raise ValueError(f"x's last axis ({xa.shape[-1:]}) must match sigma's length ({s.size})")
    return np.mean(np.abs(xa / s) ** mm, axis=-1) ** (1.0 / mm)


def sample_noise(sigma, eta, m=2, *, radial="gamma", size=1, constant=6.16, rng=None, seed=None):
    r"""Noise of Cor. 10: :math:`X = rU`, :math:`U = Y/\|Y\|_{\sigma,M}` with :math:`Y_i\sim`
    GenNormal(:math:`\sigma_i`, M) (cone measure).

    ``radial="paper"``: :math:`r\sim` Laplace(0, c) as printed; its density is :math:`\propto\|x\|^{1-d}e^{-\|x\|/c}`
    (the Jacobian :math:`r^{d-1}` is missing) and only equals Theorem 9's for d = 1. ``radial="gamma"``:
    :math:`r\sim` Gamma(d, c), which gives exactly the density :math:`\propto e^{-\|x\|_{\sigma,M}/c}` Theorem 9 needs.
    ``c`` = :func:`noise_multiplier` (eta, m, constant). Returns an array of shape (size, d).
    """
    s = np.atleast_1d(_checks.positive("sigma", sigma))
    c = float(noise_multiplier(eta, m, constant))
    nsz = _checks.integer("size", size, lo=1)
    if radial not in ("gamma", "paper"):
        raise ValueError(f"radial must be 'gamma' or 'paper', got {radial!r}")
    g = _checks.generator(rng, seed)
    y = stats.gennorm.rvs(beta=float(m), scale=s, size=(nsz, s.size), random_state=g)
    u = y / norm_sigma_m(y, s, m)[:, None]
    r = g.gamma(s.size, c, size=nsz) if radial == "gamma" else g.laplace(0.0, c, size=nsz)
    return u * r[:, None]


def algorithm1(data, statistic, eta, *, m=2, n_halves=100, sigma_source="train", radial="gamma", constant=6.16,
               rng=None, seed=None):
    r"""Algorithm 1 of the paper: release :math:`A(D_{\rm train})` plus noise calibrated by an estimated spread.

    1. :math:`D_{\rm train}` = a random half of ``data`` (rows); 2. draw ``n_halves`` (B) random halves of
    :math:`D_{\rm train}` (``sigma_source="train"``, as printed: subsets of size n/4) or of :math:`D`
    (``"D"``: subsets of size n/2, the spread Theorem 9 actually needs, and independent of
    :math:`D_{\rm train}`); 3. :math:`\hat\sigma_j = (\frac1B\sum_i|\theta_j^{(i)}-\bar\theta_j|^M)^{1/M}`;
    4. add :func:`sample_noise` (:math:`\hat\sigma`, eta, M). ``statistic(rows) -> 1-d array``.
    Returns a dict with ``theta_hat``, ``theta``, ``sigma_hat``, ``noise`` and ``train_index``.
    """
    x = np.asarray(data)
    if x.ndim == 0 or x.shape[0] < 4:
        raise ValueError(f"data must have at least 4 rows, got shape {x.shape}")
    if not callable(statistic):
        raise TypeError("statistic must be callable: rows -> 1-d array")
    b = _checks.integer("n_halves", n_halves, lo=2)
    if sigma_source not in ("train", "D"):
        raise ValueError(f"sigma_source must be 'train' or 'D', got {sigma_source!r}")
    g = _checks.generator(rng, seed)
    n = x.shape[0]
    train = np.sort(g.choice(n, n // 2, replace=False))
    theta = np.atleast_1d(np.asarray(statistic(x[train]), float))
    pool = train if sigma_source == "train" else np.arange(n)
    size = pool.size // 2
    thetas = np.array([np.atleast_1d(statistic(x[np.sort(g.choice(pool, size, replace=False))]))
                       for _ in range(b)], float)
    sig = np.mean(np.abs(thetas - thetas.mean(axis=0)) ** float(m), axis=0) ** (1.0 / float(m))
    sig = np.maximum(sig, np.finfo(float).tiny)
    noise = sample_noise(sig, eta, m, radial=radial, size=1, constant=constant, rng=g)[0]
    return {"theta_hat": theta + noise, "theta": theta, "sigma_hat": sig, "noise": noise, "train_index": train}
