r"""Small DP-SGD models in numpy, on data shipped inside a PyPI package (scikit-learn's digits).

The offline substitute for the CIFAR-10/MNIST experiments of Mahloujifar et al. (Fig. 2): the
privacy side (the advantage bound) depends only on :math:`(q, \sigma, T)`, so it is exact for any
data; the utility side is measured here on the 1 797 8x8 digits that ship with scikit-learn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _checks
from .attacks import GameResult, empirical_roc, heldout_threshold_game

__all__ = ["Digits", "load_digits", "steps_for_epochs", "dpsgd_softmax", "predict_proba", "accuracy",
           "example_losses", "loss_threshold_attack", "noise_canaries", "CanaryAudit", "canary_audit"]


@dataclass(frozen=True)
class Digits:
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def load_digits(*, test_fraction=0.2, seed=0) -> Digits:
    """scikit-learn's bundled digits, pixels scaled to [0, 1] plus a bias feature, stratified split."""
    from sklearn.datasets import load_digits as _ld

    frac = _checks.real("test_fraction", test_fraction, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    rng = np.random.default_rng(_checks.integer("seed", seed, lo=0))
    data = _ld()
    X = np.hstack([data.data / 16.0, np.ones((data.data.shape[0], 1))])
    y = data.target.astype(int)
    test = np.zeros(y.size, bool)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        test[idx[: int(round(frac * idx.size))]] = True
    return Digits(X[~test], y[~test], X[test], y[test])


def steps_for_epochs(q, epochs) -> int:
    r"""Number of DP-SGD steps for ``epochs`` passes at Poisson rate ``q``: :math:`T=\lfloor E/q\rfloor` (at least 1).

    One epoch is :math:`1/q` steps in expectation. A relative slack of :math:`10^{-9}` absorbs the
    rounding of ``E/q`` in binary (``5 / 0.01`` is 499.99999999999994 in floating point), so
    :math:`E/q` within :math:`10^{-9}` of an integer counts as that integer.
    """
    qq = _checks.real("q", q, lo=0.0, hi=1.0, lo_open=True)
    ep = _checks.real("epochs", epochs, lo=0.0, lo_open=True)
    ratio = ep / qq
    if not np.isfinite(ratio) or ratio > 1e15:
        raise ValueError(f"epochs / q must be at most 1e15 steps, got epochs={epochs!r}, q={q!r}")
    return max(1, int(np.floor(ratio * (1.0 + 1e-9))))


def _matrix(name, value, cols=None):
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real 2-d array") from exc
    _checks.real(name, a)                      # finite, no NaN
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array, got shape {a.shape}")
    if cols is not None and a.shape[1] != cols:
        raise ValueError(f"{name} must have {cols} columns, got shape {a.shape}")
    return a


def _labels(name, y, n):
    """Integer class labels 0, 1, ... (integral floats accepted; 2.7 is not a label)."""
    arr = np.asarray(y)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold integer class labels, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"{name} must be a 1-d array of {n} labels (one per row), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative integer class labels, "
                         f"got e.g. {arr[(arr != np.round(arr)) | (arr < 0)][:1]}")
    return arr.astype(int)


def predict_proba(W, X):
    """Softmax probabilities of the linear model ``X @ W`` (``W`` of shape (features, classes), ``X`` of shape
    (n, features))."""
    W = _matrix("W", W)
    X = _matrix("X", X, cols=W.shape[0])
    z = X @ W
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def accuracy(W, X, y) -> float:
    """Share of rows of ``X`` whose most probable class under ``X @ W`` is the label ``y``."""
    W = _matrix("W", W)
    X = _matrix("X", X, cols=W.shape[0])
    yy = _labels("y", y, X.shape[0])
    return float(np.mean(np.argmax(X @ W, axis=1) == yy))


