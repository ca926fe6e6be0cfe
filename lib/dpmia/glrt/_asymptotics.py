r"""Composition and large-dimension asymptotics of the GLRT adversary (Kaissis et al., Theorems 2 and 3).

:math:`N` releases with the same unknown direction are one release with noncentrality
:math:`\lambda = N\Delta^2/\sigma^2` (Theorem 2; with different noise, :math:`\sum_i \Delta_i^2/\sigma_i^2`).
For :math:`d \gg 1` the curve :math:`R` is close to Gaussian (Theorem 3, eq. 35 corrected): GDP with
:math:`\mu = \lambda/\sqrt{2d}`, an approximation, not a bound.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import special

from .. import _checks, gaussian
from ._curves import _d_lam, _fpr


def noncentrality(sensitivity, sigma, rounds=1):
    r"""Theorem 2: :math:`\lambda = N\Delta^2/\sigma^2` for ``rounds`` = :math:`N` releases with the same unknown
    direction.

    The adversary averages the releases; :math:`\bar y \sim \mathcal N(\nu, \sigma^2/N)` is sufficient.
    """
    s = _checks.nonnegative("sensitivity", sensitivity)
    sg = _checks.positive("sigma", sigma)
    n = _checks.integer("rounds", rounds, lo=1)
    return n * (s / sg) ** 2


def noncentrality_heterogeneous(sensitivities, sigmas):
    r""":math:`\lambda = \sum_i \Delta_i^2/\sigma_i^2` (releases with different noise, same direction).

    The precision-weighted mean is sufficient, so Theorem 1 applies with this :math:`\lambda` - the
    GLRT analogue of :math:`\mu^2` adding up in GDP (our extension; the paper mentions only a numerical route).
    """
    s = np.atleast_1d(_checks.nonnegative("sensitivities", sensitivities))
    sg = np.atleast_1d(_checks.positive("sigmas", sigmas))
    if s.shape != sg.shape or s.ndim != 1 or s.size == 0:
        raise ValueError(f"sensitivities and sigmas must be 1-d arrays of the same length >= 1, "
                         f"got shapes {s.shape} and {sg.shape}")
    return float(np.sum((s / sg) ** 2))


def gdp_mu_asymptotic(d, lam, *, warn=True):
    r"""Theorem 3 (eqs. 36-37): for :math:`d \gg 1` and small :math:`\lambda/d`, :math:`R \approx` GDP with
    :math:`\mu = \lambda/\sqrt{2d}`.

    **Not a bound.** Chi-square tails are heavier than Gaussian ones, so the approximation
    understates :math:`\varepsilon` (it is not conservative even inside its regime). The regime is
    :math:`d\to\infty` with :math:`\lambda/\sqrt{2d}` fixed, not the paper's ":math:`N\to\infty`": with
    ``warn`` a ``UserWarning`` is raised when :math:`\lambda/d > 0.1`, and when :math:`\lambda > 2d`,
    where the value even exceeds the NPO adversary's :math:`\sqrt\lambda`.
    """
    dd, ll = _d_lam(d, lam)
    mu = ll / math.sqrt(2.0 * dd)
    if warn and ll > 2.0 * dd:
        warnings.warn(f"lam = {ll:g} > 2d = {2 * dd}: the asymptotic GDP mu = {mu:.4g} exceeds the NPO "
                      f"value sqrt(lam) = {math.sqrt(ll):.4g}; Theorem 3 does not apply", UserWarning, stacklevel=2)
    elif warn and ll > 0.1 * dd:
        warnings.warn(f"lam/d = {ll / dd:.3g} > 0.1: outside Theorem 3's regime (lam/d -> 0); the GDP "
                      f"approximation is far from the exact GLRT curve", UserWarning, stacklevel=2)
    return mu


def roc_clt(fpr, d, lam, *, form="eq44"):
    r"""Gaussian approximations of Theorem 1's :math:`R` for large :math:`d` (Theorem 3).

    * ``"eq44"`` (= eq. 35 corrected): :math:`Q\big((Q^{-1}(x) - \lambda/\sqrt{2d})/\sqrt{1+2\lambda/d}\big)`;
    * ``"eq35_printed"``: the printed eq. (35), with :math:`\lambda/(\sqrt2\,d)` in place of :math:`\lambda/\sqrt{2d}`;
    * ``"gdp"`` (eq. 36): :math:`Q(Q^{-1}(x) - \mu)`, :math:`\mu = \lambda/\sqrt{2d}`
      (:func:`dpmia.gaussian.tpr_at_fpr`).
    """
    x = _fpr(fpr)
    dd, ll = _d_lam(d, lam)
    xa = np.asarray(x, float)
    if form == "gdp":
        return gaussian.tpr_at_fpr(x, ll / math.sqrt(2.0 * dd))
    if form not in ("eq44", "eq35_printed"):
        raise ValueError(f"form must be 'eq44', 'eq35_printed' or 'gdp', got {form!r}")
    root = math.sqrt(1.0 + 2.0 * ll / dd)
    shift = ll / math.sqrt(2.0 * dd) if form == "eq44" else ll / (math.sqrt(2.0) * dd)
    with np.errstate(divide="ignore"):
        z = -special.ndtri(xa)
    out = special.ndtr(-(z / root - shift / root))
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0), fpr)
