"""DP-SGD accounting: dpmia.sgm vs dp-accounting (PLD), prv-accountant and riskcal, side by side in one run.

1. Advantage TV = delta(0) (Mahloujifar et al., Theorem 6) at the papers' settings: dpmia's certified
   bracket, dp-accounting's pessimistic PLD value (an upper bound), riskcal's (dp-accounting underneath),
   prv-accountant's [lower, upper]; times and time ratios (peer / dpmia, caches cleared).
2. eps(delta = 1e-5), add/remove, against dp-accounting and prv-accountant.
3. The budget at q = 0.01, sigma = 1, T = 1e4: at least 20x dp-accounting's time in the same run (medians of 5
   cold runs), the advantage bracket <= 1e-5 wide and the eps bracket <= 1e-3 relative; the ratio at
   dp-accounting's 1e-4 discretisation and at matched accuracy (its coarsest discretisation whose value is as
   close to the truth as dpmia's upper end).
4. The whole range q in [1e-6, 1] x sigma in [0.01, 1e3] x T in [1, 1e7] on a 5 x 5 x 5 grid: worst
   bracket widths (advantage: 1e-5 absolute or 1e-3 relative, whichever is looser, reported as a multiple of
   1e-5; eps: relative), slowest call, peak memory (tracemalloc), and every value finite with lower <= upper.
5. The same criteria at 80 settings drawn log-uniformly from that range (seed 2026): the grid has no sigma
   between 0.1 and 1 and no q between 1e-6 and 1e-4, where the accountant's weakest corner is.
6. eps(delta) at 40 settings with few sampled steps (q T <= 0.05) and delta just below the TV (seed 7):
   there eps is small and set by the composed loss near 0 (dpmia.sgmbulk).

7. The accountant's limits (``bench_sgm_tails``): each read-out's time against its FFTs' at the standard point,
   long runs (T = 1e5 ... 1e7 x q = 1e-3 ... 1e-5), and the far tails (delta down to 1e-300) with widths, also at
   a million and ten million steps at small q (eps at delta 1e-10 and 1e-12, delta at eps(1e-10)), and under
   replace-one (also at small q from two steps on, eps(delta) and delta(eps)).

Every check must hold (brackets never contradict a peer's certified side, budgets met) or the exit
status is 1. Run: `make -C benchmarks sgm` (about 9 minutes).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
import tracemalloc
import warnings

from bench_sgm_tails import (
    far_scan,
    fft_share,
    long_delta_scan,
    long_scan,
    replace_one_scan,
    replace_one_small_q_scan,
    scale_grid,
    tails,
)

from dpmia import sgm

warnings.filterwarnings("ignore", category=DeprecationWarning)
try:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
except ImportError:  # pragma: no cover
    dp_accounting = None
try:
    from prv_accountant.dpsgd import DPSGDAccountant
except ImportError:  # pragma: no cover
    DPSGDAccountant = None
try:
    from riskcal import dpsgd as riskcal_dpsgd
except ImportError:  # pragma: no cover
    riskcal_dpsgd = None


def clear():
    sgm.clear_caches()


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def ours_adv(q, s, T):
    clear()
    return sgm.advantage_bracket(q, s, T)


def ours_eps(q, s, T, d):
    clear()
    return sgm.epsilon_bracket(q, s, T, d)


def dpacc_accountant(q, s, T, vdi=1e-4):
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=vdi)
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), T)
    return acc


def dpacc_adv(q, s, T):
    return dpacc_accountant(q, s, T).get_delta(0.0)


def dpacc_eps(q, s, T, d):
    return dpacc_accountant(q, s, T).get_epsilon(d)


def prv_adv(q, s, T):
    acc = DPSGDAccountant(noise_multiplier=s, sampling_probability=q, max_steps=T, eps_error=0.01, delta_error=1e-9)
    return acc.compute_delta(0.0, [T])


def prv_eps(q, s, T, d):
    acc = DPSGDAccountant(noise_multiplier=s, sampling_probability=q, max_steps=T, eps_error=0.01, delta_error=1e-9)
    return acc.compute_epsilon(delta=d, num_steps=T)


def riskcal_adv(q, s, T):
    return riskcal_dpsgd.get_advantage_for_dpsgd(s, q, T)


ADV = [("CIFAR-10", 0.02, 0.5, 2500), ("CIFAR-10", 0.02, 1.0, 2500), ("CIFAR-10", 0.02, 2.0, 2500),
       ("MNIST", 0.001, 0.5, 10_000), ("MNIST", 0.001, 1.0, 10_000), ("MNIST", 0.001, 1.5, 10_000),
       ("Fig. 1b", 0.01, 1.0, 5000), ("A", 0.01, 1.0, 10_000), ("D", 256 / 50_000, 1.0, 10_000),
       ("long run", 0.001, 0.8, 500_000)]
EPS = [("A", 0.01, 1.0, 10_000), ("B", 0.01, 1.0, 100_000), ("C", 0.01, 0.5, 10_000),
       ("D", 256 / 50_000, 1.0, 10_000), ("eps > 709", 0.1862275641059474, 0.7313753658733225, 32348)]
GRID_Q = (1e-6, 1e-4, 1e-2, 0.3, 1.0)
GRID_S = (0.01, 0.1, 1.0, 10.0, 1000.0)
GRID_T = (1, 10, 1000, 100_000, 10_000_000)


def prv_cell(fn, args, lo, hi, t0, ratios, digits, run):
    """prv-accountant's certified [lower, upper] next to ours: the table cell and whether they overlap."""
    if not run:
        return f"{'skipped':>{2 * digits + 22}} | ", True
    (plo, _, phi), t = timed(fn, *args)
    ratios["prv-accountant"].append(t / t0)
    return f"[{plo:.{digits}f}, {phi:.{digits}f}]{t:>6.2f}{t / t0:>6.0f} | ", not (hi < plo or lo > phi)


