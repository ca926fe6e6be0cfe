"""DP-SGD accounting: dpmia.sgm vs dp-accounting (PLD) vs prv-accountant, side by side in one run.

For each setting (q = Poisson rate, sigma = noise multiplier, T = steps):

* advantage = TV = delta(eps = 0) (Mahloujifar et al., Theorem 6): dpmia's certified bracket,
  dp-accounting's pessimistic PLD value (an upper bound), prv-accountant's [lower, upper];
* eps(delta = 1e-5) for the settings of peers.md table (b).

Every value, its time and the time ratio (peer / dpmia) is printed; the script checks that
dpmia's brackets overlap the peers' certified ranges and that dpmia meets DESIGN.md's budgets:
advantage_bound at q=0.01, sigma=1, T=1e4 in <= 0.2 s with bracket width <= 1e-4, and every
corner of T <= 1e5, q in [1e-4, 1], sigma in [0.3, 100] in <= 0.5 s, never above 1, never NaN.
Exit status 1 if a budget or an overlap fails. Run: `make -C benchmarks sgm` (about 3 minutes).
"""

from __future__ import annotations

import math
import sys
import time

from dpmia import sgm

try:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
except ImportError:  # pragma: no cover
    dp_accounting = None
try:
    from prv_accountant.dpsgd import DPSGDAccountant
except ImportError:  # pragma: no cover
    DPSGDAccountant = None


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def ours_adv(q, s, T):
    sgm._plds_cached.cache_clear()
    sgm._reverse_cached.cache_clear()
    return sgm.advantage_bracket(q, s, T)


def ours_eps(q, s, T, d):
    sgm._plds_cached.cache_clear()
    sgm._reverse_cached.cache_clear()
    return sgm.epsilon_bracket(q, s, T, d)


def dpacc_accountant(q, s, T):
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), T)
    return acc


def dpacc_adv(q, s, T):
    return dpacc_accountant(q, s, T).get_delta(0.0)


def dpacc_eps(q, s, T, d):
    return dpacc_accountant(q, s, T).get_epsilon(d)


def prv_adv(q, s, T):
    acc = DPSGDAccountant(noise_multiplier=s, sampling_probability=q, max_steps=T, eps_error=0.01, delta_error=1e-9)
    lo, est, hi = acc.compute_delta(0.0, [T])
    return lo, est, hi


def prv_eps(q, s, T, d):
    acc = DPSGDAccountant(noise_multiplier=s, sampling_probability=q, max_steps=T, eps_error=0.01, delta_error=1e-9)
    return acc.compute_epsilon(delta=d, num_steps=T)


ADV = [("CIFAR-10 (C7)", 0.02, 0.5, 2500), ("CIFAR-10 (C7)", 0.02, 1.0, 2500), ("CIFAR-10 (C7)", 0.02, 2.0, 2500),
       ("MNIST (C8)", 0.001, 0.5, 10_000), ("MNIST (C8)", 0.001, 1.0, 10_000), ("MNIST (C8)", 0.001, 1.5, 10_000),
       ("Fig. 1b (C9)", 0.01, 1.0, 5000), ("peers A", 0.01, 1.0, 10_000), ("peers D", 256 / 50_000, 1.0, 10_000)]
EPS = [("peers A", 0.01, 1.0, 10_000), ("peers B", 0.01, 1.0, 100_000), ("peers C", 0.01, 0.5, 10_000),
       ("peers D", 256 / 50_000, 1.0, 10_000)]
CORNERS = [(q, s, T) for q in (1e-4, 0.01, 0.5, 1.0) for s in (0.3, 1.0, 100.0) for T in (10, 10_000, 100_000)]


