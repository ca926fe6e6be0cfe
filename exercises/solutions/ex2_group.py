"""Reference solution of the Chapter 2 exercise "group precision"."""
import operator

from dpmia import bounds


def posterior_upper_group(eps, prior, k):
    r"""Largest posterior that all ``k`` records were in the training set, under an ``eps``-DP mechanism.

    Group privacy: :math:`D` and :math:`D` without the group differ in ``k`` records, so the mechanism is
    :math:`k\varepsilon`-DP between them, and Bayes with ``prior`` gives
    :math:`\mathrm{posterior\_upper}(k\varepsilon, \text{prior}) = 1/(1 + e^{-k\varepsilon}(1-p)/p)`.

    >>> posterior_upper_group(1.0, 0.5, 1) == bounds.posterior_upper(1.0, 0.5)
    True
    """
    if isinstance(k, bool):
        raise TypeError("k must be an integer >= 1, got a bool")
    try:
        kk = operator.index(k)
    except TypeError:
        raise TypeError(f"k must be an integer >= 1, got {type(k).__name__}") from None
    if kk < 1:
        raise ValueError(f"k must be an integer >= 1, got {k}")
    return bounds.posterior_upper(kk * eps, prior)
