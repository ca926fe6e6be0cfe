r"""Practical membership privacy (PMP): Lowy, Li, Liu, Koike-Akino, Parsons and Wang, *Why Does Differential
Privacy with Large ε Defend Against Practical Membership Inference Attacks?* (AAAI 2024).

A practical attacker knows a parent set :math:`X` of :math:`2n` points; the training set :math:`D` is a
uniformly random :math:`n`-subset. With :math:`N=\binom{2n-1}{n-1}` subsets containing a point :math:`x`
and :math:`N` not containing it, the mixtures (Lemma 3)

.. math:: \mathbb P_{{\rm in},x} = \frac1N\sum_{D\ni x}\mathcal A(D),\qquad
          \mathbb P_{{\rm out},x} = \frac1N\sum_{D\not\ni x}\mathcal A(D)

are the output laws given :math:`x\in D` and :math:`x\notin D`. :math:`\mathcal A` is
:math:`(\tilde\varepsilon,\delta)`-PMP w.r.t. :math:`X` when both hockey-stick divergences between them are at
most :math:`\delta` for every :math:`x` (Lemma 11); for pure PMP and discrete outputs
:math:`\tilde\varepsilon(X)=\max_{x,z}|\ln\mathbb P_{{\rm in},x}(z)-\ln\mathbb P_{{\rm out},x}(z)|`.

* :func:`parent_set`, :func:`clip_rows`, :func:`subsets`, :func:`mixtures` - the setting;
* :func:`exponential_mechanism` - the exact two-sided :math:`\tilde\varepsilon` of the exponential mechanism
  (Prop. 9, corrected to the absolute value), by a meet-in-the-middle enumeration in log space with
  bounded memory; :func:`exponential_mechanism_mc` - a Monte Carlo estimate for larger n;
  :func:`restricted_epsilon`, :func:`loss_sensitivity` - the DP parameter and loss sensitivity restricted to :math:`X`;
* :func:`gaussian_pmp_bound` (Prop. 12 with the sum trick), :func:`gaussian_pmp_double_sum` (the
  brute-force double sum it simplifies) and :func:`gaussian_pmp_exact_1d` (the exact mixture PMP it bounds);
* :func:`modular_sum_pmp` (Prop. 5), :func:`mia_success_bound` (Lemma 6 with :math:`\delta` and a prior),
  :func:`mip_eta_from_pmp` (Lemma 13).

The Gaussian mechanism's profile and calibration are :mod:`dpmia.gaussian` (Lemma 10 is Balle and Wang's).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from . import _checks, gaussian, mip

__all__ = ["parent_set", "clip_rows", "subsets", "mixtures", "geometric_median_losses", "loss_sensitivity",
           "global_loss_sensitivity", "PMPResult", "exponential_mechanism", "exponential_mechanism_mc",
           "restricted_epsilon", "MAX_EXACT_N", "gaussian_pmp_bound", "gaussian_pmp_double_sum",
           "gaussian_pmp_exact_1d", "modular_sum_pmp", "mia_success_bound", "mip_eta_from_pmp"]

#: Largest n for which :func:`exponential_mechanism` enumerates all C(2n, n) subsets (C(32, 16) = 6e8 at 16).
MAX_EXACT_N = 16


# ------------------------------------------------------------------------------------------
# the setting
# ------------------------------------------------------------------------------------------
def clip_rows(x, c):
    r"""Project each row of ``x`` onto the Euclidean ball of radius ``c``: :math:`x\min(1, c/\|x\|)`."""
    xa = np.atleast_2d(_checks.real("x", x))
    cc = _checks.positive("c", c)
    norms = np.linalg.norm(xa, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(norms > cc, cc / norms, 1.0)
    return xa * f


def parent_set(n, d, *, sigma=1.0, clip=10.0, outliers=0, outlier_scale=100.0, center=None, rng=None, seed=None):
    r"""A parent set of :math:`2n` points in :math:`\mathbb R^d`: ``center`` + sigma * N(0, I), outliers scaled, then
    clipped.

    ``outliers`` random points are multiplied by ``outlier_scale`` *before* clipping to norm ``clip``
    (afterwards they would leave the data domain). ``center`` defaults to the origin.
    """
    nn = _checks.integer("n", n, lo=1)
    dd = _checks.integer("d", d, lo=1)
    s = _checks.positive("sigma", sigma)
    c = _checks.positive("clip", clip)
    k = _checks.integer("outliers", outliers, lo=0, hi=2 * nn)
    sc = _checks.positive("outlier_scale", outlier_scale)
    g = _checks.generator(rng, seed)
    mu = np.zeros(dd) if center is None else np.asarray(_checks.real("center", center), float).reshape(dd)
    x = mu + s * g.standard_normal((2 * nn, dd))
    if k:
        x[g.choice(2 * nn, k, replace=False)] *= sc
    return clip_rows(x, c)


def subsets(n_points, k):
    """Boolean incidence matrix (C(n_points, k), n_points) of all k-subsets, in lexicographic order (n_points <= 24)."""
    npt = _checks.integer("n_points", n_points, lo=1, hi=24)
    kk = _checks.integer("k", k, lo=0, hi=npt)
    if kk == 0:
        return np.zeros((1, npt), bool)
    combos = np.array(list(itertools.combinations(range(npt), kk)), dtype=np.intp).reshape(-1, kk)
    out = np.zeros((combos.shape[0], npt), bool)
    out[np.repeat(np.arange(combos.shape[0]), kk), combos.ravel()] = True
    return out


def mixtures(probs, incidence):
    r"""The in/out mixtures of Lemma 3 for every point: ``(p_in, p_out)`` of shape (2n, outputs).

    ``probs[j]`` is the output law of :math:`\mathcal A` on the subset ``incidence[j]`` (all :math:`n`-subsets of
    the :math:`2n` points); each mixture averages over its :math:`N=\binom{2n-1}{n-1}` subsets (the 1/N normalisation).
    """
    p = np.asarray(_checks.real("probs", probs, lo=0.0), float)
    inc = np.asarray(incidence, bool)
    if p.ndim != 2 or inc.ndim != 2 or p.shape[0] != inc.shape[0]:
        raise ValueError(f"probs (subsets, outputs) and incidence (subsets, points) must share their first axis, "
                         f"got {p.shape} and {inc.shape}")
    n2 = inc.shape[1]
    if n2 % 2 or not np.all(inc.sum(axis=1) == n2 // 2) or inc.shape[0] != math.comb(n2, n2 // 2):
        raise ValueError("incidence must list all n-subsets of 2n points")
    big_n = math.comb(n2 - 1, n2 // 2 - 1)
    p_in = inc.T.astype(float) @ p / big_n
    p_out = (p.sum(axis=0)[None, :] - inc.T.astype(float) @ p) / big_n
    return p_in, p_out


def geometric_median_losses(w, x):
    r"""Per-point losses :math:`a_{wi}=\|w-x_i\|_2` of the geometric-median objective, shape (candidates, points)."""
    wa = np.atleast_2d(_checks.real("w", w))
    xa = np.atleast_2d(_checks.real("x", x))
    if wa.shape[1] != xa.shape[1]:
        raise ValueError(f"w and x must have the same dimension, got {wa.shape[1]} and {xa.shape[1]}")
    return np.linalg.norm(wa[:, None, :] - xa[None, :, :], axis=2)


def loss_sensitivity(losses):
    r""":math:`\Delta_\ell(X)=\frac1n\max_w(\max_i a_{wi}-\min_i a_{wi})`: the sensitivity of
    :math:`\ell(w,D)=\operatorname{mean}_{i\in D}a_{wi}` restricted to :math:`X`."""
    a = _losses(losses)
    n = a.shape[1] // 2
    return float(np.max(a.max(axis=1) - a.min(axis=1)) / n)


def global_loss_sensitivity(c, n, w_norm=1.0):
    r"""Global sensitivity of the geometric-median loss on the ball of radius ``c``: :math:`(C + \max\|w\|)/n`."""
    cc = _checks.positive("c", c)
    nn = _checks.integer("n", n, lo=1)
    wn = _checks.nonnegative("w_norm", w_norm)
    return (cc + wn) / nn


def _losses(losses):
    a = np.asarray(_checks.real("losses", losses), float)
    if a.ndim != 2 or a.shape[1] < 2 or a.shape[1] % 2:
        raise ValueError(f"losses must have shape (candidates, 2n) with an even number of points >= 2, got {a.shape}")
    return a


# ------------------------------------------------------------------------------------------
# the exponential mechanism (Prop. 9)
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PMPResult:
    """Exact PMP of the exponential mechanism: ``eps_tilde`` (two-sided), the one-sided value Prop. 9 prints,
    the per-point values, and the log mixtures ``log_p_in``/``log_p_out`` (points x candidates)."""

    eps_tilde: float
    one_sided: float
    per_point: np.ndarray
    log_p_in: np.ndarray
    log_p_out: np.ndarray


def _lse(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def _half_pass(a_outer, a_inner, beta, n, cells):
    """Log-sums over all n-subsets of (outer ∪ inner points) of log P(w|D), split by membership of each outer point.

    Returns (log_in, log_out) of shape (outer points, m): log sum over D containing / not containing the point.
    Every subset is (a j-subset of the outer points) ∪ (an (n-j)-subset of the inner points); for one outer
    subset the membership of every outer point is fixed, so the sum over inner subsets is an exact logsumexp.
    """
    n_out, n_in = a_outer.shape[1], a_inner.shape[1]
    m = a_outer.shape[0]
    log_in = np.full((n_out, m), -np.inf)
    log_out = np.full((n_out, m), -np.inf)
    for j in range(max(0, n - n_in), min(n, n_out) + 1):
        inc_o = subsets(n_out, j)
        inc_i = subsets(n_in, n - j)
        lo = inc_o.astype(float) @ a_outer.T                 # (A, m) summed losses of the outer part
        li = inc_i.astype(float) @ a_inner.T                 # (B, m)
        block = max(1, cells // max(1, li.shape[0] * m))
        for s in range(0, lo.shape[0], block):
            logits = -(beta / n) * (lo[s:s + block, None, :] + li[None, :, :])      # (a, B, m)
            logp = logits - _lse(logits, axis=2)[:, :, None]
            per_a = _lse(logp, axis=1)                                              # (a, m): sum over inner subsets
            bits = inc_o[s:s + block]                                               # (a, n_out)
            for x in range(n_out):
                sel = bits[:, x]
                if sel.any():
                    log_in[x] = np.logaddexp(log_in[x], _lse(per_a[sel], axis=0))
                if (~sel).any():
                    log_out[x] = np.logaddexp(log_out[x], _lse(per_a[~sel], axis=0))
    return log_in, log_out


def exponential_mechanism(losses, beta, *, cells=4_000_000):
    r"""Exact PMP of the exponential mechanism
    :math:`P(w\mid D)\propto\exp(-\beta\cdot\operatorname{mean}_{i\in D}\,\text{losses}[w,i])` (Prop. 9).

    Over all :math:`\binom{2n}{n}` subsets :math:`D` of the :math:`2n` points (columns of ``losses``, shape
    (m candidates, 2n)):

    .. math:: \tilde\varepsilon = \max_{x,w}\Big|\ln\frac{\sum_{D\ni x}P(w\mid D)}{\sum_{D\not\ni x}P(w\mid D)}\Big|

    (two-sided: Prop. 9 prints the one-sided ratio, returned as ``one_sided``). For the :math:`\varepsilon`-DP
    mechanism :math:`\beta=\varepsilon/(2\Delta_\ell)`. Computed in log space (no underflow at large :math:`\beta`)
    by a meet-in-the-middle enumeration: the points are split in two halves, and each pass fixes a subset
    of one half and takes an exact logsumexp over the subsets of the other, so memory stays below ``cells``
    floats. ``n`` <= :data:`MAX_EXACT_N`; beyond, use :func:`exponential_mechanism_mc`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpmia import pmp
    >>> losses = np.array([[0.1, 0.5, 0.3, 0.2], [0.4, 0.2, 0.1, 0.6], [0.3, 0.3, 0.3, 0.3]])
    >>> round(pmp.exponential_mechanism(losses, 2.0).eps_tilde, 4)   # 3 outputs, a pool of 2n = 4 points
    0.2822
    """
    a = _losses(losses)
    b = _checks.nonnegative("beta", beta)
    cl = _checks.integer("cells", cells, lo=1000)
    n = a.shape[1] // 2
    if n > MAX_EXACT_N:
        raise ValueError(f"n = {n} is beyond the exact enumeration (C(2n, n) subsets, n <= {MAX_EXACT_N}); "
                         "use pmp.exponential_mechanism_mc for a Monte Carlo estimate with a standard error")
    left, right = np.arange(n), np.arange(n, 2 * n)
    in_l, out_l = _half_pass(a[:, left], a[:, right], b, n, cl)
    in_r, out_r = _half_pass(a[:, right], a[:, left], b, n, cl)
    log_in, log_out = np.vstack([in_l, in_r]), np.vstack([out_l, out_r])
    diff = log_in - log_out                       # the 1/N factors cancel
    per = np.max(np.abs(diff), axis=1)
    return PMPResult(float(per.max()), float(max(diff.max(), 0.0)), per,
                     log_in - math.log(math.comb(2 * n - 1, n - 1)), log_out - math.log(math.comb(2 * n - 1, n - 1)))


def exponential_mechanism_mc(losses, beta, n_samples, *, batches=20, rng=None, seed=None):
    r"""Monte Carlo estimate of :func:`exponential_mechanism`'s :math:`\tilde\varepsilon` from uniformly random subsets.

    Each sampled subset contributes :math:`P(\cdot\mid D)` to the "in" sums of its members and the "out"
    sums of the others. Returns ``(estimate, standard_error)``; the standard error is the spread of the
    estimate over ``batches`` independent batches divided by :math:`\sqrt{\text{batches}}` (the maximum over
    :math:`(x, w)` is slightly biased upwards at small samples).
    """
    a = _losses(losses)
    b = _checks.nonnegative("beta", beta)
    ns = _checks.integer("n_samples", n_samples, lo=2)
    nb = _checks.integer("batches", batches, lo=2)
    g = _checks.generator(rng, seed)
    n2 = a.shape[1]
    n = n2 // 2
    per_batch = max(1, ns // nb)
    sums_in, sums_out, cnt_in = [], [], []
    for _ in range(nb):
        inc = np.argsort(g.random((per_batch, n2)), axis=1)[:, :n]
        mask = np.zeros((per_batch, n2), bool)
        mask[np.repeat(np.arange(per_batch), n), inc.ravel()] = True
        logits = -(b / n) * (mask.astype(float) @ a.T)
        p = np.exp(logits - _lse(logits, axis=1)[:, None])
        s_in = mask.T.astype(float) @ p
        sums_in.append(s_in)
        sums_out.append(p.sum(axis=0)[None, :] - s_in)
        cnt_in.append(mask.sum(axis=0).astype(float))
    sums_in, sums_out, cnt_in = np.array(sums_in), np.array(sums_out), np.array(cnt_in)
    cnt_out = per_batch - cnt_in

    def estimate(si, so, ci, co):
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.log(si / ci[:, None]) - np.log(so / co[:, None])
        return float(np.max(np.abs(r)))

    est = [estimate(sums_in[k], sums_out[k], cnt_in[k], cnt_out[k]) for k in range(nb)]
    total = estimate(sums_in.sum(axis=0), sums_out.sum(axis=0), cnt_in.sum(axis=0), cnt_out.sum(axis=0))
    return total, float(np.std(est, ddof=1) / math.sqrt(nb))


def restricted_epsilon(losses, beta):
    r"""Exact :math:`\varepsilon(X)`: :math:`\max_w\max_{D\sim D'}|\ln P(w\mid D)-\ln P(w\mid D')|` over replace-one
    neighbours inside :math:`X` (n <= 8)."""
    a = _losses(losses)
    b = _checks.nonnegative("beta", beta)
    n = a.shape[1] // 2
    if n > 8:
        raise ValueError(f"n = {n}: restricted_epsilon enumerates all neighbouring pairs, limited to n <= 8")
    inc = subsets(2 * n, n)
    logits = -(b / n) * (inc.astype(float) @ a.T)
    logp = logits - _lse(logits, axis=1)[:, None]
    index = {tuple(np.flatnonzero(r)): i for i, r in enumerate(inc)}
    best = 0.0
    for i, r in enumerate(inc):
        members = np.flatnonzero(r)
        others = np.flatnonzero(~r)
        for u in members:
            for v in others:
                j = index[tuple(sorted(set(members) - {u} | {v}))]
                best = max(best, float(np.max(np.abs(logp[i] - logp[j]))))
    return best


# ------------------------------------------------------------------------------------------
# the Gaussian mechanism (Prop. 12)
# ------------------------------------------------------------------------------------------
def _pairwise(x):
    xa = np.atleast_2d(_checks.real("x", x))
    if xa.shape[0] < 2 or xa.shape[0] % 2:
        raise ValueError(f"x must hold an even number >= 2 of points (2n rows), got {xa.shape[0]}")
    g = np.sum(xa * xa, axis=1)
    d2 = np.maximum(g[:, None] + g[None, :] - 2.0 * xa @ xa.T, 0.0)
    return xa, np.sqrt(d2)


def gaussian_pmp_bound(x, s, delta):
    r"""Prop. 12 with the sum trick: an upper bound on :math:`\tilde\varepsilon(X)` of the Gaussian mean
    :math:`\frac1n\sum_{x\in D}x + \mathcal N(0, s^2 I)`.

    For a sum query :math:`q(D)=\sum_{x\in D}f(x)`, :math:`q(D)-q(D')=f(x)-f(x')` and each :math:`x'\ne x` appears in
    the same number of neighbouring pairs, so the right side of eq. (5) is
    :math:`\frac{1}{2n-1}\sum_{x'\ne x}\delta_{\rm G}(\varepsilon;\|x-x'\|/n, s)` (:func:`dpmia.gaussian.delta`).
    Returns the smallest :math:`\varepsilon\ge0` with :math:`\max_x` of that average :math:`\le\delta`, rounded up
    (root on the safe side).
    """
    xa, dist = _pairwise(x)
    ss = _checks.positive("s", s)
    dl = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    n = xa.shape[0] // 2
    mu = dist / (n * ss)
    off = ~np.eye(mu.shape[0], dtype=bool)
    mus = mu[off].reshape(mu.shape[0], -1)

    def worst(e):
        return float(np.max(np.mean(gaussian.delta(np.full(mus.shape, e), mus), axis=1)))

    if worst(0.0) <= dl:
        return 0.0
    hi = 1.0
    while worst(hi) > dl:
        hi *= 2.0
    root = optimize.brentq(lambda e: worst(e) - dl, 0.0, hi, xtol=1e-13, rtol=8.9e-16)
    step = 1e-13 * max(root, 1.0)
    while worst(root) > dl:
        root += step
        step *= 2.0
    return root


def gaussian_pmp_double_sum(x, s, eps):
    r"""The right side of Prop. 12's eq. (5) by brute force:
    :math:`\frac1{nN}\sum_{D\ni x}\sum_{D'\not\ni x,\,D'\sim D}\delta_{\rm G}(\varepsilon;\|q(D)-q(D')\|,s)`, max over
    :math:`x` (n <= 6)."""
    xa, _ = _pairwise(x)
    ss = _checks.positive("s", s)
    e = _checks.nonnegative("eps", eps)
    n = xa.shape[0] // 2
    if n > 6:
        raise ValueError(f"n = {n}: the double sum enumerates all neighbouring pairs, limited to n <= 6")
    inc = subsets(2 * n, n)
    q = inc.astype(float) @ xa / n
    index = {tuple(np.flatnonzero(r)): i for i, r in enumerate(inc)}
    big_n = math.comb(2 * n - 1, n - 1)
    best = 0.0
    for x0 in range(2 * n):
        total = 0.0
        for i, r in enumerate(inc):
            if not r[x0]:
                continue
            members = set(np.flatnonzero(r))
            for v in np.flatnonzero(~r):
                j = index[tuple(sorted(members - {x0} | {int(v)}))]
                total += float(gaussian.delta(e, np.linalg.norm(q[i] - q[j]) / ss))
        best = max(best, total / (n * big_n))
    return best


def gaussian_pmp_exact_1d(x, s, delta, *, grid=20001):
    r"""Exact :math:`\tilde\varepsilon(X)` of the 1-d Gaussian mean: the hockey-stick divergence between the two
    N-component mixtures.

    :math:`\mathbb P_{{\rm in},x}` and :math:`\mathbb P_{{\rm out},x}` are equal-weight mixtures of
    :math:`\mathcal N(q(D), s^2)`; both divergences are integrated on a uniform grid of ``grid`` points over
    :math:`\pm12s` beyond the extreme means (the integrand is smooth; error far below the bound's slack).
    Returns the smallest :math:`\varepsilon` with both divergences :math:`\le\delta` for every :math:`x` (n <= 8).
    """
    xa = np.asarray(_checks.real("x", x), float).ravel()
    if xa.size < 2 or xa.size % 2:
        raise ValueError(f"x must hold an even number >= 2 of points, got {xa.size}")
    ss = _checks.positive("s", s)
    dl = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    n = xa.size // 2
    if n > 8:
        raise ValueError(f"n = {n}: the exact mixture is limited to n <= 8")
    inc = subsets(2 * n, n)
    q = inc.astype(float) @ xa / n
    t = np.linspace(q.min() - 12 * ss, q.max() + 12 * ss, _checks.integer("grid", grid, lo=1001))
    dt = t[1] - t[0]
    dens = np.exp(-0.5 * ((t[None, :] - q[:, None]) / ss) ** 2) / (ss * math.sqrt(2 * math.pi))
    pairs = [((inc[:, x0][:, None] * dens).sum(axis=0), ((~inc[:, x0])[:, None] * dens).sum(axis=0))
             for x0 in range(2 * n)]
    big_n = math.comb(2 * n - 1, n - 1)

    def worst(e):
        v = 0.0
        for p_in, p_out in pairs:
            v = max(v, float(np.sum(np.maximum(p_in - math.exp(e) * p_out, 0.0)) * dt / big_n),
                    float(np.sum(np.maximum(p_out - math.exp(e) * p_in, 0.0)) * dt / big_n))
        return v

    if worst(0.0) <= dl:
        return 0.0
    hi = 1.0
    while worst(hi) > dl:
        hi *= 2.0
    return float(optimize.brentq(lambda e: worst(e) - dl, 0.0, hi, xtol=1e-10))


# ------------------------------------------------------------------------------------------
# Prop. 5, Lemma 6, Lemma 13
# ------------------------------------------------------------------------------------------
def modular_sum_pmp(n, *, loose=False):
    r"""Prop. 5: :math:`\mathcal A(D)=\sum D \bmod 2n` on :math:`X=(0,\dots,2n-1)`, exact :math:`\tilde\varepsilon`
    (n <= 12).

    Exact: :math:`\max_a|\ln(\#\{D\ni x:\sum D\equiv a\}/\#\{D\not\ni x:\sum D\equiv a\})|` (the same
    for every :math:`x` by symmetry; ``inf`` if a residue is never reached on one side). ``loose=True``
    gives the proof's recipe :math:`\ln(\max_a\#_{\rm in}(a)/\min_a\#_{\rm out}(a))`.
    """
    nn = _checks.integer("n", n, lo=1, hi=12)
    m = 2 * nn
    counts = np.zeros((2, m), dtype=np.int64)
    for combo in itertools.combinations(range(m), nn):
        counts[0 if 0 in combo else 1, sum(combo) % m] += 1
    cin, cout = counts
    if loose:
        return math.inf if cout.min() == 0 else math.log(cin.max() / cout.min())
    if np.any((cin == 0) != (cout == 0)):
        return math.inf
    ok = cin > 0
    return float(np.max(np.abs(np.log(cin[ok] / cout[ok]))))


def mia_success_bound(eps, delta=0.0, prior=0.5):
    r"""Lemma 6 (extended): the largest success probability of any membership attack on an
    :math:`(\varepsilon,\delta)`-PMP algorithm.

    Maximises :math:`\pi\,\mathrm{TPR}+(1-\pi)(1-\mathrm{FPR})` over the region
    :math:`\mathrm{TPR}\le e^\varepsilon\mathrm{FPR}+\delta`,
    :math:`1-\mathrm{FPR}\le e^\varepsilon(1-\mathrm{TPR})+\delta` (the vertices of this polygon). At ``prior`` 1/2
    and :math:`\delta=0` it is Lemma 6's :math:`1/(1+e^{-\varepsilon})`; with :math:`\delta`,
    :math:`(e^\varepsilon+\delta)/(1+e^\varepsilon)`.
    """
    e = _checks.scalar("eps", eps, lo=0.0, allow_inf=True)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0)
    p = _checks.scalar("prior", prior, lo=0.0, hi=1.0)
    if math.isinf(e) or d >= 1.0:
        return 1.0
    a = math.exp(min(e, 700.0))
    # the region in (FPR f, TPR t): 0 <= f, t <= 1, t <= a f + d, t <= 1 - (1 - d - f)/a; the optimum is a vertex
    lines = [(1.0, 0.0, 0.0), (1.0, 0.0, 1.0), (0.0, 1.0, 0.0), (0.0, 1.0, 1.0),   # f = 0, f = 1, t = 0, t = 1
             (-a, 1.0, d), (-1.0 / a, 1.0, 1.0 - (1.0 - d) / a)]                      # rows: c_f f + c_t t = r
    best = max(p, 1.0 - p)
    for (a1, b1, r1), (a2, b2, r2) in itertools.combinations(lines, 2):
        det = a1 * b2 - a2 * b1
        if abs(det) < 1e-300:
            continue
        f = (r1 * b2 - r2 * b1) / det
        t = (a1 * r2 - a2 * r1) / det
        tol = 1e-12
        if -tol <= f <= 1 + tol and -tol <= t <= 1 + tol and t <= a * f + d + tol and t <= 1 - (1 - d - f) / a + tol:
            best = max(best, p * t + (1 - p) * (1 - f))
    return min(best, 1.0)


def mip_eta_from_pmp(eps, *, tight=False):
    r"""Lemma 13: :math:`\varepsilon`-PMP implies :math:`\eta`-MIP with :math:`\eta=(1-e^{-\varepsilon})/2` (as
    printed).

    ``tight=True`` gives what Lemma 6 already implies, :math:`\eta=\tfrac12\tanh(\varepsilon/2)` =
    :func:`dpmia.mip.eta_from_dp`.
    """
    e = _checks.nonnegative("eps", eps, allow_inf=True)
    if tight:
        return mip.eta_from_dp(e)
    return _checks.scalar_or_array(-0.5 * np.expm1(-np.asarray(e)), eps)
