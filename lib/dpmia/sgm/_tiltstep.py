r"""The single-step pairs of the tilted far-tail read-outs (:mod:`._tilt`) and their certified reference values.

A tilted read-out is certified by comparing each single-step grid pair with reference values of the true profile at
its grid points (:func:`._tiltexcess._excess`): here those values, moved to the safe side by their float error, and the
remove direction's dominating pair, built from the add direction's cell masses so that its far tail keeps its
relative accuracy.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from .. import gaussian
from .. import pld as _pld
from ._chain import _single_pair
from ._replace import replace_one_profile
from ._step import _cached_grid, _eps_prime, _tail_logs
from ._stepmgf import log_mgf_bound, tail_add, tail_remove, tail_replace

#: Unit roundoff of a double.
_U = np.finfo(float).eps / 2.0


class Lowered(NamedTuple):
    r"""A dominated single-step pair's reference (:func:`._tiltexcess._excess`): the lowered ``values`` at its grid
    points (their polyline lies below the profile, in :math:`e^\varepsilon`), and ``points``, lower values of the
    profile at the same points, not lowered (or ``None``). On a cell the profile is at least its right end's value
    (it decreases) and :math:`1 - e^\varepsilon`: where a cell holding the bulk of the P-mass (tiny q) has a chord
    gap above the profile, ``values`` are 0 at its ends while ``points`` are not."""

    values: np.ndarray
    points: np.ndarray | None
    #: ``lam ->`` an upper bound on :math:`\ln M_B(\lambda)`, the log of the true step's moment generating function of
    #: the loss under :math:`Q` (``inf`` where none is known): what a weighted excess costs once composed
    #: (:mod:`._tiltexcess`)
    log_mgf: object = None
    #: upper values of the profile at the same points (or ``None``), from which ``log_mgf`` is built
    upper: np.ndarray | None = None


def _mgf_from(x, h, upper, tail):
    """``lam ->`` :func:`._stepmgf.log_mgf_bound` from upper profile values at the points ``x`` and ``tail(x_top,
    lam)``."""
    x, upper = np.asarray(x, float), np.asarray(upper, float)
    seen = {}

    def log_mgf(lam):
        # (a pair's splits all ask at its tilt: the O(n) sum once per tilt)
        if lam not in seen:
            seen[lam] = log_mgf_bound(x, h, upper, lam, tail(float(x[-1]), lam))
        return seen[lam]
    return log_mgf


def lowered_values(ref):
    """The lowered values of a dominated pair's reference (:class:`Lowered`), or ``ref`` itself."""
    return ref.values if isinstance(ref, Lowered) else ref


def _log_remove_upper(z, q, mu, pad):
    r"""An upper bound on the log of one step's remove profile at each ``z >= 0`` (an array):
    :math:`H_{e^z}(P\|Q) = c\,\delta'` with :math:`c = 1 - e^{z}(1-q)` and :math:`\delta'` the Gaussian pair's
    profile at :math:`\ln(q e^z / c)` (see :func:`dpmia.sgm._onestep._log_delta_remove`), relatively accurate
    also next to the top of the support :math:`-\ln(1-q)`, where :math:`c` vanishes: its argument
    :math:`z + \ln(1-q)` is moved down by its rounding, which only raises the value. At :math:`q = 1` the Gaussian
    pair's own profile. Each Gaussian profile is raised by :func:`_log_delta_pad`, its argument lowered by its
    rounding, and ``z`` by ``pad`` (at least the distance between each float ``z`` and the exact grid point its value
    is for: next to the top, where :math:`c` vanishes, :math:`\ln c` moves by that distance over :math:`c`)."""
    z = np.maximum(z - pad, 0.0)
    if q >= 1.0:
        return gaussian.log_delta(z, mu) + _log_delta_pad(z, mu)
    arg = z + math.log1p(-q)
    arg = arg - 4.0 * _U * (np.abs(z) + abs(math.log1p(-q)))
    out = np.full(z.size, -np.inf)
    live = arg < 0.0
    if not live.any():
        return out
    with np.errstate(divide="ignore"):
        log_c = np.log(-np.expm1(arg[live]))
    et = math.log(q) + z[live] - log_c
    et = et - 4.0 * _U * (abs(math.log(q)) + z[live] + np.abs(log_c))
    res = np.empty(et.size)
    up = et >= 0.0
    if up.any():
        res[up] = log_c[up] + gaussian.log_delta(et[up], mu)
    if (~up).any():
        a = np.exp(et[~up])
        res[~up] = log_c[~up] + np.log(-np.expm1(et[~up]) + a * gaussian.delta(-et[~up], mu))
    out[live] = res + _log_delta_pad(np.abs(et), mu)
    return out


