r"""What any :math:`(\varepsilon,\delta)`-DP mechanism implies for membership inference.

Names say which quantity (CONTRIBUTING.md):

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
    "nonmember_posterior_upper", "nonmember_posterior_lower", "positive_advantage_upper",
    "positive_advantage_argmax", "overall_accuracy_upper", "erlingsson_accuracy", "yeom_accuracy",
    "sablayrolles_posterior", "max_sampling_probability", "max_epsilon",
]


def _eps(eps):
    return _checks.nonnegative("eps", eps, allow_inf=True)


def _delta(delta):
    return _checks.probability("delta", delta)


def yeom_advantage(eps):
    r"""Yeom et al. (2018), Thm 1: :math:`\mathrm{Adv} \le e^{\varepsilon} - 1` for :math:`\varepsilon`-DP
    (capped at 1).

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
    r"""Humphries et al. (2020), Thm 3:
    :math:`\mathrm{Adv} \le \dfrac{e^{\varepsilon} - 1 + 2\delta}{e^{\varepsilon} + 1}`.

    The tight bound for a single :math:`(\varepsilon,\delta)` pair: it is the largest
    TPR - FPR on the :math:`(\varepsilon,\delta)` trade-off region (attained by randomized
    response with a :math:`\delta` escape). Evaluated as
    :math:`\tanh(\varepsilon/2) + 2\delta\,\sigma(-\varepsilon)` (no overflow at large
    :math:`\varepsilon`), capped at 1. ``eps`` in [0, inf], ``delta`` in [0, 1].

    Examples
    --------
    >>> from dpmia import bounds
    >>> round(bounds.humphries_advantage(1.0), 4)        # (e - 1) / (e + 1): no attack beats this at eps = 1
    0.4621
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

    Thudi et al., Thm 1, for prior :math:`p = \Pr(x^* \in D)`:

    .. math:: U(\varepsilon, p) = \frac{1}{1 + e^{-\varepsilon}(1-p)/p}
              = \frac{p\,e^{\varepsilon}}{p\,e^{\varepsilon} + 1 - p}
              = \sigma(\operatorname{logit} p + \varepsilon).

    The observation multiplies the prior odds by at most :math:`e^{\varepsilon}`. This is the
    precision ("positive accuracy") of any "member" call. ``eps`` in [0, inf], ``prior`` in [0, 1].

    Examples
    --------
    >>> from dpmia import bounds
    >>> round(bounds.posterior_upper(1.0, 0.5), 4)       # a prior of 1/2 can rise to at most e / (1 + e)
    0.7311
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


# --------------------------------------------------------------------------------------
# Thudi et al.: precision under a membership prior, and the bounds it is compared with
# --------------------------------------------------------------------------------------
def nonmember_posterior_upper(eps, prior):
    r"""Largest :math:`\Pr(x^*\notin D\mid\text{output})` under :math:`\varepsilon`-DP (Thudi et al., Cor. 1).

    :math:`1/(1 + e^{-\varepsilon}p/(1-p)) = 1 - L(\varepsilon, p) = U(\varepsilon, 1-p)`: the
    precision of a "non-member" call. ``eps`` in [0, inf], ``prior`` = :math:`p` in [0, 1].
    """
    e, p = _eps(eps), _prior(prior)
    e_, p_ = np.asarray(e), np.asarray(p)
    val = (1.0 - p_) / ((1.0 - p_) + p_ * np.exp(-e_))  # direct: 1 - p would lose a tiny p
    val = np.where(p_ == 1.0, 0.0, np.where(np.isinf(e_) & (p_ < 1), 1.0, val))
    return _checks.scalar_or_array(val, eps, prior)


def nonmember_posterior_lower(eps, prior):
    r"""Smallest :math:`\Pr(x^*\notin D\mid\text{output})` under :math:`\varepsilon`-DP (Thudi et al., Cor. 1).

    :math:`1/(1 + e^{\varepsilon}p/(1-p)) = 1 - U(\varepsilon, p) = L(\varepsilon, 1-p)`.
    """
    e, p = _eps(eps), _prior(prior)
    e_, p_ = np.asarray(e), np.asarray(p)
    with np.errstate(over="ignore", invalid="ignore"):
        val = (1.0 - p_) * np.exp(-e_) / ((1.0 - p_) * np.exp(-e_) + p_)
    val = np.where(p_ == 0.0, 1.0, np.where(np.isinf(e_) & (p_ > 0), 0.0, val))
    return _checks.scalar_or_array(val, eps, prior)


def positive_advantage_upper(eps, prior):
    r"""Thudi et al.'s "MI advantage" bound, Eq. (5):
    :math:`2(U(\varepsilon,p) - p) = \dfrac{2p(1-p)(e^\varepsilon-1)}{1+p(e^\varepsilon-1)}`.

    *Not* the TPR - FPR advantage of the balanced game: this one measures the gain of a
    "member" call's precision over the prior, doubled, and can exceed 1 (up to 2). At
    :math:`p = 1/2` it equals :math:`\tanh(\varepsilon/2)`, the balanced-game advantage bound.
    """
    e, p = _eps(eps), _prior(prior)
    return _checks.scalar_or_array(2.0 * (np.asarray(posterior_upper(e, p)) - np.asarray(p)), eps, prior)


def positive_advantage_argmax(eps):
    r"""Maximiser and maximum over the prior of :func:`positive_advantage_upper`.

    :math:`p^* = 1/(1+e^{\varepsilon/2})`, maximum :math:`2\tanh(\varepsilon/4)` (set the
    derivative of :math:`2(\sigma(\operatorname{logit}p+\varepsilon) - p)` to zero: the
    posterior odds and prior odds are then :math:`e^{\pm\varepsilon/2}`). Returns ``(p_star, value)``.
    """
    e = _checks.nonnegative("eps", eps)
    e_ = np.asarray(e)
    return (_checks.scalar_or_array(special.expit(-e_ / 2.0), eps),
            _checks.scalar_or_array(2.0 * np.tanh(e_ / 4.0), eps))


def overall_accuracy_upper(eps, prior=0.5):
    r"""Best overall accuracy of any attack on an :math:`\varepsilon`-DP mechanism under prior :math:`p`.

    :math:`\max\{p,\ 1-p,\ \sigma(\varepsilon)\}`: always guessing the likelier bit scores
    :math:`\max(p, 1-p)`, and no test beats the :math:`\varepsilon`-DP region by more (the book's
    extension of Thudi et al.'s Sec. 3.2 remark; checked by brute force in the tests). So a small
    prior does not make attacks *inaccurate*; it makes "member" calls *imprecise*.
    """
    e, p = _eps(eps), _prior(prior)
    e_, p_ = np.asarray(e), np.asarray(p)
    return _checks.scalar_or_array(np.maximum(np.maximum(p_, 1.0 - p_), special.expit(e_)), eps, prior)


def erlingsson_accuracy(eps, delta=0.0):
    r"""Erlingsson et al. (2019) as an accuracy bound at prior 1/2: :math:`1 - e^{-\varepsilon}(1-\delta)/2`."""
    return _checks.scalar_or_array((1.0 + np.asarray(erlingsson_advantage(eps, delta))) / 2.0, eps, delta)


def yeom_accuracy(eps):
    r"""Yeom et al. (2018) as an accuracy bound at prior 1/2: :math:`\min(1, e^{\varepsilon}/2)`."""
    return _checks.scalar_or_array((1.0 + np.asarray(yeom_advantage(eps))) / 2.0, eps)


def sablayrolles_posterior(eps, prior=0.5):
    r"""Sablayrolles et al. (2019) as quoted by Thudi et al. (Table 1):
    :math:`\Pr(x^*\in D\mid\theta) \le p + \varepsilon/4`, capped at 1.

    A Lipschitz bound on :func:`posterior_upper`: the logistic function has slope
    :math:`\sigma' = \sigma(1-\sigma) \le 1/4`, so
    :math:`\sigma(\operatorname{logit}p+\varepsilon) \le p + \varepsilon/4`; hence never tighter than it. (The
    first-order expansion is :math:`p + p(1-p)\varepsilon`, which agrees only at :math:`p = 1/2`.)
    """
    e, p = _eps(eps), _prior(prior)
    return _checks.scalar_or_array(np.minimum(1.0, np.asarray(p) + np.asarray(e) / 4.0), eps, prior)


def max_sampling_probability(eps, target):
    r"""Largest inclusion probability :math:`T` keeping every "member" call's precision :math:`\le` ``target``.

    Thudi et al., Sec. 4.2: sub-sample the training set with probability :math:`T`, so that
    :math:`p \le T` and, :math:`U` being increasing in :math:`p`, precision :math:`\le U(\varepsilon,T)`.
    Solving :math:`U(\varepsilon, T) = a`: :math:`T = \sigma(\operatorname{logit} a - \varepsilon)`.
    ``eps`` in [0, inf), ``target`` in (0, 1).
    """
    e = _checks.nonnegative("eps", eps)
    a = _checks.real("target", target, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    return _checks.scalar_or_array(special.expit(special.logit(np.asarray(a)) - np.asarray(e)), eps, target)


def max_epsilon(prior, target):
    r"""Largest :math:`\varepsilon` keeping the precision bound :math:`U(\varepsilon, p) \le` ``target``.

    :math:`\varepsilon_{\max} = \operatorname{logit} a - \operatorname{logit} p` (Thudi et al.,
    Sec. 4.2, inverted). Needs ``0 < prior <= target < 1``: no mechanism can push precision below
    the prior, so a target under the prior is unattainable and raises.
    """
    p = _checks.real("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    a = _checks.real("target", target, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    p_, a_ = np.asarray(p), np.asarray(a)
    if np.any(a_ < p_):
        raise ValueError(f"target must be >= prior (no mechanism makes precision fall below the prior); "
                         f"got target={np.min(a_)!r} < prior={np.max(p_)!r}")
    return _checks.scalar_or_array(special.logit(a_) - special.logit(p_), prior, target)
