"""The ``dpmia`` command: what an attacker can do against a DP-SGD run, and how much noise is needed.

::

    dpmia risk --q 0.01 --sigma 1 --steps 10000 --delta 1e-5
    dpmia risk --dataset-size 60000 --batch-size 256 --epochs 30 --sigma 1.1 --delta 1e-5 --json
    dpmia calibrate --q 0.01 --steps 10000 --advantage 0.1
    dpmia calibrate --q 0.01 --steps 10000 --fpr 1e-3 --tpr 0.01
    dpmia calibrate --q 0.01 --steps 10000 --epsilon 8 --delta 1e-5 --json

``risk`` prints :func:`dpmia.report.risk_report`; ``calibrate`` the smallest noise multiplier whose
certified bound meets the target (:func:`dpmia.sgm.calibrate_sigma`) with that bound. Bad input
exits with status 2 and a message naming the parameter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__
from .calibrate import calibrate_sigma, target_met
from .tvbounds import SIGMA_MIN
from .report import risk_report, training_setting

__all__ = ["main"]


def _run_setting(args):
    """(q, steps) from --q/--steps or from --dataset-size/--batch-size/--epochs."""
    direct = args.q is not None or args.steps is not None
    derived = any(v is not None for v in (args.dataset_size, args.batch_size, args.epochs))
    if direct == derived:
        raise ValueError("give either --q and --steps, or --dataset-size, --batch-size and --epochs")
    if direct:
        if args.q is None or args.steps is None:
            raise ValueError("--q and --steps go together")
        return args.q, args.steps
    if None in (args.dataset_size, args.batch_size, args.epochs):
        raise ValueError("--dataset-size, --batch-size and --epochs go together")
    return training_setting(args.dataset_size, args.batch_size, args.epochs)


def _add_run(p, with_sigma):
    g = p.add_argument_group("the training run (either --q and --steps, or dataset, batch and epochs)")
    g.add_argument("--q", type=float, help="Poisson sampling rate, in [0, 1]")
    g.add_argument("--steps", type=int, help="number of DP-SGD steps T")
    g.add_argument("--dataset-size", type=int, help="training set size n")
    g.add_argument("--batch-size", type=int, help="expected batch size (q = batch / n)")
    g.add_argument("--epochs", type=float, help="epochs (T = max(1, floor(epochs / q)))")
    if with_sigma:
        g.add_argument("--sigma", type=float, required=True,
                       help="noise multiplier (noise std / clipping norm), in [0.01, 1e6]")


def _parser():
    top = argparse.ArgumentParser(prog="dpmia", description="Membership-inference risk of DP-SGD, certified.")
    top.add_argument("--version", action="version", version=f"dpmia {__version__}")
    sub = top.add_subparsers(dest="command", required=True)

    r = sub.add_parser("risk", help="every bound of the book for one training run",
                       description="Every bound of the book for one DP-SGD run: tight and RDP epsilon, the "
                                   "generic bounds it implies, the optimal attack's advantage and TPR at low "
                                   "FPR (certified brackets), precision under a prior, and the CLT estimate.")
    _add_run(r, True)
    r.add_argument("--delta", type=float, default=1e-5, help="delta at which epsilon is read (default 1e-5)")
    r.add_argument("--prior", type=float, default=0.5, help="prior probability of membership (default 0.5)")
    r.add_argument("--fpr", type=float, action="append", help="FPR for the TPR rows (repeatable; default 1e-3, 1e-2, 0.1)")
    r.add_argument("--json", action="store_true", help="print JSON instead of a table")

    c = sub.add_parser("calibrate", help="smallest noise multiplier for a target risk",
                       description="Smallest noise multiplier (to relative 1e-3, searched in [0.01, 1000]) whose "
                                   "certified upper bound meets exactly one target: --advantage; or --fpr with "
                                   "--tpr (TPR at that FPR at most tpr, tpr > fpr); or --epsilon with --delta.")
    _add_run(c, False)
    c.add_argument("--advantage", type=float, help="largest membership advantage (TPR - FPR) allowed")
    c.add_argument("--fpr", type=float, help="false-positive rate of the TPR target")
    c.add_argument("--tpr", type=float, help="largest TPR allowed at --fpr")
    c.add_argument("--epsilon", type=float, help="epsilon of an (epsilon, delta) target")
    c.add_argument("--delta", type=float, help="delta of an (epsilon, delta) target")
    c.add_argument("--json", action="store_true", help="print JSON instead of text")
    return top


def _calibrate(args):
    q, steps = _run_setting(args)
    target = {k: getattr(args, k) for k in ("advantage", "fpr", "tpr", "epsilon", "delta")
              if getattr(args, k) is not None}
    sigma = calibrate_sigma(q, steps, **target)
    met, upper = target_met(q, sigma, steps, **target)
    out = {"q": q, "steps": steps, "target": target, "sigma": sigma, "certified_upper_bound": upper, "met": met}
    if args.json:
        return json.dumps(out, indent=2)
    name = ("advantage" if "advantage" in target else
            (f"TPR at FPR {target['fpr']:g}" if "tpr" in target else f"epsilon at delta {target['delta']:g}"))
    goal = target.get("advantage", target.get("tpr", target.get("epsilon")))
    how = ("the lower end of the search range: every sigma >= 0.01 meets the target" if sigma == SIGMA_MIN
           else "smallest to relative 1e-3")
    return (f"noise multiplier sigma = {sigma:.6g} ({how}) for q = {q:g}, T = {steps:,}\n"
            f"certified upper bound on the {name}: {upper:.6g} <= target {goal:g}")


def main(argv=None) -> int:
    """Entry point of the ``dpmia`` console script; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "risk":
            q, steps = _run_setting(args)
            rep = risk_report(q, args.sigma, steps, args.delta, args.prior,
                              **({"fprs": args.fpr} if args.fpr else {}))
            text = json.dumps(rep.to_dict(), indent=2) if args.json else str(rep)
        else:
            text = _calibrate(args)
    except (ValueError, TypeError) as exc:
        parser.exit(2, f"dpmia {args.command}: error: {exc}\n")
    try:
        print(text, flush=True)
    except BrokenPipeError:  # e.g. `dpmia risk ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