def peers_table(ok):
    ratios = {"dp-accounting": [], "prv-accountant": [], "riskcal": []}
    print("Advantage bound TV = delta(0), Theorem 6 (time in s; ratio = peer time / dpmia time)")
    print(f"{'setting':<10}{'q':>8}{'sigma':>6}{'T':>8} | {'dpmia [lower, upper]':>24}{'s':>7} | "
          f"{'dp-accounting':>12}{'s':>6}{'ratio':>6} | {'riskcal':>10}{'s':>6}{'ratio':>6} | "
          f"{'prv-accountant [lo, hi]':>24}{'s':>6}{'ratio':>6} | consistent")
    for name, q, s, T in ADV:
        (lo, hi), t0 = timed(ours_adv, q, s, T)
        row = f"{name:<10}{q:>8.4g}{s:>6g}{T:>8} | [{lo:.8f}, {hi:.8f}]{t0:>7.3f} | "
        good = True
        for label, fn in (("dp-accounting", dpacc_adv if dp_accounting else None),
                          ("riskcal", riskcal_adv if riskcal_dpsgd else None)):
            if fn is None:
                row += f"{'n/a':>24} | "
                continue
            v, t = timed(fn, q, s, T)
            good &= lo <= v + 1e-12          # their value is a pessimistic (upper) estimate
            ratios[label].append(t / t0)
            row += (f"{v:>12.8f}{t:>6.2f}{t / t0:>6.0f} | " if label == "dp-accounting"
                    else f"{v:>10.7f}{t:>6.2f}{t / t0:>6.0f} | ")
        cell, agree = prv_cell(prv_adv, (q, s, T), lo, hi, t0, ratios, 7, DPSGDAccountant is not None and T <= 100_000)
        row += cell + ("yes" if good and agree else "NO")
        good &= agree
        ok &= good
        print(row, flush=True)

    print("\neps(delta = 1e-5), add/remove adjacency")
    print(f"{'setting':<10}{'q':>8}{'sigma':>6}{'T':>8} | {'dpmia [lower, upper]':>24}{'s':>7} | "
          f"{'dp-accounting':>14}{'s':>6}{'ratio':>6} | {'prv-accountant [lo, hi]':>22}{'s':>6}{'ratio':>6} | "
          "consistent")
    for name, q, s, T in EPS:
        (lo, hi), t0 = timed(ours_eps, q, s, T, 1e-5)
        row = f"{name:<10}{q:>8.4g}{s:>6.4g}{T:>8} | [{lo:.5f}, {hi:.5f}]{t0:>7.3f} | "
        good = True
        if dp_accounting is not None:
            v, t = timed(dpacc_eps, q, s, T, 1e-5)
            good &= lo <= v + 1e-9
            ratios["dp-accounting"].append(t / t0)
            row += f"{v:>14.5f}{t:>6.2f}{t / t0:>6.0f} | "
        cell, agree = prv_cell(prv_eps, (q, s, T, 1e-5), lo, hi, t0, ratios, 4,
                               DPSGDAccountant is not None and hi < 100)
        if not agree and dp_accounting is not None and lo <= v + 1e-9 and float(cell.split(",")[0].strip("[ ")) > v:
            # prv-accountant's lower end lies above dp-accounting's pessimistic (upper) value: the two
            # peers contradict each other there, so prv's interval is not a certificate at this setting
            agree = True
            cell = cell.rstrip(" |") + "* | "
        row += cell + ("yes" if good and agree else "NO")
        good &= agree
        ok &= good
        print(row, flush=True)
    print("* prv-accountant's lower end is above dp-accounting's pessimistic value (the peers disagree)")
    print("\nmedian time ratio (peer / dpmia): " + ", ".join(
        f"{k} {statistics.median(v):.0f}x" for k, v in ratios.items() if v))
    return ok


