r"""Certified upper bounds on one DP-SGD step's moment generating function of the loss, :math:`M(\lambda) =
\mathbb E_Q[e^{\lambda L}]`, from upper values of its privacy profile on a grid (for :mod:`._tiltexcess`).

For a pair of probability measures and :math:`\lambda > 0`, Taylor's formula with integral remainder for
:math:`f(t) = t^{\lambda+1}` (:math:`f(0) = f'(0) = 0`) gives
:math:`\mathbb E_P[(Q/P)^{\lambda+1}] = \int_0^\infty f''(\gamma)\,\mathbb E_P[(Q/P - \gamma)_+]\,d\gamma`, that is

.. math:: M(\lambda) = \lambda(\lambda+1)\int_0^\infty \gamma^{\lambda-1}\,\delta(\gamma)\,d\gamma,

with :math:`\delta(\gamma) = H_\gamma(Q\|P)` the profile at :math:`\varepsilon = \ln\gamma` (Liese and Vajda's
representation of an f-divergence by hockey-stick divergences). With values :math:`u_j \ge \delta(\gamma_j)` at the
grid points :math:`\gamma_j = e^{x_j}` the profile lies below their chords (it is convex), below the grid below
:math:`u_0 + (\gamma_0 - \gamma)` (its slope is :math:`-P(L > \ln\gamma) \ge -1`), and above the grid Fubini turns
the integral into the tail :math:`\int_{L > x_n} e^{\lambda L}\,dQ` over :math:`\lambda(\lambda+1)` at most, which
each relation bounds in closed form (:func:`tail_add`, :func:`tail_remove`, :func:`tail_replace`). The bound exceeds
:math:`M` by about :math:`(\lambda h)^2` relative: it is the moment generating function of the pair whose profile
is those chords.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._step import _eps_prime

#: Unit roundoff of a double.
_U = np.finfo(float).eps / 2.0
#: Gauss-Legendre nodes and weights on [0, 1] for the cell integrals where the integrand varies little.
_GL = tuple(np.asarray(a, float) for a in np.polynomial.legendre.leggauss(24))
_NODES, _WEIGHTS = 0.5 * (_GL[0] + 1.0), 0.5 * _GL[1]


def _cell_weights(lam, h):
    r"""``(log F_0, log F_1)``: :math:`F_0 = \int_1^{E} u^{\lambda-1}\frac{E - u}{E - 1}\,du` and
    :math:`F_1 = \int_1^{E} u^{\lambda-1}\frac{u - 1}{E - 1}\,du` (:math:`E = e^h`), so that a chord from :math:`a`
    to :math:`b` over the cell :math:`[\gamma_j, e^h\gamma_j]` integrates against :math:`\gamma^{\lambda-1}` to
    :math:`\gamma_j^\lambda(aF_0 + bF_1)`. Gauss-Legendre in :math:`v = \ln u / h` where :math:`\lambda h \le 1`
    (a smooth integrand within a factor :math:`e^{1+h}`: 24 nodes are exact to rounding), else the closed forms (no
    cancellation there). Rounded up by 1e-12 relative."""
    e1 = math.expm1(h)
    if lam * h <= 1.0 and h <= 1.0:
        v = _NODES * h
        g = np.exp(lam * v) * h                       # u^(lam - 1) du = e^(lam h v) h dv
        f0 = float(np.sum(_WEIGHTS * g * (e1 - np.expm1(v)) / e1))
        f1 = float(np.sum(_WEIGHTS * g * np.expm1(v) / e1))
        return math.log(f0) + 1e-12, math.log(f1) + 1e-12
    # I_lam = (E^lam - 1) / lam and I_lam+1 = (E^(lam+1) - 1) / (lam + 1), in logs (each within (8 + 4 lam h) u);
    # F_1 = (I_lam+1 - I_lam) / (E - 1) and F_0 = (E I_lam - I_lam+1) / (E - 1), integrals of u^(lam-1) (u - 1) and
    # u^(lam-1) (E - u) >= 0: each difference rounded up by the terms' error
    la = lam * h + math.log(-math.expm1(-lam * h)) - math.log(lam)
    lb = (lam + 1.0) * h + math.log(-math.expm1(-(lam + 1.0) * h)) - math.log(lam + 1.0)
    if lb + h >= 700.0:
        # (beyond e^700: the chord's worse end instead, F_0 + F_1 = I_lam each, in logs)
        return la - math.log(e1) + h + 1e-9, la - math.log(e1) + h + 1e-9
    err = (16.0 + 8.0 * (lam + 1.0) * h) * _U
    a, b, ea = math.exp(la), math.exp(lb), math.exp(h + la)
    f1 = b - a + err * (a + b)
    f0 = ea - b + err * (ea + b)
    return math.log(f0 / e1) + 1e-12, math.log(f1 / e1) + 1e-12


def log_mgf_bound(x, h, upper, lam, log_tail):
    r"""An upper bound on :math:`\ln M(\lambda)` from upper profile values ``upper`` at the grid points ``x`` (step
    ``h``, increasing) and ``log_tail``, the log of a bound on :math:`\int_{L > x_n} e^{\lambda L}\,dQ` (see the
    module); ``inf`` where ``lam`` is not positive or a term is not finite."""
    if not lam > 0.0 or not math.isfinite(log_tail) and log_tail != -math.inf:
        return math.inf
    x = np.asarray(x, float)
    u = np.asarray(upper, float)
    f0, f1 = _cell_weights(lam, h)
    with np.errstate(divide="ignore"):
        cells = lam * x[:-1] + np.logaddexp(np.log(u[:-1]) + f0, np.log(u[1:]) + f1)
    terms = [math.log(lam) + math.log1p(lam) + float(special.logsumexp(cells)) if cells.size else -math.inf,
             lam * float(x[0]) + math.log((lam + 1.0) * float(u[0]) + math.exp(min(float(x[0]), 700.0))),
             log_tail]
    out = float(special.logsumexp(terms))
    if not math.isfinite(out):
        return math.inf
    # (each cell's term within (|lam x| + 8) u, the sums within their length times u; the cells' float ends off the
    # exact lattice by u |x|, moving gamma^lam by lam u |x|)
    big = float(np.max(np.abs(x))) if x.size else 0.0
    return out + (16.0 + 4.0 * lam * big + 2.0 * x.size) * _U + 1e-12 * abs(out)


def tail_add(x_top, lam, q, sigma):
    r"""The log of a bound on :math:`\int_{L > x} e^{\lambda L}\,dQ` for the add direction (:math:`P = \mathcal N(0,
    \sigma^2)`, :math:`Q = (1-q)P + q\,\mathcal N(1, \sigma^2)`): with :math:`t_x` the output whose loss is
    :math:`x` and :math:`Q/P = e^{\varepsilon'}(q + (1-q)e^{-\varepsilon'}) \le c\,e^{\varepsilon'}` above it
    (:math:`c = q + (1-q)e^{-\varepsilon'_x}`, :math:`\varepsilon' = (2t-1)/(2\sigma^2)`),
    :math:`\int_{t > t_x} (Q/P)^{\lambda+1}\varphi_\sigma \le c^{\lambda+1}e^{\lambda(\lambda+1)/(2\sigma^2)}
    \,\bar\Phi((t_x - \lambda - 1)/\sigma)`. ``inf`` where ``x_top`` is not above 0."""
    if not x_top > 0.0:
        return math.inf
    ep = float(_eps_prime(np.array([x_top]), q)[0]) * (1.0 - 4.0 * _U)        # (rounded down: a wider region)
    t = sigma * sigma * ep + 0.5
    log_c = float(np.logaddexp(math.log(q), math.log1p(-q) - ep)) if q < 1.0 else 0.0
    z = (t - lam - 1.0) / sigma
    out = (lam + 1.0) * log_c + 0.5 * lam * (lam + 1.0) / (sigma * sigma) + float(special.log_ndtr(-z))
    return out + 1e-12 * (1.0 + abs(out))


def tail_remove(x_top, lam, q, sigma):
    r"""The log of a bound on :math:`\int_{L > x} e^{\lambda L}\,dQ` for the remove direction (:math:`Q = \mathcal N(0,
    \sigma^2)`, losses at most :math:`-\ln(1-q)`): :math:`-\infty` where ``x_top`` reaches that, else
    :math:`(1-q)^{-\lambda}` times the :math:`Q`-mass above ``x_top``, the add direction's loss below
    :math:`-x_{top}`: :math:`\Phi(t/\sigma)` at its output :math:`t`. At
    :math:`q = 1` the Gaussian pair's, whose remove direction is its add direction."""
    if q >= 1.0:
        return tail_add(x_top, lam, q, sigma)          # (the Gaussian pair: symmetric, the add direction's tail)
    top = -math.log1p(-q)
    if x_top >= top * (1.0 + 4.0 * _U):
        return -math.inf
    xa = -x_top
    if not xa > math.log1p(-q):
        return -math.inf
    t = sigma * sigma * float(_eps_prime(np.array([xa]), q)[0]) + 0.5
    t = t + 4.0 * _U * (abs(t) + 1.0)                                             # (rounded up: more mass)
    out = lam * top + float(special.log_ndtr(t / sigma))
    return out + 1e-12 * (1.0 + abs(out))


def tail_replace(x_top, lam, q, sigma):
    r"""The log of a bound on :math:`\int_{L > x} e^{\lambda L}\,dQ_R` under replace-one: :math:`P_R \ge
    (1-q)\mathcal N(0, \sigma^2)`, so the loss is at most the add direction's plus :math:`\ln(1/(1-q))` and
    :math:`Q_R^{\lambda+1}P_R^{-\lambda} \le (1-q)^{-\lambda} Q_R^{\lambda+1}\mathcal N(0,\sigma^2)^{-\lambda}`: the add
    direction's bound at :math:`x + \ln(1-q)`, times :math:`(1-q)^{-\lambda}`."""
    if q >= 1.0:
        return math.inf                                 # (no tilted read-out there: the closed form answers)
    out = -lam * math.log1p(-q) + tail_add(x_top + math.log1p(-q), lam, q, sigma)
    return out + 1e-12 * (1.0 + abs(out))