def dpsgd_softmax(X, y, *, q, sigma, epochs, clip=1.0, lr=2.0, batch_size=None, classes=None, rng=None, seed=None):
    r"""Train softmax regression with DP-SGD (Abadi et al. 2016). Returns ``(W, steps)``.

    Each of :math:`T = \lfloor\text{epochs}/q\rfloor` steps (:func:`steps_for_epochs`) samples every example
    independently with probability :math:`q` (Poisson), clips each per-example gradient
    :math:`(p_i - e_{y_i})\otimes x_i` to Frobenius norm ``clip`` (its norm is
    :math:`\|p_i - e_{y_i}\|\,\|x_i\|`, so clipping is one rescaling), sums, adds
    :math:`\mathcal N(0, (\sigma\,\mathrm{clip})^2)` to every coordinate, divides by ``batch_size``
    (default: the expected batch size :math:`qN`) and takes a step of size ``lr``. Privacy: :math:`T`
    SGM steps with rate :math:`q` and noise multiplier :math:`\sigma` (add/remove), so
    :func:`dpmia.sgm.advantage_bound` applies. Under add/remove the dataset size :math:`N` itself
    depends on membership; pass a fixed ``batch_size`` when the guarantee must hold exactly for the
    released weights (the default divisor :math:`qN` leaks :math:`N`, as in most DP-SGD code).
    ``classes``: number of classes (default: the largest label plus one), so that models trained on
    subsets that miss a label still have a column for it.
    """
    X = _matrix("X", X)
    y = _labels("y", y, X.shape[0])
    qq = _checks.real("q", q, lo=0.0, hi=1.0, lo_open=True)
    ss = _checks.nonnegative("sigma", sigma)
    ep = _checks.real("epochs", epochs, lo=0.0, lo_open=True)
    c = _checks.positive("clip", clip)
    eta = _checks.positive("lr", lr)
    g = _checks.generator(rng, seed)
    n, d = X.shape
    denom = qq * n if batch_size is None else float(_checks.positive("batch_size", batch_size))
    k = int(y.max()) + 1 if classes is None else _checks.integer("classes", classes, lo=int(y.max()) + 1)
    T = steps_for_epochs(qq, ep)
    W = np.zeros((d, k))
    Y = np.eye(k)[y]
    xnorm = np.linalg.norm(X, axis=1)
    for _ in range(T):
        batch = np.flatnonzero(g.random(n) < qq)
        grad = np.zeros((d, k))
        if batch.size:
            R = predict_proba(W, X[batch]) - Y[batch]
            norms = np.linalg.norm(R, axis=1) * xnorm[batch]
            scale = np.minimum(1.0, c / np.maximum(norms, 1e-300))
            grad = X[batch].T @ (R * scale[:, None])
        if ss > 0:
            grad = grad + ss * c * g.standard_normal((d, k))
        W -= eta * grad / denom
    return W, T


def example_losses(W, X, y):
    r"""Cross-entropy loss :math:`-\log p_W(y_i\mid x_i)` of every row, softmax model ``X @ W``."""
    p = predict_proba(W, X)
    yy = _labels("y", y, p.shape[0])
    if yy.max(initial=0) >= p.shape[1]:
        raise ValueError(f"labels must be below the number of classes of W ({p.shape[1]}), got {yy.max()}")
    return -np.log(np.maximum(p[np.arange(yy.size), yy], 1e-300))


def loss_threshold_attack(W, X_members, y_members, X_nonmembers, y_nonmembers):
    r"""Yeom et al.'s loss-threshold attack with the threshold chosen in hindsight. Returns ``(advantage, index)``.

    The advantage is :math:`\max_\tau [\Pr(\text{loss}_{in} \le \tau) - \Pr(\text{loss}_{out} \le \tau)]`
    on the same examples that chose :math:`\tau`: an optimistic, biased estimate (pure noise scores
    about :math:`1/\sqrt{n}`). For a measurement use :func:`canary_audit`, which chooses the threshold
    on held-out examples and reports a null baseline and confidence intervals.
    """
    li = example_losses(W, X_members, y_members)
    lo = example_losses(W, X_nonmembers, y_nonmembers)
    fpr, tpr = empirical_roc(-li, -lo)
    i = int(np.argmax(tpr - fpr))
    return float(tpr[i] - fpr[i]), i


def noise_canaries(n, features, classes, *, rng=None, seed=None):
    r"""``n`` planted canaries: uniform random pixels in [0, 1] (plus the bias feature 1) with uniform random labels.

    Out-of-distribution points with arbitrary labels are what a model must memorise to fit, so they
    leak membership far more than typical examples (the "canary" of Carlini et al. 2019 and of
    DP-SGD audits such as Jagielski et al. 2020). Returns ``(X, y)`` of shapes (n, features) and (n,).
    """
    n = _checks.integer("n", n, lo=1)
    features = _checks.integer("features", features, lo=2)
    classes = _checks.integer("classes", classes, lo=2)
    g = _checks.generator(rng, seed)
    X = np.hstack([g.random((n, features - 1)), np.ones((n, 1))])
    return X, g.integers(0, classes, n)


