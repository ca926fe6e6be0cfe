r"""Composition of grid pairs by FFT, with the window tails and the float error certified.

The :math:`T`-fold composed loss is computed on a window around its bulk chosen by Chernoff bounds
(the :math:`Q`-mass outside, folded back by the circular FFT, is added to ``slack_q``) and the
floating-point error of the transform and the power is bounded from the transform itself (also
added); where that bound would dominate, the transform runs in extended precision.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy import fft as _fft

from .. import _checks
from ._lossdist import _UNIT_ROUNDOFF, MAX_FFT, PLD, FFTCapError, _normalise

__all__ = ["compose", "compose_pair", "compose_many", "same_support", "composed_length"]


def _log_mgfs(pmf, x, bins=256, n_lam=80, lam_c=()):
    r"""Upper bounds on the one-step log-MGF :math:`\log\sum_s p_s e^{\pm\lambda x_s}` for a grid of
    :math:`\lambda > 0`.

    Masses are aggregated on at most ``2 bins`` bins :math:`[a, a + w]` with their mass :math:`P_b` and
    mean :math:`m_b`; by convexity of :math:`e^{\lambda x}`,
    :math:`\sum_{b} p_s e^{\lambda x_s} \le P_b\,e^{\lambda a}\,(1 + \tfrac{m_b - a}{w}(e^{\lambda w} - 1))`,
    which is second order in :math:`w` (the bound stays tight after :math:`T`-fold composition). That is the
    MGF of the two-point law with masses :math:`P_b(1 - f_b)` at :math:`a` and :math:`P_b f_b` at :math:`a + w`
    (:math:`f_b = (m_b - a)/w`, the same mean): one log-sum-exp over at most ``4 bins`` atoms per
    :math:`\lambda`. The bin edges are ``bins`` equal steps of the support and the ``bins``-quantiles of the
    mass: where the mass is concentrated (tiny q: nearly all of it within 1e-5 of the bottom of a support 0.3
    wide) equal bins alone would hold it in one bin whose chord, grown T-fold, widened the window 4x.
    The float error of the sum (at most :math:`4u\max|\lambda y| + 64u` in the log) is added.
    ``lam_c``: where the optimal tilts are expected (e.g. the Gaussian one, :math:`z/s_T`); then 24 values within
    a factor 8 of each and 16 over the whole range replace the ``n_lam`` over the whole range (every
    :math:`\lambda > 0` gives a valid bound: the grid only decides how close to the best one).
    """
    keep = pmf > 0
    m, xs = pmf[keep], x[keep]
    if m.size == 0:
        lam = np.geomspace(1e-3, 1e3, n_lam)
        return lam, np.full(lam.size, -np.inf), np.full(lam.size, -np.inf)
    h = x[1] - x[0] if x.size > 1 else 1.0
    span = max(xs[-1] - xs[0], h)
    nb = int(min(bins, np.ceil(span / h) + 1))
    # bin starts: equal steps, and the points where the cumulative mass crosses each 1/nb
    cum = np.cumsum(m)
    q_idx = np.searchsorted(cum, cum[-1] * np.arange(1, nb) / nb, side="left")
    starts = np.unique(np.concatenate([xs[0] + np.arange(nb) * (span / nb), xs[np.minimum(q_idx, xs.size - 1)]]))
    starts = starts[starts >= xs[0]]
    ends = np.append(starts[1:], xs[-1] + h * 1e-6)
    width = np.maximum(ends - starts, 1e-300)
    k = np.searchsorted(starts, xs, side="right") - 1
    nb = starts.size
    agg = np.bincount(k, weights=m, minlength=nb)
    nz = agg > 0
    mom = np.bincount(k, weights=m * (xs - starts[k]), minlength=nb)[nz]
    frac = np.clip(mom / agg[nz] / width[nz], 0.0, 1.0)
    # the two-point atoms (a zero mass is left out: its log is -inf)
    ys = np.concatenate([starts[nz], ends[nz]])
    ms = np.concatenate([agg[nz] * (1.0 - frac), agg[nz] * frac])
    live = ms > 0
    ys, lms = ys[live], np.log(ms[live])
    # lambda ~ z / sd of the composed loss: from 1e-4 / span (many steps) up to 1e3 / span (few
    # steps of a concentrated pmf, e.g. tiny losses at large sigma and tiny q)
    lam = np.geomspace(1e-4 / max(span, 1e-12), 1e3 * max(1.0, 1.0 / max(span, 1e-12)), n_lam)
    centres = [c for c in lam_c if math.isfinite(c) and c > 0.0]
    if centres:
        lam = np.unique(np.concatenate([lam[np.linspace(0, lam.size - 1, 16).astype(int)]]
                                       + [np.geomspace(c / 8.0, c * 8.0, 24) for c in centres]))
    u = _UNIT_ROUNDOFF

    def log_mgf(coef):
        ly = coef[:, None] * ys[None, :]
        z = lms[None, :] + ly
        mx = z.max(axis=1)
        # (terms below e^-700 counted as e^-700: an upper bound, and no subnormal arithmetic, which
        # is 100x slower)
        s = np.exp(np.maximum(z - mx[:, None], -700.0)).sum(axis=1)
        return mx + np.log(s) + (4.0 * u * np.abs(ly).max(axis=1) + 64.0 * u)

    return lam, log_mgf(lam), log_mgf(-lam)


def _log_tail_above(mgfs, T, c):
    lam, up, _ = mgfs
    return float(min(np.min(T * up - lam * c), 0.0))


def _log_tail_below(mgfs, T, c):
    lam, _, dn = mgfs
    return float(min(np.min(T * dn + lam * c), 0.0))


def _window(pld: PLD, steps: int, tail: float):
    """Window ``[lo_c, hi_c]`` of the ``steps``-fold composed loss with Q-mass at most ``tail`` outside
    (Chernoff bounds on the grid pair), and that bound ``bq``."""
    x = pld.losses
    p = np.asarray(pld.pmf, float)
    nz = np.flatnonzero(p > 0)
    if nz.size == 0:
        return None
    lo_s, hi_s = x[nz[0]], x[nz[-1]]
    mass = p.sum()
    mean = float(np.sum(p * x) / mass)
    sd = math.sqrt(max(float(np.sum(p * (x - mean) ** 2) / mass), pld.h ** 2) * steps)
    log_tail = math.log(tail / 2.0)
    lo_full, hi_full = steps * lo_s, steps * hi_s
    # the tilts near the Gaussian one for that tail, z / sd with z = sqrt(2 log(2 / tail)); where the best
    # tilt at an edge lies outside them (a far from Gaussian loss, e.g. at tiny q), once more with tilts
    # around it too
    lam_g = math.sqrt(-2.0 * log_tail) / sd
    mq = _log_mgfs(p, x, lam_c=(lam_g,))
    lo_c, hi_c = _edges(mq, steps, mean, sd, log_tail, lo_full, hi_full)
    best = [float(mq[0][np.argmin(steps * mq[1] - mq[0] * hi_c)]),
            float(mq[0][np.argmin(steps * mq[2] + mq[0] * lo_c)])]
    far = [b for b in best if not lam_g / 7.0 < b < lam_g * 7.0]
    if far:
        mq = _log_mgfs(p, x, lam_c=(lam_g, *far))
        lo_c, hi_c = _edges(mq, steps, mean, sd, log_tail, lo_full, hi_full)
    return lo_c, hi_c, (steps * lo_s, steps * hi_s, mq)


def _edges(mq, steps, mean, sd, log_tail, lo_full, hi_full):
    """The window's edges from the log-MGFs ``mq``: see :func:`_window`."""
    # Each edge by bisection on its (monotone) Chernoff bound, between the bulk and the full range
    # (beyond which there is no mass at all): the smallest window whose bound is <= tail / 2 a side.
    hi_c = min(hi_full, steps * mean + 3.0 * sd)
    if _log_tail_above(mq, steps, hi_c) > log_tail:
        hi_c = _edge(lambda c: _log_tail_above(mq, steps, c) <= log_tail, (steps * mq[1] - log_tail) / mq[0],
                     hi_c, hi_full, 1.0)
    lo_c = max(lo_full, steps * mean - 3.0 * sd)
    if _log_tail_below(mq, steps, lo_c) > log_tail:
        lo_c = _edge(lambda c: _log_tail_below(mq, steps, c) <= log_tail, (log_tail - steps * mq[2]) / mq[0],
                     lo_c, lo_full, -1.0)
    return lo_c, hi_c


