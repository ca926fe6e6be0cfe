r"""Central and noncentral chi-square laws in log space, accurate far into both tails.

The GLRT adversary of Kaissis et al. (Theorem 1) thresholds the energy :math:`\|y\|^2/\sigma^2`, which
is :math:`\chi^2_d` without the target and noncentral :math:`\chi^2_d(\lambda)` with it. Its privacy
profile needs survival functions far below the float range (:math:`\Psi_{\chi^2_d}(t)\approx 10^{-320}`
when :math:`\delta = 10^{-300}`), so every function here returns a logarithm:

* :func:`log_sf`, :func:`log_cdf` - :math:`\log\Psi` and :math:`\log\Phi`. The central law is the
  regularised incomplete gamma function, :math:`\Psi_{\chi^2_d}(t) = Q(d/2, t/2)`; where it
  underflows, the continued fraction of Legendre (upper tail) or the power series (lower tail) is
  summed in log space. The noncentral law is the Poisson mixture
  :math:`\Psi_{\chi^2_d(\lambda)}(t) = \sum_k \frac{e^{-\lambda/2}(\lambda/2)^k}{k!}\,\Psi_{\chi^2_{d+2k}}(t)`,
  summed with ``logsumexp`` over a window of :math:`k` around the largest term (all terms are
  positive, so there is no cancellation); the window's incomplete gamma functions come from one of them by
  their recurrence in the order, the Poisson weights from Loader's saddle-point form;
* :func:`log_likelihood_ratio` - :math:`L(t) = \log f_{\chi^2_d(\lambda)}(t)/f_{\chi^2_d}(t)`, which is
  :math:`-\lambda/2 + \log{}_0F_1(;d/2;\lambda t/4)`, from the power series, the exponentially scaled
  Bessel function, or Debye's uniform expansion where the scaled Bessel function underflows;
* :func:`likelihood_ratio_inverse` - the :math:`t` with :math:`L(t) = y` (bisection in
  :math:`\log t`, a fixed number of steps: the same bits on every call).

Accuracy (checked against 40-digit mpmath in the tests): relative error below about 1e-13 for the
log-probabilities down to 1e-320 and for :math:`L`, for :math:`d \le 10^4`, :math:`\lambda \le 10^4`.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from . import _checks

__all__ = ["log_sf", "log_cdf", "log_likelihood_ratio", "likelihood_ratio_inverse", "isf", "ppf"]

_TINY = 1e-290          # below this, scipy's regularised gamma functions lose relative accuracy
_LOG_TRUNC = 45.0       # mixture terms below max * e^-45 (relative 3e-20) are dropped


# ------------------------------------------------------------------------------------------
# regularised incomplete gamma functions in log space
# ------------------------------------------------------------------------------------------
def _log_gammaincc_cf(a, x):
    """log Q(a, x) by Legendre's continued fraction (modified Lentz), for x > a + 1."""
    b = x + 1.0 - a
    c = np.full_like(x, 1e300)
    dd = 1.0 / b
    h = dd.copy()
    for i in range(1, 400):
        an = -i * (i - a)
        b = b + 2.0
        dd = an * dd + b
        dd = np.where(np.abs(dd) < 1e-300, 1e-300, dd)
        c = b + an / c
        c = np.where(np.abs(c) < 1e-300, 1e-300, c)
        dd = 1.0 / dd
        step = dd * c
        h = h * step
        if np.all(np.abs(step - 1.0) < 1e-15):
            break
    return -x + a * np.log(x) - special.gammaln(a) + np.log(h)


