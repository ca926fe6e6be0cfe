r"""ε(δ) of DP-SGD near ε = 0 from the bulk of each step (the engine of :mod:`dpmia.sgm`).

Where few steps sample the target (small :math:`qT`) and δ lies just below the TV, ε is small and
set by the composed loss near 0, at the scale of q; a uniform grid fine enough there must also
reach the sampled steps' tail (losses up to about :math:`1/(2\sigma^2)`): millions of points.

Split each step's outputs at a loss :math:`b`: the bulk :math:`B` (loss :math:`\le b`) and the rest
:math:`U`, with masses :math:`p_B, q_B` and :math:`p_U = 1 - p_B, q_U = 1 - q_B`. The patterns
(which steps fall in :math:`U`) split the outputs of :math:`T` steps into disjoint sets, and the
hockey-stick divergence adds over disjoint sets:

.. math:: \delta(\varepsilon) = H_{e^\varepsilon}(Q_B^{\otimes T}\|P_B^{\otimes T})
          + \sum_{\text{patterns with a }U\text{ step}} \big(Q - e^\varepsilon P\big)_+ .

An output of such a pattern has loss above :math:`b + (T-1)\ln(1-q)`; for ε at or below that every
term is its Q-mass minus :math:`e^\varepsilon` its P-mass, which sum to
:math:`(1 - q_B^T) - e^\varepsilon(1 - p_B^T)`: exact, with no grid. The first term is the
:math:`T`-fold composition of the normalised bulk pair (``_step.bulk_arrays``, losses
shifted by :math:`c = \ln(q_B/p_B)`), scaled: :math:`q_B^T\,\tilde\delta_T(\varepsilon - Tc)`. Its
grid covers only :math:`[\ln(1-q), b]`. In the remove direction those patterns have :math:`P \le Q`
(loss above 0), so for :math:`\varepsilon \ge 0` they add nothing:
:math:`\delta_{\rm rem}(\varepsilon) = p_B^T\,\tilde\delta_{{\rm rem},T}(\varepsilon + Tc)`.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import pld as _pld
from ._chain import AUTO_MAX_FFT, _reflected
from ._step import _SINGLE_MAX, _bulk_arrays, _bulk_grid, _loss_range, _merged_first

#: unit roundoff of a double
_UNIT_ROUNDOFF = np.finfo(float).eps / 2.0

# machinery of the epsilon read-out (like _chain): no public entry points here
__all__: list = []


def clear_caches():
    """Empty the caches of bulk grids and composed bulk pairs (for timing runs)."""
    _bulk_pairs.cache_clear()
    _bulk_grid.cache_clear()


@lru_cache(maxsize=8)
def _bulk_pairs(run, h, b, tail, cap):
    """Composed bulk pairs ``{(kind, direction): PLD}`` of ``steps`` steps on grid step ``h``, cut at
    the first grid point ``x_top`` at or above ``b``; returns ``(pairs, log q_B, log p_B, x_top)``.
    Raises ``ValueError`` where no such grid pair can be built or composed within ``cap``."""
    q, sigma, steps = run
    grid = _bulk_grid(q, sigma, h, b)
    k = grid[6]
    single = {}
    for kind in _pld.KINDS:
        arrays = grid[:6]
        if kind == "optimistic" and k >= 0:
            arrays = _merged_first(arrays, k, q, sigma, h)
        (x, d, log_nu, log_cell, dv, gap), log_qb, log_pb = _bulk_arrays(arrays, q, sigma, h)
        single[kind] = _pld.from_profile(x, d, np.exp(log_nu), kind, log_cell=log_cell, dprofile=dv,
                                            gap=gap, h=h, minorant=False)
    pairs = {}
    for direction in ("add", "remove"):
        pe, op = single["pessimistic"], single["optimistic"]
        if direction == "remove":
            pe, op = _reflected(pe), _reflected(op)
        if pe.shift == op.shift:
            pe, op = _pld.compose_pair(*_pld.same_support(pe, op), steps, tail=tail, max_fft=cap)
        else:
            pe, op = (_pld.compose(pe, steps, tail=tail, max_fft=cap), _pld.compose(op, steps, tail=tail, max_fft=cap))
        pairs["pessimistic", direction], pairs["optimistic", direction] = pe, op
    return pairs, log_qb, log_pb, float(grid[0][-1])


def _profile_bounds(pairs, log_qb, log_pb, steps, eps):
    r"""``(lower, upper)`` on :math:`\max(\delta_{\rm add}, \delta_{\rm rem})(\varepsilon)` for an array
    of :math:`0 \le \varepsilon \le` the pattern bound (see the module), rounded outward."""
    eps = np.asarray(eps, float)
    c = log_qb - log_pb
    tc = steps * c
    pad = 8.0 * _UNIT_ROUNDOFF * (np.abs(eps) + abs(tc)) + 1e-300      # the shifted arguments' rounding
    wq, wp = math.exp(steps * log_qb), math.exp(steps * log_pb)
    lo_w, hi_w = 1.0 - 1e-12, 1.0 + 1e-12
    a1, a2 = -math.expm1(steps * log_qb), np.exp(eps) * -math.expm1(steps * log_pb)
    rest = a1 - a2                                     # >= 0: each pattern with a U step has loss >= eps
    err = 1e-12 * (a1 + a2) + 1e-300

    def at(kind, direction, e):
        return np.atleast_1d(pairs[kind, direction].delta(e))
    add_hi = hi_w * wq * at("pessimistic", "add", eps - tc - pad) + rest + err
    add_lo = lo_w * wq * at("optimistic", "add", eps - tc + pad) + np.maximum(rest - err, 0.0)
    rem_hi = hi_w * wp * at("pessimistic", "remove", eps + tc - pad)
    rem_lo = lo_w * wp * at("optimistic", "remove", eps + tc + pad)
    return np.maximum(add_lo, rem_lo), np.minimum(np.maximum(add_hi, rem_hi), 1.0)


def _crossing(f, d, e_max, points=64):
    """``(a, b)``, 0 <= a <= b <= e_max, with ``f(a) > d >= f(b)`` (``a = b = 0`` if ``f(0) <= d``) for
    a non-increasing ``f`` of an array, to 1e-13 relative: ``points`` values a round (one read-out
    of each pair's cached tables); ``(e_max, None)`` if ``f(e_max) > d``."""
    a, b = 0.0, e_max
    for r in range(20):
        x = np.linspace(a, b, points)
        v = f(x)
        if r == 0:
            if v[0] <= d:
                return 0.0, 0.0
            if v[-1] > d:
                return e_max, None
        hit = np.flatnonzero(v[1:-1] <= d)        # interior points at or below d
        a, b = (float(x[hit[0]]), float(x[hit[0] + 1])) if hit.size else (float(x[-2]), b)
        if b - a <= 1e-13 * b:
            break
    return a, b


def _bracket_at(run, d, h, b, tail, cap=AUTO_MAX_FFT):
    """``(lower, upper)`` on eps(delta) from the bulk pairs cut at ``b`` on grid step ``h``; the upper
    end is ``None`` if the dominating profile does not reach ``d`` below the pattern bound."""
    q, sigma, steps = run
    pairs, log_qb, log_pb, x_top = _bulk_pairs(run, h, b, tail, cap)
    lq = math.log1p(-q)
    e_max = x_top + (steps - 1) * lq
    e_max -= 8.0 * _UNIT_ROUNDOFF * (abs(x_top) + steps * abs(lq)) + 1e-300
    if not e_max >= 0.0:
        raise ValueError("the cut b is below the unsampled steps' losses")
    lo = _crossing(lambda e: _profile_bounds(pairs, log_qb, log_pb, steps, e)[0], d, e_max)[0]
    hi = _crossing(lambda e: _profile_bounds(pairs, log_qb, log_pb, steps, e)[1], d, e_max)[1]
    return lo, hi


def _bulk_epsilon(run, d, tol, share=0.2, eps_lo=0.0):
    """Certified ``(lower, upper)`` on eps(delta) from the bulk pairs, or ``None`` where the method does
    not apply: ``b`` is raised (from about ``q T``, by factors of 8) until the dominating profile reaches ``d`` below
    the pattern bound, as long as the bulk spans at most ``share`` of the single step's loss range;
    then the grid is refined (width as h^2) until the relative width is at most ``tol``.

    ``eps_lo``, a certified lower end of eps(delta), skips the cuts that cannot reach it: a cut ``b`` reads
    eps only up to the first grid point at or above ``b`` (less ``(T - 1) log(1/(1 - q))``), below ``b + h``,
    so where ``eps_lo > b + h`` its upper end is ``None`` (the same answer, without composing).

    The composed windows may drop Q-mass 1e-6 d min(1, b): the profile is flat near eps = 0 (its
    slope is minus the P-mass above eps, a few 1e-3 where sigma is small), so eps moves by about
    1e3 times what delta does; that budget keeps it below 1e-3 of eps.
    """
    q, sigma, steps = run
    if not 0.0 < q < 1.0:
        return None
    lq = math.log1p(-q)
    lo_all, hi_all = _loss_range(q, sigma, 1e-6 * d)
    span_max = share * (hi_all - lo_all)
    n0 = 4096
    for k in range(6):
        b = 1.25 * 0.1 * 8.0 ** k * steps * -lq - (steps - 1) * lq
        if b - lq > span_max:
            return None
        tail = 1e-6 * d * min(1.0, b)
        if eps_lo > b + (b - lq) / n0:
            continue
        try:
            lo, hi = _bracket_at(run, d, (b - lq) / n0, b, tail)
        except ValueError:
            return None
        if hi is not None:
            break
    else:
        return None
    h = (b - lq) / n0
    best = (lo, hi)
    for _ in range(6):
        w = (best[1] - best[0]) / best[1] if best[1] > 0 else 0.0
        if w <= tol:
            break
        h_next = h * min(0.7, max(0.1, 0.9 * math.sqrt(tol / w)))
        if (b - lq) / h_next > _SINGLE_MAX / 2:
            break
        h = h_next
        try:
            lo, hi = _bracket_at(run, d, h, b, tail)
        except ValueError:
            break
        if hi is None:
            break
        best = (max(best[0], lo), min(best[1], hi))
    return best
