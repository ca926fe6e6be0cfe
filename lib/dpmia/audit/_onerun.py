r"""One-run audits (Steinke, Nasr and Jagielski, NeurIPS 2023): an ε lower bound from the guesses on many
canaries, each included in a *single* training run by its own fair coin.

The theorem (their Theorem 5.2, in the form of Corollary 5.4 for guesses with abstentions). Let a mechanism be
(ε, δ)-DP with respect to each of ``m`` canaries, each included independently with probability ½, and let an
auditor who sees only the output make ``r`` guesses of membership (abstaining on the others; ``r`` fixed in
advance). Then the number
:math:`W` of correct guesses satisfies, for every ``v``,

.. math:: P[W \ge v] \le P[B \ge v] + 2m\delta\,\max_{1 \le i \le v} \frac{P[v > B \ge v - i]}{i},
          \qquad B \sim \mathrm{Bin}(r, p_\varepsilon),\ p_\varepsilon = \frac{e^\varepsilon}{1 + e^\varepsilon}.

It holds however the canaries' outputs depend on each other: the guess on one canary may use the whole model.
The reported bound is the first ε the count fails to refute, which is a valid lower bound when the p-value
grows with ε. With :math:`c = 2m\delta \le 1` the paper's form does: with
:math:`\tfrac{d}{dp}P[B \ge k] = r\,P[B' = k-1]` (:math:`B' \sim \mathrm{Bin}(r-1, p)`), each term
:math:`P[B \ge v] + \tfrac{c}{i}P[v > B \ge v-i]` has derivative
:math:`r\,P[B'=v-1](1 - \tfrac{c}{i}) + \tfrac{c}{i}\,r\,P[B'=v-i-1] \ge 0`, and so has their maximum over i.
Above (many canaries and a large δ) :func:`one_run_p_value` uses :math:`P[B \ge v - i]` in place of
:math:`P[v > B \ge v - i]`, larger by at most :math:`c\,P[B \ge v]` and non-decreasing in ε for every c.
:func:`one_run_epsilon` finds the bound by bisection and rounds it down.

Binomial tails are regularised incomplete beta functions (:func:`scipy.special.betainc`, ``betaincc`` above
:math:`p = \tfrac12` so that :math:`1 - p` keeps its digits at large ε): no sum of probability terms, no
cancellation; a relative margin of :math:`10^{-9}` covers their float error. The maximum over ``i`` is found by
branch and bound (:func:`_alpha_term`), rounded up.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import _checks

__all__ = ["one_run_p_value", "one_run_epsilon"]

#: Largest counts the one-run analysis takes (canaries, guesses): beyond, the binomial tails' float error
#: (about 1e-16 times the count) is no longer negligible next to the margin.
MAX_COUNT = 10**12

_MARGIN = 1e-9


def _sf(r, k, eps):
    """P[Bin(r, p_eps) >= k] for an array ``k`` (1 where k <= 0, 0 where k > r)."""
    k = np.asarray(k, dtype=float)
    out = np.where(k <= 0, 1.0, 0.0)
    mid = (k >= 1) & (k <= r)
    if not mid.any():
        return out
    kk = k[mid]
    if eps <= 0.0:
        p = special.expit(eps)
        vals = special.betainc(kk, r - kk + 1.0, p)
    else:
        # P[B >= k] = 1 - I_p(... ) written through the complement in 1 - p = expit(-eps), exact at large eps
        vals = special.betaincc(r - kk + 1.0, kk, special.expit(-eps))
    out[mid] = vals
    return out


def _alpha_term(r, v, eps, beta, monotone):
    r"""An upper bound on :math:`f^* = \max_{1 \le i \le v} f(i)`, :math:`f(i) = (P[B \ge v - i] - \beta)/i` (the
    paper's form; :math:`\beta = P[B \ge v]`) or, with ``monotone``, :math:`P[B \ge v - i]/i`, by branch and bound:
    on a cell :math:`[a, b]` of integers :math:`f \le (P[B \ge v - b] - \beta)/a` (the tail grows with i, 1/i
    falls); cells whose bound is below the best exact value found are dropped, the others halved, until every
    cell is two neighbouring integers (both evaluated). Exact up to the 1e-9 relative slack of the drop test."""
    sub = 0.0 if monotone else beta

    def f(i, j):
        return np.maximum(_sf(r, v - i, eps) - sub, 0.0) / j

    edges = np.unique(np.concatenate([np.arange(1, min(v, 64) + 1),
                                      np.round(np.geomspace(64, v, 64)) if v > 64 else []])).astype(float)
    a_, b_ = edges[:-1], edges[1:]
    best = float(np.max(f(edges, edges)))
    for _ in range(80):
        keep = (b_ - a_ > 1.0) & (f(b_, a_) > best * (1.0 + 1e-9))
        a_, b_ = a_[keep], b_[keep]
        if a_.size == 0:
            return best * (1.0 + 1e-9)
        mid = np.floor(0.5 * (a_ + b_))
        best = max(best, float(np.max(f(mid, mid))))
        a_, b_ = np.concatenate([a_, mid]), np.concatenate([mid, b_])
    return float(max(best, np.max(f(b_, a_))))


def _counts(n_guesses, n_correct, n_canaries):
    m = _checks.integer("n_canaries", n_canaries, lo=1, hi=MAX_COUNT)
    r = _checks.integer("n_guesses", n_guesses, lo=0, hi=m)
    v = _checks.integer("n_correct", n_correct, lo=0, hi=r)
    return r, v, m


def _p_value(r, v, m, eps, delta):
    if v == 0:
        return 1.0
    beta = float(_sf(r, np.array([v]), eps)[0])
    c = 2.0 * m * delta
    p = beta + (c * _alpha_term(r, v, eps, beta, monotone=c > 1.0) if delta > 0.0 else 0.0)
    # the margin: the tails' relative float error, and the absolute one of the difference of two tails
    return min(1.0, p * (1.0 + _MARGIN) + c * 1e-15)


def one_run_p_value(n_guesses, n_correct, *, n_canaries, epsilon, delta=0.0) -> float:
    r"""Upper bound on :math:`P[W \ge v]` for ``n_correct`` = v right guesses out of ``n_guesses`` = r, when the
    run is (``epsilon``, ``delta``)-DP with ``n_canaries`` = m canaries (Steinke et al. 2023, Theorem 5.2 and
    Corollary 5.4; where :math:`2m\delta > 1` the monotone form of the module docstring).

    Examples
    --------
    >>> from dpmia import audit
    >>> round(audit.one_run_p_value(100, 100, n_canaries=1000, epsilon=3.0), 4)   # (e^3 / (1 + e^3))^100
    0.0078
    """
    r, v, m = _counts(n_guesses, n_correct, n_canaries)
    e = _checks.scalar("epsilon", epsilon, lo=0.0, hi=700.0)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0)
    return _p_value(r, v, m, e, d)


def one_run_epsilon(n_guesses, n_correct, *, n_canaries, delta=0.0, level=0.95) -> float:
    r"""Steinke et al.'s ε lower bound from a one-run audit: the largest ε such that every ε' ≤ ε is refuted at
    ``level`` by ``n_correct`` right guesses out of ``n_guesses`` (made on ``n_canaries`` canaries, each included
    in the run with probability ½; the number of guesses fixed before seeing the outcome), for the given δ.

    It is a lower bound on the ε of every (ε, δ)-DP guarantee the run could have, with confidence ``level``:
    if the run is (ε*, δ)-DP, the returned value exceeds ε* with probability at most ``1 - level``. Rounded down
    (to 1e-12 relative); 0 when nothing is refuted. Several bounds reported together (e.g. for several numbers
    of guesses) need their levels split (a union bound).

    Examples
    --------
    >>> from dpmia import audit
    >>> round(audit.one_run_epsilon(100, 100, n_canaries=1000), 3)      # 100 perfect guesses, delta = 0
    3.493
    >>> round(audit.one_run_epsilon(100, 75, n_canaries=1000, delta=1e-4), 3)   # their Appendix D: 0.673
    0.673
    """
    r, v, m = _counts(n_guesses, n_correct, n_canaries)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, hi_open=True)
    lv = _checks.scalar("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    alpha = 1.0 - lv
    if _p_value(r, v, m, 0.0, d) > alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while _p_value(r, v, m, hi, d) <= alpha:
        lo, hi = hi, 2.0 * hi
        if hi > 700.0:
            return lo                       # refuted up to the largest epsilon the tails resolve
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi or hi - lo <= 1e-12 * hi:
            break
        if _p_value(r, v, m, mid, d) <= alpha:
            lo = mid
        else:
            hi = mid
    return float(lo)