def _log_delta_pad(e, mu):
    r"""A bound on the relative error of the Gaussian profile :math:`\delta_G(e; \mu)` as computed (the kernel and
    its argument's rounding): about :math:`u\,a^2` from :math:`\varphi(a)`, :math:`a = e/\mu + \mu/2` (a relative
    error of :math:`e` moves :math:`\ln\delta_G` by its slope :math:`a/\mu` times :math:`e`), and :math:`u/\mu` from
    the two terms' difference, taken 16-fold, plus 1e-12 (a review measured 1e-11 at :math:`\sigma = 1000`)."""
    a = np.asarray(e, float) / mu + 0.5 * mu
    return 1e-12 + 16.0 * _U * (a * a + 8.0 / mu + 1.0)


def _add_reference(run, one):
    r"""The add direction's reference values of ``one`` (:func:`dpmia.pld.from_profile`'s), moved to the safe side by
    :func:`_log_delta_pad` at each point's Gaussian argument :math:`\varepsilon'` (the values are
    :math:`q\,\delta_G(\varepsilon')`, or its reflection below :math:`\varepsilon' = 0`), or ``None``."""
    if one.ref is None or one.ref.size != one.pmf.size:
        return None
    q, sigma, _ = run
    x = one.losses
    with np.errstate(all="ignore"):
        ep = np.abs(np.where(x > (math.log1p(-q) if q < 1.0 else -math.inf), _eps_prime(x, q), 0.0))
    rel = np.expm1(_log_delta_pad(np.where(np.isfinite(ep), ep, 0.0), 1.0 / sigma))
    ref = np.asarray(one.ref, float)
    if one.kind == "pessimistic":
        return np.clip(ref * (1.0 + rel), 0.0, 1.0)
    if one.ref_points is None or any(np.size(v) != ref.size for v in one.ref_points):
        return Lowered(np.clip(ref * (1.0 - rel), 0.0, 1.0), None)
    lower, upper = (np.asarray(v, float) for v in one.ref_points)
    upper = np.clip(upper * (1.0 + rel), 0.0, 1.0)
    return Lowered(np.clip(ref * (1.0 - rel), 0.0, 1.0), np.clip(lower * (1.0 - rel), 0.0, 1.0),
                   _mgf_from(x, one.h, upper, lambda top, lam: tail_add(top, lam, q, sigma)),
                   upper)


