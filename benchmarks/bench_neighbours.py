"""Replace-one neighbours and fixed-size batches: dpmia.sgm against dp-accounting, and the cost of replace-one.

1. Ten settings: the advantage (TV = delta(0)) and eps(1e-5) brackets of dpmia under add/remove and
   replace-one, next to dp-accounting's PLD with ``NeighboringRelation.REPLACE_ONE`` (and the default
   add/remove), pessimistic (connect-the-dots, an upper bound) and optimistic (privacy buckets, a lower
   estimate), at ``value_discretization_interval`` 1e-4. A dpmia bracket must not lie above dp-accounting's
   pessimistic value nor below its optimistic one (beyond their own discretisation, 1e-3 relative).
2. Cost: replace-one read-outs (advantage and eps, cold caches, medians of 3) against add/remove, at the
   standard point (q = 0.01, sigma = 1, T = 1e4) and across bench_sgm.py's grid (q x sigma x T, 5 x 5 x 5);
   the budget is a ratio of at most 2 (DESIGN.md, performance budgets). Also dp-accounting's REPLACE_ONE
   time at the standard point, in the same run.

Exit status 1 if a bracket contradicts a peer's certified side or a ratio exceeds its budget at the
standard point. Run: `make -C benchmarks neighbours`.
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings

from bench_sgm import GRID_Q, GRID_S, GRID_T

from dpmia import sgm

warnings.filterwarnings("ignore")
try:
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
except ImportError:  # pragma: no cover
    dp_accounting = None

SETTINGS = [(0.01, 1.0, 1000), (0.01, 2.0, 1000), (0.02, 1.0, 2500), (0.001, 1.0, 10_000), (0.1, 5.0, 100),
            (0.004, 1.1, 7031), (0.5, 0.5, 10), (0.01, 0.6, 300), (0.05, 3.0, 2000), (1e-3, 0.8, 5000)]
DELTA = 1e-5


def dpacc(q, s, T, relation, pessimistic):
    rel = (dp_accounting.NeighboringRelation.REPLACE_ONE if relation == "replace-one"
           else dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    one = pld_lib.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=pessimistic,
                                          value_discretization_interval=1e-4, use_connect_dots=pessimistic,
                                          neighboring_relation=rel)
    comp = one.self_compose(T)
    return comp.get_delta_for_epsilon(0.0), comp.get_epsilon_for_delta(DELTA)


def peers(ok):
    print("1. brackets against dp-accounting (value_discretization_interval 1e-4)")
    print(f"{'q':>6} {'sigma':>5} {'T':>6} {'relation':>11} | {'advantage bracket':>24} {'dpacc pess':>10} "
          f"{'dpacc opt':>10} | {'eps bracket':>20} {'dpacc pess':>10} {'dpacc opt':>10}")
    for q, s, T in SETTINGS:
        for rel in ("add-remove", "replace-one"):
            sgm.clear_caches()
            a = sgm.advantage_bracket(q, s, T, neighbours=rel)
            e = sgm.epsilon_bracket(q, s, T, DELTA, neighbours=rel)
            if dp_accounting is not None:
                (ap, ep), (ao, eo) = dpacc(q, s, T, rel, True), dpacc(q, s, T, rel, False)
            else:
                ap = ep = ao = eo = float("nan")
            good = (a[0] <= ap * (1 + 1e-3) + 1e-9 and e[0] <= ep * (1 + 1e-3) + 1e-9
                    and a[1] >= ao * (1 - 1e-3) - 1e-9 and e[1] >= eo * (1 - 1e-3) - 1e-9)
            ok &= bool(good) or dp_accounting is None
            print(f"{q:>6g} {s:>5g} {T:>6} {rel:>11} | [{a[0]:.7f}, {a[1]:.7f}] {ap:>10.7f} {ao:>10.7f} | "
                  f"[{e[0]:.5f}, {e[1]:.5f}] {ep:>10.5f} {eo:>10.5f}{'' if good else '  <-- contradicts'}")
    return ok


def cold(fn, *args, reps=3, **kw):
    ts = []
    for _ in range(reps):
        sgm.clear_caches()
        t0 = time.perf_counter()
        fn(*args, **kw)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def cost(ok):
    print("\n2. replace-one against add/remove, cold, medians of 3")
    q, s, T = 0.01, 1.0, 10_000
    ratios = {}
    for name, fn, args in (("advantage", sgm.advantage_bracket, (q, s, T)),
                           ("eps(1e-5)", sgm.epsilon_bracket, (q, s, T, DELTA))):
        ta = cold(fn, *args)
        tr = cold(fn, *args, neighbours="replace-one")
        tf = cold(fn, *args, neighbours="replace-one", sampler="fixed")
        ratios[name] = tr / ta
        print(f"standard point {name:>10}: add/remove {1e3 * ta:7.1f} ms, replace-one {1e3 * tr:7.1f} ms "
              f"(ratio {tr / ta:.2f}), fixed batches {1e3 * tf:7.1f} ms")
    if dp_accounting is not None:
        t0 = time.perf_counter()
        dpacc(q, s, T, "replace-one", True)
        td = time.perf_counter() - t0
        sgm.clear_caches()
        tr = cold(sgm.advantage_bracket, q, s, T, neighbours="replace-one")
        print(f"dp-accounting REPLACE_ONE (pessimistic, 1e-4 grid, TV and eps): {1e3 * td:.0f} ms; "
              f"dp-accounting / dpmia advantage: {td / tr:.1f}x")
    ok &= all(r <= 2.0 for r in ratios.values())
    print("\n   grid of bench_sgm.py (ratio replace-one / add/remove; worst and median)")
    grid_r = []
    worst = (0.0, None)
    for gq in GRID_Q:
        for gs in GRID_S:
            for gT in GRID_T:
                try:
                    ta = cold(sgm.advantage_bracket, gq, gs, gT, reps=1)
                    tr = cold(sgm.advantage_bracket, gq, gs, gT, reps=1, neighbours="replace-one")
                except ValueError as exc:
                    print(f"   ({gq:g}, {gs:g}, {gT}): {exc}")
                    continue
                r = tr / max(ta, 1e-4)          # below 0.1 ms both are closed forms: no meaningful ratio
                grid_r.append(r)
                if r > worst[0]:
                    worst = (r, (gq, gs, gT, ta, tr))
    over = sum(r > 2.0 for r in grid_r)
    print(f"   {len(grid_r)} settings: median ratio {statistics.median(grid_r):.2f}, worst {worst[0]:.2f} at "
          f"q={worst[1][0]:g}, sigma={worst[1][1]:g}, T={worst[1][2]} ({1e3 * worst[1][3]:.1f} vs "
          f"{1e3 * worst[1][4]:.1f} ms); {over} above 2")
    return ok


def main() -> int:
    ok = peers(True)
    ok = cost(ok)
    print("\nall checks passed" if ok else "\nSOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
