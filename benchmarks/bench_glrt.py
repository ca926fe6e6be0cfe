"""GLRT privacy profile: dpmia.glrt.epsilon against a 40-digit mpmath certificate and the paper's grid method.

For each (delta, d, lam) with d <= 1000:

* ``dpmia.glrt.epsilon`` (median time over repeated calls on fresh lambdas, so no cache helps);
* certificate in mpmath (40 digits): the exact forward profile at the returned eps must not exceed
  delta (safe), and at eps * (1 - 1e-6) it must exceed delta (relative error <= 1e-6). The exact
  profile is sup_t [Psi_lam(t) - e^eps Psi_0(t)], read at the t with L(t) = eps (mpmath findroot on
  0F1) with the Poisson-mixture survival functions;
* the paper's Algorithm 1 as printed in spirit: ROC on ``linspace(0, 1, 10**4)``, upper concave hull,
  discrete Legendre transform, bisection on eps (time and value).

Budget (CONTRIBUTING.md): <= 20 ms per call, relative error <= 1e-6. Exits 1 if dpmia misses it.
Run: `make -C benchmarks glrt`.
"""

from __future__ import annotations

import statistics
import sys
import time

import mpmath as mp
import numpy as np

from dpmia import glrt

mp.mp.dps = 40
CONFIGS = [(1e-4, 1, 0.09), (1e-4, 1, 1.0), (1e-4, 30, 1.0), (1e-2, 50, 50 / 12.25), (1e-5, 300, 10.0),
           (1e-5, 1000, 100.0), (1e-10, 100, 25.0), (1e-5, 300, 1000.0)]
BUDGET_MS, BUDGET_REL = 20.0, 1e-6


def mp_sf(t, d, lam, central=False):
    t = mp.mpf(t)
    if central:
        return mp.gammainc(mp.mpf(d) / 2, t / 2, mp.inf, regularized=True)
    m = mp.mpf(lam) / 2
    kc = int(max(m, mp.sqrt(lam * t) / 2))
    w = int(12 * mp.sqrt(kc + 1) + 60)
    return mp.fsum(mp.exp(-m + k * mp.log(m) - mp.loggamma(k + 1))
                   * mp.gammainc(mp.mpf(d) / 2 + k, t / 2, mp.inf, regularized=True)
                   for k in range(max(0, kc - w), kc + w))


def mp_delta_fwd(eps, d, lam):
    L = lambda t: -mp.mpf(lam) / 2 + mp.log(mp.hyp0f1(mp.mpf(d) / 2, mp.mpf(lam) * t / 4, maxterms=10**7))  # noqa: E731
    lo, hi = mp.mpf(1e-30), mp.mpf(d + lam + 10)
    while L(hi) < eps:
        hi *= 2
    for _ in range(200):                      # bisection to 40 digits
        mid = (lo + hi) / 2
        if L(mid) < eps:
            lo = mid
        else:
            hi = mid
    t = (lo + hi) / 2
    return mp_sf(t, d, lam) - mp.exp(eps) * mp_sf(t, d, lam, central=True)


def grid_method(delta, d, lam, n=10**4):
    """Algorithm 1 on a linspace grid: hull of max(R, R'), then delta(eps) = max_x [R_s(x) - e^eps x]."""
    x = np.linspace(0, 1, n)
    r = np.maximum(glrt.roc(x, d, lam), glrt.roc_reverse(x, d, lam))
    dl = lambda e: float(np.max(r - np.exp(e) * x))  # noqa: E731  (the max over the hull's vertices)
    lo, hi = 0.0, 1.0
    while dl(hi) > delta:
        hi *= 2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if dl(mid) > delta else (lo, mid)
    return hi


def main() -> int:
    ok = True
    print(f"{'delta':>8} {'d':>5} {'lam':>8} | {'dpmia eps':>16} {'ms':>6} {'safe':>5} {'rel<=1e-6':>9} | "
          f"{'grid eps':>10} {'ms':>7} {'ratio':>6}")
    for delta, d, lam in CONFIGS:
        eps = glrt.epsilon(delta, d, lam)
        times = []
        for k in range(7):  # fresh lambdas: no cached tangent point
            lk = lam * (1 + (k + 1) * 1e-9)
            t0 = time.perf_counter()
            glrt.epsilon(delta, d, lk)
            times.append(time.perf_counter() - t0)
        ms = 1e3 * statistics.median(times)
        safe = mp_delta_fwd(mp.mpf(eps), d, lam) <= delta
        tight = mp_delta_fwd(mp.mpf(eps) * (1 - mp.mpf(BUDGET_REL)), d, lam) > delta
        t0 = time.perf_counter()
        g = grid_method(delta, d, lam)
        gms = 1e3 * (time.perf_counter() - t0)
        print(f"{delta:8.0e} {d:5d} {lam:8.4g} | {eps:16.10f} {ms:6.1f} {str(bool(safe)):>5} {str(bool(tight)):>9} | "
              f"{g:10.4f} {gms:7.1f} {gms / ms:6.1f}")
        ok &= bool(safe) and bool(tight) and ms <= BUDGET_MS
    print("budget (<= 20 ms, safe, relative error <= 1e-6):", "MET" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