def _reference(run, one, kind, direction, one_tail, kinks="clip"):
    r"""The reference values of the single-step pair ``one`` at its grid points, or ``None``: stored by
    :func:`dpmia.pld.from_profile` for the add direction (:func:`_add_reference`: moved to the safe side by their
    float error). For the remove direction, a dominating pair is
    measured against the exact remove profile at losses :math:`\ge 0` (:func:`_log_remove_upper`) and the
    reflected add reference below (:math:`\delta_{rev}(-x) = 1 - e^{-x} + e^{-x}\,\delta(x)`, exact for any pair,
    and far from 0 there); a dominated pair against the reflected lowered values, less a bound on their
    cancellation. ``kinks``: as the pair was built with (:func:`._chain._single_pair`)."""
    if direction == "add":
        return _add_reference(run, one)
    q, sigma, _ = run
    add = _single_pair(q, sigma, one.h, kind, "add", one_tail, kinks=kinks)
    a_ref = _add_reference(run, add)
    if a_ref is None or add.ref.size != one.pmf.size or add.pmf.size != one.pmf.size:
        return None
    x = add.losses[::-1]
    if kind != "pessimistic":
        # (the lowered values and the points alike: the reflection of a chord is a chord, of a point its point)
        if a_ref.points is None:
            return Lowered(_reflected_values(x, a_ref.values[::-1], -1.0), None)
        upper = _reflected_values(x, a_ref.upper[::-1], 1.0)
        return Lowered(_reflected_values(x, a_ref.values[::-1], -1.0), _reflected_values(x, a_ref.points[::-1], -1.0),
                       _mgf_from(-x, one.h, upper, lambda top, lam: tail_remove(top, lam, q, sigma)), upper)
    ref = _reflected_values(x, a_ref[::-1], 1.0)
    z = -x
    # (at q = 1 too, where the pair is the Gaussian one: reflected, 1 - e^{-x} + e^{-x} ref cancels e^{-x}-fold)
    pos = z >= 0.0
    if pos.any():
        # each z is a float of the add grid's losses, (offset + j) h + shift, negated: within u of the product
        # and u of the sum of that grid's exact point; the remove pair's grid (the reflection, its shift
        # brought into [0, h) in floats) is within 2u h of the exact reflection. Taken 4-fold
        lattice = np.abs((add.offset + np.arange(add.pmf.size)) * add.h)[::-1]
        pad = 4.0 * _U * (lattice + np.abs(x) + add.h) + 1e-300
        ref[pos] = np.exp(_log_remove_upper(z[pos], q, 1.0 / sigma, pad[pos]))
    return np.clip(ref, 0.0, 1.0)


def _reflected_values(x, values, side):
    r""":math:`1 - e^{-x} + e^{-x} v` at each add loss ``x`` (reversed: the remove direction's points), moved by its
    rounding to the side ``side`` (+1 up, -1 down): expm1, exp, the product and the sum (x >= 0 below the remove
    direction's loss 0: two positive terms) each within an ulp of their terms, so within 4u of the terms' sum (8u
    here)."""
    with np.errstate(over="ignore", under="ignore"):
        em = np.exp(np.minimum(-x, 700.0))
        refl = np.where(x < 700.0, -np.expm1(-x) + em * values, 1.0)
        err = 8.0 * _U * (np.abs(np.expm1(-x)) + em * values)
    return np.clip(refl + side * err, 0.0, 1.0)


def _symmetric_reference(run, one):
    r"""The reference values of a replace-one (Poisson) single-step pair ``one`` (:func:`._symmetric._symmetric_pair`)
    at its grid points, or ``None``: the values it was built from (rounded outward by the replace-one profile's
    float error, :func:`._replace.replace_one_profile`), moved by what the grid's float losses
    :math:`\mathrm{fl}(jh)` may miss of the exact points :math:`jh` the atoms sit at (at most :math:`u|x|`): the
    profile's slope is :math:`-e^{x} P(L > x)`, so that moves it by at most :math:`u|x|e^{x}P(L > x - u|x|)`, with
    :math:`P(L > x)` at :math:`x(1 - 4u)` (doubled, for its rounding; at most 1 below 0)."""
    if one.ref is None or one.ref.size != one.pmf.size:
        return None
    q, sigma, _ = run
    x = one.losses
    with np.errstate(under="ignore", over="ignore"):
        p_tail = np.minimum(2.0 * replace_one_profile(np.maximum(x * (1.0 - 4.0 * _U), 0.0), q, sigma)[2], 1.0)
        pad = _U * np.abs(x) * np.exp(np.minimum(x, 700.0)) * np.where(x > 0.0, p_tail, 1.0) * 2.0
    ref = np.asarray(one.ref, float)
    if one.kind == "pessimistic":
        return np.clip(ref + pad, 0.0, 1.0)
    if one.ref_points is None or any(v is None or np.size(v) != ref.size for v in one.ref_points):
        return Lowered(np.clip(ref - pad, 0.0, 1.0), None)
    lower, upper = (np.asarray(v, float) for v in one.ref_points)
    upper = np.clip(upper + pad, 0.0, 1.0)
    return Lowered(np.clip(ref - pad, 0.0, 1.0), np.clip(lower - pad, 0.0, 1.0),
                   _mgf_from(x, one.h, upper, lambda top, lam: tail_replace(top, lam, q, sigma)), upper)


