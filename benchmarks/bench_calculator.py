"""Chapter 7's live calculator: the time of one slider move (budget 200 ms), over the sliders' range.

One callback = :func:`dpmia.report.quick_risk` (certified ε(δ), advantage and TPR brackets, the ROC
curves) + the figure drawn as the notebook shows it (``QuickRisk.figure``, ``plotting.widget_png``). The
accountant's caches are cleared before each call: a slider move lands on a setting not seen before. Grid:
sigma = 10^-0.5 … 10^1.5 and q = 1e-4 … 1 (the sliders' ranges, 9 values each) at T = 100, 1e4, 1e5,
delta = 1e-5. Prints the median, 90th percentile and maximum and the slowest settings. Run:
``make -C benchmarks calculator``.
"""

from __future__ import annotations

import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmia import plotting, report, sgm  # noqa: E402

BUDGET_MS = 200.0


def callback(q, sigma, steps, delta=1e-5):
    r = report.quick_risk(q, sigma, steps, delta)
    fig = r.figure(title=f"q = {q:.3g}, σ = {sigma:g}, T = {steps:,}")
    plotting.widget_png(fig)
    plt.close(fig)
    return r


def main() -> int:
    callback(0.01, 1.0, 10_000)                     # imports and fonts
    rows = []
    for steps in (100, 10_000, 100_000):
        for ls in np.linspace(-0.5, 1.5, 9):
            for lq in np.linspace(-4.0, 0.0, 9):
                sgm.clear_caches()
                t0 = time.perf_counter()
                callback(10.0 ** lq, 10.0 ** ls, steps)
                rows.append((1e3 * (time.perf_counter() - t0), 10.0 ** lq, 10.0 ** ls, steps))
        ms = np.array([r[0] for r in rows if r[3] == steps])
        print(f"T = {steps:>7,}: median {np.median(ms):5.0f} ms, 90th percentile {np.percentile(ms, 90):5.0f} ms, "
              f"max {ms.max():5.0f} ms, {int(np.sum(ms > BUDGET_MS))} of {ms.size} above {BUDGET_MS:.0f} ms",
              flush=True)
    ms = np.array([r[0] for r in rows])
    print(f"all {ms.size}: median {np.median(ms):.0f} ms, 90th percentile {np.percentile(ms, 90):.0f} ms, "
          f"max {ms.max():.0f} ms, {int(np.sum(ms > BUDGET_MS))} above {BUDGET_MS:.0f} ms")
    print("slowest:")
    for t, q, s, steps in sorted(rows, reverse=True)[:8]:
        print(f"  {t:6.0f} ms  q = {q:.3g}, sigma = {s:.3g}, T = {steps:,}")
    return 0 if np.median(ms) <= BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
