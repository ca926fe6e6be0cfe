"""Analytic Gaussian calibration: dpmia vs dp-accounting vs a 50-digit mpmath reference.

For each (eps, delta) the smallest noise std s* (sensitivity 1) with delta_G(eps; 1/s) <= delta
is computed three ways in one run:

* reference: bisection on the exact Balle-Wang delta in mpmath at 50 digits;
* dpmia.gaussian.calibrate_sigma;
* dp_accounting.gaussian_mechanism.get_sigma_gaussian (dp-accounting 0.6.0).

Reported: value, relative error, whether the returned s is *safe* (its exact delta, in mpmath, does
not exceed the target), median time per call, and the time ratio. The CONTRIBUTING.md budget for dpmia is
<= 1 ms per call and relative error <= 1e-12; the script exits 1 if dpmia misses it.
Run: `make bench` (root) or `make -C benchmarks gaussian`.
"""

from __future__ import annotations

import statistics
import sys
import time

import mpmath as mp

from dpmia import gaussian

try:
    from dp_accounting import gaussian_mechanism as dpa
except ImportError:  # pragma: no cover
    dpa = None

mp.mp.dps = 50
CONFIGS = [(1.0, 1e-5), (0.5, 1e-5), (8.0, 1e-5), (10.0, 1e-2), (1.0, 1e-2), (0.1, 1e-10),
           (20.0, 1e-12), (3.0, 1e-50), (0.01, 1e-5), (50.0, 1e-5)]
BUDGET_MS, BUDGET_REL = 1.0, 1e-12


def mp_delta(eps, s):
    mu = 1 / mp.mpf(s)
    e = mp.mpf(eps)
    return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)


def mp_sigma(eps, delta):
    """Smallest s with delta_G(eps; 1/s) <= delta, by bisection in mpmath (delta decreasing in s)."""
    lo, hi = mp.mpf("1e-6"), mp.mpf("1e6")
    for _ in range(260):
        mid = mp.sqrt(lo * hi)
        if mp_delta(eps, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def median_time(fn, *args, repeat=7, number=None):
    if number is None:
        t0 = time.perf_counter()
        fn(*args)
        one = max(time.perf_counter() - t0, 1e-6)
        number = max(1, int(0.05 / one))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def main() -> int:
    ok = True
    head = (f"{'eps':>6} {'delta':>8} | {'reference s*':>20} | {'dpmia s':>20} {'rel err':>8} {'safe':>4} "
            f"{'ms':>7} | {'dp-accounting s':>20} {'rel err':>8} {'safe':>4} {'ms':>7} | {'time ratio':>10}")
    print(head)
    print("-" * len(head))
    for eps, delta in CONFIGS:
        ref = mp_sigma(eps, delta)
        ours = gaussian.calibrate_sigma(eps, delta)
        err = float(abs(mp.mpf(ours) - ref) / ref)
        safe = mp_delta(eps, ours) <= delta
        t_ours = median_time(gaussian.calibrate_sigma, eps, delta) * 1e3
        ok &= err <= BUDGET_REL and t_ours <= BUDGET_MS and bool(safe)
        row = (f"{eps:6g} {delta:8.0e} | {mp.nstr(ref, 17):>20} | {ours:20.17g} {err:8.1e} "
               f"{'yes' if safe else 'NO':>4} {t_ours:7.3f} | ")
        if dpa is not None:
            try:
                theirs = dpa.get_sigma_gaussian(eps, delta)
                err_t = float(abs(mp.mpf(theirs) - ref) / ref)
                safe_t = mp_delta(eps, theirs) <= delta
                t_theirs = median_time(dpa.get_sigma_gaussian, eps, delta) * 1e3
                row += (f"{theirs:20.17g} {err_t:8.1e} {'yes' if safe_t else 'NO':>4} {t_theirs:7.3f} | "
                        f"{t_theirs / t_ours:9.1f}x")
            except Exception as exc:  # report, do not hide, a peer's failure
                row += f"{'failed: ' + type(exc).__name__ + ': ' + str(exc)[:40]:>52}"
        else:
            row += f"{'dp-accounting not installed':>52}"
        print(row)
    print(f"\nbudget (dpmia): <= {BUDGET_MS} ms per call, relative error <= {BUDGET_REL:g}, always safe: "
          + ("PASS" if ok else "FAIL"))
    print("time ratio = dp-accounting time / dpmia time (> 1: dpmia faster)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