def _edge(passes, roots, fail, full, side):
    r"""The window edge nearest ``fail`` (where the monotone Chernoff test ``passes`` fails) at which it holds.

    The test is :math:`\min_\lambda (T\,\mathrm{lmgf}(\pm\lambda) \mp \lambda c) \le \log(\mathrm{tail}/2)`:
    each :math:`\lambda` passes from its own root on (``roots``), so the edge is the root nearest the bulk
    (``side`` +1: the smallest, upper edge; -1: the largest, lower edge), stepped outward past its rounding
    until the test holds; ``full`` (the end of the support, beyond which there is no mass) if it lies beyond.
    """
    r = roots[np.isfinite(roots)]
    if r.size == 0:
        return full
    c = float(np.min(r)) if side > 0 else float(np.max(r))
    if side * (c - full) >= 0.0:
        return full
    c = max(c, fail) if side > 0 else min(c, fail)
    for k in range(64):
        if passes(c):
            return c
        c = c + side * max(abs(c), 1e-300) * 4.0 * _UNIT_ROUNDOFF * 2.0 ** min(k, 40)
        if side * (c - full) >= 0.0:
            return full
    return full


def _outside(win, steps, lo_c, hi_c):
    """Chernoff bound on the Q-mass outside ``[lo_c, hi_c]``."""
    lo_full, hi_full, mq = win
    bq = 0.0
    if hi_c < hi_full:
        bq += math.exp(_log_tail_above(mq, steps, hi_c))
    if lo_c > lo_full:
        bq += math.exp(_log_tail_below(mq, steps, lo_c))
    return bq


