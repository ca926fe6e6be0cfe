r"""Training the audit's models: seeded per model, in parallel through joblib, or in shards across machines.

Seeds come from one ``numpy.random.SeedSequence(seed)``: its first child draws the setup (the digits used, the
canaries, every model's coins), child ``1 + i`` trains model ``i``. A model's record therefore depends only on
``(setting, i)``, never on which process, shard or ``n_jobs`` trained it: results are bit-identical for any
``n_jobs`` and any sharding.

Sharding, for audits of hundreds of models::

    dpmia audit --digits --sigma 1 --q 0.1 --epochs 50 --models 256 --shard 3/16 > part03.jsonl   # on each node
    dpmia audit --merge part*.jsonl                                                                # then once

Each shard writes JSON lines: one header with the setting, then one record per model (``model``, ``coins``,
``phi`` the scores, ``accuracy``). :func:`merge_records` checks the shards share one setting and hold every model
once. joblib's backend can be switched without ``dpmia`` depending on it, e.g. with Dask
(``with joblib.parallel_config(backend="dask"): audit.lira_audit(..., n_jobs=-1)`` after creating a
``dask.distributed.Client``) or Ray (``ray.util.joblib.register_ray()``, then ``backend="ray"``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from .. import _checks
from ..learning import Digits, accuracy, dpsgd_softmax, load_digits, noise_canaries

__all__ = ["AuditSetting", "logit_confidence", "train_records", "shard_lines", "merge_records"]


def logit_confidence(W, X, y):
    r"""LiRA's score :math:`\log p_y - \log(1-p_y)` of a softmax model ``X @ W``, computed from the logits
    (:math:`z_y - \log\sum_{c\ne y} e^{z_c}`), so it stays finite when :math:`p_y` rounds to 1."""
    Z = np.asarray(X, float) @ np.asarray(W, float)
    yy = np.asarray(y, int)
    if Z.ndim != 2 or yy.shape != (Z.shape[0],):
        raise ValueError(f"X @ W must be (n, classes) and y of length n, got {Z.shape} and {yy.shape}")
    if yy.size and (yy.min() < 0 or yy.max() >= Z.shape[1]):
        raise ValueError(f"labels y must lie in [0, {Z.shape[1] - 1}] (the columns of W)")
    zy = Z[np.arange(yy.size), yy]
    others = Z.copy()
    others[np.arange(yy.size), yy] = -np.inf
    return zy - special.logsumexp(others, axis=1)


@dataclass(frozen=True)
class AuditSetting:
    """Everything that determines the shadow-model audit's models (checked by :meth:`checked`)."""

    sigma: float
    q: float
    epochs: float
    n_train: int
    n_canaries: int
    n_models: int
    n_null: int
    target_fprs: tuple
    clip: float
    lr: float
    delta: float
    level: float
    seed: int

    @classmethod
    def checked(cls, data, *, sigma, q, epochs, n_train, n_canaries, n_models, n_null, target_fprs, clip, lr, delta,
                level, seed):
        if not isinstance(data, Digits):
            raise TypeError(f"data must be a dpmia.learning.Digits, got {type(data).__name__}")
        k = _checks.integer("n_models", n_models, lo=4, hi=100_000)
        if k % 2:
            raise ValueError(f"n_models must be even (half are shadows, half are attacked), got {k}")
        fprs = tuple(_checks.scalar("target_fprs", f, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
                     for f in np.atleast_1d(target_fprs))
        if not fprs:
            raise ValueError("target_fprs must name at least one FPR")
        return cls(sigma=_checks.scalar("sigma", sigma, lo=0.0),
                   q=_checks.scalar("q", q, lo=0.0, hi=1.0, lo_open=True),
                   epochs=_checks.scalar("epochs", epochs, lo=0.0, lo_open=True, hi=1e6),
                   n_train=_checks.integer("n_train", n_train, lo=1, hi=data.X_train.shape[0]),
                   n_canaries=_checks.integer("n_canaries", n_canaries, lo=2, hi=1_000_000),
                   n_models=k, n_null=_checks.integer("n_null", n_null, lo=1, hi=100_000), target_fprs=fprs,
                   clip=_checks.scalar("clip", clip, lo=0.0, lo_open=True),
                   lr=_checks.scalar("lr", lr, lo=0.0, lo_open=True),
                   delta=_checks.scalar("delta", delta, lo=0.0, hi=1.0, hi_open=True),
                   level=_checks.scalar("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True),
                   seed=_checks.integer("seed", seed, lo=0))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["target_fprs"] = list(self.target_fprs)
        return d


def _setup(data, s: AuditSetting):
    """``(Xb, yb, Xc, yc, coins, classes, child seeds, X_test, y_test)``: the digits used, the canaries, every
    model's coins, and the test digits."""
    ss = np.random.SeedSequence(s.seed)
    children = ss.spawn(1 + s.n_models + s.n_null)
    g = np.random.default_rng(children[0])
    base = g.permutation(data.X_train.shape[0])[:s.n_train]
    classes = int(max(data.y_train.max(), data.y_test.max())) + 1
    Xc, yc = noise_canaries(s.n_canaries, data.X_train.shape[1], classes, rng=g)
    coins = g.random((s.n_models + s.n_null, s.n_canaries)) < 0.5
    return (data.X_train[base], data.y_train[base], Xc, yc, coins, classes, children[1:], data.X_test, data.y_test)


def _train_one(i, s: AuditSetting, parts):
    """Record of model ``i`` (models ``n_models`` and above are the null models: no canary, coins kept)."""
    Xb, yb, Xc, yc, coins, classes, seeds, Xt, yt = parts
    include = coins[i] if i < s.n_models else np.zeros(s.n_canaries, bool)
    denom = s.q * (s.n_train + s.n_canaries / 2.0)
    W, _ = dpsgd_softmax(np.vstack([Xb, Xc[include]]), np.concatenate([yb, yc[include]]), q=s.q, sigma=s.sigma,
                         epochs=s.epochs, clip=s.clip, lr=s.lr, batch_size=denom, classes=classes,
                         rng=np.random.default_rng(seeds[i]))
    phi = logit_confidence(W, Xc, yc)
    return {"model": int(i), "coins": [int(c) for c in coins[i]], "phi": [float(v) for v in phi],
            "accuracy": accuracy(W, Xt, yt)}


def _train_chunk(idx, s, parts):
    return [_train_one(i, s, parts) for i in idx]


def train_records(data, setting: AuditSetting, *, models=None, n_jobs=1):
    """Records of the given ``models`` (default all ``n_models + n_null``), trained through joblib with ``n_jobs``
    workers (in a few chunks per worker: one model trains in milliseconds); each record depends only on
    ``(setting, model)``."""
    import joblib

    total = setting.n_models + setting.n_null
    idx = list(range(total)) if models is None else [_checks.integer("models", i, lo=0, hi=total - 1) for i in models]
    nj = _checks.integer("n_jobs", n_jobs, lo=-64, hi=1024)
    if nj == 0:
        raise ValueError("n_jobs must be a positive number of workers, or negative (all cores but |n_jobs| - 1)")
    parts = _setup(data, setting)
    if nj == 1 or len(idx) < 2:
        return _train_chunk(idx, setting, parts)
    workers = joblib.effective_n_jobs(nj)
    chunks = [c.tolist() for c in np.array_split(np.array(idx), min(len(idx), 4 * workers)) if c.size]
    out = joblib.Parallel(n_jobs=nj)(joblib.delayed(_train_chunk)(c, setting, parts) for c in chunks)
    return [r for part in out for r in part]


def shard_lines(setting: AuditSetting, shard, *, n_jobs=1, data=None):
    """JSON lines of shard ``shard = (i, n)``: the header (the setting), then the records of the models with index
    ``i mod n``."""
    i, n = shard
    n = _checks.integer("shard", n, lo=1, hi=100_000)
    i = _checks.integer("shard", i, lo=0, hi=n - 1)
    data = load_digits() if data is None else data
    models = range(i, setting.n_models + setting.n_null, n)
    recs = train_records(data, setting, models=models, n_jobs=n_jobs)
    yield json.dumps({"setting": setting.to_dict(), "shard": [i, n]})
    for r in recs:
        yield json.dumps(r)


def merge_records(lines):
    """``(setting, records)`` from the JSON lines of one or more shards (any order); raises ``ValueError`` if
    the shards disagree on the setting or a model is missing or repeated."""
    setting, records, seen = None, [], set()
    for no, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {no}: not JSON ({exc.msg})") from None
        if "setting" in obj:
            st = dict(obj["setting"])
            st["target_fprs"] = tuple(st["target_fprs"])
            try:
                s = AuditSetting(**st)
            except TypeError:
                raise ValueError(f"line {no}: not a dpmia audit shard header") from None
            if setting is not None and s != setting:
                raise ValueError(f"line {no}: this shard was trained with another setting than the first one")
            setting = s
            continue
        if not {"model", "coins", "phi", "accuracy"} <= obj.keys():
            raise ValueError(f"line {no}: not a model record (needs model, coins, phi, accuracy)")
        if obj["model"] in seen:
            raise ValueError(f"line {no}: model {obj['model']} appears twice")
        seen.add(obj["model"])
        records.append(obj)
    if setting is None:
        raise ValueError("no shard header found: the lines do not come from `dpmia audit --digits --shard`")
    return setting, records
