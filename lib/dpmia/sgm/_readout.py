"""Shared pieces of the accountant's read-outs: default accuracies, bracket widths, the four
composed grid pairs of a run and the eps read-out from them, and the windows' budget for eps."""

from __future__ import annotations

import math

from .. import gaussian
from ._chain import _composed
from ._tvbounds import _clt_mu

#: Default accuracy: advantage/TPR brackets 1e-5 wide (absolute), epsilon brackets 1e-3 (relative).
TOL_PROB, TOL_EPS = 1e-5, 1e-3


def _rel_width(lo_hi):
    lo, hi = lo_hi
    if hi == lo:
        return 0.0
    return (hi - lo) / max(abs(hi), 1e-300)


def _eps_width(lo_hi):
    """Relative width of an eps bracket; ``None`` (stop refining, keep the best bracket so far) when the
    upper end is infinite: that comes from the slack or the mass at +infinity exceeding delta, which
    a finer grid does not lower."""
    return None if math.isinf(lo_hi[1]) else _rel_width(lo_hi)


def _prob_width(tol, floor=False):
    """Width measure for probabilities: absolute for values above 0.01, relative (x 0.01) below;
    with ``floor``, never narrower than ``tol`` / 10 absolute (x 10).

    With ``tol`` = 1e-5 this asks for 1e-5 absolute, 1e-3 relative for values under 0.01 and, with
    ``floor`` (the advantage), at most 1e-6 absolute for values under 1e-3: the last digits of a TV
    of 1e-5 would cost a grid of millions of points, for digits no attack can see.
    """
    def width(lo_hi):
        lo, hi = lo_hi
        if hi <= 0:
            return 0.0
        w = (hi - lo) / min(1.0, max(hi, 1e-300) / 1e-2)
        return min(w, 10.0 * (hi - lo)) if floor else w
    return width


def _four(run, h, tail, cap, directions=("add", "remove")):
    """The composed grid pairs ``{(kind, direction): PLD}`` of ``run`` on grid step ``h``."""
    return {(k, d): _composed(run, h, k, d, tail, cap)
            for k in ("pessimistic", "optimistic") for d in directions}


def _eps_of(c, d):
    """(lower, upper) eps(delta) from the composed grid pairs ``c`` (both kinds, for the directions in it)."""
    dirs = sorted({k[1] for k in c})
    return (max(c["optimistic", x].epsilon(d) for x in dirs), max(c["pessimistic", x].epsilon(d) for x in dirs))


def _clt_eps(run, d):
    """The CLT estimate of eps(delta): the Gaussian eps at the run's mu (``None`` where that mu overflows)."""
    mu = _clt_mu(run)
    return float(gaussian.epsilon(d, mu)) if math.isfinite(mu) and mu < 1e6 else None


def _eps_tail(run, d, e_clt=None):
    """Q-mass allowed outside the FFT window for an eps(delta) read-out. It moves delta by up to that
    much, so eps by about tail / |delta'(eps)|; where eps is small (estimated by the CLT) delta is
    nearly flat in relative terms, so the budget shrinks with eps. ``e_clt``: :func:`_clt_eps` of the
    run, where the caller has it."""
    e = _clt_eps(run, d) if e_clt is None else e_clt
    return min(1e-3 * min(1.0, max(1.0 if e is None else e, 1e-3)) * d, 1e-8)