def _row_norms(rows):
    """``(lower, upper)`` on the L2 norm of each row, without subnormal arithmetic (100x slower:
    values below 1e-150 square into that range), counting them as 1e-150 each for the upper."""
    big = np.where(np.abs(rows) >= 1e-150, rows, 0.0)
    lo = np.linalg.norm(big, axis=1)
    return lo, lo + math.sqrt(rows.shape[1]) * 1e-150


def _fft_power(rows, steps, dtype, budget=None, norms=None, inverse=np.float64):
    r"""Circular ``steps``-fold self-convolution of each row by FFT, and a bound on its float error.

    The forward transform and the power run in ``dtype`` (their rounding is amplified T-fold), the
    inverse transform in ``inverse`` (double by default; extended precision where each atom's error matters).
    Returns ``(out, fp, pt)``: the rows as doubles and, per row, a bound on the L1 error from the forward FFT
    (amplified T-fold by the power), the power itself, rounding the spectrum to the inverse's precision and the
    inverse FFT: the smallest of
    (a) per frequency, :math:`8u\log_2 n` per unit of mass on both halves of the spectrum, and
    (b) in L2 (Parseval, :math:`\|F\|_2 = \sqrt n\,\|p\|_2`) times :math:`\sqrt n` for L1, far
    smaller where the pmf is concentrated (tiny q: then (a) sums ~n frequencies with
    :math:`|F| \approx 1`), and (c) the per-frequency error of (a) times :math:`T|F_k|^{T-1}`, summed
    in L2 (the L1 norm of the output error is at most the L2 norm of its spectrum's), far smaller
    than both where the composed pmf is spread and the single step's is not. The power, taken in polar form
    :math:`|F|^T e^{iT\arg F}`, adds a relative error of about :math:`u(745 + (\pi + 2)T)` on the frequencies
    kept (:math:`|F|` and :math:`\arg F` each rounded, then multiplied by T). Also returned, per row: a bound on
    each output value's error, (a) over :math:`n` (each output is :math:`1/n` times a sum over the spectrum, whose
    error (a) bounds in L1), besides that value's own rounding (:math:`4u` of it).

    ``norms``: the rows' upper L2 norms (:func:`_row_norms`), if the caller has them.
    ``budget``: if the part of that bound known before the power (from :math:`|F|` alone) already
    exceeds it, return ``None`` at once (the caller redoes the work in extended precision).
    """
    n = rows.shape[1]
    u = float(np.finfo(dtype).eps) / 2.0           # forward transform and power
    ud = _UNIT_ROUNDOFF                              # the output, rounded to double
    ui = float(np.finfo(inverse).eps) / 2.0          # spectrum rounded to ``inverse``, inverse transform
    lg = max(math.log2(n), 1.0)
    # |F| and arg F each carry a relative / absolute error of about u, which the power multiplies by T
    rho = u * ((math.pi + 2.0) * steps + 760.0) + (ui if dtype is not inverse else 0.0)
    gam, gam_d = 8.0 * u * lg, 8.0 * ui * lg        # relative (L2) error of one FFT of length n
    norms = _row_norms(rows)[1] if norms is None else norms
    f = _fft.rfft(rows.astype(dtype), axis=1, workers=rows.shape[0])
    af = np.abs(f)
    cdt = np.complex128 if inverse is np.float64 else np.clongdouble
    g = np.zeros(f.shape, dtype=cdt)
    s_pows, s2_pows, m_logs = [], [], []

    def bound(r, ag):
        """The bound above for row r without the output's own rounding, from the moduli ``ag`` of the powered
        spectrum."""
        gabs = float(np.sum(ag))
        fp_a = 16.0 * (u * lg * float(rows[r].sum()) * steps * s_pows[r] + ui * lg * gabs) + 2.0 * rho * gabs
        m_pow = math.exp(m_logs[r]) if m_logs[r] < 700.0 else math.inf
        g2 = math.sqrt(2.0 * float(np.sum(ag * ag)))
        fp_b = 1.01 * (math.sqrt(n) * steps * m_pow * gam * float(norms[r]) + (rho + gam_d) * g2)
        # (c) the per-frequency error of (a), amplified by T |F|^(T-1) frequency by frequency, in L2
        fp_c = 1.01 * (16.0 * u * lg * float(rows[r].sum()) * steps * s2_pows[r] + (rho + gam_d) * g2)
        return min(fp_a, fp_b, fp_c), fp_a

    with np.errstate(under="ignore", divide="ignore"):
        for r in range(rows.shape[0]):
            # frequencies where |F|^T underflows contribute nothing: power only the others, in polar
            # form |F|^T e^{i T arg F} (the error bound rho below covers it)
            la = np.log(af[r])
            live = np.flatnonzero((steps - 1) * la > -745.0)
            la_l = la[live]
            mod = np.exp(steps * la_l)
            s_pows.append(float(np.sum(np.exp((steps - 1) * la_l))))
            s2_pows.append(math.sqrt(2.0 * float(np.sum(np.exp(2.0 * (steps - 1) * la_l)))))
            m_logs.append((steps - 1) * math.log(max(float(np.max(af[r])), 1.0)))   # |F| a hair above 1
            if budget is not None and bound(r, mod.astype(np.float64))[0] > budget:
                return None                                  # double precision cannot meet the budget
            ph = steps * np.angle(f[r, live])
            g[r, live] = (mod * np.cos(ph) + 1j * (mod * np.sin(ph))).astype(cdt)
    # (the inverse in double: in extended precision it took 2.5x as long, for a bound about 30 % lower)
    out = np.asarray(_fft.irfft(g, n, axis=1, workers=rows.shape[0]), dtype=np.float64)
    # + the output's own rounding: at most u |x| per value (4 u for the last operations), so 4 u sum |x|
    bounds = [bound(r, np.abs(g[r])) for r in range(rows.shape[0])]
    fps = [b[0] + 4.0 * ud * float(np.sum(np.abs(out[r]))) for r, b in enumerate(bounds)]
    # per point: (a) bounds the spectrum's error in L1, and each output is 1/n times a sum over the spectrum (the
    # output's own rounding, 4 u of each value, is relative: left to the caller)
    pts = [b[1] / n for b in bounds]
    return out, fps, pts


def compose(pld: PLD, T: int, *, tail=1e-14, max_fft=None) -> PLD:
    r""":math:`T`-fold self-composition by one FFT (cost independent of :math:`T` beyond the window).

    The composed loss is computed on a window around its bulk, chosen by Chernoff bounds so that
    the :math:`Q`-mass outside is at most ``tail``; that mass (which the circular FFT folds back into
    the window) and the FFT's floating-point error, bounded from the transform itself, are
    recorded in ``slack_q``. Raises ``ValueError`` (with a hint) if the window needs more than
    ``max_fft`` (default ``MAX_FFT``) points.
    """
    if not isinstance(pld, PLD):
        raise TypeError(f"pld must be a PLD, got {type(pld).__name__}")
    return compose_pair(pld, None, T, tail=tail, max_fft=max_fft)[0]


def composed_length(pld: PLD, T: int, *, tail=1e-14):
    r"""The number of grid points the ``T``-fold composition of ``pld`` spans (the window :func:`compose` takes, by
    the same Chernoff bounds with :math:`Q`-mass at most ``tail`` outside it): the FFT length it needs before
    rounding up to a fast one, known without the transform. Where it is the same at any grid step, a coarse pair
    tells in loss units how fine a grid the FFT cap allows.

    Examples
    --------
    >>> import numpy as np
    >>> p = PLD(0.1, -1, np.array([0.25, 0.5, 0.25]), 0.0, 0.0, "pessimistic")
    >>> composed_length(p, 1), composed_length(p, 100) > 2
    (3, True)
    """
    steps = _checks.integer("T", T, lo=1)
    tl = _checks.real("tail", tail, lo=0.0, hi=1.0, lo_open=True)
    if not isinstance(pld, PLD):
        raise TypeError(f"pld must be a PLD, got {type(pld).__name__}")
    if steps == 1:
        return pld.pmf.size
    w = _window(pld, steps, tl)
    if w is None:
        return pld.pmf.size
    return max(int(math.ceil((w[1] - w[0]) / pld.h)) + 2, pld.pmf.size)


def compose_pair(a: PLD, b, T: int, *, tail=1e-14, max_fft=None, fine=False):
    r"""Compose two PLDs on the same grid (e.g. the pessimistic and optimistic pairs) ``T`` times each.

    Both are transformed together (one two-row FFT on two threads), on the union of their
    windows; see :func:`compose`. ``b`` may be ``None``. Returns ``(a_T, b_T)``. ``fine``: every transform in
    extended precision where the platform has it (each atom's float error, :attr:`PLD.slack_split`, about
    2000 times smaller: for read-outs that weigh a few atoms far more than the rest).
    """
    steps = _checks.integer("T", T, lo=1)
    tl = _checks.real("tail", tail, lo=0.0, hi=1.0, lo_open=True)
    plds = [a] if b is None else [a, b]
    for p_ in plds:
        if not isinstance(p_, PLD):
            raise TypeError(f"plds must be PLD objects, got {type(p_).__name__}")
    if b is not None and (b.h != a.h or b.offset != a.offset or b.shift != a.shift or b.pmf.size != a.pmf.size):
        raise ValueError("compose_pair needs two PLDs on the same grid (h, offset, shift, size)")
    if steps == 1:
        return a, b
    wins = [_window(p_, steps, tl) for p_ in plds]
    if any(w is None for w in wins):          # a pair with no finite-loss mass: compose separately
        res = [_empty(p_, steps) if w is None else compose_pair(p_, None, steps, tail=tl, max_fft=max_fft,
                                                                fine=fine)[0]
               for p_, w in zip(plds, wins)]
        return (res[0], None) if b is None else (res[0], res[1])
    lo_c = min(w[0] for w in wins)
    hi_c = max(w[1] for w in wins)
    h = a.h
    size = a.pmf.size
    width = max(int(math.ceil((hi_c - lo_c) / h)) + 2, size)
    n = _fft.next_fast_len(width, real=True)
    cap = MAX_FFT if max_fft is None else min(int(max_fft), MAX_FFT)
    if n > cap:
        raise FFTCapError(f"the composed window needs an FFT of {n} points (> cap {cap}); "
                          f"use a coarser grid h (now {h:g}) or fewer steps", n, cap)
    t_shift = steps * a.shift                    # the composed grid is (offset + s) h + T shift
    s_lo = int(math.floor((lo_c - t_shift) / h))
    rows = np.zeros((len(plds), n))
    start = a.offset % n                         # the grid wraps around the FFT circle at most once
    first = min(size, n - start)
    for r, p_ in enumerate(plds):
        rows[r, start:start + first] = p_.pmf[:first]
        rows[r, :size - first] = p_.pmf[first:]
    mass = float(np.max(rows.sum(axis=1)))
    if steps * math.log(max(mass, 1.0)) > 700.0:
        # a pair whose mass exceeds 1 (a reflected pair on a very coarse grid) would overflow; its
        # slack would be vacuous anyway
        raise ValueError(f"a pair with mass {mass:.6g} cannot be composed {steps} times; use a finer grid h")
    wide = np.finfo(np.longdouble).eps < np.finfo(np.float64).eps
    # the double transform cannot do where both of its error bounds (see _fft_power) are above the
    # budget from their first terms alone: (a) >= 16 u log2(n) T mass^T (the zero frequency), (b) >=
    # 8 u log2(n) T sqrt(n) ||p||_2. Then go to extended precision at once (a shortcut only).
    lg = max(math.log2(n), 1.0)
    low_a = 16.0 * _UNIT_ROUNDOFF * lg * steps * mass ** steps
    norms = _row_norms(rows)
    res = None
    if fine and wide:
        res = _fft_power(rows, steps, np.longdouble, norms=norms[1], inverse=np.longdouble)
    elif not (wide and low_a > 3.0 * tl
            and 8.0 * _UNIT_ROUNDOFF * lg * steps * math.sqrt(n) * float(np.min(norms[0])) > 3.0 * tl):
        # the float error must stay below three times the window's tail budget (the power amplifies
        # the transform's rounding T-fold); where double cannot, use extended precision
        res = _fft_power(rows, steps, np.float64, budget=3.0 * tl if wide else None, norms=norms[1])
        if res is not None and max(res[1]) > 3.0 * tl and wide:
            res = None
    out, fps, pts = res if res is not None else _fft_power(rows, steps, np.longdouble, norms=norms[1])
    off, sh = _normalise(s_lo, t_shift, h)
    res = []
    for r, p_ in enumerate(plds):
        pmf = np.roll(out[r], -(s_lo % n))            # pmf[i] = out[(s_lo + i) mod n]
        fp = fps[r]
        neg = float(-np.sum(pmf[pmf < 0]))
        bq = _outside(wins[r][2], steps, lo_c, hi_c)
        inf_mass = -math.expm1(steps * math.log1p(-p_.inf_mass)) if p_.inf_mass < 1 else 1.0
        neg_inf = -math.expm1(steps * math.log1p(-p_.neg_inf_mass)) if p_.neg_inf_mass < 1 else 1.0
        moved = float(steps * p_.slack_q + bq)
        res.append(PLD(h, off, np.maximum(pmf, 0.0), float(inf_mass), float(neg_inf), p_.kind,
                       slack_q=float(moved + fp + neg), slack_p=float(steps * p_.slack_p), shift=sh,
                       slack_split=(moved, float(pts[r]), 4.0 * _UNIT_ROUNDOFF)))
    return (res[0], None) if b is None else (res[0], res[1])


def same_support(a: PLD, b: PLD):
    """``a`` and ``b`` (same ``h`` and ``shift``) padded with zero atoms to one common index range,
    as :func:`compose_pair` needs."""
    for name, p_ in (("a", a), ("b", b)):
        if not isinstance(p_, PLD):
            raise TypeError(f"{name} must be a PLD, got {type(p_).__name__}")
    if a.h != b.h or a.shift != b.shift:
        raise ValueError(f"a and b must share h and shift, got h {a.h:g}/{b.h:g}, shift {a.shift:g}/{b.shift:g}")
    lo = min(a.offset, b.offset)
    hi = max(a.offset + a.pmf.size, b.offset + b.pmf.size)

    def pad(p_):
        if p_.offset == lo and p_.pmf.size == hi - lo:
            return p_
        m = np.zeros(hi - lo)
        m[p_.offset - lo:p_.offset - lo + p_.pmf.size] = p_.pmf
        return replace(p_, offset=lo, pmf=m, ref=None)
    return pad(a), pad(b)


def _empty(pld, steps):
    off, sh = _normalise(pld.offset * steps, pld.shift * steps, pld.h)
    return PLD(pld.h, off, np.zeros(1), float(-math.expm1(steps * math.log1p(-pld.inf_mass)))
               if pld.inf_mass < 1 else 1.0, 0.0, pld.kind, steps * pld.slack_q, steps * pld.slack_p, sh)


def compose_many(plds) -> PLD:
    r"""Composition of several PLDs with the same grid and kind (heterogeneous schedules).

    Each element may itself be a :math:`T`-fold composition; the product of the DFTs is taken on a
    window covering the sum of the supports (no folding), with the FFT error bounded as in
    :func:`compose`.
    """
    plds = list(plds)
    if not plds:
        raise ValueError("plds must contain at least one PLD")
    for p_ in plds:
        if not isinstance(p_, PLD):
            raise TypeError(f"plds must contain PLD objects, got {type(p_).__name__}")
    h, kind = plds[0].h, plds[0].kind
    if any(abs(p_.h - h) > 1e-15 * h or p_.kind != kind for p_ in plds):
        raise ValueError("all PLDs must share the grid step h and the kind")
    if len(plds) == 1:
        return plds[0]
    lo, sh = _normalise(sum(p_.offset for p_ in plds), sum(p_.shift for p_ in plds), h)
    size = sum(p_.pmf.size for p_ in plds) - len(plds) + 1
    n = _fft.next_fast_len(size, real=True)
    if n > MAX_FFT:
        raise ValueError(f"composition needs an FFT of {n} points (> MAX_FFT = {MAX_FFT}); coarsen h")
    fs = []
    for p_ in plds:
        arr = np.zeros(n)
        arr[: p_.pmf.size] = p_.pmf
        fs.append(_fft.rfft(arr))
    f = np.prod(fs, axis=0)
    a = np.abs(np.array(fs))
    # sum over factors of prod_{j != i} |F_j| (prefix and suffix products)
    pre = np.cumprod(np.vstack([np.ones(a.shape[1]), a[:-1]]), axis=0)
    suf = np.vstack([np.cumprod(a[::-1], axis=0)[::-1][1:], np.ones(a.shape[1])])
    others = float(np.sum(pre * suf))
    out = _fft.irfft(f, n)[:size]
    lg = max(math.log2(n), 1.0)
    fp = (16.0 * _UNIT_ROUNDOFF * lg * (others + float(np.sum(np.abs(f))))
          + 4.0 * n * _UNIT_ROUNDOFF * float(np.max(np.abs(out))))
    neg = float(-np.sum(out[out < 0]))
    inf_mass = 1.0 - float(np.prod([1.0 - p_.inf_mass for p_ in plds]))
    neg_inf = 1.0 - float(np.prod([1.0 - p_.neg_inf_mass for p_ in plds]))
    return PLD(h, lo, np.maximum(out, 0.0), max(inf_mass, 0.0), max(neg_inf, 0.0), kind,
               slack_q=float(sum(p_.slack_q for p_ in plds) + fp + neg),
               slack_p=float(sum(p_.slack_p for p_ in plds)), shift=sh)
