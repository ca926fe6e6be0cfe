"""Reference solution of the Chapter 3 exercise "calibrate the noise to an ε"."""
from dpmia import sgm


def calibrate_sigma_for_epsilon(q, steps, eps, delta):
    r"""Smallest noise multiplier :math:`\sigma` (to relative :math:`10^{-4}`) with ``sgm.epsilon(q, σ, steps, delta)``
    at most ``eps``.

    :math:`\varepsilon(\delta)` decreases in :math:`\sigma`, so a geometric search brackets the answer and a bisection
    in :math:`\log\sigma` narrows it; the upper end (which meets the target) is returned.
    """
    def ok(s):
        return sgm.epsilon(q, s, steps, delta) <= eps

    lo, hi = 0.5, 0.5
    while not ok(hi):
        lo, hi = hi, hi * 2.0
    while ok(lo) and lo > 0.02:
        lo, hi = lo / 2.0, lo
    while hi / lo - 1.0 > 1e-4:
        mid = (lo * hi) ** 0.5
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi
