"""The ``dpmia`` command: what an attacker can do against a DP-SGD run, and how much noise is needed.

::

    dpmia risk --q 0.01 --sigma 1 --steps 1e4 --delta 1e-5
    dpmia risk --dataset-size 6e4 --batch-size 256 --epochs 30 --sigma 1.1 --delta 1e-5 --json
    dpmia risk --q 0.01 --sigma 1 --steps 1e4 --neighbours replace-one --sampler fixed --baseline 1e-3
    dpmia calibrate --q 0.01 --steps 1e4 --advantage 0.1
    dpmia calibrate --q 0.01 --steps 1e4 --fpr 1e-3 --tpr 0.01
    dpmia calibrate --q 0.01 --steps 1e4 --epsilon 8 --delta 1e-5 --json
    dpmia calibrate --q 0.01 --steps 1e4 --advantage 0.1 --neighbours replace-one --sampler fixed
    dpmia audit scores.csv --fpr 0.01 --one-run --q 0.01 --sigma 1 --steps 1e4
    dpmia audit --digits --sigma 1 --q 0.1 --epochs 50 --models 64 --canaries 256 --shard 3/8 --out part3.jsonl
    dpmia audit --merge part*.jsonl

``risk`` prints :func:`dpmia.report.risk_report`; ``calibrate`` the smallest noise multiplier whose
certified bound meets the target (:func:`dpmia.sgm.calibrate_sigma`) with that bound; ``audit`` audits membership
scores from a CSV file (:func:`dpmia.audit.audit_scores`; the layout in ``dpmia audit --help``), or trains and
merges the shards of the digits shadow-model audit.

Conventions: whole-number options (``--steps``, ``--dataset-size``, ``--batch-size``) also take
scientific notation with an integer value (``1e6`` is exactly 1000000; ``1.5`` is refused); a
mistyped option is answered with the closest real one ("did you mean ``--steps``?"); every ``--help``
ends with worked examples. Bad input exits with status 2 and a message naming the option.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import textwrap
from decimal import Decimal, InvalidOperation

from .. import __version__
from ..report import risk_report, training_setting
from ..sgm import SIGMA_MIN, calibrate_sigma, target_met
from ._audit import add_parser as _audit_parser
from ._audit import run as _audit_run

__all__ = ["main"]


def _whole(text):
    """argparse ``type=`` for whole numbers, also in scientific notation: '1e6' -> 1000000.

    Decimal, not float, so that large values such as 1e17 or 123456789e9 stay exact.
    """
    try:
        d = Decimal(text.strip())
    except InvalidOperation:
        d = None
    if d is None or not d.is_finite() or d != d.to_integral_value():
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")
    if d.adjusted() > 100:  # int(Decimal('1e999999999')) would take forever
        raise argparse.ArgumentTypeError(f"too large, got {text!r}")
    return int(d)


def _is_number(text):
    """Whether ``text`` is a number (so '-0.5' is a value, not a mistyped option)."""
    try:
        float(text)
        return True
    except ValueError:
        return False


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that answers a mistyped option with the closest real one ("did you mean --steps?")."""

    def parse_known_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        # Before argparse's own checks: they would report a mistyped *required* option (--sigmaa) as missing.
        known = list(self._option_string_actions)  # every option string of this (sub)command
        hints = getattr(self, "hints", {})  # options of another subcommand, with what to do instead
        for tok in args:
            if tok == "--" or (self._subparsers is not None and not tok.startswith("-")):
                break  # past "--" nothing is an option; past the subcommand its own parser checks
            name = tok.split("=", 1)[0]
            if name in hints:
                self.error(hints[name])
            if len(name) < 2 or name[0] != "-" or _is_number(name) or name in known:
                continue  # a value (also a negative number), or a known option
            if self.allow_abbrev and name.startswith("--") and any(o.startswith(name) for o in known):
                continue  # an abbreviation argparse accepts (or reports as ambiguous)
            close = difflib.get_close_matches(name, known + list(hints), n=1)
            if close:  # without a close match argparse's own message stands
                hint = f" ({hints[close[0]]})" if close[0] in hints else ""
                self.error(f"unrecognized argument {name}: did you mean {close[0]}?{hint}")
        return super().parse_known_args(args, namespace)


