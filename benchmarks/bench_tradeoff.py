"""TPR at low FPR for DP-SGD: dpmia's certified bracket against riskcal's trade-off curve, in one run.

The book reads "TPR at FPR" with *member* as the positive class: the largest rate at which any attack calls a
member a member while calling a non-member a member at rate ``fpr`` (Corollary 11 of Mahloujifar et al. on
Theorem 6's pair: P = the run without the target, Q = with it). riskcal 1.5 computes ``1 - beta(alpha)`` from
dp-accounting's composed privacy-loss distribution; this script prints both, riskcal at several of its
``grid_step`` values, and an exact value where one exists (T = 1: the likelihood-ratio test in closed form).

It fails (exit status 1) if dpmia's bracket misses the exact value at T = 1, or if riskcal at its default step
falls outside dpmia's bracket by more than 1e-4 *without* its answer moving with the grid step (which would mean
a different reading of the quantity rather than a numerical one). Run: ``make -C benchmarks tradeoff``.
"""

from __future__ import annotations

import sys

from scipy.stats import norm

from dpmia import sgm

try:
    from riskcal.calibration.dpsgd import get_beta_for_dpsgd
except ImportError:  # pragma: no cover
    get_beta_for_dpsgd = None

SETTINGS = [(0.5, 1.0, 1), (0.01, 1.0, 5000), (0.01, 2.0, 5000), (0.02, 1.0, 2500)]
FPR = 1e-3
STEPS = (1e-3, 3e-4, 1e-4, 3e-5)


def exact_single_step(q, sigma, fpr):
    """T = 1: the likelihood ratio 1 - q + q exp((2y - 1)/(2 sigma^2)) grows with y, so the best test is y > c."""
    c = sigma * norm.isf(fpr)
    return (1 - q) * fpr + q * norm.sf((c - 1.0) / sigma)


def main() -> int:
    ok = True
    print(f"TPR at FPR {FPR:g}, member as positive")
    print(f"{'q':>6} {'sigma':>5} {'T':>6}  {'dpmia bracket':<26} {'exact':<10} riskcal by grid_step "
          + " ".join(f"{s:g}" for s in STEPS))
    for q, sigma, steps in SETTINGS:
        lo, hi = sgm.tpr_bracket(FPR, q, sigma, steps)
        exact = exact_single_step(q, sigma, FPR) if steps == 1 else None
        if exact is not None and not lo - 1e-12 <= exact <= hi + 1e-12:
            ok = False
        peer = [1.0 - float(get_beta_for_dpsgd(sigma, q, steps, alpha=FPR, grid_step=s)) for s in STEPS] \
            if get_beta_for_dpsgd else []
        if peer:
            default = peer[STEPS.index(1e-4)]
            moves = max(peer) - min(peer) > 1e-4
            if (default < lo - 1e-4 or default > hi + 1e-4) and not moves:
                ok = False
        ex = f"{exact:.7f}" if exact is not None else "-"
        print(f"{q:>6g} {sigma:>5g} {steps:>6}  [{lo:.7f}, {hi:.7f}]  {ex:<10} " + " ".join(f"{v:.5f}" for v in peer))
    print("result:", "consistent" if ok else "INCONSISTENT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