def budgets(ok):
    """DESIGN.md's budget at the standard point: at least 20x dp-accounting's time (in the same run), with
    brackets within tol. First at dp-accounting's default-like 1e-4 discretisation (for eps far more accurate
    than dpmia's bracket there), then at matched accuracy (:func:`matched`). Reported as PASS / FAIL; a FAIL of
    the 20x goal alone is printed but does not fail the run (the ratio depends on the machine; the brackets'
    widths do fail it)."""
    print("\nBudget at q = 0.01, sigma = 1, T = 1e4 (DESIGN.md: >= 20x dp-accounting), medians of 5 cold runs")
    ta, te = [], []
    for _ in range(5):
        (alo, ahi), t = timed(ours_adv, 0.01, 1.0, 10_000)
        ta.append(t)
        (elo, ehi), t = timed(ours_eps, 0.01, 1.0, 10_000, 1e-5)
        te.append(t)
    ma, me = statistics.median(ta), statistics.median(te)
    ra = rb = math.nan
    if dp_accounting is not None:
        ra = statistics.median([timed(dpacc_adv, 0.01, 1.0, 10_000)[1] for _ in range(3)]) / ma
        rb = statistics.median([timed(dpacc_eps, 0.01, 1.0, 10_000, 1e-5)[1] for _ in range(3)]) / me
    wa, we = ahi - alo <= 1e-5, ehi - elo <= 1e-3 * ehi
    print(f"advantage: {ma * 1e3:.1f} ms, {ra:.1f}x faster than dp-accounting at vdi 1e-4 (goal 20x: "
          f"{'PASS' if ra >= 20 else 'FAIL'}), width {ahi - alo:.1e} (1e-5: {'PASS' if wa else 'FAIL'})")
    print(f"eps(1e-5): {me * 1e3:.1f} ms, {rb:.1f}x faster than dp-accounting at vdi 1e-4 (goal 20x: "
          f"{'PASS' if rb >= 20 else 'FAIL'}), relative width {(ehi - elo) / ehi:.1e} "
          f"(1e-3: {'PASS' if we else 'FAIL'})")
    matched(alo, ahi, elo, ehi, ma, me)
    return ok and wa and we


#: dp-accounting's discretisation intervals tried for a matched-accuracy comparison, coarsest first.
VDI_LADDER = (1e-3, 5e-4, 3e-4, 2e-4, 1e-4, 5e-5)


