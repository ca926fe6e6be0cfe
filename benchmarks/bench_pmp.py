"""Exact PMP of the exponential mechanism: dpmia.pmp.exponential_mechanism (meet-in-the-middle, log space,
bounded memory) against the straightforward enumeration (incidence matrix of all C(2n, n) subsets,
softmax, two matrix products), at n = 6, 10, 12, 14: time and peak memory (tracemalloc), one run.

Setting: Fig. 1 of Lowy et al. (d = 1, m = 10 unit candidates, sigma = 1, C = 10, eps(X) = 5 under the
sensitivity-ratio reading). Budgets (CONTRIBUTING.md): n = 12 <= 5 s, n = 14 <= 60 s. Exits 1 if missed.
Run: `make -C benchmarks pmp`.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np

from dpmia import pmp


def straightforward(a, beta):
    n = a.shape[1] // 2
    inc = pmp.subsets(2 * n, n)
    logits = -(beta / n) * (inc.astype(float) @ a.T)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p_in, p_out = pmp.mixtures(p, inc)
    with np.errstate(divide="ignore"):
        return float(np.max(np.abs(np.log(p_in) - np.log(p_out))))


def measure(f, *a):
    tracemalloc.start()
    t0 = time.perf_counter()
    v = f(*a)
    t = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return v, t, peak


def main() -> int:
    g = np.random.default_rng(0)
    ok = True
    print(f"{'n':>3} {'C(2n,n)':>11} | {'dpmia eps~':>11} {'s':>7} {'MB':>7} | {'direct eps~':>11} {'s':>7} {'MB':>8}")
    for n in (6, 10, 12, 14):
        w = g.standard_normal((10, 1))
        w /= np.abs(w)
        x = pmp.parent_set(n, 1, sigma=1.0, clip=10.0, rng=g)
        a = pmp.geometric_median_losses(w, x)
        beta = 5.0 / (2 * pmp.loss_sensitivity(a))
        r, t, mb = measure(pmp.exponential_mechanism, a, beta)
        if n <= 10:
            v, t2, mb2 = measure(straightforward, a, beta)
            direct = f"{v:11.6f} {t2:7.2f} {mb2:8.1f}"
            ok &= abs(v - r.eps_tilde) < 1e-9
        else:
            direct = f"{'(skipped: needs > 0.7 GB)':>28}"
        import math
        print(f"{n:3d} {math.comb(2 * n, n):11,d} | {r.eps_tilde:11.6f} {t:7.2f} {mb:7.1f} | {direct}")
        ok &= (n != 12 or t <= 5.0) and (n != 14 or t <= 60.0)
    print("budgets (n = 12 <= 5 s, n = 14 <= 60 s, equal to the direct enumeration):", "MET" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
