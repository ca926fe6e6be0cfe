r"""What any :math:`(\varepsilon,\delta)`-DP mechanism implies for membership inference.

Names say which quantity (DESIGN.md §3):

* **advantage** = TPR - FPR = 2 * accuracy - 1 of an attack in the balanced membership game
  (prior 1/2); at most the total variation between the two output laws;
* **accuracy** = probability of guessing the membership bit right at prior 1/2;
* **posterior** = :math:`\Pr(\text{member}\mid\text{observation})` under a membership prior
  ``prior`` (Thudi et al.'s "positive accuracy", i.e. the precision of a "member" call).

All functions accept scalars or arrays and validate their arguments (``_checks``).
Every bound is capped at its trivial value (1 for an advantage or accuracy), which is still a
valid, and never smaller, bound.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from . import _checks

__all__ = [
    "yeom_advantage", "erlingsson_advantage", "humphries_advantage", "advantage_bound",
    "accuracy_from_advantage", "advantage_from_accuracy",
    "humphries_accuracy", "sigmoid_accuracy",
    "tpr_at_fpr", "tradeoff", "posterior_upper", "posterior_lower",
]


def _eps(eps):
    return _checks.nonnegative("eps", eps, allow_inf=True)


def _delta(delta):
    return _checks.probability("delta", delta)


def yeom_advantage(eps):
    r"""Yeom et al. (2018), Thm 1: :math:`\mathrm{Adv} \le e^{\varepsilon} - 1` for :math:`\varepsilon`-DP (capped at 1).

    Vacuous for :math:`\varepsilon \ge \ln 2`. ``eps`` in [0, inf].
    """
    e = _eps(eps)
    return _checks.scalar_or_array(np.minimum(1.0, np.expm1(np.minimum(e, 1.0))), eps)


def erlingsson_advantage(eps, delta=0.0):
    r"""Erlingsson et al. (2019): :math:`\mathrm{Adv} \le 1 - e^{-\varepsilon}(1-\delta)`.

    For :math:`(\varepsilon,\delta)`-DP; equivalently accuracy :math:`\le 1 - e^{-\varepsilon}(1-\delta)/2`.
    ``eps`` in [0, inf], ``delta`` in [0, 1].
    """
    e, d = _eps(eps), _delta(delta)
    return _checks.scalar_or_array(1.0 - np.exp(-np.asarray(e)) * (1.0 - np.asarray(d)), eps, delta)


def humphries_advantage(eps, delta=0.0):
    r"""Humphries et al. (2020), Thm 3: :math:`\mathrm{Adv} \le \dfrac{e^{\varepsilon} - 1 + 2\delta}{e^{\varepsilon} + 1}`.

    The tight bound for a single :math:`(\varepsilon,\delta)` pair: it is the largest
    TPR - FPR on the :math:`(\varepsilon,\delta)` trade-off region (attained by randomized
    response with a :math:`\delta` escape). Evaluated as
    :math:`\tanh(\varepsilon/2) + 2\delta\,\sigma(-\varepsilon)` (no overflow at large
    :math:`\varepsilon`), capped at 1. ``eps`` in [0, inf], ``delta`` in [0, 1].
    """
    e, d = _eps(eps), _delta(delta)
    e_, d_ = np.asarray(e), np.asarray(d)
    val = np.tanh(e_ / 2.0) + 2.0 * d_ * special.expit(-e_)
    return _checks.scalar_or_array(np.minimum(1.0, val), eps, delta)


advantage_bound = humphries_advantage


def accuracy_from_advantage(adv):
    r"""Accuracy at prior 1/2 from advantage: :math:`(1 + \mathrm{Adv})/2`. ``adv`` in [-1, 1]."""
    a = _checks.real("adv", adv, lo=-1.0, hi=1.0)
    return _checks.scalar_or_array((1.0 + np.asarray(a)) / 2.0, adv)


def advantage_from_accuracy(acc):
    r"""Advantage from accuracy at prior 1/2: :math:`2\,\mathrm{acc} - 1`. ``acc`` in [0, 1]."""
    a = _checks.probability("acc", acc)
    return _checks.scalar_or_array(2.0 * np.asarray(a) - 1.0, acc)


def humphries_accuracy(eps, delta=0.0):
    r"""Accuracy bound :math:`(e^{\varepsilon} + \delta)/(e^{\varepsilon} + 1)` at prior 1/2 (Humphries et al. 2020).

    Equals :func:`sigmoid_accuracy` at :math:`\delta = 0`. ``eps`` in [0, inf], ``delta`` in [0, 1].
    """
    return _checks.scalar_or_array((1.0 + np.asarray(humphries_advantage(eps, delta))) / 2.0, eps, delta)


def sigmoid_accuracy(eps):
    r"""Pure-DP accuracy bound :math:`1/(1 + e^{-\varepsilon})` at prior 1/2.

    Humphries et al. (2020) with :math:`\delta = 0`; Lowy et al. (2024), Lemma 6; Thudi et al.,
    Thm 1 at :math:`p=1/2`; Mahloujifar et al., App. G. ``eps`` in [0, inf].
    """
    e = _eps(eps)
    return _checks.scalar_or_array(special.expit(np.asarray(e)), eps)


def tradeoff(alpha, eps, delta=0.0):
    r"""Smallest FNR (1 - TPR) at FPR ``alpha`` allowed by :math:`(\varepsilon,\delta)`-DP.

    .. math:: f_{\varepsilon,\delta}(\alpha) = \max\{0,\ 1 - \delta - e^{\varepsilon}\alpha,\
              e^{-\varepsilon}(1 - \delta - \alpha)\}

    (Kairouz, Oh & Viswanath 2015; Dong, Roth & Su 2022, Prop. 2.5). Every attack on an
    :math:`(\varepsilon,\delta)`-DP mechanism has its (FPR, FNR) on or above this curve.
    ``alpha`` in [0, 1], ``eps`` in [0, inf], ``delta`` in [0, 1].
    """
    al = _checks.probability("alpha", alpha)
    e, d = _eps(eps), _delta(delta)
    al_, e_, d_ = np.asarray(al), np.asarray(e), np.asarray(d)
    with np.errstate(over="ignore", invalid="ignore"):
        mid = 1.0 - d_ - np.where(al_ > 0, np.exp(e_) * al_, 0.0)
    val = np.maximum.reduce([np.zeros(np.broadcast(al_, e_, d_).shape), mid,
                             np.exp(-e_) * (1.0 - d_ - al_)])
    return _checks.scalar_or_array(val, alpha, eps, delta)


def tpr_at_fpr(fpr, eps, delta=0.0):
    r"""Largest TPR at false-positive rate ``fpr`` of any attack on an :math:`(\varepsilon,\delta)`-DP mechanism.

    .. math:: \mathrm{TPR} \le \min\{1,\ e^{\varepsilon}\,\mathrm{FPR} + \delta,\
              1 - e^{-\varepsilon}(1 - \delta - \mathrm{FPR})\}

    i.e. :math:`1 - f_{\varepsilon,\delta}(\mathrm{FPR})` (see :func:`tradeoff`). At low FPR the
    binding constraint is :math:`e^{\varepsilon}\mathrm{FPR} + \delta`.
    """
    f = _checks.probability("fpr", fpr)
    return _checks.scalar_or_array(1.0 - np.asarray(tradeoff(f, eps, delta)), fpr, eps, delta)


def _prior(prior):
    return _checks.probability("prior", prior)


def posterior_upper(eps, prior):
    r"""Largest posterior :math:`\Pr(x^*\in D\mid \text{output})` under an :math:`\varepsilon`-DP mechanism.

    Thudi et al., Thm 1 (spec 003 §2.8), for prior :math:`p = \Pr(x^* \in D)`:

    .. math:: U(\varepsilon, p) = \frac{1}{1 + e^{-\varepsilon}(1-p)/p}
              = \frac{p\,e^{\varepsilon}}{p\,e^{\varepsilon} + 1 - p}
              = \sigma(\operatorname{logit} p + \varepsilon).

    The observation multiplies the prior odds by at most :math:`e^{\varepsilon}`. This is the
    precision ("positive accuracy") of any "member" call. ``eps`` in [0, inf], ``prior`` in [0, 1].
    """
    e, p = _eps(eps), _prior(prior)
    e_, p_ = np.asarray(e), np.asarray(p)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        val = p_ / (p_ + (1.0 - p_) * np.exp(-e_))
    val = np.where(p_ == 0.0, 0.0, np.where(np.isinf(e_) & (p_ > 0), 1.0, val))
    return _checks.scalar_or_array(val, eps, prior)


def posterior_lower(eps, prior):
    r"""Smallest posterior :math:`\Pr(x^*\in D\mid \text{output})` under an :math:`\varepsilon`-DP mechanism.

    Thudi et al., Thm 1 (lower side): :math:`L(\varepsilon, p) = p/(p + e^{\varepsilon}(1-p))
    = \sigma(\operatorname{logit} p - \varepsilon)`. ``eps`` in [0, inf], ``prior`` in [0, 1].
    """
    e, p = _eps(eps), _prior(prior)
    e_, p_ = np.asarray(e), np.asarray(p)
    with np.errstate(over="ignore", invalid="ignore"):
        val = p_ * np.exp(-e_) / (p_ * np.exp(-e_) + (1.0 - p_))
    val = np.where(p_ == 1.0, 1.0, np.where(np.isinf(e_) & (p_ < 1), 0.0, val))
    return _checks.scalar_or_array(val, eps, prior)