def _remove_dominating(q, sigma, refl, one_tail):
    r"""The remove direction's dominating single-step pair built from the add direction's cells, or ``refl`` (the
    reflected add pair, whose grid it shares) where the grids do not line up.

    The reflection carries the add pair's float error at its lowest losses, an absolute u or so per atom (where
    its profile is near :math:`1 - e^x`), to the top of the remove direction, where it outweighs a far tail by many
    orders. Here the remove atoms come from the add cells' masses instead, each relatively accurate. Add cell
    j, :math:`(x_j, x_{j+1}]`, holds :math:`P`-mass :math:`p_j`; reflected, that is :math:`Q_{rem}`-mass :math:`p_j` at
    remove losses in :math:`[-x_{j+1}, -x_j)`, split between the two ends keeping :math:`E_{Q_{rem}}[e^{-L}]`
    (the chord):
    :math:`A_j/(y_{j+1} - y_j)` at :math:`-x_j` (:math:`y = e^x`) and the rest at :math:`-x_{j+1}`, with
    :math:`A_j = E_P[(y_{j+1} - e^{L}); \text{cell}_j] = q\,(v_{j+1}\,p_j - r_j)`, :math:`v = e^{u} = (e^x - 1 + q)/q`,
    :math:`u = (2t - 1)/(2\sigma^2)` the output's log-ratio and :math:`r_j = E_P[e^u; \text{cell}_j]` the cell's mass
    under :math:`\mathcal N(1, \sigma^2)`: both masses from Gaussian tails in log space, their difference without the
    cancellation the Q-mass has next to :math:`\ln(1-q)`. :math:`(1 - e^{\varepsilon - s})_+` is affine in
    :math:`e^{-s}` on a cell and convex overall, so the split only raises
    :math:`E_{Q}[(1 - e^{\varepsilon - \sum L})_+]`, the composed profile, at every :math:`\varepsilon` (Jensen,
    one step at a time), and more so with :math:`A_j` rounded up (by 1e-12 of its terms); mass beyond the grid goes
    to its bottom point (losses rounded up) or to :math:`+\infty`. The read-out certifies the pair against the
    reference values anyway (:func:`._tiltexcess._excess`)."""
    for anchor in (True, False):
        x = _cached_grid(q, sigma, refl.h, one_tail, anchor)[0]
        if x.size == refl.pmf.size and np.allclose(-x[::-1], refl.losses, rtol=0.0, atol=1e-6 * refl.h):
            break
    else:
        return refl
    lq = math.log1p(-q) if q < 1.0 else -math.inf
    lin = x <= lq
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        u = np.where(lin, -np.inf, _eps_prime(np.where(lin, 1.0, x), q))
        log_nu, log_r, _ = _tail_logs(sigma * sigma * u + 0.5, lin, q, sigma)
        log_p = log_nu[:-1] + np.log(-np.expm1(np.minimum(log_nu[1:] - log_nu[:-1], 0.0)))
        log_rc = log_r[:-1] + np.log(-np.expm1(np.minimum(log_r[1:] - log_r[:-1], 0.0)))
        a1 = u[1:] + log_p                                   # log of v_{j+1} p_j
        log_a = math.log(q) + a1 + np.log(-np.expm1(np.minimum(log_rc - a1, 0.0)) + 2e-12)
        pc = np.exp(log_p)
        up = np.minimum(np.exp(log_a - x[:-1] - np.log(np.expm1(np.diff(x)))), pc)
        up = np.where(np.isfinite(up), up, pc)
        low = pc - up
    m = np.zeros(x.size)
    m[:-1] += up                  # at -x_j (index n - 1 - j once reversed)
    m[1:] += low                  # at -x_{j+1}
    m[-1] += math.exp(float(log_nu[-1]))      # add losses above the grid: remove losses below its bottom, rounded up
    inf = max(-math.expm1(float(log_nu[0])), 0.0)
    # (the cells' masses sum to 1 up to their rounding: a total a few ulps above 1 is brought under it, which the
    # reference values then measure like any other error)
    total = np.sum(m.astype(np.longdouble))
    if total > 1.0:
        m = m * (1.0 / float(total)) * (1.0 - 4.0 * _U)
    return _pld.PLD(refl.h, refl.offset, m[::-1].copy(), inf, 0.0, "pessimistic", shift=refl.shift)


