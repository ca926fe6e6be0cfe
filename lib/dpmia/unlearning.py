r"""Deletion capacity from DP (Thudi et al., Sec. 6).

A training run on a random subset of a pool of :math:`N` points, each included independently
with probability :math:`p = c/N` (:math:`c` = expected training-set size), is *B-MI unlearnt* for a
set :math:`\hat x^*` of :math:`m` points if :math:`\Pr(\hat x^*\cap D = \emptyset\mid S)\ge B`
(Definition 2). If that already holds, deleting :math:`\hat x^*` needs no retraining. With an
:math:`\varepsilon`-DP (add/remove) trainer,

.. math:: \Pr(\hat x^*\cap D=\emptyset\mid S)\ \ge\ L^m,\qquad
          L = \frac{1}{1 + e^{\varepsilon}\,p/(1-p)}

(group the datasets by their part outside :math:`\hat x^*` and apply DP once per removed
point), so up to :math:`m = \ln B/\ln L` points can be "deleted" for free.

The paper prints :math:`L` with :math:`e^{-\varepsilon}` (Corollary 1's *upper* bound); that
overstates the capacity by about :math:`e^{2\varepsilon}`. Both are available through ``variant``.
The paper's argument also multiplies per-point posteriors as if they were independent given the
output, which is false (see :func:`dpmia.mechanisms.joint_nonmember_posterior`); the bound itself
holds by the grouping argument above.
"""

from __future__ import annotations

import numpy as np

from . import _checks

__all__ = ["nonmember_lower_uniform", "joint_nonmember_lower", "deletion_capacity"]

_VARIANTS = ("corrected", "as_printed")


def _pool(c, n_pool):
    n = _checks.integer("n_pool", n_pool, lo=2)
    cc = _checks.real("c", c, lo=0.0, hi=float(n), lo_open=True, hi_open=True)
    return cc, n


def nonmember_lower_uniform(eps, c, n_pool, *, variant="corrected"):
    r""":math:`L(c) = 1/(1 + e^{\pm\varepsilon}\,p/(1-p))` with :math:`p = c/N`.

    ``variant="corrected"`` uses :math:`e^{+\varepsilon}` (Corollary 1's lower bound, the one the
    argument needs); ``"as_printed"`` uses the paper's :math:`e^{-\varepsilon}`.
    ``eps`` in [0, inf), ``c`` in (0, n_pool), ``n_pool`` an integer >= 2.
    """
    e = _checks.nonnegative("eps", eps)
    cc, n = _pool(c, n_pool)
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {_VARIANTS}, got {variant!r}")
    return _checks.scalar_or_array(np.exp(_log_L(e, cc, n, variant)), eps, c)


def _log_L(e, c, n, variant):
    r""":math:`\log L(c) = -\mathrm{softplus}(\pm\varepsilon + \operatorname{logit} p)`, stable for any
    :math:`\varepsilon` and tiny :math:`p`."""
    sign = 1.0 if variant == "corrected" else -1.0
    p = np.asarray(c, float) / n
    x = sign * np.asarray(e, float) + np.log(p) - np.log1p(-p)
    # softplus(x) = e^x to double precision below x = -30; this form keeps its tiny values
    return np.where(x < -30.0, -np.exp(np.minimum(x, 0.0)), -np.logaddexp(0.0, x))


def joint_nonmember_lower(eps, prior, m):
    r"""Lower bound :math:`L^m` on :math:`\Pr(\text{none of } m \text{ points in } D\mid S)`,
    :math:`L = 1/(1+e^\varepsilon p/(1-p))`.

    Valid for an :math:`\varepsilon`-DP (add/remove) mechanism and independent inclusion with
    probability ``prior`` each; tight (attained by a count released with geometric noise, in its
    upper tail). ``m`` an integer >= 0.
    """
    e = _checks.nonnegative("eps", eps)
    p = _checks.probability("prior", prior)
    k = _checks.integer("m", m, lo=0)
    p_, e_ = np.broadcast_arrays(np.asarray(p, float), np.asarray(e, float))
    with np.errstate(divide="ignore"):
        x = e_ + np.log(p_) - np.log1p(-p_)               # log(e^eps p / (1 - p)); +-inf at p = 1, 0
    # L^m = exp(-m softplus(x)): prior 0 gives 1, prior 1 gives 0 (m >= 1), never 0 * inf
    out = np.exp(-k * np.logaddexp(0.0, x)) if k > 0 else np.ones_like(x)
    return _checks.scalar_or_array(out, eps, prior)


def deletion_capacity(eps, c, n_pool, B, *, variant="corrected", integer=False):
    r"""Deletion capacity :math:`m = \ln B / \ln L(c)` (Thudi et al., Sec. 6, Fig. 7).

    The number of points that can be removed without retraining while keeping the B-MI
    unlearning guarantee. ``integer=True`` returns :math:`\lfloor m\rfloor`. ``B`` in (0, 1).
    ``inf`` where :math:`\ln L(c)` underflows (:math:`e^{\pm\varepsilon}c/N < 10^{-308}`): the capacity then exceeds
    the float range.
    """
    b = _checks.real("B", B, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    e = _checks.nonnegative("eps", eps)
    cc, n = _pool(c, n_pool)
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {_VARIANTS}, got {variant!r}")
    # log L computed directly (L rounds to 1 for tiny c / n_pool); inf where log L underflows:
    # the capacity then exceeds the float range
    log_L = _log_L(e, cc, n, variant)
    with np.errstate(divide="ignore"):
        m = np.where(log_L < 0.0, np.log(b) / np.where(log_L < 0.0, log_L, -1.0), np.inf)
    if integer:
        m = np.floor(m)
    return _checks.scalar_or_array(m, eps, c, B)
