r"""A one-run audit of DP-SGD on the bundled digits (Steinke, Nasr and Jagielski 2023): one model, many canaries.

``n_canaries`` planted canaries (random pixels, random labels: :func:`dpmia.learning.noise_canaries`) are each
included in the training set by its own fair coin; one model is trained with DP-SGD (Poisson rate ``q``, the
update divided by the fixed expected batch size, so each canary is an add/remove neighbour); the auditor scores
every canary by the model's logit confidence on its label and guesses "member" for the highest scores. The
ε lower bound is :func:`~dpmia.audit.audit_scores`' one-run analysis: the best over a fixed grid of numbers of
guesses, all at one joint ``level``. It needs no shadow model and no second training run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import _checks
from ..learning import Digits, accuracy, dpsgd_softmax, noise_canaries, steps_for_epochs
from ._scores import audit_scores
from ._shards import logit_confidence

__all__ = ["one_run_audit", "OneRunAudit"]


@dataclass(frozen=True)
class OneRunAudit:
    """Outcome of :func:`one_run_audit`: the ε lower bound at ``level`` (one-run analysis), the guesses behind it,
    the model's test accuracy, and the canaries' ``scores`` and ``members``."""

    sigma: float
    q: float
    steps: int
    accuracy: float
    n_canaries: int
    n_members: int
    epsilon_lower: float
    n_guesses: int
    n_correct: int
    delta: float
    level: float
    scores: np.ndarray = field(repr=False)
    members: np.ndarray = field(repr=False)


def one_run_audit(data: Digits, *, sigma, q, epochs, n_canaries=1000, n_train=None, clip=1.0, lr=4.0,
                  delta=1e-5, level=0.95, seed=0) -> OneRunAudit:
    """One DP-SGD softmax model on digits with ``n_canaries`` canaries in by fair coins, and its one-run ε lower
    bound (module docstring). ``n_train`` digits (default all of the training split).

    Examples
    --------
    >>> from dpmia import audit, learning
    >>> a = audit.one_run_audit(learning.load_digits(), sigma=1.0, q=0.1, epochs=5, n_canaries=200)
    >>> a.epsilon_lower <= 4.0           # far below the run's certified eps(1e-5) (about 5.1)
    True
    """
    if not isinstance(data, Digits):
        raise TypeError(f"data must be a dpmia.learning.Digits, got {type(data).__name__}")
    ss = _checks.scalar("sigma", sigma, lo=0.0)
    qq = _checks.scalar("q", q, lo=0.0, hi=1.0, lo_open=True)
    ep = _checks.scalar("epochs", epochs, lo=0.0, lo_open=True, hi=1e6)
    m = _checks.integer("n_canaries", n_canaries, lo=2, hi=1_000_000)
    nt = data.X_train.shape[0] if n_train is None else _checks.integer("n_train", n_train, lo=1,
                                                                        hi=data.X_train.shape[0])
    children = np.random.SeedSequence(_checks.integer("seed", seed, lo=0)).spawn(2)
    g = np.random.default_rng(children[0])
    base = g.permutation(data.X_train.shape[0])[:nt]
    classes = int(max(data.y_train.max(), data.y_test.max())) + 1
    Xc, yc = noise_canaries(m, data.X_train.shape[1], classes, rng=g)
    members = g.random(m) < 0.5
    W, steps = dpsgd_softmax(np.vstack([data.X_train[base], Xc[members]]),
                             np.concatenate([data.y_train[base], yc[members]]), q=qq, sigma=ss, epochs=ep,
                             clip=clip, lr=lr, batch_size=qq * (nt + m / 2.0), classes=classes,
                             rng=np.random.default_rng(children[1]))
    scores = logit_confidence(W, Xc, yc)
    res = audit_scores(scores, members, fprs=(), delta=delta, level=level, method="one-run")
    return OneRunAudit(ss, qq, steps_for_epochs(qq, ep), accuracy(W, data.X_test, data.y_test), m,
                       int(members.sum()), res.epsilon_lower, res.one_run["n_guesses"], res.one_run["n_correct"],
                       res.delta, res.level, scores, members)
