"""Stress test for execution stalls: run every chapter in FAST mode several times in a row.

    python tests/stress_chapters.py [--rounds 5] [--timeout 120] [--no-repair]

Each run goes through papermill with a per-cell timeout. A stalled cell (nbclient waiting for a
reply the kernel has already sent) lasts exactly the timeout, so any cell that takes longer than
80 % of it is reported as a stall. `--no-repair` runs without book/_ext/nbclient_wakeup.py, to
see the failure it repairs. Exits 1 if any run stalled or failed. `make stress` runs it.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    ap.add_argument("--no-repair", action="store_true")
    args = ap.parse_args()
    if args.rounds < 1 or args.timeout < 10:
        ap.error("--rounds must be >= 1 and --timeout >= 10")
    if not args.no_repair:
        import nbclient_wakeup

        nbclient_wakeup.apply()
    import papermill as pm

    chapters = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    stalls, failures, runs = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, args.rounds + 1):
            for path in chapters:
                t0 = time.perf_counter()
                out = Path(tmp) / path.name
                try:
                    nb = pm.execute_notebook(str(path), str(out), parameters={"FAST": True},
                                             cwd=str(path.parent), kernel_name="python3",
                                             progress_bar=False, execution_timeout=args.timeout)
                except Exception as exc:  # a failed run is reported, and the loop goes on
                    failures.append(f"round {r} {path.name}: {type(exc).__name__}: {exc}"[:300])
                    print(f"round {r} {path.name}: FAILED ({type(exc).__name__})", flush=True)
                    continue
                runs += 1
                slow = [(i, c.metadata.papermill.get("duration") or 0.0)
                        for i, c in enumerate(nb.cells) if c.cell_type == "code"]
                worst = max(slow, key=lambda x: x[1])
                stalled = [(i, d) for i, d in slow if d >= 0.8 * args.timeout]
                if stalled:
                    stalls.append(f"round {r} {path.name}: cells {stalled}")
                print(f"round {r} {path.name}: {time.perf_counter() - t0:5.1f} s, slowest cell "
                      f"{worst[0]} {worst[1]:.1f} s{'  STALL' if stalled else ''}", flush=True)
    print(f"\n{runs} runs, {len(stalls)} with a stall, {len(failures)} failed "
          f"({'with' if not args.no_repair else 'without'} the nbclient repair)")
    for line in stalls + failures:
        print("  " + line)
    return 1 if stalls or failures else 0


if __name__ == "__main__":
    sys.exit(main())
