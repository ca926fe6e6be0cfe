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
    larger tilt) on its array from its start :math:`c = y_0` up, the second (``b``) below :math:`c`. The sum over
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

    def _read(self, e):
        b = self._other
        c = float(self.y[0])
        keep = b.y < c - 0.5 * self.h
        ma, ea = self._sums(e)
        mb, eb = b._sums(e, keep)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            lm, lerr = np.logaddexp(ma, mb), np.logaddexp(ea, eb)
            if self.kind == "pessimistic":
                above, _ = self._log_out_sides(e)
                b_above, b_below = b._log_out_sides(e)
                lm = np.logaddexp.reduce([lm, self._log_r(e), above, b_below,
                                          b_above if float(b.y[-1]) < c else np.full(e.size, -np.inf)])
        return _finish(lm, lerr)
