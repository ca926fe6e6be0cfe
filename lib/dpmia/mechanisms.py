r"""Small mechanisms whose membership posteriors can be computed exactly.

Used to check that the bounds of :mod:`dpmia.bounds` are attained, and to show what they do not
say. Training sets are drawn by independent (Poisson) inclusion from a pool: point :math:`i` is
in :math:`D` with probability :math:`p_i` (Thudi et al., Sec. 3.1). Neighbouring datasets differ
by adding or removing one point.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import special

from . import _checks

__all__ = ["randomized_response_posteriors", "geometric_pmf", "enumerate_datasets",
           "sum_release_posteriors", "joint_nonmember_posterior"]

_MAX_ENUM = 16


def randomized_response_posteriors(eps, prior):
    r"""Exact posteriors of membership after randomized response on the membership bit.

    The mechanism reports :math:`b = \mathbf 1\{x^*\in D\}` with probability
    :math:`e^\varepsilon/(1+e^\varepsilon)` and :math:`1-b` otherwise; it is :math:`\varepsilon`-DP
    under add/remove. Returns ``(Pr(member | report 1), Pr(member | report 0))``, which equal
    Thudi et al.'s :math:`U(\varepsilon,p)` and :math:`L(\varepsilon,p)` exactly: the bounds are tight.
    """
    e = _checks.nonnegative("eps", eps)
    p = _checks.probability("prior", prior)
    e_, p_ = np.broadcast_arrays(np.asarray(e, float), np.asarray(p, float))
    # posteriors as logistic functions of logit(prior) +- eps: exact for any eps (no 0/0 when the
    # report probabilities underflow); prior 0 or 1 stays 0 or 1
    with np.errstate(divide="ignore"):
        lg = special.logit(p_)
    post1 = np.where((p_ > 0) & (p_ < 1), special.expit(lg + e_), p_)
    post0 = np.where((p_ > 0) & (p_ < 1), special.expit(lg - e_), p_)
    return _checks.scalar_or_array(post1, eps, prior), _checks.scalar_or_array(post0, eps, prior)


def geometric_pmf(k, eps, sensitivity=1):
    r"""Two-sided geometric noise :math:`\Pr(K=k) = \frac{1-r}{1+r}\,r^{|k|}`, :math:`r = e^{-\varepsilon/\Delta}`.

    Added to an integer query of sensitivity :math:`\Delta`, it gives :math:`\varepsilon`-DP
    (Ghosh, Roughgarden & Sundararajan 2012). ``k`` integers, ``eps`` > 0, ``sensitivity`` integer >= 1.
    """
    kk = np.asarray(k)
    if not np.issubdtype(kk.dtype, np.integer):
        raise TypeError(f"k must be integer-valued, got dtype {kk.dtype}")
    e = _checks.positive("eps", eps)
    d = _checks.integer("sensitivity", sensitivity, lo=1)
    r = np.exp(-e / d)
    return (1 - r) / (1 + r) * r ** np.abs(kk)


def enumerate_datasets(probs):
    r"""All :math:`2^N` training sets of a pool with inclusion probabilities ``probs``.

    Returns ``(masks, weights)``: ``masks[j]`` is a boolean row (point :math:`i` in dataset
    :math:`j`), ``weights[j] = \prod_{i\in D} p_i \prod_{i\notin D}(1-p_i)``. Limited to
    :math:`N \le 16`; larger pools need the convolution used by :func:`sum_release_posteriors`.
    """
    p = _checks.probability("probs", probs)
    p = np.atleast_1d(p)
    if p.size > _MAX_ENUM:
        raise ValueError(f"probs has {p.size} points; enumeration is limited to N <= {_MAX_ENUM} "
                         "(2^N datasets). Use sum_release_posteriors, which convolves instead.")
    masks = np.array(list(itertools.product([False, True], repeat=p.size)), dtype=bool).reshape(-1, p.size)
    weights = np.prod(np.where(masks, p, 1 - p), axis=1)
    return masks, weights


def _sum_distribution(values, probs):
    """Exact law of sum_{i in D} v_i under independent inclusion, by convolution (integer v_i >= 0)."""
    dist = np.array([1.0])
    for v, p in zip(values, probs):
        new = np.zeros(dist.size + v)
        new[: dist.size] += (1 - p) * dist
        new[v:] += p * dist
        dist = new
    return dist


def _check_pool(values, probs):
    v = np.atleast_1d(np.asarray(values))
    if not np.issubdtype(v.dtype, np.integer):
        raise TypeError(f"values must be integers, got dtype {v.dtype}")
    if np.any(v < 0):
        raise ValueError(f"values must be non-negative integers, got {v.min()}")
    p = np.atleast_1d(_checks.probability("probs", probs))
    if p.shape != v.shape:
        raise ValueError(f"values and probs must have the same length, got {v.size} and {p.size}")
    return v.astype(int), p


def sum_release_posteriors(values, probs, target, eps, *, margin=40):
    r"""Exact :math:`\Pr(x_t \in D \mid Y = y)` for :math:`Y = \sum_{i\in D} v_i + K`, :math:`K` two-sided geometric.

    ``values`` are non-negative integers (the sensitivity is :math:`\Delta = \max_i v_i`), ``probs``
    the inclusion probabilities, ``target`` the index :math:`t`. The mechanism is
    :math:`\varepsilon`-DP (add/remove). Posteriors are computed exactly (sum over all
    datasets, organised as a convolution) for every output :math:`y` within ``margin`` of the
    possible sums. Returns ``(y, posterior)``. Every posterior lies in
    :math:`[L(\varepsilon,p_t), U(\varepsilon,p_t)]` (Thudi et al., Thm 1), and when
    :math:`v_t = \Delta` the extreme outputs attain both ends.
    """
    v, p = _check_pool(values, probs)
    t = _checks.integer("target", target, lo=0, hi=v.size - 1)
    e = _checks.positive("eps", eps)
    k = _checks.integer("margin", margin, lo=0)
    delta = int(v.max()) if v.max() > 0 else 1
    rest = _sum_distribution(np.delete(v, t), np.delete(p, t))
    y = np.arange(-k, rest.size + v[t] + k)
    log_out = _log_likelihood(y, rest, 0, e, delta)
    log_in = _log_likelihood(y, rest, int(v[t]), e, delta)
    return y, _posterior(p[t], log_in - log_out)


def _log_likelihood(y, rest, shift, eps, delta):
    r""":math:`\log\sum_s \mathrm{rest}_s \Pr(K = y - s - \text{shift})` in log space (no underflow for large eps)."""
    s = np.arange(rest.size)
    r_log = -eps / delta
    log_norm = math.log(-math.expm1(r_log)) - math.log1p(math.exp(r_log))
    with np.errstate(divide="ignore"):
        z = np.log(rest)[None, :] + log_norm + r_log * np.abs(y[:, None] - s[None, :] - shift)
    return special.logsumexp(z, axis=1)


def _posterior(prior, log_ratio):
    """Posterior from a prior and log-likelihood ratios (logistic form; prior 0 or 1 stays put)."""
    if prior <= 0.0 or prior >= 1.0:
        return np.full(np.shape(log_ratio), float(prior))
    return special.expit(special.logit(prior) + log_ratio)


def joint_nonmember_posterior(values, probs, targets, eps, *, margin=40):
    r"""Exact :math:`\Pr(\text{no target in } D\mid Y=y)` and the product of the per-target posteriors.

    Same mechanism as :func:`sum_release_posteriors`. Thudi et al. (Sec. 6) replace the joint
    probability by the product of the marginal ones; this returns both, ``(y, joint, product)``,
    so the difference can be seen: inclusions independent *a priori* are not independent given
    the output.
    """
    v, p = _check_pool(values, probs)
    tg = sorted({_checks.integer("targets", x, lo=0, hi=v.size - 1)
                 for x in np.atleast_1d(np.asarray(targets)).tolist()})
    if not tg:
        raise ValueError("targets must name at least one pool index")
    e = _checks.positive("eps", eps)
    k = _checks.integer("margin", margin, lo=0)
    delta = int(v.max()) if v.max() > 0 else 1
    rest_idx = [i for i in range(v.size) if i not in tg]
    rest = _sum_distribution(v[rest_idx], p[rest_idx])
    y = np.arange(-k, rest.size + int(v[tg].sum()) + k)
    terms = []
    for pattern in itertools.product([False, True], repeat=len(tg)):
        w = float(np.prod([p[i] if b else 1 - p[i] for i, b in zip(tg, pattern)]))
        shift = int(sum(v[i] for i, b in zip(tg, pattern) if b))
        with np.errstate(divide="ignore"):
            terms.append(math.log(w) + _log_likelihood(y, rest, shift, e, delta) if w > 0 else np.full(y.size, -np.inf))
    terms = np.array(terms)
    total = special.logsumexp(terms, axis=0)
    joint = np.exp(terms[0] - total)          # the first pattern: no target included
    product = np.ones(y.size)
    for i in tg:
        yi, post = sum_release_posteriors(v, p, i, e, margin=k)
        # align the marginal posterior (computed on its own output grid) with y
        product *= 1 - np.interp(y, yi, post)
    return y, joint, product
