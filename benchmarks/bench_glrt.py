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

A second section times ``dpmia.glrt.energy_epsilon_bracket`` (reading B of Fig. 7: per-round subsampling through
``dpmia.pld``) on named settings, from subsampled rounds at small noncentrality to rounds without subsampling at
lam in the hundreds, and on 40 drawn log-uniformly (seed 7: d in {1, 2, 3, 10, 100, 650}, lam 1e-2 ... 2e3,
gamma 1 or 1e-3 ... 1, rounds 1 ... 3000, delta 1e-10 ... 1e-3): bracket, relative width (tol 1e-3), seconds
(cold), and for one round whether it holds reading A's eps (``amplified_epsilon``, the exact likelihood-ratio
profile, computed apart from the grid pairs). Reported, not budgeted.
Run: `make -C benchmarks glrt`.
"""

from __future__ import annotations

import math
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
        for k in range(15):  # fresh lambdas: no cached tangent point; 15 for a median steady on a shared machine
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
    energy_section()
    return 0 if ok else 1


ENERGY = [(1e-5, 650, 1.0, 0.02, 2500), (1e-4, 1, 1 / 36, 0.2, 100), (1e-10, 10, 5.0, 0.01, 1000),
          (1e-5, 3, 800.0, 0.1, 10), (1e-5, 3, 2000.0, 0.5, 100), (1e-5, 2, 50.0, 1.0, 10), (1e-5, 3, 60.0, 1.0, 10),
          (3.0e-6, 10, 463.2, 1.0, 922), (1e-10, 10, 658.6, 0.00284, 1849), (1e-5, 2, 1600.0, 1.0, 10),
          (1e-10, 100, 112.0, 1.0, 1), (1e-5, 3, 800.0, 0.1, 1)]


def _drawn(k=40, seed=7):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        d = int(rng.choice([1, 2, 3, 10, 100, 650]))
        lam = float(10 ** rng.uniform(-2, 3.3))
        g = float(rng.choice([1.0, 10 ** rng.uniform(-3, 0)]))
        n = int(10 ** rng.uniform(0, 3.5))
        out.append((float(10 ** rng.uniform(-10, -3)), d, lam, g, n))
    return out


def energy_section():
    print("\nenergy adversary under per-round subsampling (glrt.energy_epsilon_bracket, tol 1e-3)")
    print(f"{'delta':>8} {'d':>4} {'lam':>8} {'gamma':>7} {'rounds':>6} | {'lower':>14} {'upper':>14} "
          f"{'width':>8} {'s':>5} {'reading A':>9}")
    rows = []
    for args in ENERGY + _drawn():
        t0 = time.perf_counter()
        lo, hi = glrt.energy_epsilon_bracket(*args)
        sec = time.perf_counter() - t0
        w = (hi - lo) / hi if 0.0 < hi < math.inf else (0.0 if hi == 0.0 else math.inf)
        ref = ""
        if args[4] == 1:
            a = glrt.amplified_epsilon(args[0], args[1], args[2], args[3])
            ref = "inside" if lo <= a * (1 + 1e-12) and a <= hi * (1 + 1e-12) else "OUTSIDE"
        rows.append((w, sec))
        if args in ENERGY:
            print(f"{args[0]:8.0e} {args[1]:4d} {args[2]:8.4g} {args[3]:7.3g} {args[4]:6d} | {lo:14.8g} {hi:14.8g} "
                  f"{w:8.1e} {sec:5.2f} {ref:>9}")
    drawn = rows[len(ENERGY):]
    print(f"drawn settings: {len(drawn)}; outside tol {sum(w > 1e-3 for w, _ in drawn)}; "
          f"widest {max(w for w, _ in drawn):.1e}; slowest {max(s for _, s in drawn):.2f} s; "
          f"over 1 s {sum(s > 1.0 for _, s in drawn)}")


if __name__ == "__main__":
    sys.exit(main())