def main() -> int:
    ok = True
    print("Advantage bound TV = delta(0), Theorem 6")
    print(f"{'setting':<15}{'q':>8}{'sigma':>6}{'T':>7} | {'dpmia [lower, upper]':>27}{'s':>7} | "
          f"{'dp-accounting':>14}{'s':>7}{'ratio':>7} | {'prv-accountant [lower, upper]':>31}{'s':>7}{'ratio':>7} | overlap")
    for name, q, s, T in ADV:
        (lo, hi), t_ours = timed(ours_adv, q, s, T)
        row = f"{name:<15}{q:>8.4g}{s:>6g}{T:>7} | [{lo:.7f}, {hi:.7f}]{t_ours:>7.3f} | "
        overlap = True
        if dp_accounting is not None:
            v, t = timed(dpacc_adv, q, s, T)
            overlap &= lo <= v + 1e-12   # dp-accounting's pessimistic value is an upper bound
            row += f"{v:>14.7f}{t:>7.2f}{t / t_ours:>7.0f} | "
        else:
            row += f"{'n/a':>28} | "
        if DPSGDAccountant is not None:
            (plo, _, phi), t = timed(prv_adv, q, s, T)
            overlap &= not (hi < plo or lo > phi)
            row += f"[{plo:.7f}, {phi:.7f}]{t:>7.2f}{t / t_ours:>7.0f} | "
        else:
            row += f"{'n/a':>45} | "
        row += "yes" if overlap else "NO"
        ok &= overlap
        print(row, flush=True)

    print("\neps(delta = 1e-5), add/remove adjacency")
    print(f"{'setting':<10}{'q':>8}{'sigma':>6}{'T':>7} | {'dpmia [lower, upper]':>21}{'s':>7} | "
          f"{'dp-accounting':>14}{'s':>7}{'ratio':>7} | {'prv-accountant [lower, upper]':>25}{'s':>7}{'ratio':>7} | overlap")
    for name, q, s, T in EPS:
        (lo, hi), t_ours = timed(ours_eps, q, s, T, 1e-5)
        row = f"{name:<10}{q:>8.4g}{s:>6g}{T:>7} | [{lo:.4f}, {hi:.4f}]{t_ours:>7.3f} | "
        overlap = True
        if dp_accounting is not None:
            v, t = timed(dpacc_eps, q, s, T, 1e-5)
            overlap &= lo <= v + 1e-9
            row += f"{v:>14.4f}{t:>7.2f}{t / t_ours:>7.0f} | "
        if DPSGDAccountant is not None:
            (plo, _, phi), t = timed(prv_eps, q, s, T, 1e-5)
            overlap &= not (hi < plo or lo > phi)
            row += f"[{plo:.4f}, {phi:.4f}]{t:>7.2f}{t / t_ours:>7.0f} | "
        row += "yes" if overlap else "NO"
        ok &= overlap
        print(row, flush=True)

    print("\nBudgets (DESIGN.md §6)")
    (lo, hi), t = timed(ours_adv, 0.01, 1.0, 10_000)
    b1 = t <= 0.2 and hi - lo <= 1e-4
    print(f"advantage_bound(q=0.01, sigma=1, T=1e4): {t:.3f} s, bracket width {hi - lo:.1e}  "
          f"(budget 0.2 s, 1e-4): {'PASS' if b1 else 'FAIL'}")
    worst, worst_cfg, bad = 0.0, None, []
    for q, s, T in CORNERS:
        (lo, hi), t = timed(ours_adv, q, s, T)
        if t > worst:
            worst, worst_cfg = t, (q, s, T)
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi <= 1):
            bad.append((q, s, T, lo, hi))
    b2 = worst <= 0.5 and not bad
    print(f"corners q in (1e-4, 0.01, 0.5, 1) x sigma in (0.3, 1, 100) x T in (10, 1e4, 1e5): slowest {worst:.3f} s "
          f"at {worst_cfg}; invalid values: {bad or 'none'}  (budget 0.5 s): {'PASS' if b2 else 'FAIL'}")
    ok &= b1 and b2
    print("\noverall:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