def _log_gammainc_series(a, x):
    """log P(a, x) by the power series x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n)), for x < a + 1."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    ap = np.array(a, dtype=float) + np.zeros_like(x)
    for _ in range(5000):
        ap = ap + 1.0
        term = term * x / ap
        total = total + term
        if np.all(term < 1e-17 * total):
            break
    return -x + a * np.log(np.where(x > 0, x, 1.0)) - special.gammaln(a + 1.0) + np.log(total)


def _log_regularised(scipy_fn, fallback, a, x):
    """log of a regularised incomplete gamma function, with a log-space fallback where it underflows."""
    a, x = np.broadcast_arrays(np.asarray(a, float), np.asarray(x, float))
    with np.errstate(divide="ignore"):
        v = scipy_fn(a, x)
        out = np.log(v)
    bad = (v < _TINY) & (x > 0)
    if np.any(bad):
        out = out.copy()
        out[bad] = fallback(a[bad], x[bad])
    return out


def _log_q(a, x):
    """log Q(a, x) (upper regularised incomplete gamma), elementwise on broadcast arrays."""
    return _log_regularised(special.gammaincc, _log_gammaincc_cf, a, x)


def _log_p(a, x):
    """log P(a, x) (lower regularised incomplete gamma); -inf at x = 0."""
    return _log_regularised(special.gammainc, _log_gammainc_series, a, x)


# ------------------------------------------------------------------------------------------
# the Poisson mixture
# ------------------------------------------------------------------------------------------
def _stirlerr(a):
    r""":math:`\ln\Gamma(a+1) - (a + \tfrac12)\ln a + a - \tfrac12\ln 2\pi` (Stirling's error, small and accurate:
    its series above 15, the direct form below, where it has no cancellation to speak of), for ``a`` > 0."""
    a = np.asarray(a, float)
    big = a > 15.0
    aa = np.where(big, a, 16.0)
    nn = aa * aa
    series = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - 1.0 / (1188 * nn)) / nn) / nn) / nn) / aa
    ab = np.where(big, 1.0, a)
    direct = special.gammaln(ab + 1.0) - (ab + 0.5) * np.log(ab) + ab - 0.5 * np.log(2.0 * np.pi)
    return np.where(big, series, direct)


def _bd0(a, x):
    r""":math:`a\ln(a/x) + x - a \ge 0` without cancellation (Loader's series where :math:`a` is near :math:`x`)."""
    a, x = np.asarray(a, float), np.asarray(x, float)      # (elementwise: numpy broadcasts them)
    near = np.abs(a - x) < 0.1 * (a + x)
    with np.errstate(divide="ignore", invalid="ignore"):
        far = a * np.log(a / x) + x - a
    v = np.where(near, (a - x) / (a + x), 0.0)
    s = (a - x) * v
    ej = 2.0 * a * v
    v2 = v * v
    # The terms 2a v^(2j+1)/(2j+1) keep one sign and shrink (|v| < 0.1), so once a term leaves an entry unchanged no
    # later one changes it (rounding is monotone): running past the step where every entry has stopped changing
    # leaves every bit as it is. The first steps, as many as take the largest |v|^(2j) below 2^-60, run without the
    # check; it then runs each step as before.
    vmax = float(np.max(np.abs(v))) if v.size else 0.0
    first = 1
    if vmax > 0.0:
        first = min(int(np.ceil(30.0 * np.log(2.0) / -np.log(vmax))), 58) + 1
        for j in range(1, first):
            ej = ej * v2
            s = s + ej / (2 * j + 1)
    for j in range(first, 60):
        ej = ej * v2
        s1 = s + ej / (2 * j + 1)
        if np.all(s1 == s):
            break
        s = s1
    return np.where(near, s, np.where(a == 0.0, x, far))


def _log_gamma_density(a, x):
    r""":math:`\ln(e^{-x} x^a / \Gamma(a+1))` for ``a`` >= 0, ``x`` > 0 (the Poisson probability of ``a`` at mean
    ``x``), to a few ulps of itself: :math:`-\mathrm{stirlerr}(a) - \mathrm{bd0}(a, x) - \tfrac12\ln 2\pi a`
    (Loader 2000), where the plain :math:`a\ln x - x - \ln\Gamma(a+1)` loses :math:`u` times its terms."""
    a, x = np.asarray(a, float), np.asarray(x, float)      # (elementwise: numpy broadcasts them)
    pos = a > 0.0
    ap = np.where(pos, a, 1.0)
    with np.errstate(divide="ignore"):
        return np.where(pos, -_stirlerr(ap) - _bd0(ap, x) - 0.5 * np.log(2.0 * np.pi * ap), -x)


def _ladder(a0, x, n, upper):
    r"""``log [Q or P](a0 + j, x)`` for ``j`` = 0 .. ``n`` - 1 (rows: the points): one regularised incomplete gamma
    function a point, the rest by :math:`Q(a+1, x) = Q(a, x) + g(a, x)` upwards and :math:`P(a, x) = P(a+1, x) +
    g(a, x)` downwards (DLMF 8.8.6), :math:`g(a, x) = e^{-x}x^a/\Gamma(a+1)`: positive terms only. Each :math:`g` comes
    from its neighbour by the factor :math:`x/(a+1)` (or :math:`a/x`), computed afresh (:func:`_log_gamma_density`)
    every 16 steps, so a value carries at most about 40 roundings (below 1e-14 relative); the sums are held relative
    to the first value and rescaled before they leave the float range."""
    if a0.size <= _FEW_ROWS and a0.size * n <= 2**20:
        out = _ladder_columns(a0, x, n, upper)
    else:
        out = np.empty((a0.size, n))
        for lo in range(0, a0.size, 4096):
            out[lo:lo + 4096] = _ladder_rows(a0[lo:lo + 4096], x[lo:lo + 4096], n, upper)
    bad = np.flatnonzero(np.any(np.isnan(out) | (out == np.inf), axis=1))
    if bad.size:
        # where the ratios of neighbours leave the float range (x so large, 1e80 say, that a log of its size no
        # longer resolves them, or a first value that underflows even in log space): each function on its own
        fn = _log_q if upper else _log_p
        out[bad] = fn(a0[bad, None] + np.arange(n)[None, :], x[bad, None])
    return out


#: Up to this many rows (and a million entries) the ladder runs along its columns at once (:func:`_ladder_columns`):
#: a step a column in Python costs more than every column's own density.
_FEW_ROWS = 16


def _ladder_columns(a0, x, n, upper):
    r""":func:`_ladder` for a few rows: every :math:`\log g(a_0 + j, x)` from :func:`_log_gamma_density` (a few ulps
    each, no ratios carried) and their running log-sum from the first value (``np.logaddexp.accumulate``, upwards
    for Q, downwards for P): about ``n`` roundings of the running sum, as the step-by-step ladder's sums."""
    terms = _log_gamma_density(a0[:, None] + np.arange(n - 1, dtype=float)[None, :], x[:, None])
    if upper:
        seq = np.concatenate([np.atleast_1d(_log_q(a0, x))[:, None], terms], axis=1)
        return np.logaddexp.accumulate(seq, axis=1)
    seq = np.concatenate([np.atleast_1d(_log_p(a0 + (n - 1), x))[:, None], terms[:, ::-1]], axis=1)
    return np.logaddexp.accumulate(seq, axis=1)[:, ::-1]


def _ladder_rows(a0, x, n, upper):
    """:func:`_ladder` on one block of rows."""
    first = a0 if upper else a0 + (n - 1)
    base = _log_q(first, x) if upper else _log_p(first, x)
    lin = np.empty((a0.size, n))
    shift = np.zeros((a0.size, n))
    acc = np.ones(a0.size)
    sh = np.zeros(a0.size)                         # log of the scale acc and r are held in
    lin[:, 0 if upper else n - 1] = 1.0
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        for j in range(1, n):
            a = a0 + (j - 1) if upper else a0 + (n - 1 - j)          # this step adds g(a, x)
            if (j - 1) % 16 == 0:
                r = np.exp(_log_gamma_density(a, x) - base - sh)
            else:
                r = r * (x / a if upper else (a + 1.0) / x)
            acc = acc + r
            big = acc > 1e250
            if np.any(big):
                lg = np.log(acc[big])
                sh[big] += lg
                acc[big] = acc[big] / np.exp(lg)
                r[big] = r[big] / np.exp(lg)
            col = j if upper else n - 1 - j
            lin[:, col] = acc
            shift[:, col] = sh
        return np.log(lin) + shift + base[:, None]


def _mixture(t, d, lam, upper):
    """log of sum_k Pois(k; lam/2) * [Q or P](d/2 + k, t/2) for a 1-d array t (lam > 0)."""
    m = 0.5 * lam
    nu = 0.5 * d - 1.0
    # the largest term sits near the Poisson mode (bulk) or near the mode of K given X = t (tails)
    kb = 0.5 * (np.sqrt(nu * nu + lam * t) - nu)
    kc = np.maximum(m, kb) if upper else np.minimum(m, kb)
    width = int(np.ceil(9.5 * np.sqrt(np.max(kc) + 1.0) + 25.0))
    start = np.maximum(np.floor(kc) - width, 0.0)
    x = 0.5 * t
    while True:
        n = 2 * width + 1
        # the Poisson weights, each to a few ulps of its log (one table over the k any point needs)
        k0 = int(np.min(start))
        table = _log_gamma_density(np.arange(k0, int(np.max(start)) + n, dtype=float), m)
        log_w = table[(start.astype(np.int64) - k0)[:, None] + np.arange(n)[None, :]]
        terms = log_w + _ladder(0.5 * d + start, x, n, upper)
        top = np.max(terms, axis=1)
        left_ok = (start == 0) | (terms[:, 0] < top - _LOG_TRUNC)
        right_ok = terms[:, -1] < top - _LOG_TRUNC
        if np.all(left_ok & right_ok) or width > 10**6:
            break
        width *= 2
        start = np.maximum(start - np.where(left_ok, 0, width // 2), 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        safe_top = np.where(np.isfinite(top), top, 0.0)
        return (safe_top + np.log(np.sum(np.exp(terms - safe_top[:, None]), axis=1))
                + np.where(np.isfinite(top), 0.0, top))


def _prep(t, d, lam):
    tt = _checks.nonnegative("t", t, allow_inf=True)
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.scalar("lam", lam, lo=0.0)
    return tt, dd, ll


def _log_law(t, d, lam, upper):
    tt, dd, ll = _prep(t, d, lam)
    out = _log_law_1d(np.atleast_1d(np.asarray(tt, float)).ravel(), dd, ll, upper)
    return _checks.scalar_or_array(out.reshape(np.shape(tt)), t)


def _log_law_1d(ta, dd, ll, upper):
    """:func:`log_sf` (``upper``) or :func:`log_cdf` on a 1-d float array ``ta`` >= 0, the arguments checked already
    (the GLRT profile's searches call it many times a call)."""
    out = np.empty(ta.size)
    zero, inf = ta == 0.0, np.isinf(ta)
    out[zero] = 0.0 if upper else -np.inf
    out[inf] = -np.inf if upper else 0.0
    mid = ~(zero | inf)
    if np.any(mid):
        if ll == 0.0:
            out[mid] = (_log_q if upper else _log_p)(0.5 * dd, 0.5 * ta[mid])
        else:
            out[mid] = _mixture(ta[mid], dd, ll, upper)
    return np.minimum(out, 0.0)


def log_sf(t, d, lam=0.0):
    r""":math:`\log\Psi_{\chi^2_d(\lambda)}(t) = \log\Pr[X > t]`, :math:`X\sim\chi^2_d(\lambda)`
    (central if ``lam`` = 0).

    ``t`` >= 0 (may be ``inf``), ``d`` integer >= 1, ``lam`` >= 0. Accurate to about 1e-13 relative
    in the probability even where it is far below the smallest double.
    """
    return _log_law(t, d, lam, True)


def log_cdf(t, d, lam=0.0):
    r""":math:`\log\Phi_{\chi^2_d(\lambda)}(t) = \log\Pr[X \le t]` (see :func:`log_sf`)."""
    return _log_law(t, d, lam, False)


# ------------------------------------------------------------------------------------------
# the likelihood ratio
# ------------------------------------------------------------------------------------------
def _log_i_debye(nu, z):
    """log I_nu(z) by Debye's uniform asymptotic expansion (DLMF 10.41.3), terms u_0..u_4; nu >= 50."""
    x = z / nu
    s = np.sqrt(1.0 + x * x)
    p = 1.0 / s
    eta = s + np.log(x / (1.0 + s))
    p2 = p * p
    u1 = p * (3.0 - 5.0 * p2) / 24.0
    u2 = p2 * (81.0 - 462.0 * p2 + 385.0 * p2 * p2) / 1152.0
    u3 = p * p2 * (30375.0 - 369603.0 * p2 + 765765.0 * p2**2 - 425425.0 * p2**3) / 414720.0
    u4 = p2 * p2 * (4465125.0 - 94121676.0 * p2 + 349922430.0 * p2**2 - 446185740.0 * p2**3
                    + 185910725.0 * p2**4) / 39813120.0
    corr = 1.0 + u1 / nu + u2 / nu**2 + u3 / nu**3 + u4 / nu**4
    return nu * eta - 0.5 * np.log(2.0 * np.pi * nu) - 0.5 * np.log(s) + np.log(corr)


def _log_0f1(b, w):
    r""":math:`\log{}_0F_1(;b;w)` for ``b`` >= 1/2 and an array ``w`` >= 0."""
    w = np.asarray(w, float)
    out = np.empty_like(w)
    small = w <= b + 1.0
    if np.any(small):                      # power series: term ratio <= 1/(k+1), 40 terms reach 1e-40
        ws = w[small]
        term = np.ones_like(ws)
        total = np.zeros_like(ws)
        for k in range(40):
            term = term * ws / ((b + k) * (k + 1.0))
            total = total + term
            # from k = 1 on the terms shrink (ratio w/((b+k)(k+1)) < 1/2), so once each is below 2^-54 of its total
            # (under half an ulp) none of the rest changes a bit: the 40 terms' sum, computed without them
            if k % 8 == 7 and np.all(term < 2.0**-54 * total):
                break
        out[small] = np.log1p(total)
    big = ~small
    if np.any(big):
        wb = w[big]
        z = 2.0 * np.sqrt(wb)
        nu = b - 1.0
        if b == 0.5:                       # d = 1: 0F1(;1/2;z^2/4) = cosh z
            out[big] = z + np.log1p(np.exp(-2.0 * z)) - np.log(2.0)
        else:
            with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
                iv = special.ive(nu, z)
            ok = iv > _TINY                # (NaN where scipy gives up, at z beyond about 1e11)
            log_i = np.empty_like(z)
            log_i[ok] = np.log(iv[ok]) + z[ok]
            if np.any(~ok):
                # Debye's expansion is uniform in z for a large order; for a small order and a huge
                # argument, Hankel's: I_nu(z) = e^z / sqrt(2 pi z) (1 - (4 nu^2 - 1)/(8 z) + ...)
                zz = z[~ok]
                if nu >= 50:
                    log_i[~ok] = _log_i_debye(nu, zz)
                else:
                    m = 4.0 * nu * nu
                    log_i[~ok] = zz - 0.5 * np.log(2.0 * np.pi * zz) + np.log1p(
                        -(m - 1.0) / (8.0 * zz) + (m - 1.0) * (m - 9.0) / (2.0 * (8.0 * zz) ** 2))
            out[big] = special.gammaln(b) - nu * np.log(0.5 * z) + log_i
    return out


def log_likelihood_ratio(t, d, lam):
    r"""Log-likelihood ratio of :math:`\chi^2_d(\lambda)` against :math:`\chi^2_d` at :math:`t`.

    .. math::

       L(t) &= -\frac{\lambda}{2} + \log{}_0F_1\!\left(;\tfrac d2;\tfrac{\lambda t}{4}\right) \\
            &= -\frac{\lambda}{2} + \log\Gamma(\tfrac d2) + (1-\tfrac d2)\log\tfrac{\sqrt{\lambda t}}{2}
               + \log I_{d/2-1}(\sqrt{\lambda t}),

    increasing from :math:`-\lambda/2` at :math:`t=0` to :math:`\infty` (Kaissis et al., Sec. 4.5; the
    slope of the ROC curve of Theorem 1 at threshold :math:`t` is :math:`e^{L(t)}`). For ``d`` = 1 it
    is :math:`-\lambda/2 + \log\cosh\sqrt{\lambda t}`.
    """
    tt, dd, ll = _prep(t, d, lam)
    ta = np.asarray(tt, float)
    out = _log_likelihood_ratio_1d(np.atleast_1d(ta).ravel(), dd, ll)
    return _checks.scalar_or_array(out.reshape(np.shape(ta)), t)


def _log_likelihood_ratio_1d(ta, dd, ll):
    """:func:`log_likelihood_ratio` on a 1-d float array ``ta`` >= 0, the arguments checked already."""
    if np.any(np.isinf(ta)):
        raise ValueError("t must be finite for the likelihood ratio")
    return -0.5 * ll + _log_0f1(0.5 * dd, 0.25 * ll * ta)


def likelihood_ratio_inverse(y, d, lam):
    r"""The threshold :math:`t \ge 0` with :math:`L(t) = y`, for :math:`y > -\lambda/2` (``lam`` > 0).

    Returns ``(t_lo, t_hi)`` with :math:`L(t_{lo}) \le y \le L(t_{hi})` as computed and relative
    width about 1e-15: the bracket starts from the bounds :math:`L(t) \le \min(\lambda t/(2d),
    \sqrt{\lambda t}) - \lambda/2` and is narrowed by rounds of 33-point searches in :math:`\log t`
    (vectorised, a fixed rule: the same bits on every call).
    """
    yy = _checks.real("y", y)
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.scalar("lam", lam, lo=0.0, lo_open=True)
    ya = np.atleast_1d(np.asarray(yy, float)).ravel()
    if np.any(ya <= -0.5 * ll):
        raise ValueError(f"y must exceed -lam/2 = {-0.5 * ll!r}, got {ya[ya <= -0.5 * ll][0]!r}")
    b = 0.5 * dd
    L = lambda tt: -0.5 * ll + _log_0f1(b, 0.25 * ll * tt)  # noqa: E731
    # L(t) <= min(lam t / (4b), sqrt(lam t)) - lam/2 (0F1(;b;w) <= min(e^{w/b}, cosh 2 sqrt w)), so the
    # root is at least the larger of the two inverses; double up from there
    z = ya + 0.5 * ll
    lo = np.maximum(4.0 * b * z / ll, z * z / ll)
    hi = lo * 2.0
    for _ in range(2000):
        short = L(hi) < ya
        if not short.any():
            break
        lo = np.where(short, hi, lo)
        hi = np.where(short, hi * 2.0, hi)
    lo, hi = _secant_rounds(L, ya, lo, hi)
    # rounds of 33-point searches in log t keep the cell where L crosses y (deterministic, vectorised),
    # on the rows not yet within 2.3e-16 relative in log t
    k = np.arange(33)[None, :] / 32.0
    for _ in range(40):
        ul, uh = np.log(lo), np.log(hi)
        act = np.flatnonzero(uh - ul > 2.3e-16 * np.maximum(np.abs(ul), 1.0))
        if act.size == 0:
            break
        ula, uha = ul[act], uh[act]
        grid = np.exp(ula[:, None] + (uha - ula)[:, None] * k)
        grid[:, 0], grid[:, -1] = lo[act], hi[act]
        above = L(grid.ravel()).reshape(grid.shape) >= ya[act, None]
        above[:, -1] = True
        j = np.argmax(above, axis=1)
        rows = np.arange(grid.shape[0])
        lo[act] = np.where(j > 0, grid[rows, np.maximum(j - 1, 0)], lo[act])
        hi[act] = grid[rows, j]
    shape = np.shape(yy)
    return (_checks.scalar_or_array(lo.reshape(shape), y), _checks.scalar_or_array(hi.reshape(shape), y))


def _secant_rounds(L, ya, lo, hi, rounds=12):
    r"""Narrow the brackets ``L(lo) < ya <= L(hi)`` by Illinois regula falsi in :math:`\log t` (a fixed
    rule: the same bits on every call).

    Each new point is evaluated and replaces only the end on its side, so the result still brackets
    the root; the searches of :func:`likelihood_ratio_inverse` finish from there (a few evaluations
    per point instead of about 360). Rows whose ends do not bracket as evaluated are left as they are.
    """
    lo, hi = lo.astype(float), hi.astype(float)
    fl, fh = L(lo) - ya, L(hi) - ya
    ok = np.isfinite(fl) & np.isfinite(fh) & (fl < 0.0) & (fh >= 0.0) & (hi > lo)
    if not np.any(ok):
        return lo, hi
    idx = np.flatnonzero(ok)
    tl, th, fl, fh, yv = lo[idx], hi[idx], fl[idx], fh[idx], ya[idx]
    side = np.zeros(idx.size)
    for _ in range(rounds):
        ul, uh = np.log(tl), np.log(th)
        if np.all(uh - ul <= 4e-16 * np.maximum(np.abs(ul), 1.0)):
            break
        um = (ul * fh - uh * fl) / (fh - fl)
        tm = np.exp(np.where(np.isfinite(um), um, 0.5 * (ul + uh)))
        tm = np.where((tm > tl) & (tm < th), tm, np.exp(0.5 * (ul + uh)))
        fm = L(tm) - yv
        inner = (tm > tl) & (tm < th)          # (a point rounded onto an end changes nothing)
        up = (fm >= 0.0) & inner
        dn = (fm < 0.0) & inner
        # Illinois: halve the retained end's value when the same end moves twice in a row
        fl = np.where(up & (side > 0), 0.5 * fl, fl)
        fh = np.where(dn & (side < 0), 0.5 * fh, fh)
        th, fh = np.where(up, tm, th), np.where(up, fm, fh)
        tl, fl = np.where(dn, tm, tl), np.where(dn, fm, fl)
        side = np.where(up, 1.0, np.where(dn, -1.0, 0.0))
    lo[idx], hi[idx] = tl, th
    return lo, hi


def isf(x, d):
    r"""Inverse survival function of :math:`\chi^2_d`: :math:`\Psi^{-1}(x) = 2\,Q^{-1}(d/2, x)`, ``x`` in [0, 1]."""
    xx = _checks.probability("x", x)
    dd = _checks.integer("d", d, lo=1)
    return _checks.scalar_or_array(2.0 * special.gammainccinv(0.5 * dd, np.asarray(xx, float)), x)


def ppf(x, d, lam):
    r"""Quantile of :math:`\chi^2_d(\lambda)`: :math:`\Phi^{-1}_{\chi^2_d(\lambda)}(x)`, ``x`` in [0, 1]."""
    from scipy import stats

    xx = _checks.probability("x", x)
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.scalar("lam", lam, lo=0.0)
    xa = np.asarray(xx, float)
    if ll == 0.0:
        out = 2.0 * special.gammaincinv(0.5 * dd, xa)
    else:
        out = stats.ncx2.ppf(xa, dd, ll)
    return _checks.scalar_or_array(out, x)
