r"""``dpmia audit``: audit a model's membership scores from a CSV file, or train the digits shadow-model audit in
shards and merge them.

The CSV layout (comma-separated, one header line, then one line per (model, canary)):

* ``score`` — the attack's score, higher = more likely a member (any finite number);
* ``member`` — 1 if the canary was in that model's training set, 0 if not;
* ``group`` (optional) — the model the score came from (any text), for audits of several shadow models.

Other columns are ignored. ``dpmia audit --example-csv`` prints a small file in this layout.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np

from .. import sgm
from ..audit import AuditSetting, analyse, audit_scores, merge_records, shard_lines

__all__ = ["add_parser", "run", "read_scores_csv", "example_csv", "EXAMPLES"]

EXAMPLES = ("dpmia audit scores.csv --fpr 0.01 --fpr 0.1",
            "dpmia audit scores.csv --one-run --delta 1e-5 --json",
            "dpmia audit scores.csv --fpr 0.01 --q 0.01 --sigma 1 --steps 1e4",
            "dpmia audit --digits --sigma 1 --q 0.1 --epochs 5 --models 8 --canaries 16 --shard 0/2 --out part0.jsonl",
            "dpmia audit --merge part0.jsonl part1.jsonl")


#: the spellings of a membership label that are accepted (pandas writes True/False or 1.0/0.0)
_MEMBER = {"1": True, "0": False, "1.0": True, "0.0": False, "true": True, "false": False}


def read_scores_csv(path):
    """``(scores, members, groups or None)`` from a CSV file in the layout of the module docstring; a
    ``ValueError`` naming the line for anything malformed."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:     # (-sig: a byte-order mark is dropped)
            text = fh.read()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None:
        raise ValueError(f"{path} is empty: it needs a header line 'score,member[,group]' and one line per score")
    cols = {h.strip().lower(): i for i, h in enumerate(header)}
    for need in ("score", "member"):
        if need not in cols:
            hint = " (the separator must be a comma)" if len(header) == 1 and ";" in header[0] else ""
            raise ValueError(f"{path}: the header has no '{need}' column (found: {', '.join(header)}){hint}; "
                             "the layout is 'score,member[,group]'")
    scores, members, groups = [], [], []
    for no, row in enumerate(rows, 2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise ValueError(f"{path}, line {no}: {len(row)} fields, the header has {len(header)}")
        s, m = row[cols["score"]].strip(), row[cols["member"]].strip()
        try:
            v = float(s)
        except ValueError:
            raise ValueError(f"{path}, line {no}: score {s!r} is not a number") from None
        if not math.isfinite(v):
            raise ValueError(f"{path}, line {no}: score is {s!r}; every score must be a finite number")
        flag = _MEMBER.get(m.lower())
        if flag is None:
            raise ValueError(f"{path}, line {no}: member must be 0 or 1, got {m!r}")
        scores.append(v)
        members.append(flag)
        if "group" in cols:
            groups.append(row[cols["group"]].strip())
    if not scores:
        raise ValueError(f"{path} has a header but no scores")
    return np.array(scores), np.array(members), (np.array(groups) if groups else None)


def example_csv(seed=0) -> str:
    """A small scores file in the layout above: 8 models x 500 canaries of a Gaussian mechanism (mu = 1.5) with
    a shared per-model effect, memberships by fair coins."""
    rng = np.random.default_rng(seed)
    lines = ["score,member,group"]
    for g in range(8):
        coins = rng.random(500) < 0.5
        s = 1.5 * coins + 0.5 * rng.standard_normal() + rng.standard_normal(500)
        lines += [f"{v:.6f},{int(c)},model{g}" for v, c in zip(s, coins)]
    return "\n".join(lines) + "\n"


def add_parser(sub, texts, whole):
    """The ``audit`` subcommand on the subparsers ``sub`` (``texts`` and ``whole`` from :mod:`dpmia.cli`)."""
    a = sub.add_parser("audit", help="audit your model's membership scores (CSV), or run the digits audit",
                       **texts("Audit membership scores: the empirical ROC, TPR and FPR at chosen FPRs with "
                               "intervals (clustered by model when the file has a 'group' column) and an epsilon "
                               "lower bound, all holding jointly at --level. The CSV has a header 'score,member"
                               "[,group]': score higher = more likely a member, member 0 or 1. With --one-run the "
                               "bound is Steinke et al.'s (memberships must come from fair coins). With --q "
                               "--sigma --steps the certified upper bounds of that DP-SGD run are printed beside. "
                               "--digits trains the shadow-model audit of chapter 7 (or one --shard i/n of it, as "
                               "JSON lines); --merge combines shards into the audit.", *EXAMPLES))
    a.add_argument("file", nargs="?", help="CSV file of scores (layout above)")
    a.add_argument("--fpr", type=float, action="append", help="target FPR (repeatable; default 1e-3, 1e-2, 0.1)")
    a.add_argument("--delta", type=float, default=1e-5, help="delta of the epsilon lower bound (default 1e-5)")
    a.add_argument("--level", type=float, default=0.95, help="joint confidence level (default 0.95)")
    a.add_argument("--one-run", action="store_true", help="Steinke et al.'s one-run epsilon lower bound")
    a.add_argument("--json", action="store_true", help="print JSON instead of text")
    a.add_argument("--example-csv", action="store_true", help="print an example scores file and exit")
    r = a.add_argument_group("certified upper bounds beside (optional)")
    r.add_argument("--q", type=float, help="sampling rate of the audited DP-SGD run")
    r.add_argument("--sigma", type=float, help="noise multiplier of the audited run")
    r.add_argument("--steps", type=whole, help="steps of the audited run")
    d = a.add_argument_group("the digits shadow-model audit (chapter 7)")
    d.add_argument("--digits", action="store_true", help="train the audit's models (needs --sigma --q --epochs)")
    d.add_argument("--epochs", type=float, help="epochs per model")
    d.add_argument("--models", type=whole, default=16, help="models with canaries, even (default 16)")
    d.add_argument("--null", type=whole, default=8, help="models without canaries (default 8)")
    d.add_argument("--canaries", type=whole, default=64, help="canaries per model (default 64)")
    d.add_argument("--seed", type=whole, default=0, help="seed (default 0)")
    d.add_argument("--shard", help="train only shard i of n ('i/n'), printing JSON lines")
    d.add_argument("--jobs", type=whole, default=1, help="parallel workers (joblib; default 1)")
    d.add_argument("--out", help="write the shard's JSON lines to this file instead of printing them")
    d.add_argument("--merge", nargs="+", metavar="SHARD", help="merge shard files into the audit")
    return a


def _bounds(args, fprs, delta):
    """The certified upper bounds of the run given by --q --sigma --steps (or None)."""
    given = [v is not None for v in (args.q, args.sigma, args.steps)]
    if not any(given):
        return None
    if not all(given):
        raise ValueError("--q, --sigma and --steps go together (the audited run's certified bounds)")
    return {"epsilon_upper": sgm.epsilon(args.q, args.sigma, args.steps, delta),
            "advantage_upper": sgm.advantage_bound(args.q, args.sigma, args.steps),
            "tpr_upper": {f"{f:g}": float(sgm.tpr_at_fpr(f, args.q, args.sigma, args.steps)) for f in fprs}}


def _shard(args):
    if args.sigma is None or args.q is None or args.epochs is None:
        raise ValueError("--digits needs --sigma, --q and --epochs")
    from ..learning import load_digits
    data = load_digits()
    setting = AuditSetting.checked(data, sigma=args.sigma, q=args.q, epochs=args.epochs, n_train=200,
                                   n_canaries=args.canaries, n_models=args.models, n_null=args.null,
                                   target_fprs=tuple(args.fpr or (0.01, 0.1)), clip=1.0, lr=4.0, delta=args.delta,
                                   level=args.level, seed=args.seed)
    i, n = 0, 1
    if args.shard:
        try:
            i, n = (int(x) for x in args.shard.split("/"))
        except ValueError:
            raise ValueError(f"--shard must be 'i/n' with 0 <= i < n, got {args.shard!r}") from None
        if not 0 <= i < n:
            raise ValueError(f"--shard must be 'i/n' with 0 <= i < n, got {args.shard!r}")
    if args.out:
        try:                                 # before the training: a bad path should not cost the run
            fh = open(args.out, "w", encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"--out: cannot write {args.out}: {exc.strerror}") from None
        with fh:
            fh.write("\n".join(shard_lines(setting, (i, n), n_jobs=args.jobs, data=data)) + "\n")
        return f"wrote shard {i}/{n} ({setting.n_models + setting.n_null} models in all) to {args.out}"
    return "\n".join(shard_lines(setting, (i, n), n_jobs=args.jobs, data=data))


def _merge(args):
    lines = []
    for path in args.merge:
        try:
            with open(path, encoding="utf-8") as fh:
                lines += fh.read().splitlines()
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    setting, records = merge_records(lines)
    res = analyse(setting, records)
    if args.json:
        return json.dumps({"setting": setting.to_dict(), "level": res.level, "accuracy": res.accuracy,
                           "attacks": {k: {"audit": o.audit.to_dict(), "null": o.null.to_dict()}
                                       for k, o in res.outcomes.items()}}, indent=2)
    out = [f"shadow-model audit of DP-SGD on digits: sigma {setting.sigma:g}, q {setting.q:g}, {res.steps} steps, "
           f"{res.n_models} models ({res.n_models // 2} attacked), {res.n_canaries} canaries; every interval and "
           f"bound below holds jointly at {res.level:g}"]
    for k, o in res.outcomes.items():
        out += [f"\n{k} attack, attacked models:", str(o.audit), f"{k} attack, null models (no canary):",
                str(o.null)]
    return "\n".join(out)


def run(args):
    """Text (or JSON) that ``dpmia audit`` prints for the parsed ``args``."""
    if args.example_csv:
        return example_csv().rstrip("\n")
    modes = sum([args.file is not None, bool(args.digits), args.merge is not None])
    if modes != 1:
        raise ValueError("give exactly one of: a scores CSV file, --digits (to train the audit's models), "
                         "or --merge SHARD ...")
    if args.merge is not None:
        extra = [o for o, v in (("--one-run", args.one_run), ("--fpr", args.fpr), ("--q", args.q),
                                ("--sigma", args.sigma), ("--steps", args.steps)) if v]
        if extra:
            raise ValueError(f"--merge uses the setting the shards were trained with; {', '.join(extra)} "
                             "cannot change it")
    if args.digits:
        return _shard(args)
    if args.merge:
        return _merge(args)
    fprs = tuple(args.fpr or (1e-3, 1e-2, 0.1))
    scores, members, groups = read_scores_csv(args.file)
    if not args.fpr and (~members).sum() < 1000:
        fprs = tuple(f for f in fprs if f * (~members).sum() >= 1.0)     # the defaults the file can measure
        if not fprs:
            raise ValueError(f"{args.file}: {(~members).sum()} non-members cannot measure an FPR of 0.1 or less")
    res = audit_scores(scores, members, groups=groups, fprs=fprs, delta=args.delta, level=args.level,
                       method="one-run" if args.one_run else "intervals")
    bounds = _bounds(args, fprs, args.delta)
    if args.json:
        d = res.to_dict()
        if bounds is not None:
            d["certified"] = bounds
        return json.dumps(d, indent=2)
    text = str(res)
    if bounds is not None:
        text += (f"\ncertified upper bounds of the run (q {args.q:g}, sigma {args.sigma:g}, T {args.steps:,}): "
                 f"epsilon({args.delta:g}) <= {bounds['epsilon_upper']:.4f}, advantage <= "
                 f"{bounds['advantage_upper']:.4f}, TPR <= "
                 + ", ".join(f"{v:.4f} at FPR {k}" for k, v in bounds["tpr_upper"].items()))
    return text
