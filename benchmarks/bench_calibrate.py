"""Noise calibration to a risk target: dpmia.sgm.calibrate_sigma against riskcal and dp-accounting, in one run.

For each setting (q, T) and target:

* advantage a: riskcal's ``find_noise_multiplier_for_advantage`` (defaults);
* TPR at FPR (fpr, tpr): riskcal's ``find_noise_multiplier_for_err_rates`` with alpha = fpr and
  beta = 1 - tpr (defaults);
* (epsilon, delta): dp-accounting's ``calibrate_dp_mechanism`` with its PLD accountant and a Poisson
  sampled Gaussian event (defaults).

Reported: the sigma each returns, the wall time and the time ratio (peer / dpmia, dpmia's caches
cleared before every call), and whether each sigma *actually meets its target* by dpmia's certified
upper bound (``sgm.target_met``). The run fails (exit status 1) if dpmia's sigma ever fails that
check, if 0.999 of it passes by the certified lower end (it would not be the smallest), or if any
dpmia call takes more than 1 s, here and in the long runs (q = 1e-3, T = 1e5 and q = 1e-4, T = 1e6: DESIGN.md's
corner of the budget, dpmia alone). Run: ``make -C benchmarks calibrate`` (several minutes: the peers are slow).
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings

from dpmia import sgm, tables

warnings.filterwarnings("ignore", category=DeprecationWarning)
try:
    from riskcal import dpsgd as riskcal_dpsgd
except ImportError:  # pragma: no cover
    riskcal_dpsgd = None
try:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
except ImportError:  # pragma: no cover
    dp_accounting = None

SETTINGS = [(0.01, 10_000), (0.02, 2_500), (0.1, 100)]
TARGETS = [dict(advantage=0.05), dict(advantage=0.2), dict(fpr=1e-3, tpr=0.01), dict(fpr=0.01, tpr=0.05),
           dict(epsilon=1.0, delta=1e-5), dict(epsilon=8.0, delta=1e-5)]


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def ours(q, T, target):
    sgm.clear_caches()
    return sgm.calibrate_sigma(q, T, **target)


def peer(q, T, target):
    """(name, sigma) of the peer for this target, or (name, None) when it is not installed or fails."""
    if "advantage" in target:
        if riskcal_dpsgd is None:
            return "riskcal", None
        return "riskcal", riskcal_dpsgd.find_noise_multiplier_for_advantage(target["advantage"], q, T)
    if "tpr" in target:
        if riskcal_dpsgd is None:
            return "riskcal", None
        return "riskcal", riskcal_dpsgd.find_noise_multiplier_for_err_rates(target["fpr"], 1.0 - target["tpr"], q, T)
    if dp_accounting is None:
        return "dp-accounting", None

    def event(s):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), T)

    return "dp-accounting", dp_accounting.calibrate_dp_mechanism(
        pld_privacy_accountant.PLDAccountant, event, target["epsilon"], target["delta"])


def bracket_lower(q, s, T, target):
    if "advantage" in target:
        return sgm.advantage_bracket(q, s, T)[0] > target["advantage"]
    if "tpr" in target:
        return sgm.tpr_bracket(target["fpr"], q, s, T)[0] > target["tpr"]
    return sgm.epsilon_bracket(q, s, T, target["delta"])[0] > target["epsilon"]


def label(target):
    if "advantage" in target:
        return f"adv <= {target['advantage']:g}"
    if "tpr" in target:
        return f"TPR@{target['fpr']:g} <= {target['tpr']:g}"
    return f"({target['epsilon']:g}, {target['delta']:g})-DP"


LONG_SETTINGS = [(1e-3, 100_000), (1e-4, 1_000_000)]
LONG_TARGETS = [dict(advantage=0.1), dict(fpr=1e-3, tpr=0.01), dict(epsilon=1.0, delta=1e-5),
                dict(epsilon=2.0, delta=1e-9)]


def long_runs(failures):
    """DESIGN.md's corner of the calibration budget (q >= 1e-4, T <= 1e6, every target <= 1 s): dpmia alone
    (the peers take minutes there), each sigma checked by target_met and 0.999 sigma by the lower end."""
    print(f"\nLong runs (dpmia only; budget 1 s per calibration)\n{'setting':>18} {'target':>22} | "
          f"{'sigma':>9} {'ms':>6} | meets, 0.999 sigma certified unsafe")
    for q, T in LONG_SETTINGS:
        for target in LONG_TARGETS:
            s, t = timed(ours, q, T, target)
            met, _ = sgm.target_met(q, s, T, **target)
            smallest = bracket_lower(q, 0.999 * s, T, target)
            print(f"{q:>7g}, T={T:<8} {label(target):>22} | {s:9.5f} {1e3 * t:6.0f} | {'yes' if met else 'NO'}, "
                  f"{'yes' if smallest else 'bracket too wide to tell'}" + ("   <- over 1 s" if t > 1.0 else ""),
                  flush=True)
            if not met:
                failures.append(f"dpmia sigma {s} misses {label(target)} at q={q}, T={T}")
            if t > 1.0:
                failures.append(f"dpmia took {t:.2f} s at q={q}, T={T}, {label(target)}")


def main() -> int:
    failures, ratios, times = [], {}, []
    print(f"{'setting':>16} {'target':>22} | {'dpmia sigma':>11} {'ms':>6} | {'peer':>13} {'sigma':>9} {'ms':>7} "
          f"{'ratio':>6} | peer meets target?")
    for q, T in SETTINGS:
        for target in TARGETS:
            s, t = timed(ours, q, T, target)
            times.append(t)
            met, up = sgm.target_met(q, s, T, **target)
            if not met:
                failures.append(f"dpmia sigma {s} misses {label(target)} at q={q}, T={T} (upper {up})")
            if t > 1.0:
                failures.append(f"dpmia took {t:.2f} s at q={q}, T={T}, {label(target)}")
            smallest = bracket_lower(q, 0.999 * s, T, target)
            (name, ps), pt = timed(peer, q, T, target)
            if ps is None:
                print(f"{q:>7g}, T={T:<6} {label(target):>22} | {s:11.5f} {1e3 * t:6.0f} | {name:>13} (not installed)")
                continue
            pmet, pup = sgm.target_met(q, ps, T, **target)
            ratios.setdefault(name, []).append(pt / t)
            verdict = "yes" if pmet else f"NO (certified upper {tables.fmt_upper(pup, 6)})"
            print(f"{q:>7g}, T={T:<6} {label(target):>22} | {s:11.5f} {1e3 * t:6.0f} | {name:>13} {ps:9.5f} "
                  f"{1e3 * pt:7.0f} {pt / t:6.1f} | {verdict}"
                  + ("" if smallest else "   (0.999 sigma not certified unsafe: bracket too wide to tell)"),
                  flush=True)
    print()
    print(f"dpmia: median {1e3 * statistics.median(times):.0f} ms, slowest {1e3 * max(times):.0f} ms per calibration")
    for name, r in ratios.items():
        print(f"median time ratio {name} / dpmia: {statistics.median(r):.1f}x (min {min(r):.1f}x, max {max(r):.1f}x)")
    long_runs(failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