@dataclass(frozen=True)
class CanaryAudit:
    """Outcome of :func:`canary_audit`: the attack on the trained models and on models that never saw a
    canary (null baseline), pooled over runs, with the advantage of each run; the number of DP-SGD
    steps and the mean test accuracy."""

    attack: GameResult
    null: GameResult
    steps: int
    accuracy: float
    runs: int
    run_advantages: tuple
    null_run_advantages: tuple

    def run_interval(self, level=0.95, *, null=False):
        r"""Student-t interval for the mean advantage from the run-level advantages (needs ``runs`` >= 2).

        Canaries of one run share the model and the threshold, so the pooled Clopper-Pearson interval
        of ``attack`` treats dependent decisions as independent; runs are independent.
        """
        from scipy import stats

        lv = _checks.real("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        v = np.asarray(self.null_run_advantages if null else self.run_advantages, float)
        if v.size < 2:
            raise ValueError("run_interval needs runs >= 2")
        half = stats.t.ppf(0.5 + lv / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
        return float(v.mean() - half), float(v.mean() + half)


def _pool(games, level):
    return GameResult(sum(g.n_in for g in games), sum(g.n_out for g in games),
                      sum(g.true_positives for g in games), sum(g.false_positives for g in games), level)


def canary_audit(data: Digits, *, n_train, n_canaries, q, sigma, epochs, runs=1, clip=1.0, lr=2.0,
                 level=0.95, seed=0) -> CanaryAudit:
    r"""Loss-threshold membership audit of :func:`dpsgd_softmax` with planted canaries and a null baseline.

    Each of ``runs`` independent runs draws ``n_train`` training digits and ``2 * n_canaries``
    :func:`noise_canaries`. Every canary is a member (put in the training set) by its own fair coin,
    independently of the others, and is assigned by another independent coin to the calibration or
    the evaluation half. The model is trained, every canary is scored by its loss, the threshold
    that maximises TPR - FPR on the calibration half is chosen, and "member iff loss
    :math:`\le\tau`" is scored on the evaluation half (:func:`dpmia.attacks.heldout_threshold_game`).
    The *null baseline* repeats the procedure, with the same coins, on a model trained on the
    ``n_train`` digits alone: its expected advantage is 0. Counts are pooled over runs
    (Clopper-Pearson intervals at ``level``); :meth:`CanaryAudit.run_interval` gives a run-level interval.

    Why Theorem 6 (Mahloujifar et al.) bounds it: given the other canaries' coins, adding or removing
    one evaluated canary is an add/remove neighbour, and the update divides by the fixed constant
    :math:`q\,(n_{\rm train} + n_{\rm canaries})` (the expected batch size), so the weights are
    :math:`T` SGM steps for that canary, :math:`T` = :func:`steps_for_epochs` of ``(q, epochs)``. The
    attack is a post-processing of the weights and of coins independent of that canary's, so its
    expected advantage on each evaluated canary is at most ``sgm.advantage_bound(q, sigma, T)``.
    """
    if not isinstance(data, Digits):
        raise TypeError(f"data must be a dpmia.learning.Digits, got {type(data).__name__}")
    n_avail = data.X_train.shape[0]
    n_train = _checks.integer("n_train", n_train, lo=1, hi=n_avail)
    m = _checks.integer("n_canaries", n_canaries, lo=2)
    runs = _checks.integer("runs", runs, lo=1)
    _checks.real("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    steps = steps_for_epochs(q, epochs)
    denom = float(q) * (n_train + m)
    classes = int(max(data.y_train.max(), data.y_test.max())) + 1
    games, nulls, accs = [], [], []
    for child in np.random.SeedSequence(_checks.integer("seed", seed, lo=0)).spawn(runs):
        g = np.random.default_rng(child)
        base = g.permutation(n_avail)[:n_train]
        Xc, yc = noise_canaries(2 * m, data.X_train.shape[1], classes, rng=g)
        # independent fair coins; redrawn in the (vanishingly rare) case a half lacks a member or non-member
        while True:
            member, calibrate = g.random(2 * m) < 0.5, g.random(2 * m) < 0.5
            if all(np.any(h & member) and np.any(h & ~member) for h in (calibrate, ~calibrate)):
                break
        Xb, yb = data.X_train[base], data.y_train[base]
        W, _ = dpsgd_softmax(np.vstack([Xb, Xc[member]]), np.concatenate([yb, yc[member]]),
                             q=q, sigma=sigma, epochs=epochs, clip=clip, lr=lr, batch_size=denom, rng=g)
        W0, _ = dpsgd_softmax(Xb, yb, q=q, sigma=sigma, epochs=epochs, clip=clip, lr=lr, batch_size=denom, rng=g)
        accs.append(accuracy(W, data.X_test, data.y_test))
        games.append(heldout_threshold_game(-example_losses(W, Xc, yc), member, calibrate, level=level))
        nulls.append(heldout_threshold_game(-example_losses(W0, Xc, yc), member, calibrate, level=level))
    return CanaryAudit(_pool(games, level), _pool(nulls, level), steps, float(np.mean(accs)), runs,
                       tuple(float(x.advantage) for x in games), tuple(float(x.advantage) for x in nulls))
