r"""An empirical membership audit of DP-SGD with shadow models: the loss-threshold attack and a
likelihood-ratio attack (LiRA, Carlini et al. 2022), each with a null baseline, thresholds chosen on
held-out models, Clopper-Pearson intervals, and the ε lower bound the attack certifies.

The protocol of :func:`lira_audit`:

1. ``n_canaries`` planted canaries (:func:`dpmia.learning.noise_canaries`) and ``n_train`` digits.
   ``n_models`` models are trained with :func:`dpmia.learning.dpsgd_softmax` on the digits plus each
   canary independently with probability ½ (a fair coin per model and canary), the update divided by
   the fixed expected batch size, so each canary's inclusion is an add/remove neighbour and Theorem 6
   (Mahloujifar et al.) bounds any attack on it by ``sgm.advantage_bound(q, sigma, T)``.
2. A score per (model, canary): the model's logit confidence on the canary's label,
   :math:`\phi = \log p_y - \log(1 - p_y)` (LiRA's scaling, nearly Gaussian).
   *Loss threshold*: the score itself. *LiRA*: :math:`\log \mathcal N(\phi; \mu_{in}, s_{in}^2) -
   \log \mathcal N(\phi; \mu_{out}, s_{out}^2)`, with per-canary means over the *other* models that
   did / did not train on it and pooled variances (the fixed-variance LiRA, for few shadows).
3. The first half of the models chooses each attack's threshold (the largest FPR at most the target
   on their pairs); the second half is scored: TPR and FPR with Clopper-Pearson intervals.
   The *null baseline* scores ``n_null`` models trained on the digits alone (no canary), with fresh
   coins, by the same attack and threshold: its expected TPR equals its FPR.
4. Certified ε lower bound at ``level``: an (ε, δ)-DP mechanism has TPR ≤ e^ε FPR + δ and
   1 − FPR ≤ e^ε (1 − TPR) + δ, so with both intervals at level (1 + level)/2 (a union bound),
   ε ≥ max(ln((TPR_lo − δ)/FPR_hi), ln((1 − FPR_hi − δ)/(1 − TPR_lo))).

Caveat, as in every such audit: the (model, canary) pairs of one model share that model, so the
pooled intervals treat dependent decisions as independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from . import _checks
from .attacks import GameResult, clopper_pearson
from .learning import Digits, accuracy, dpsgd_softmax, noise_canaries, steps_for_epochs

__all__ = ["lira_audit", "LiraAudit", "AttackOutcome", "epsilon_lower_bound", "logit_confidence"]


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


def epsilon_lower_bound(game: GameResult, delta: float) -> float:
    r"""ε certified by an attack's outcome: the largest ε an (ε, δ)-DP mechanism could not exceed given
    the Clopper-Pearson intervals of its TPR and FPR (each at level (1 + game.level)/2); 0 if none."""
    if not isinstance(game, GameResult):
        raise TypeError(f"game must be a GameResult (from dpmia.attacks), got {type(game).__name__}")
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, hi_open=True)
    lv = (1.0 + game.level) / 2.0
    t_lo, _ = clopper_pearson(game.true_positives, game.n_in, lv)
    _, f_hi = clopper_pearson(game.false_positives, game.n_out, lv)
    best = 0.0
    if t_lo - d > 0 and f_hi > 0:
        best = max(best, math.log((t_lo - d) / f_hi))
    if 1.0 - f_hi - d > 0 and t_lo < 1.0:
        best = max(best, math.log((1.0 - f_hi - d) / (1.0 - t_lo)))
    return best


@dataclass(frozen=True)
class AttackOutcome:
    """One attack at one target FPR: the held-out game, its null baseline and the ε it certifies."""

    attack: str
    target_fpr: float
    game: GameResult
    null: GameResult
    epsilon_lower: float


@dataclass(frozen=True)
class LiraAudit:
    """Outcome of :func:`lira_audit` at one noise multiplier.

    ``outcomes[(attack, target_fpr)]`` for attack "loss" or "lira"; ``scores[attack]`` the evaluation
    half's ``(scores, member)`` arrays (for ROC curves); ``steps`` the DP-SGD steps per model,
    ``accuracy`` the mean test accuracy of the models with canaries."""

    sigma: float
    q: float
    steps: int
    accuracy: float
    n_models: int
    outcomes: dict
    scores: dict


def _threshold(scores, member, fpr):
    """Smallest threshold whose FPR on (scores, member) is at most ``fpr`` ("member" iff score >= threshold)."""
    out = np.sort(scores[~member])[::-1]
    k = int(math.floor(fpr * out.size))          # at most k non-members at or above the threshold
    if k >= out.size:
        return -np.inf
    return float(np.nextafter(out[k], np.inf))   # strictly above the (k+1)-th largest


def _game(scores, member, thr, level):
    return GameResult(int(member.sum()), int((~member).sum()), int(np.sum(scores[member] >= thr)),
                      int(np.sum(scores[~member] >= thr)), level)


def _lira_scores(phi, coins, phi_target):
    """LiRA log-likelihood ratios of ``phi_target`` (models x canaries) against the shadows ``phi``/``coins``
    (other models x canaries): per-canary means, pooled variances."""
    cin, cout = coins, ~coins
    n_in, n_out = cin.sum(0), cout.sum(0)
    if np.any(n_in == 0) or np.any(n_out == 0):
        raise ValueError("every canary needs shadow models with and without it: use more models")
    mu_in = np.where(cin, phi, 0.0).sum(0) / n_in
    mu_out = np.where(cout, phi, 0.0).sum(0) / n_out
    var_in = max(float(np.sum(np.where(cin, (phi - mu_in) ** 2, 0.0)) / max(cin.sum() - phi.shape[1], 1)), 1e-6)
    var_out = max(float(np.sum(np.where(cout, (phi - mu_out) ** 2, 0.0)) / max(cout.sum() - phi.shape[1], 1)), 1e-6)
    return (-0.5 * (phi_target - mu_in) ** 2 / var_in - 0.5 * math.log(var_in)
            + 0.5 * (phi_target - mu_out) ** 2 / var_out + 0.5 * math.log(var_out))


def lira_audit(data: Digits, *, sigma, q, epochs, n_train=200, n_canaries=64, n_models=16, n_null=8,
               target_fprs=(0.01, 0.1), clip=1.0, lr=2.0, delta=1e-5, level=0.95, seed=0) -> LiraAudit:
    """Loss-threshold and LiRA audits of DP-SGD softmax regression on digits; see the module docstring.

    ``n_models`` (even, at least 4) models with canaries, half choosing thresholds and half scored
    (each scored model's LiRA uses all *other* models as shadows); ``n_null`` models without canaries.
    """
    if not isinstance(data, Digits):
        raise TypeError(f"data must be a dpmia.learning.Digits, got {type(data).__name__}")
    ss = float(_checks.nonnegative("sigma", sigma))
    qq = _checks.scalar("q", q, lo=0.0, hi=1.0, lo_open=True)
    n_train = _checks.integer("n_train", n_train, lo=1, hi=data.X_train.shape[0])
    m = _checks.integer("n_canaries", n_canaries, lo=2)
    k = _checks.integer("n_models", n_models, lo=4)
    if k % 2:
        raise ValueError(f"n_models must be even (half choose thresholds, half are scored), got {k}")
    k0 = _checks.integer("n_null", n_null, lo=1)
    fprs = [_checks.scalar("target_fprs", f, lo=0.0, hi=1.0, lo_open=True, hi_open=True) for f in target_fprs]
    lv = _checks.scalar("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    steps = steps_for_epochs(qq, epochs)
    g = np.random.default_rng(_checks.integer("seed", seed, lo=0))
    base = g.permutation(data.X_train.shape[0])[:n_train]
    Xb, yb = data.X_train[base], data.y_train[base]
    classes = int(max(data.y_train.max(), data.y_test.max())) + 1
    Xc, yc = noise_canaries(m, data.X_train.shape[1], classes, rng=g)
    denom = qq * (n_train + m / 2.0)

    def train(include):
        W, _ = dpsgd_softmax(np.vstack([Xb, Xc[include]]), np.concatenate([yb, yc[include]]), q=qq, sigma=ss,
                             epochs=epochs, clip=clip, lr=lr, batch_size=denom, classes=classes, rng=g)
        return W

    coins = g.random((k, m)) < 0.5
    phi = np.empty((k, m))
    accs = []
    for i in range(k):
        W = train(coins[i])
        phi[i] = logit_confidence(W, Xc, yc)
        accs.append(accuracy(W, data.X_test, data.y_test))
    null_coins = g.random((k0, m)) < 0.5
    phi_null = np.array([logit_confidence(train(np.zeros(m, bool)), Xc, yc) for _ in range(k0)])

    lira = np.array([_lira_scores(np.delete(phi, i, 0), np.delete(coins, i, 0), phi[i]) for i in range(k)])
    lira_null = _lira_scores(phi, coins, phi_null)
    half = k // 2
    outcomes, scores = {}, {}
    for name, s, s0 in (("loss", phi, phi_null), ("lira", lira, lira_null)):
        cal_s, cal_m = s[:half].ravel(), coins[:half].ravel()
        ev_s, ev_m = s[half:].ravel(), coins[half:].ravel()
        scores[name] = (ev_s, ev_m)
        for f in fprs:
            thr = _threshold(cal_s, cal_m, f)
            game = _game(ev_s, ev_m, thr, lv)
            null = _game(s0.ravel(), null_coins.ravel(), thr, lv)
            outcomes[(name, f)] = AttackOutcome(name, f, game, null, epsilon_lower_bound(game, delta))
    return LiraAudit(ss, qq, steps, float(np.mean(accs)), k, outcomes, scores)