def _texts(description, *examples):
    """Parser keywords: the description and an "examples:" epilog of working commands.

    The raw formatter keeps the example lines as written, so the description is wrapped here.
    """
    return {"formatter_class": argparse.RawDescriptionHelpFormatter,
            "description": textwrap.fill(description, 79),
            "epilog": "examples:\n" + "\n".join(f"  {e}" for e in examples)}


_EXAMPLES = {  # shown by --help; tests/test_cli.py runs every one of them
    "risk": ("dpmia risk --q 0.01 --sigma 1 --steps 1e4 --delta 1e-5",
             "dpmia risk --dataset-size 6e4 --batch-size 256 --epochs 30 --sigma 1.1 --json",
             "dpmia risk --q 0.01 --sigma 1 --steps 1e4 --neighbours replace-one --sampler fixed --baseline 1e-3",
             "dpmia risk --dataset-size 6e4 --batch-size 600 --epochs 5 --sigma 0.8 --sampler shuffled "
             "--neighbours replace-one"),
    "calibrate": ("dpmia calibrate --q 0.01 --steps 1e4 --advantage 0.1",
                  "dpmia calibrate --q 0.01 --steps 1e4 --epsilon 8 --delta 1e-5",
                  "dpmia calibrate --q 0.01 --steps 1e4 --advantage 0.1 --neighbours replace-one --sampler fixed"),
}


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
    g.add_argument("--q", type=float, help="sampling rate (batch size / dataset size), in [0, 1]")
    g.add_argument("--steps", type=_whole, help="number of DP-SGD steps T (whole; 1e4 is accepted)")
    g.add_argument("--dataset-size", type=_whole, help="training set size n (whole; 6e4 is accepted)")
    g.add_argument("--batch-size", type=_whole, help="(expected) batch size (q = batch / n)")
    g.add_argument("--epochs", type=float, help="epochs (T = max(1, floor(epochs / q)))")
    if with_sigma:
        g.add_argument("--sigma", type=float, required=True,
                       help="noise multiplier (noise std / clipping norm), in [0.01, 1e6]")
    g.add_argument("--neighbours", choices=("add-remove", "replace-one"), default="add-remove",
                   help="neighbouring relation of the guarantee: a record added or removed (default) or replaced")
    samplers = ("poisson", "fixed", "shuffled") if with_sigma else ("poisson", "fixed")
    g.add_argument("--sampler", choices=samplers, default="poisson",
                   help="how batches were drawn: Poisson sampling (default), fixed-size batches without "
                        "replacement (with --neighbours replace-one)"
                        + (", or shuffled epochs (certified lower bounds only)" if with_sigma else ""))


def _parser():
    top = _Parser(prog="dpmia", **_texts("Membership-inference risk of DP-SGD, certified.",
                                         _EXAMPLES["risk"][0], _EXAMPLES["calibrate"][0]))
    top.add_argument("--version", action="version", version=f"dpmia {__version__}")
    sub = top.add_subparsers(dest="command", required=True)

    r = sub.add_parser("risk", help="every bound of the book for one training run",
                       **_texts("Every bound of the book for one DP-SGD run, each row naming its game: tight "
                                "and RDP epsilon, the generic bounds it implies, the optimal attack's advantage "
                                "and TPR at low FPR (certified brackets), precision under a prior, the other "
                                "worst-case game, eta-MIP, the GLRT and PMP attackers, reconstruction-type "
                                "risks and Bayes security, and the CLT estimate.",
                                *_EXAMPLES["risk"]))
    _add_run(r, True)
    r.add_argument("--delta", type=float, default=1e-5, help="delta at which epsilon is read (default 1e-5)")
    r.add_argument("--prior", type=float, default=0.5, help="prior probability of membership (default 0.5)")
    r.add_argument("--fpr", type=float, action="append",
                   help="FPR for the TPR rows (repeatable; default 1e-3, 1e-2, 0.1)")
    r.add_argument("--baseline", type=float, default=1e-3,
                   help="success probability of the best blind guess, for reconstruction, attribute inference "
                        "and re-identification (default 1e-3)")
    r.add_argument("--dimension", type=_whole, help="the model's number of parameters, for the GLRT attacker")
    r.add_argument("--json", action="store_true", help="print JSON instead of a table")

    c = sub.add_parser("calibrate", help="smallest noise multiplier for a target risk",
                       **_texts("Smallest noise multiplier (to relative 1e-3, searched in [0.01, 1000]) whose "
                                "certified upper bound meets exactly one target: --advantage; or --fpr with "
                                "--tpr (TPR at that FPR at most tpr, tpr > fpr); or --epsilon with --delta.",
                                *_EXAMPLES["calibrate"]))
    _add_run(c, False)
    c.hints = {"--sigma": "calibrate finds the noise multiplier: give a target (--advantage, --fpr with --tpr, "
                          "or --epsilon with --delta) instead of --sigma; `dpmia risk` takes --sigma",
               "--prior": "--prior belongs to `dpmia risk`"}
    c.add_argument("--advantage", type=float, help="largest membership advantage (TPR - FPR) allowed")
    c.add_argument("--fpr", type=float, help="false-positive rate of the TPR target")
    c.add_argument("--tpr", type=float, help="largest TPR allowed at --fpr")
    c.add_argument("--epsilon", type=float, help="epsilon of an (epsilon, delta) target")
    c.add_argument("--delta", type=float, help="delta of an (epsilon, delta) target")
    c.add_argument("--json", action="store_true", help="print JSON instead of text")
    _audit_parser(sub, _texts, _whole)
    return top


