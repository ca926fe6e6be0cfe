r"""Small DP-SGD models in numpy, on data shipped inside a PyPI package (scikit-learn's digits).

The offline substitute for the CIFAR-10/MNIST experiments of Mahloujifar et al. (Fig. 2): the
privacy side (the advantage bound) depends only on :math:`(q, \sigma, T)`, so it is exact for any
data; the utility side is measured here on the 1 797 8x8 digits that ship with scikit-learn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _checks

__all__ = ["Digits", "load_digits", "dpsgd_softmax", "predict_proba", "accuracy", "loss_threshold_attack"]


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
        raise ValueError(f"{name} must hold non-negative integer class labels, got e.g. {arr[(arr != np.round(arr)) | (arr < 0)][:1]}")
    return arr.astype(int)


def predict_proba(W, X):
    """Softmax probabilities of the linear model ``X @ W`` (``W`` of shape (features, classes), ``X`` of shape (n, features))."""
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


def dpsgd_softmax(X, y, *, q, sigma, epochs, clip=1.0, lr=2.0, rng=None, seed=None):
    r"""Train softmax regression with DP-SGD (Abadi et al. 2016). Returns ``(W, steps)``.

    Each of :math:`T = \mathrm{round}(\text{epochs}/q)` steps samples every example independently
    with probability :math:`q` (Poisson), clips each per-example gradient
    :math:`(p_i - e_{y_i})\otimes x_i` to Frobenius norm ``clip`` (its norm is
    :math:`\|p_i - e_{y_i}\|\,\|x_i\|`, so clipping is one rescaling), sums, adds
    :math:`\mathcal N(0, (\sigma\,\mathrm{clip})^2)` to every coordinate, divides by the expected batch
    size :math:`qN` and takes a step of size ``lr``. Privacy: :math:`T` SGM steps with rate :math:`q` and
    noise multiplier :math:`\sigma` (add/remove), so :func:`dpmia.sgm.advantage_bound` applies.
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
    k = int(y.max()) + 1
    T = max(1, int(round(ep / qq)))
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
        W -= eta * grad / (qq * n)
    return W, T


def loss_threshold_attack(W, X_members, y_members, X_nonmembers, y_nonmembers):
    r"""Yeom et al.'s loss-threshold attack: "member iff the loss is small". Returns ``(advantage, threshold)``.

    The advantage is :math:`\max_\tau [\Pr(\text{loss}_{in} \le \tau) - \Pr(\text{loss}_{out} \le \tau)]`,
    the best threshold chosen with hindsight (an optimistic estimate for the attacker; the empirical
    ROC of :func:`dpmia.attacks.empirical_roc` gives the whole curve).
    """
    from .attacks import empirical_roc

    pm, pn = predict_proba(W, X_members), predict_proba(W, X_nonmembers)
    ym = _labels("y_members", y_members, pm.shape[0])
    yn = _labels("y_nonmembers", y_nonmembers, pn.shape[0])
    if ym.max(initial=0) >= pm.shape[1] or yn.max(initial=0) >= pn.shape[1]:
        raise ValueError(f"labels must be below the number of classes of W ({pm.shape[1]})")
    li = -np.log(np.maximum(pm[np.arange(ym.size), ym], 1e-300))
    lo = -np.log(np.maximum(pn[np.arange(yn.size), yn], 1e-300))
    fpr, tpr = empirical_roc(-li, -lo)
    i = int(np.argmax(tpr - fpr))
    return float(tpr[i] - fpr[i]), i
