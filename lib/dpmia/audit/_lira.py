r"""A shadow-model membership audit of DP-SGD on the bundled digits: the loss-threshold attack and a
likelihood-ratio attack (LiRA, Carlini et al. 2022), a null baseline, thresholds and shadows from held-out
models, intervals that account for one model's shared training noise, and a one-run ε lower bound — all at one
joint level.

The protocol of :func:`lira_audit`:

1. ``n_canaries`` planted canaries (:func:`dpmia.learning.noise_canaries`) and ``n_train`` digits.
   ``n_models`` models are trained with :func:`dpmia.learning.dpsgd_softmax` on the digits plus each
   canary independently with probability ½ (a fair coin per model and canary), the update divided by
   the fixed expected batch size, so each canary's inclusion is an add/remove neighbour and Theorem 6
   (Mahloujifar et al.) bounds any attack on it by ``sgm.advantage_bound(q, sigma, T)``.
2. A score per (model, canary): the model's logit confidence on the canary's label,
   :math:`\phi = \log p_y - \log(1 - p_y)` (LiRA's scaling, nearly Gaussian).
   *Loss threshold*: the score itself. *LiRA*: :math:`\log \mathcal N(\phi; \mu_{in}, s_{in}^2) -
   \log \mathcal N(\phi; \mu_{out}, s_{out}^2)`, with per-canary means over *shadow* models that did / did not
   train on it and pooled variances (the fixed-variance LiRA, for few shadows); a canary that no shadow trained
   with (or every one did) takes the mean over all canaries on that side.
3. The first half of the models are the shadows: they give LiRA's statistics and choose each attack's threshold
   (the largest FPR at most the target on their pairs; for their own scores LiRA leaves the model out). The second
   half is attacked with those shadows and thresholds only, so its models are independent given the first half:
   TPR and FPR get Korn–Graubard intervals clustered by model (:func:`~dpmia.audit.proportion_interval`).
   The *null baseline* scores ``n_null`` models trained on the digits alone, with fresh coins, by the same attack.
4. ε lower bound: Steinke et al.'s one-run analysis (:func:`~dpmia.audit.one_run_epsilon`) of the attacked
   models taken as one run of ``(n_models / 2) x n_canaries`` canaries, each in by its own coin: valid however
   one model's decisions depend on each other.
5. One level for everything: the intervals of both attacks (attacked and null models) and both bounds hold
   jointly at ``level`` (a union bound over all of them).

Randomness: one ``numpy.random.SeedSequence(seed)`` spawns the streams of the setup (digits, canaries, coins) and
of each model, so the result is bit-identical for any ``n_jobs``; models train through joblib. ``shard=(i, n)``
trains only the models with index ``i mod n`` and returns their records, which :func:`merge_records` turns into
the same audit (see :mod:`dpmia.audit._shards`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import _checks
from ..attacks import GameResult, clopper_pearson
from ..learning import Digits, steps_for_epochs
from ._intervals import epsilon_from_ends
from ._scores import ScoreAudit, _candidates, _threshold, audit_scores
from ._shards import AuditSetting, logit_confidence, train_records

__all__ = ["lira_audit", "LiraAudit", "AttackOutcome", "epsilon_lower_bound", "logit_confidence", "analyse"]


def epsilon_lower_bound(game: GameResult, delta: float) -> float:
    r"""ε certified by one game's outcome: the largest ε an (ε, δ)-DP mechanism could not exceed given the
    Clopper-Pearson intervals of its TPR and FPR (each at level (1 + game.level)/2, so both hold jointly at
    ``game.level`` for independent decisions); 0 if none. For decisions that share a model, use
    :func:`audit_scores` with ``groups``."""
    if not isinstance(game, GameResult):
        raise TypeError(f"game must be a GameResult (from dpmia.attacks), got {type(game).__name__}")
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, hi_open=True)
    lv = (1.0 + game.level) / 2.0
    t_lo, _ = clopper_pearson(game.true_positives, game.n_in, lv)
    _, f_hi = clopper_pearson(game.false_positives, game.n_out, lv)
    return epsilon_from_ends(t_lo, f_hi, d)


@dataclass(frozen=True)
class AttackOutcome:
    """One attack: its audit on the attacked models (``audit``: rows per target FPR with clustered intervals, and
    the one-run ε lower bound) and on the null models (``null``: same thresholds)."""

    attack: str
    audit: ScoreAudit
    null: ScoreAudit

    @property
    def epsilon_lower(self) -> float:
        return self.audit.epsilon_lower


@dataclass(frozen=True)
class LiraAudit:
    """Outcome of :func:`lira_audit` at one noise multiplier.

    ``outcomes[attack]`` for attack "loss" or "lira"; ``scores[attack]`` the attacked half's
    ``(scores, member, model)`` arrays (for ROC curves); ``steps`` the DP-SGD steps per model, ``accuracy`` the
    mean test accuracy of the models with canaries; ``level`` the joint level of every interval and bound."""

    sigma: float
    q: float
    steps: int
    accuracy: float
    n_models: int
    n_canaries: int
    level: float
    outcomes: dict
    scores: dict


def _lira_scores(phi, coins, phi_target):
    """LiRA log-likelihood ratios of ``phi_target`` (models x canaries) against the shadows ``phi``/``coins``
    (shadow models x canaries): per-canary means, pooled variances."""
    cin, cout = coins, ~coins
    n_in, n_out = cin.sum(0), cout.sum(0)
    if not cin.any() or not cout.any():
        raise ValueError("the shadow models need canaries both in and out of training: use more models")
    # a canary that no shadow trained with (or every shadow did) takes the mean over all canaries on that side
    mu_in = np.where(n_in > 0, np.where(cin, phi, 0.0).sum(0) / np.maximum(n_in, 1), float(phi[cin].mean()))
    mu_out = np.where(n_out > 0, np.where(cout, phi, 0.0).sum(0) / np.maximum(n_out, 1), float(phi[cout].mean()))
    var_in = max(float(np.sum(np.where(cin, (phi - mu_in) ** 2, 0.0)) / max(cin.sum() - phi.shape[1], 1)), 1e-6)
    var_out = max(float(np.sum(np.where(cout, (phi - mu_out) ** 2, 0.0)) / max(cout.sum() - phi.shape[1], 1)), 1e-6)
    return (-0.5 * (phi_target - mu_in) ** 2 / var_in - 0.5 * math.log(var_in)
            + 0.5 * (phi_target - mu_out) ** 2 / var_out + 0.5 * math.log(var_out))


def _thresholds(scores, member, fprs):
    """Per target FPR, the smallest threshold whose FPR on ``(scores, member)`` is at most it."""
    return [_threshold(scores[~member], f) for f in fprs]


def _levels(level, n_fprs, n_attacks, n_instances):
    """``(attacked, null)`` levels of each audit_scores call so that all of them hold jointly at ``level``: each of
    the ``n_attacks x (4 n_fprs + J)`` statements (J one-run candidates on ``n_instances``) gets an equal share."""
    j = len(_candidates(n_instances))
    total = n_attacks * (4 * n_fprs + j)
    a = 1.0 - level
    return 1.0 - a * (2 * n_fprs + j) / total, 1.0 - a * (2 * n_fprs) / total


def analyse(setting: AuditSetting, records) -> LiraAudit:
    """The audit of :func:`lira_audit` from the models' records (all of them, from one or several shards)."""
    k, m = setting.n_models, setting.n_canaries
    recs = sorted(records, key=lambda r: r["model"])
    if [r["model"] for r in recs] != list(range(k + setting.n_null)):
        raise ValueError(f"records must hold models 0 ... {k + setting.n_null - 1} once each "
                         f"(got {len(recs)} records): merge every shard")
    phi = np.array([r["phi"] for r in recs[:k]])
    coins = np.array([r["coins"] for r in recs[:k]], dtype=bool)
    phi_null = np.array([r["phi"] for r in recs[k:]])
    null_coins = np.array([r["coins"] for r in recs[k:]], dtype=bool)
    half = k // 2
    sh_phi, sh_coins = phi[:half], coins[:half]
    lira_cal = np.array([_lira_scores(np.delete(sh_phi, i, 0), np.delete(sh_coins, i, 0), sh_phi[i])
                         for i in range(half)])
    lira_ev = _lira_scores(sh_phi, sh_coins, phi[half:])
    lira_null = _lira_scores(sh_phi, sh_coins, phi_null)
    lv_att, lv_null = _levels(setting.level, len(setting.target_fprs), 2, (k - half) * m)
    ev_groups = np.repeat(np.arange(half, k), m)
    null_groups = np.repeat(np.arange(setting.n_null), m)
    outcomes, scores = {}, {}
    for name, cal, ev, s0 in (("loss", sh_phi, phi[half:], phi_null), ("lira", lira_cal, lira_ev, lira_null)):
        thr = _thresholds(cal.ravel(), sh_coins.ravel(), setting.target_fprs)
        att = audit_scores(ev.ravel(), coins[half:].ravel(), groups=ev_groups, fprs=setting.target_fprs,
                           delta=setting.delta, level=lv_att, method="one-run", thresholds=thr)
        null = audit_scores(s0.ravel(), null_coins.ravel(), groups=null_groups if setting.n_null > 1 else None,
                            fprs=setting.target_fprs, delta=setting.delta, level=lv_null, thresholds=thr)
        outcomes[name] = AttackOutcome(name, att, null)
        scores[name] = (ev.ravel(), coins[half:].ravel(), ev_groups)
    return LiraAudit(setting.sigma, setting.q, steps_for_epochs(setting.q, setting.epochs),
                     float(np.mean([r["accuracy"] for r in recs[:k]])), k, m, setting.level, outcomes, scores)


def lira_audit(data: Digits, *, sigma, q, epochs, n_train=200, n_canaries=64, n_models=16, n_null=8,
               target_fprs=(0.01, 0.1), clip=1.0, lr=2.0, delta=1e-5, level=0.95, seed=0, n_jobs=1) -> LiraAudit:
    """Loss-threshold and LiRA audits of DP-SGD softmax regression on digits; see the module docstring.

    ``n_models`` (even, at least 4) models with canaries, half shadows (thresholds and LiRA statistics) and half
    attacked; ``n_null`` models without canaries. ``n_jobs`` trains models in parallel (joblib; the result does
    not depend on it). Every interval and bound of the result holds jointly at ``level``.
    """
    setting = AuditSetting.checked(data, sigma=sigma, q=q, epochs=epochs, n_train=n_train, n_canaries=n_canaries,
                                   n_models=n_models, n_null=n_null, target_fprs=target_fprs, clip=clip, lr=lr,
                                   delta=delta, level=level, seed=seed)
    return analyse(setting, train_records(data, setting, n_jobs=n_jobs))