def _calibrate(args):
    q, steps = _run_setting(args)
    target = {k: getattr(args, k) for k in ("advantage", "fpr", "tpr", "epsilon", "delta")
              if getattr(args, k) is not None}
    how_run = {"neighbours": args.neighbours, "sampler": args.sampler}
    sigma = calibrate_sigma(q, steps, **target, **how_run)
    met, upper = target_met(q, sigma, steps, **target, **how_run)
    out = {"q": q, "steps": steps, **how_run, "target": target, "sigma": sigma, "certified_upper_bound": upper,
           "met": met}
    if args.json:
        return json.dumps(out, indent=2)
    name = ("advantage" if "advantage" in target else
            (f"TPR at FPR {target['fpr']:g}" if "tpr" in target else f"epsilon at delta {target['delta']:g}"))
    goal = target.get("advantage", target.get("tpr", target.get("epsilon")))
    how = ("the lower end of the search range: every sigma >= 0.01 meets the target" if sigma == SIGMA_MIN
           else "smallest to relative 1e-3")
    return (f"noise multiplier sigma = {sigma:.6g} ({how}) for q = {q:g}, T = {steps:,} "
            f"({args.sampler} sampling, {args.neighbours} neighbours)\n"
            f"certified upper bound on the {name}: {upper:.6g} <= target {goal:g}")


#: the library's parameter names and the options that set them
_OPTIONS = {"q": "--q", "sigma": "--sigma", "steps": "--steps", "dataset_size": "--dataset-size",
            "batch_size": "--batch-size", "epochs": "--epochs", "delta": "--delta", "prior": "--prior",
            "fprs": "--fpr", "fpr": "--fpr", "tpr": "--tpr", "advantage": "--advantage", "epsilon": "--epsilon",
            "baseline": "--baseline", "dimension": "--dimension", "sampler='fixed'": "--sampler fixed",
            "level": "--level", "n_models": "--models", "n_null": "--null", "n_canaries": "--canaries",
            "n_jobs": "--jobs", "seed": "--seed"}


def _as_options(msg):
    """A library error in the words of the command line: 'batch_size must ...' -> '--batch-size must ...'."""
    msg = re.sub(r"\b(advantage|fpr|tpr|epsilon|delta)=\.\.\.", r"--\1 ...", msg)
    head, _, rest = msg.partition(" ")
    msg = f"{_OPTIONS[head]} {rest}" if head in _OPTIONS and rest else msg
    msg = msg.replace("neighbours='replace-one'", "--neighbours replace-one")
    return re.sub(r"\b(dataset_size|batch_size)\b", lambda m: _OPTIONS[m.group(1)], msg)


def main(argv=None) -> int:
    """Entry point of the ``dpmia`` console script; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "risk":
            q, steps = _run_setting(args)
            rep = risk_report(q, args.sigma, steps, args.delta, args.prior,
                              **({"fprs": args.fpr} if args.fpr else {}), neighbours=args.neighbours,
                              sampler=args.sampler, baseline=args.baseline, dimension=args.dimension)
            text = json.dumps(rep.to_dict(), indent=2) if args.json else str(rep)
        elif args.command == "audit":
            text = _audit_run(args)
        else:
            text = _calibrate(args)
    except (ValueError, TypeError) as exc:
        parser.exit(2, f"dpmia {args.command}: error: {_as_options(str(exc))}\n")
    try:
        print(text, flush=True)
    except BrokenPipeError:  # e.g. `dpmia risk ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
