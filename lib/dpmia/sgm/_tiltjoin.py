r"""Far tails with two modes: two tilts of one split read together (:class:`JoinedPair`).

Where :math:`B^{*(T-1)}(s)\Psi(\varepsilon - s)` of :mod:`._tiltsplit` has two modes, one tilt's transform holds only
one of them in relative precision and bounds the other by Chernoff; reading each tilt's array over its own range of
:math:`s` keeps both.
"""

from __future__ import annotations

import numpy as np

from ._tiltsplit import SplitTiltedPair, _finish


class JoinedPair(SplitTiltedPair):
    r"""Two :class:`SplitTiltedPair` of one split and kind, tilted differently, read together: the first (``a``, the
    larger tilt) on its array from a cut :math:`c` up, the second (``b``) below :math:`c` (:meth:`_cut`: between
    ``a``'s start and ``b``'s end, where the two parts' float error is least). The sum over
    the bulk's composed losses :math:`s` splits into :math:`s \ge c` and :math:`s < c`, each read where its tilt
    keeps its relative accuracy: where :math:`B^{*(T-1)}(s)\Psi(\varepsilon - s)` has two modes (the bulk alone
    near :math:`\varepsilon`, and a bulk well above its mean with one large step), one tilt's array holds only one
    of them and bounds the other by Chernoff (several percent of the value at q = 0.01, sigma = 5, T = 1000 near
    1e-200). A dominating pair adds ``a``'s bound above its array, ``b``'s below its own (and above it where it ends
    below :math:`c`) and the bound on two or more large steps; a dominated pair reads the two disjoint parts, each
    less its own errors. Everything else (the grid pair's relation to the true one) is ``a``'s; ``rho`` the larger."""

    def __init__(self, a, b):
        self.__dict__.update(a.__dict__)
        self._other = b
        self.rho = max(a.rho, b.rho)
        self._memo = None

    def _cut(self, v):
        r"""The split point :math:`c` for a read at ``v``: the point of ``a``'s array, from its start up to ``b``'s
        array's end, that minimises the two parts' float-error weight (``point`` times the weights
        :math:`M^T e^{-\lambda s}\Psi(v - s)` summed over the points each part reads, and ``a``'s ``moved`` at its
        largest weight). Each transform's error is the same at every point of its array, while ``a``'s weights grow
        as :math:`e^{-\lambda s}` towards its start, where ``b``'s array holds the same masses in relative precision:
        reading ``a`` from its start up left an error of 2.8e-4 of the value at q = 0.01, sigma = 5, T = 1000 near
        1e-200 (8e-212 from the best point). Any :math:`c` at or above ``a``'s first point gives a certified
        read-out (below it, the losses between :math:`c` and that point would be read by neither part)."""
        b, h = self._other, self.h
        k_hi = int(np.searchsorted(self.y, float(b.y[-1]) + 0.5 * h, side="right"))
        if k_hi <= 1:
            return float(self.y[0])
        with np.errstate(divide="ignore", under="ignore", over="ignore"):
            wa = self.log_scale - self.lam * self.y + self._psi_on_array(v)
            wb = b.log_scale - b.lam * b.y + b._psi_on_array(v)
            moved_a, point_a = self.slack_split_[:2]
            point_b = b.slack_split_[1]
            tail_a = np.logaddexp.reduce(wa[k_hi:]) if wa.size > k_hi else -np.inf
            above = np.logaddexp.accumulate(np.concatenate([wa[:k_hi], [tail_a]])[::-1])[::-1][:k_hi]
            below = np.concatenate([[-np.inf], np.logaddexp.accumulate(wb)])
            nb = np.searchsorted(b.y, self.y[:k_hi] - 0.5 * h)      # b's points below each candidate
            cost = np.logaddexp(np.logaddexp(above + _log(point_a), wa[:k_hi] + _log(moved_a)),
                                below[nb] + _log(point_b))
        return float(self.y[int(np.argmin(cost))])

    def _read(self, e):
        b = self._other
        lm, lerr = np.full(e.size, -np.inf), np.full(e.size, -np.inf)
        for i, v in enumerate(e):
            c = self._cut(v)
            vi = e[i:i + 1]
            ma, ea = self._sums(vi, self.y >= c - 0.5 * self.h)
            mb, eb = b._sums(vi, b.y < c - 0.5 * self.h)
            with np.errstate(over="ignore", under="ignore", divide="ignore"):
                m, er = np.logaddexp(ma, mb), np.logaddexp(ea, eb)
                if self.kind == "pessimistic":
                    above, _ = self._log_out_sides(vi)
                    b_above, b_below = b._log_out_sides(vi)
                    m = np.logaddexp.reduce([m, self._log_r(vi), above, b_below,
                                             b_above if float(b.y[-1]) < c else np.full(1, -np.inf)])
            lm[i], lerr[i] = m[0], er[0]
        return _finish(lm, lerr)


def _log(x):
    """``log(x)``, -inf at 0."""
    return float(np.log(x)) if x > 0 else -np.inf