def matched(alo, ahi, elo, ehi, ma, me):
    """The ratio at matched accuracy: dp-accounting at the coarsest discretisation whose (pessimistic) value is
    as close to the truth as dpmia's certified upper end is (the truth from dpmia's bracket at tol 1e-7 / 1e-6,
    whose width is given). Where no interval on the ladder gets as close, its most accurate one is used and
    the ratio is a lower bound on the matched one."""
    if dp_accounting is None:
        return
    print("Matched accuracy: dp-accounting's discretisation interval (vdi) whose value is as close to the truth as"
          " dpmia's upper end")
    ref_a = sgm.advantage_bracket(0.01, 1.0, 10_000, tol=1e-7)
    ref_e = sgm.epsilon_bracket(0.01, 1.0, 10_000, 1e-5, tol=1e-6)
    for name, (_lo, hi), ref, t_ours, fn in (
            ("advantage", (alo, ahi), ref_a, ma, lambda v: dpacc_accountant(0.01, 1.0, 10_000, v).get_delta(0.0)),
            ("eps(1e-5)", (elo, ehi), ref_e, me,
             lambda v: dpacc_accountant(0.01, 1.0, 10_000, v).get_epsilon(1e-5))):
        truth = 0.5 * (ref[0] + ref[1])
        ours_err = hi - truth
        rows = []
        for v in VDI_LADDER:
            val, t = timed(fn, v)
            rows.append((v, val, abs(val - truth), t))
        ok_rows = [r for r in rows if r[2] <= ours_err]
        pick = ok_rows[0] if ok_rows else min(rows, key=lambda r: r[2])
        ladder = ", ".join(f"{v:g}: err {e:.1e} in {1e3 * t:.0f} ms" for v, _, e, t in rows)
        print(f"  {name}: dpmia's upper end {hi:.7g} is {ours_err:.1e} above the truth {truth:.9g} "
              f"(+-{ref[1] - ref[0]:.0e}); dp-accounting {ladder}")
        verdict = (f"vdi {pick[0]:g} matches: {pick[3] / t_ours:.1f}x" if ok_rows else
                   f"no vdi on the ladder is as accurate; at its most accurate (vdi {pick[0]:g}, error {pick[2]:.1e}) "
                   f"{pick[3] / t_ours:.1f}x (a lower bound on the matched ratio)")
        print(f"    ratio at matched accuracy: {verdict}")


def whole_range(ok):
    print("\nWhole range: q x sigma x T grid (advantage and eps(1e-5)); widths as the tol criteria measure them")
    worst = {"adv": (0.0, None), "eps": (0.0, None), "time": (0.0, None)}
    bad, slow = [], []
    tracemalloc.start()
    for q in GRID_Q:
        for s in GRID_S:
            for T in GRID_T:
                (alo, ahi), ta = timed(ours_adv, q, s, T)
                (elo, ehi), te = timed(ours_eps, q, s, T, 1e-5)
                # the criterion: <= 1e-5 absolute or <= 1e-3 relative (as a multiple of 1e-5)
                wa = min(ahi - alo, 1e-2 * (ahi - alo) / ahi) if ahi > 0 else 0.0
                we = (ehi - elo) / ehi if ehi > 0 and math.isfinite(ehi) else (0.0 if ehi == 0 else math.inf)
                for key, w in (("adv", wa), ("eps", we)):
                    if w > worst[key][0]:
                        worst[key] = (w, (q, s, T))
                t = max(ta, te)
                if t > worst["time"][0]:
                    worst["time"] = (t, (q, s, T))
                if t > 1.0:
                    slow.append((q, s, T, round(t, 2)))
                vals = (alo, ahi, elo, ehi)
                if not all(v == v for v in vals) or not (0 <= alo <= ahi <= 1) or not (0 <= elo <= ehi):
                    bad.append((q, s, T, vals))
                if wa > 1e-5 or we > 1e-3:
                    print(f"  wide: q={q:g} sigma={s:g} T={T}: adv [{alo:.6g}, {ahi:.6g}] eps [{elo:.6g}, {ehi:.6g}]")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"worst advantage width {worst['adv'][0]:.2e} at {worst['adv'][1]}; worst eps relative width "
          f"{worst['eps'][0]:.2e} at {worst['eps'][1]}")
    print(f"slowest call {worst['time'][0]:.2f} s at {worst['time'][1]}; calls over 1 s: {slow or 'none'}")
    print(f"peak memory (tracemalloc, numpy arrays included) {peak / 2**20:.0f} MiB")
    print(f"invalid values: {bad or 'none'}")
    return ok and not bad and not slow and worst['adv'][0] <= 1e-5 and worst['eps'][0] <= 1e-3


def random_range(ok, n=80, seed=2026):
    """The same criteria at ``n`` settings drawn log-uniformly from the range (between the grid's
    points: the grid alone has no sigma between 0.1 and 1 and no q between 1e-6 and 1e-4)."""
    import numpy as np
    print(f"\nRandom settings: {n} draws, log-uniform q in [1e-6, 1], sigma in [0.01, 1e3], T in [1, 1e7], seed {seed}")
    rng = np.random.default_rng(seed)
    worst = {"adv": (0.0, None), "eps": (0.0, None), "time": (0.0, None)}
    flagged = []
    for _ in range(n):
        q, s, T = 10 ** rng.uniform(-6, 0), 10 ** rng.uniform(-2, 3), int(10 ** rng.uniform(0, 7))
        (alo, ahi), ta = timed(ours_adv, q, s, T)
        (elo, ehi), te = timed(ours_eps, q, s, T, 1e-5)
        wa = min(ahi - alo, 1e-2 * (ahi - alo) / ahi) if ahi > 0 else 0.0
        we = (ehi - elo) / ehi if ehi > 0 and math.isfinite(ehi) else (0.0 if ehi == 0 else math.inf)
        for key, v in (("adv", wa), ("eps", we), ("time", max(ta, te))):
            if v > worst[key][0]:
                worst[key] = (v, (float(f"{q:.3g}"), float(f"{s:.3g}"), T))
        if wa > 1e-5 or we > 1e-3 or max(ta, te) > 1.0 or not (0 <= alo <= ahi <= 1 and 0 <= elo <= ehi):
            flagged.append((q, s, T))
            print(f"  q={q:.3g} sigma={s:.3g} T={T}: adv [{alo:.6g}, {ahi:.6g}] {ta:.2f} s, "
                  f"eps [{elo:.6g}, {ehi:.6g}] {te:.2f} s")
    print(f"worst advantage width {worst['adv'][0]:.2e} at {worst['adv'][1]}; worst eps relative width "
          f"{worst['eps'][0]:.2e} at {worst['eps'][1]}; slowest {worst['time'][0]:.2f} s at {worst['time'][1]}")
    print(f"outside the criteria (width or 1 s): {len(flagged)} of {n}")
    return ok and not flagged


def few_sampled(ok, n=40, seed=7):
    """eps(delta) where few steps sample the target (q T <= 0.05) and delta lies just below the TV
    (0.5 to 0.95 of it): eps is then small and set by the composed loss near 0 at the scale of q,
    a corner the draws above almost never reach (delta = 1e-5 there)."""
    import numpy as np
    print(f"\nFew sampled steps: {n} draws, q in [1e-6, 1e-2], sigma in [0.05, 5], q T <= 0.05, "
          f"delta in [0.5, 0.95] x TV, seed {seed}")
    rng = np.random.default_rng(seed)
    worst = {"eps": (0.0, None), "time": (0.0, None)}
    flagged = []
    for _ in range(n):
        q, s = 10 ** rng.uniform(-6, -2), 10 ** rng.uniform(math.log10(0.05), math.log10(5.0))
        T = max(2, int(10 ** rng.uniform(math.log10(2.0), math.log10(0.05 / q))))
        d = float(rng.uniform(0.5, 0.95)) * sgm.advantage_bracket(q, s, T)[0]
        (elo, ehi), te = timed(ours_eps, q, s, T, d)
        we = (ehi - elo) / ehi if ehi > 0 and math.isfinite(ehi) else (0.0 if ehi == 0 else math.inf)
        key = (float(f"{q:.3g}"), float(f"{s:.3g}"), T, float(f"{d:.3g}"))
        for k, v in (("eps", we), ("time", te)):
            if v > worst[k][0]:
                worst[k] = (v, key)
        if we > 1e-3 or te > 1.0 or not 0 <= elo <= ehi:
            flagged.append(key)
            print(f"  q={q:.3g} sigma={s:.3g} T={T} delta={d:.3g}: eps [{elo:.6g}, {ehi:.6g}] {te:.2f} s")
    print(f"worst eps relative width {worst['eps'][0]:.2e} at {worst['eps'][1]}; slowest {worst['time'][0]:.2f} s "
          f"at {worst['time'][1]}")
    print(f"outside the criteria (width or 1 s): {len(flagged)} of {n}")
    return ok and not flagged


def main() -> int:
    ok = peers_table(True)
    ok = budgets(ok)
    ok = whole_range(ok)
    ok = random_range(ok)
    ok = few_sampled(ok)
    ok = fft_share(ok)
    ok = scale_grid(ok)
    ok = tails(ok)
    ok = far_scan(ok)
    ok = long_scan(ok)
    ok = long_delta_scan(ok)
    ok = replace_one_scan(ok)
    ok = replace_one_small_q_scan(ok)
    print("\noverall:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
