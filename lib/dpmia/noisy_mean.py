r"""Exact membership-inference privacy of a noisy mean: the mean of a uniformly random half of integer data plus
Laplace noise.

Izzo et al. (Prop. 2) characterise :math:`\eta`-MIP by the Bayes attacker; for a release
:math:`\hat\theta = \theta + \mathrm{Lap}(b)` with :math:`\theta` the mean of a random half
(:math:`k = n/2`),
:math:`\eta = \max_{x^*}\tfrac12\mathrm{TV}(P_{\rm in}\star\mathrm{Lap}_b, P_{\rm out}\star\mathrm{Lap}_b)`.
The laws of :math:`\theta` are computed exactly by subset sums (:func:`mean_laws`) and the total
variation of two Laplace mixtures in closed form between atoms (:func:`tv_laplace_lattice`). This is
the ground truth the book compares Theorem 9's, the DP route's and the coupling bound's noise with.
The functions are also available from :mod:`dpmia.mip`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import signal

from . import _checks

__all__ = ["MeanLaws", "mean_laws", "tv_laplace_lattice", "exact_eta_laplace", "min_laplace_scale"]


# ------------------------------------------------------------------------------------------
# exact MIP of the mean of a random half plus Laplace noise
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MeanLaws:
    r"""Exact laws of :math:`\theta` = mean of a uniformly random half, given target value ``value`` in / out.

    Atoms on the lattice :math:`\theta_s = (s + k\,\text{shift})/k`, :math:`s = 0..S`: ``p_in[s]``, ``p_out[s]``.
    """

    value: int
    k: int
    shift: int
    p_in: np.ndarray
    p_out: np.ndarray

    @property
    def atoms(self) -> np.ndarray:
        return (np.arange(self.p_in.size) + self.k * self.shift) / self.k

    @property
    def w1(self) -> float:
        """Wasserstein-1 distance between the two laws (lattice spacing 1/k times the L1 distance of the CDFs)."""
        return float(np.sum(np.abs(np.cumsum(self.p_in - self.p_out))) / self.k)


def _int_values(values):
    v = np.asarray(values)
    if v.ndim != 1:
        raise ValueError(f"values must be a 1-d array, got shape {v.shape}")
    if v.dtype == np.bool_ or not (np.issubdtype(v.dtype, np.integer) or np.issubdtype(v.dtype, np.floating)):
        raise TypeError(f"values must be integers, got dtype {v.dtype}")
    vf = _checks.real("values", v.astype(float))
    if np.any(vf != np.round(vf)):
        bad = vf[vf != np.round(vf)][0]
        raise ValueError(f"values must be integers (the exact laws live on a lattice), got {bad!r}; "
                         "rescale and round the data first")
    n = vf.size
    if n < 2 or n % 2:
        raise ValueError(f"values must have an even length >= 2 (k = n/2), got {n}")
    if n > 1000:
        raise ValueError(f"values has {n} entries; the subset-sum tables are limited to n <= 1000")
    iv = np.round(vf).astype(np.int64)
    span = int(iv.max() - iv.min())
    cells = (n // 2 + 1) * (span * (n // 2) + 1)
    if cells > 5 * 10**7:
        raise ValueError(f"the subset-sum table needs {cells:.3g} cells (> 5e7): the values span {span} units; "
                         "coarsen the integer scale")
    return iv


def mean_laws(values):
    r"""Exact :class:`MeanLaws` for every distinct value of integer ``values`` (even length n, halves of size k = n/2).

    One subset-sum table :math:`F_j(s)` = #\{j-subsets with shifted sum s\} for all records, then, for
    each distinct target value :math:`x`, the table without one copy of :math:`x` by the deletion
    recurrence :math:`G_j(s) = F_j(s) - G_{j-1}(s-x)`. :math:`P_{\rm out}(s) = G_k(s)/\binom{n-1}{k}`,
    :math:`P_{\rm in}(s) = G_{k-1}(s-x)/\binom{n-1}{k-1}`. Float round-off in the recurrence is below
    :math:`10^{-13}` in total variation (negative round-off is clipped; checked against direct tables in the tests).
    """
    iv = _int_values(values)
    n, k = iv.size, iv.size // 2
    shift = int(iv.min())
    u = iv - shift
    S = int(u.max()) * k
    F = np.zeros((k + 1, S + 1))
    F[0, 0] = 1.0
    for x in u:
        if x == 0:
            F[1:] += F[:-1].copy()
        else:
            F[1:, x:] += F[:-1, :-x].copy()
    out = {}
    c_out, c_in = math.comb(n - 1, k), math.comb(n - 1, k - 1)
    for x in np.unique(u):
        G = np.empty_like(F)
        G[0] = F[0]
        for j in range(1, k + 1):
            G[j] = F[j]
            if x == 0:
                G[j] -= G[j - 1]
            else:
                G[j, x:] -= G[j - 1, :-x]
        G = np.maximum(G, 0.0)
        p_out = G[k] / c_out
        p_in = np.zeros(S + 1)
        p_in[x:] = G[k - 1, : S + 1 - x] / c_in
        out[int(x) + shift] = MeanLaws(int(x) + shift, k, shift, p_in / p_in.sum(), p_out / p_out.sum())
    return out


def tv_laplace_lattice(diff, h, b):
    r"""Total variation :math:`\tfrac12\int|f|` of :math:`f = \sum_m d_m\,\mathrm{Lap}(t; a_m, b)` for atoms on a
    lattice of spacing ``h``.

    Exact: between neighbouring atoms :math:`f = (A e^{-u/b} + B e^{-(h-u)/b})/(2b)` with :math:`A`
    (atoms to the left) and :math:`B` (to the right) from two first-order recursions, which has at most
    one sign change; each piece is integrated in closed form. ``diff`` sums to 0 (a difference of two
    probability vectors), ``h`` > 0, ``b`` > 0. With ``b`` = 0 returns :math:`\tfrac12\sum|d_m|`.
    """
    d = np.atleast_1d(_checks.real("diff", diff)).astype(float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"diff must be a non-empty 1-d array (the atoms' differences), got shape {d.shape}")
    hh = _checks.positive("h", h)
    bb = _checks.nonnegative("b", b)
    if abs(d.sum()) > 1e-9:
        raise ValueError(f"diff must sum to 0 (a difference of probability vectors), got {d.sum()!r}")
    if bb == 0.0:
        return min(0.5 * float(np.sum(np.abs(d))), 1.0)
    r = math.exp(-hh / bb)
    left = signal.lfilter([1.0], [1.0, -r], d)                  # L_i: atoms <= i, seen at atom i
    right = signal.lfilter([1.0], [1.0, -r], d[::-1])[::-1]     # R_i: atoms >= i, seen at atom i
    A, B = left[:-1], right[1:]
    same = A * B >= 0.0
    total = 0.5 * (abs(right[0]) + abs(left[-1]))               # the two tails
    total += float(np.sum((np.abs(A[same]) + np.abs(B[same])) * (1.0 - r) / 2.0))
    if np.any(~same):
        a, bv = A[~same], B[~same]
        u0 = np.clip(0.5 * (hh + bb * np.log(-a / bv)), 0.0, hh)
        e0, e1 = np.exp(-u0 / bb), np.exp(-(hh - u0) / bb)
        i1 = a * (1.0 - e0) + bv * (e1 - r)                     # (times b) integral on [0, u0]
        i2 = a * (e0 - r) + bv * (1.0 - e1)                     # on [u0, h]
        total += float(np.sum(np.abs(i1) + np.abs(i2))) / 2.0
    return min(max(0.5 * total, 0.0), 1.0)


def exact_eta_laplace(values, b):
    r"""Exact :math:`\eta` of releasing the mean of a uniformly random half of integer ``values`` plus
    Laplace(0, ``b``).

    :math:`\eta = \max_{x^*}\tfrac12\mathrm{TV}(P_{\rm in}\star\mathrm{Lap}_b,\ P_{\rm out}\star\mathrm{Lap}_b)`
    (Prop. 2 with k = n/2), with the laws from :func:`mean_laws` and the TV from :func:`tv_laplace_lattice`.
    ``b`` >= 0 (0: no noise). Returns a float.

    Examples
    --------
    >>> from dpmia import noisy_mean
    >>> round(noisy_mean.exact_eta_laplace([0, 1, 2, 3], 1.0), 4)
    0.1709
    """
    bb = _checks.nonnegative("b", b)
    laws = mean_laws(values)
    return float(max(0.5 * tv_laplace_lattice(L.p_in - L.p_out, 1.0 / L.k, bb) for L in laws.values()))


def min_laplace_scale(values, eta, *, rtol=1e-9):
    r"""Smallest Laplace scale :math:`b` with :func:`exact_eta_laplace` (values, b) <= ``eta`` (0 if no noise is
    needed).

    :math:`\eta(b)` is non-increasing (Laplace(:math:`b_2`) is Laplace(:math:`b_1`) convolved with a
    probability law for :math:`b_2 > b_1`), so bisection in :math:`\log b` applies; it starts from the
    coupling bound :math:`\max W_1/(4\eta)`, which always suffices, and returns the upper end of the
    final bracket (relative width ``rtol``), so the returned scale achieves ``eta``.
    """
    h = _checks.real("eta", eta, lo=0.0, hi=0.5, lo_open=True, hi_open=True)
    tol = _checks.real("rtol", rtol, lo=1e-15, hi=0.1)
    laws = list(mean_laws(values).values())

    def eta_at(b):
        return max(0.5 * tv_laplace_lattice(L.p_in - L.p_out, 1.0 / L.k, b) for L in laws)

    if eta_at(0.0) <= h:
        return 0.0
    hi = max(L.w1 for L in laws) / (4.0 * h)
    while eta_at(hi) > h:              # never taken in exact arithmetic; guards round-off
        hi *= 1.0 + 1e-6
    lo = hi
    while eta_at(lo) <= h:
        lo *= 0.5
    while hi / lo - 1.0 > tol:
        mid = math.sqrt(lo * hi)
        if eta_at(mid) <= h:
            hi = mid
        else:
            lo = mid
    return hi