def _topped(one, ref, trigger=1e-9, margin=1e-12, most=4096, settled=64):
    r"""A dominating single-step pair ``one`` with :math:`Q`-mass added to its top atoms where their profile falls short
    of the reference values ``ref`` by more than ``trigger`` relative; else ``one`` itself.

    Far out, the atoms come from differences of profile values near each other's size, and their profile at the top
    of the grid lags the values they were built from by 1e-8 up to 100 % (at q = 0.1, sigma = 0.5 replace-one, from
    x = 71.5 to the top, 74.8, where the profile is 1e-284 ... 1e-310). :func:`._tiltexcess._excess` counts such a
    point's shortfall as an absolute excess :math:`s`, which the read-out charges :math:`T`-fold at every
    :math:`\varepsilon`: 4e-288 there, where delta is 1e-300. A sweep down from the top instead adds to the atom at
    :math:`x_{j+1}` what lifts the profile at :math:`x_j`,
    :math:`g_j = \sum_{i>j} m_i(1 - e^{x_j - x_i})`, to ``ref[j]`` times :math:`1 + \mathrm{margin}`
    (:math:`g_j = D_j`, :math:`D_j = D_{j+1} + (1 - e^{-h})S_{j+1}`, :math:`S_j = m_j + e^{-h}S_{j+1}`). Added mass
    only raises the profile at every :math:`\varepsilon` (:math:`H_\gamma` is linear in the measure, its integrand
    non-negative), and the read-out measures the pair it gets against ``ref`` anyway (:func:`._tiltexcess._excess`): any
    rounding here only moves a point's excess between its relative and absolute parts. The sweep stops after
    ``settled`` points in a row short by at most ``trigger``, or after ``most`` points; the top point, with no atom
    above it, keeps its shortfall (at most the profile there). Each mass added is at most its point's shortfall plus
    ``margin`` times its reference value, over :math:`1 - e^{-h}`."""
    if one.kind != "pessimistic" or ref is None or np.size(ref) != one.pmf.size or one.pmf.size < 2:
        return one
    r = np.asarray(ref, float)
    pmf = one.pmf.copy()
    decay, w = math.exp(-one.h), -math.expm1(-one.h)
    n = pmf.size
    s, d = float(pmf[-1]), 0.0                  # S_{n-1}, D_{n-1}
    fine, changed = 0, False
    for j in range(n - 2, max(n - 2 - most, -1), -1):
        d = d + w * s                           # D_j, before any mass added at j + 1
        if d < r[j] * (1.0 - trigger):
            a = (r[j] * (1.0 + margin) - d) / w
            pmf[j + 1] += a
            s, d, fine, changed = s + a, d + w * a, 0, True
        else:
            fine += 1
            if fine >= settled:
                break
        s = float(pmf[j]) + decay * s
    return dataclasses.replace(one, pmf=pmf) if changed else one
