r"""Far tails set by one large step: the tilted composition of the bulk, read against one step's exact tail.

Where one step's loss has a heavy right tail (a sampled step at small :math:`q` and moderate :math:`\sigma`: the loss
is about :math:`\ln q + x/\sigma^2`, Gaussian in the output :math:`x`), :math:`\delta_T(\varepsilon)` far out is set
by the runs in which one step lands a large loss and the others stay small. An exponential tilt of the whole step
then puts its tilted mass on rare huge steps and not near :math:`\varepsilon` (:mod:`._tilt` reads such a tail only
on windows beyond the FFT cap). Here each step's grid pair :math:`A` (its atoms, a measure on losses; every pair is
read through :math:`H_\gamma(A) = \int A(dl)(1 - \gamma e^{-l})_+`, linear in :math:`A`) is split at a grid loss
:math:`b` into its bulk :math:`B` (atoms :math:`\le b`) and the rest :math:`U`. Expanding :math:`A^{\otimes T}` by how
many steps fall in :math:`U`,

.. math::
    H_{e^\varepsilon}(A^{\otimes T}) = H_{e^\varepsilon}(B^{\otimes(T-1)} \otimes W) + R, \qquad W = B + T\,U,

where the first term holds the runs with no step in :math:`U` and those with one (in any of :math:`T` places), and
:math:`R \ge 0` those with two or more. By the tensorisation identity
:math:`H_\gamma(X \otimes Y) = \int X(ds)\,H_{\gamma e^{-s}}(Y)` (any non-negative measures) the first term is
:math:`\sum_s B^{*(T-1)}(s)\,\Psi(\varepsilon - s)` with

.. math::
    \Psi(t) = H_{e^t}(W) = H_{e^t}(A) + (T - 1)\,H_{e^t}(U),

both from the single step's atoms (suffix sums of positive terms, exact at any :math:`t`: the profiles are affine
in :math:`e^t` between grid points). The bulk is light-tailed: tilted by :math:`e^{\lambda s}` and composed
:math:`T - 1` times (:func:`dpmia.pld.compose_pair`) it keeps its mass near the read-out, as in :mod:`._tilt`, and
its composed masses are :math:`M_B(\lambda)^{T-1} e^{-\lambda s} r(s)`. Two or more steps in :math:`U`: with a cut
:math:`c > b`, the runs with a step above :math:`c` weigh at most :math:`T(T-1)\,Q(U)\,Q(L > c)` (the profile is at
most 1, the other factors' totals at most 1), and those with two steps in :math:`(b, c]` and none above :math:`c`
(a union over the :math:`\binom T2` pairs of places and :math:`(1 - e^{\varepsilon - s})_+ \le c_\mu e^{\mu(s -
\varepsilon)}`, :math:`c_\mu = (\mu/(1+\mu))^\mu/(1+\mu)`) at most

.. math::
    \tbinom T2\, c_\mu\, e^{-\mu\varepsilon} M_{(b,c]}(\mu)^2 M_{\le c}(\mu)^{T-2},

:math:`M_X(\mu) = \int X(dl) e^{\mu l}` over the atoms in :math:`X` (a whole step's moment generating function would
carry the huge steps again); :math:`R` is at most their sum, the least over the cuts and tilts tried. So the first
term plus this bound is an upper bound on the composed atoms' profile and the first term alone a lower bound:
:class:`SplitTiltedPair` is a :class:`._tilt.TiltedPair` whose composed-atoms read-out is this one, and which relates
the grid pair to the true one exactly as that class does. The composition's errors: each atom of the transform's
array within ``point + rel`` of its mass (:attr:`dpmia.pld.PLD.slack_split`), weighed by its weight
:math:`M_B^{T-1} e^{-\lambda s}\Psi(\varepsilon - s)`; the bulk's mass outside the array (missing from it) added to
an upper bound with its weight by Chernoff bounds (:meth:`SplitTiltedPair._log_out`); the same mass aliased into
the array (at most the window's budget) subtracted from a lower bound at the largest weight there.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import pld as _pld
from ._tilt import _U, TiltedPair, _saddle, _tilted

#: Cells per block in the bound on the bulk's mass below the transform's array.
_BLOCK = 512
#: The tilts (times the read-out's) of the Chernoff bounds on the bulk's mass above the array: tightest a little above
#: it (at (1.17e-3, 4.0, 25473), eps 2.28, 2.25 times: e^-48 of the value; twice: 5.8 times it, a factor 7 wide).
_ABOVE_TILTS = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 10.0, 20.0, 100.0, 1e3])
#: More tilts (times the read-out's) for the bound on two or more large steps: two steps of half the size have a slope
#: of 0.5 to 1 times one's, and a tilt 30 % off loses a tenth of the exponent (1.8e-198 to 2.8e-208 at (1e-3, 2, 1e4)).
_MID_TILTS = np.geomspace(0.35, 1.4, 13)


def _log_tables(logq, h):
    r"""``(log S, log D)`` of atoms with log-masses ``logq`` on a grid of step ``h``: :math:`S_k = \sum_{j\ge k} q_j
    e^{-(j-k)h}` and :math:`D_k = \sum_{j>k} q_j (1 - e^{-(j-k)h})` (the profile at grid point k), in log space."""
    j = np.arange(logq.size) * h
    log_s = np.logaddexp.accumulate((logq - j)[::-1])[::-1] + j
    tail = np.logaddexp.accumulate(log_s[::-1])[::-1]
    log_d = np.concatenate([tail[1:], [-np.inf]]) + math.log(-math.expm1(-h))
    return log_s, log_d


def _log_profile(x, tables, t):
    r"""The log of the atoms' profile :math:`H_{e^t}` at each ``t``: with :math:`x_k \le t < x_{k+1}`,
    :math:`D_{k+1} + S_{k+1}(1 - e^{t - x_{k+1}})` (two positive terms; below the grid ``k + 1 = 0``; above it 0)."""
    log_s, log_d = tables
    k = np.searchsorted(x, t, side="right")
    inside = k < x.size
    kk = np.minimum(k, x.size - 1)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        g = np.log(-np.expm1(np.minimum(t - x[kk], 0.0)))
        out = np.logaddexp(log_d[kk], g + log_s[kk])
    return np.where(inside, out, -np.inf)


def _prefix_lse(logq, x, mu, b, ks):
    r"""``(low, mid)``, rows per tilt :math:`\mu`: :math:`\ln\sum_{j \le k} q_j e^{\mu x_j}` and the same over
    :math:`b < j \le k`, at each ``k`` of ``ks`` (ascending, above ``b``). The sums run over the segments between
    :math:`b` and the ``ks``, each shifted by its largest term and summed as exponentials, then joined: each within
    :math:`u(n + 5|m| + 2300)` relative, :math:`m` its largest log-term (the terms within 745 of it: the others
    weigh under :math:`n e^{-745}`)."""
    edges = np.array([0, b + 1] + [k + 1 for k in ks])
    low, mid = np.empty((mu.size, len(ks))), np.empty((mu.size, len(ks)))
    with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
        for i, m in enumerate(mu):
            z = logq + m * x
            seg = []
            for a, c in zip(edges[:-1], edges[1:]):
                zs = z[a:c]
                mx = float(np.max(zs)) if zs.size else -math.inf
                seg.append(mx + math.log(float(np.sum(np.exp(zs - mx)))) if math.isfinite(mx) else -math.inf)
            run = np.logaddexp.accumulate(np.array(seg))
            low[i] = run[1:]
            mid[i] = np.logaddexp.accumulate(np.array(seg[1:]))
    return low, mid


def split_index(one, steps, lam, d_est):
    r"""The grid index of :math:`b`, or ``None``: the lowest grid point at or above 0 above which the atoms hold
    Q-mass at most :math:`\min(10^{-9}/(T(1+\lambda)), \sqrt{10^{-6} d}/T)` with ``d_est`` an estimate of the value
    :math:`d` (the runs with two or more steps above :math:`b` are then far below it: :math:`\binom T2 Q(U)^2`
    bounds them however the other steps fall); ``None`` where no atom lies above it."""
    x = one.losses
    m = np.cumsum(one.pmf[::-1])[::-1]                  # m[k] = Q-mass of the atoms at k and above
    above = np.append(m[1:], 0.0)
    share = min(1e-9 / (steps * (1.0 + lam)), math.sqrt(1e-6 * max(d_est, 0.0)) / steps)
    ok = np.flatnonzero((above <= share) & (x >= 0.0))
    if ok.size == 0:
        return None
    b = int(ok[0])
    return b if b < x.size - 1 and np.any(one.pmf[b + 1:] > 0) else None


#: The Q-mass of the bulk's lowest atoms that :func:`_bulk_from` may merge into the atom above them (or drop).
_LOW_MASS = 1e-30


def _bulk_from(m, kind):
    r"""``(k0, atoms)``: the bulk's atoms ``m`` from index ``k0`` on, its lowest atoms (Q-mass at most
    :data:`_LOW_MASS` in all) merged into the atom at ``k0`` (a dominating pair, their mass rounded up) or dropped (a
    dominated one). Raising an atom's loss raises every profile composed with it, and dropping mass lowers it, so
    :math:`H(B^{\otimes(T-1)} \otimes W)` moves to the safe side; by at most :math:`(T-1)` times that mass times
    the profile at :math:`\varepsilon` less the atoms' loss (relative to the read-out: negligible). Why: a bulk reaching
    far below 0 with almost no mass there (the replace-one pair's mirrored side, down to :math:`-x_{top}`) makes the
    transform as long as the whole step, its array reaching far beyond the bulk's window, and that array's float noise,
    weighed by :math:`e^{-\lambda s}\Psi(\varepsilon - s)`, would outweigh a far tail (1e-143 against 1e-300 at
    q = 1e-3, sigma = 5, T = 1000)."""
    m = np.asarray(m, float)
    k0 = min(int(np.searchsorted(np.cumsum(m), _LOW_MASS, side="right")), m.size - 1)
    if k0 <= 0:
        return 0, m
    out = m[k0:].copy()
    if kind == "pessimistic":
        out[0] = np.nextafter(float(np.longdouble(out[0]) + np.sum(m[:k0], dtype=np.longdouble)), np.inf)
    return k0, out


class SplitTiltedPair(TiltedPair):
    r"""A :class:`._tilt.TiltedPair` read by the split of the module: the single step's atoms ``one`` split at grid
    index ``b`` (:func:`split_index`), the bulk tilted by ``lam`` and composed :math:`T - 1` times, read against
    :math:`\Psi`; its bounds on the composed atoms' profile carry the bound on two or more large steps (upper) or
    drop it (lower). The grid pair's relation to the true pair (``ref``) is :class:`._tilt.TiltedPair`'s. ``cuts``:
    the losses :math:`c` tried in the bound on two or more large steps (:meth:`_r_terms`)."""

    def __init__(self, one, ref, steps, lam, b, lo, tail, cap, cuts=(), fine=False):
        x = np.asarray(one.losses, float)
        k0, bulk = _bulk_from(one.pmf[:b + 1], one.kind)
        bpld = _pld.PLD(one.h, one.offset + k0, bulk, 0.0, 0.0, one.kind, shift=one.shift)
        tb, lm = _tilted(bpld, lam)
        comp = _pld.compose_pair(tb, None, steps - 1, tail=tail, max_fft=cap, fine=fine)[0]
        super().__init__(one, ref, steps, lam, lm, comp, lo)
        self.log_scale = (steps - 1) * lm
        # (T = 2: the tilted step itself, its rounding relative (in rho) and, where subnormal or 0, a few units each)
        self.slack_split_ = (comp.slack_split if comp.slack_split is not None
                             else (comp.slack_q, 1e-322, 0.0))
        self._memo = None
        self._psi_cache = {}
        self._x = x
        keep = one.pmf > 0
        with np.errstate(divide="ignore"):
            logq = np.where(keep, np.log(np.where(keep, one.pmf, 1.0)), -np.inf)
        upper = np.where(np.arange(x.size) > b, logq, -np.inf)
        self._full, self._up = _log_tables(logq, one.h), _log_tables(upper, one.h)
        self._log_t1 = math.log(steps - 1) if steps > 1 else -math.inf
        self._log_tot = (float(special.logsumexp(logq)), float(special.logsumexp(upper)))
        self._log_psi_inf = float(np.logaddexp(self._log_tot[0], self._log_t1 + self._log_tot[1]))
        with np.errstate(divide="ignore"):
            self._log_bulk = np.concatenate([np.full(k0, -np.inf), np.log(bulk)])
        live = np.flatnonzero(np.isfinite(self._log_bulk))
        self._support = ((steps - 1) * float(x[live[0]]), (steps - 1) * float(x[live[-1]]))
        # rounding of Psi's tables: each log-space step within a few ulps of its terms' logs, grown along the grid
        big = float(np.max(np.abs(x))) + (float(np.max(np.abs(logq[keep]))) if keep.any() else 0.0)
        self._psi_rho = 16.0 * (x.size + 8) * _U * (1.0 + big)
        self.rho += self._psi_rho
        self._r_bound = self._r_terms(logq, b, steps, cuts) if one.kind == "pessimistic" else None

    def _psi_on_array(self, v):
        r""":math:`\ln\Psi(v - y)` at every point :math:`y` of the array, kept for the last few ``v`` (a joined read,
        its cut and its two tilts' own reads all read the same; a joined pair shares its first tilt's store)."""
        got = self._psi_cache.get(float(v))
        if got is None:
            if len(self._psi_cache) >= 4:
                self._psi_cache.clear()
            got = self._psi_cache[float(v)] = self._log_psi(v - self.y)
        return got

    def _log_psi(self, t):
        r""":math:`\ln\Psi` at each ``t``."""
        a = _log_profile(self._x, self._full, t)
        u = _log_profile(self._x, self._up, t)
        return np.logaddexp(a, u + self._log_t1)

    @property
    def h(self):
        return float(self._x[1] - self._x[0]) if self._x.size > 1 else 1.0

    def _r_terms(self, logq, b, steps, cuts):
        r"""``[(base, mu, log_far)]`` per cut :math:`c` (a grid loss): runs with two or more steps above :math:`b`
        either have one above :math:`c` (at most :math:`T(T-1)\,Q(U)\,Q(L > c)`: the profile is at most 1) or
        have two in :math:`(b, c]` and none above :math:`c` (Chernoff as in the module, with the atoms up to
        :math:`c`: :math:`\binom T2 c_\mu e^{-\mu\varepsilon} M_{(b,c]}(\mu)^2 M_{\le c}(\mu)^{T-2}`);
        the other factors' Q-totals are at most 1 (:math:`c_A \le 1` up to a few ulps: the factor
        :math:`c_A^{T-2}` rounded up). The tilts :math:`\mu` are multiples of the read-out's (two steps of half
        the size are the likeliest such runs; their slope is steeper); both sums for every cut come from one pass of
        segment sums per tilt (:func:`_prefix_lse`)."""
        x = self._x
        mu = self.lam * np.concatenate([[0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0], np.geomspace(1e-3, 0.3, 9), _MID_TILTS])
        mu = mu[mu > 0]
        if mu.size == 0:
            return []
        c_mu = -mu * np.log1p(1.0 / mu) - np.log1p(mu)
        pairs = math.log(steps) + math.log(steps - 1) - math.log(2.0)
        c_tot = max(float(np.logaddexp.reduce(logq)), 0.0) * (steps - 2)
        ks = [int(np.searchsorted(x, c, side="right")) - 1 for c in cuts]
        ks = sorted({k for k in ks if b < k < x.size})
        if not ks:
            return []
        top = ks[-1] + 1
        low, mid = _prefix_lse(logq[:top], x[:top], mu, b, ks)
        xmax = float(np.max(np.abs(x[:top])))
        tail_from = np.logaddexp.accumulate(logq[::-1])[::-1]      # log Q-mass of the atoms at k and above
        out = []
        for j, k in enumerate(ks):
            lu, la = mid[:, j], low[:, j]
            if not np.any(np.isfinite(lu)):
                continue
            base = pairs + c_mu + 2.0 * lu + (steps - 2) * la
            size = abs(pairs) + np.abs(c_mu) + 2.0 * np.abs(lu) + (steps - 2) * np.abs(la)
            # (log-sums by segments, :func:`_prefix_lse`: within u (n + 5 |max| + 2300) each, n <= top)
            err = 16.0 * _U * (size + steps * ((mu * xmax + 1.0) * (top + 8) + 6.0 * (np.abs(lu) + np.abs(la))
                                               + 2300.0)) + 1e-12
            far = (math.log(steps) + math.log(steps - 1) + self._log_tot[1]
                   + (float(tail_from[k + 1]) if k + 1 < x.size else -math.inf) + c_tot + 1e-12)
            out.append((base + err, mu, far))
        return out

    def _log_r(self, e):
        """The log of the bound on two or more large steps at each ``e`` (``-inf`` for a dominated pair)."""
        e = np.atleast_1d(e)
        if self._r_bound is None:
            return np.full(e.size, -np.inf)
        if not self._r_bound:
            return np.full(e.size, math.inf)
        best = np.full(e.size, math.inf)
        for base, mu, far in self._r_bound:
            v = base[None, :] - mu[None, :] * e[:, None]
            ch = np.min(np.where(np.isnan(v), np.inf, v), axis=1)
            best = np.minimum(best, np.logaddexp(ch, far))
        return best

    def _sup_tables(self):
        r"""Per tilt :math:`\theta`: ``(theta, c, table, below, side)`` with :math:`c = (T-1)\ln M_B(\theta)` (the
        untilted bulk atoms), the running maxima of the cells' bounds on :math:`\ln e^{\theta t}\Psi(t)` (prefix for
        ``side`` +1: :math:`t \le` a point; suffix for -1: :math:`t \ge` it) and the bound below the grid; the
        read-out's own tilt with :math:`c` = ``None`` (used with the window's budget). Built once."""
        if getattr(self, "_sups", None) is None:
            x, t1 = self._x, self.steps - 1
            lb = self._log_bulk
            xb = x[:lb.size]
            lp = self._log_psi(x)
            top = np.append(x[1:], x[-1] + self.h)
            xmax = float(np.max(np.abs(xb)))
            rows = []
            sides = [(th, 1) for th in self.lam * _ABOVE_TILTS]
            for th, side in sides + [(self.lam, 0)]:
                cells = th * top + lp
                cells = np.where(np.isfinite(cells), cells, -np.inf)
                below = th * float(x[0]) + self._log_psi_inf
                c = None
                if side != 0:
                    lm = float(special.logsumexp(lb + th * xb))
                    c = t1 * lm + 1e-12 + 16.0 * _U * t1 * (abs(lm) + th * xmax)
                pref = np.maximum.accumulate(cells)             # (the suffix: for the window's budget only)
                suf = np.maximum.accumulate(cells[::-1])[::-1] if side == 0 else None
                rows.append((th, c, pref, suf, below, side))
            low = np.inf
            for th in self.lam * np.array([0.0, 1.0, 3.0, 10.0, 30.0]) + 1.0:
                lm = float(special.logsumexp(lb - th * xb))
                v = t1 * lm + th * float(self.y[0])
                low = min(low, v + 1e-12 + 16.0 * _U * (abs(v) + t1 * (abs(lm) + th * xmax)))
            self._sups = (rows, low, self._block_tables(lp, top, lb, xb))
        return self._sups

    def _block_tables(self, lp, top, lb, xb):
        r"""``(kappa, c, bmax)`` for the bound below the array (:meth:`_log_out`): for each tilt :math:`\kappa` (0 up to
        the read-out's), :math:`c_\kappa = (T-1)\ln M_B(\kappa)` rounded up, and per block of :data:`_BLOCK` cells the
        largest of the cells' bounds on :math:`\ln e^{\kappa t}\Psi(t)`."""
        t1 = self.steps - 1
        # (finer towards the read-out's own tilt: the best tilt for the mass just below the array lies near it)
        kappa = self.lam * np.array([0.0, 1e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95,
                                     0.98, 1.0])
        xmax = float(np.max(np.abs(xb)))
        nb = -(-lp.size // _BLOCK)
        pad = nb * _BLOCK - lp.size
        c = np.empty(kappa.size)
        bmax = np.empty((kappa.size, nb))
        for i, ka in enumerate(kappa):
            lm = float(special.logsumexp(lb + ka * xb))
            c[i] = t1 * lm + 1e-12 + 16.0 * _U * t1 * (abs(lm) + ka * xmax)
            cells = np.where(np.isfinite(lp), ka * top + lp, -np.inf)
            bmax[i] = np.max(np.append(cells, np.full(pad, -np.inf)).reshape(nb, _BLOCK), axis=1)
        tb = np.append(self._x[::_BLOCK], self._x[-1] + self.h)
        return kappa, c, bmax, tb, self._log_psi(tb)

    def _layers(self, e, y0, kappa, c, bounds):
        r"""The log of a bound on the bulk's composed mass below the array (losses :math:`s < y_0`) with its weight
        :math:`\Psi(\varepsilon - s)`, at each ``e``, by layers: :math:`f(s) = \Psi(\varepsilon - s)` increases in
        :math:`s`, so with thresholds :math:`y_0 = s_0 > s_1 > \dots > s_K` (here :math:`t_i = \varepsilon - s_i`:
        :math:`\varepsilon - y_0` and the block starts above it, ``bounds``) Abel summation gives

        .. math:: \sum_{s < y_0} B^{*(T-1)}(s) f(s) \le \sum_{i=1}^{K} (f(s_{i-1}) - f(s_i))\,B^{*(T-1)}[s_i, y_0)
            + f(s_K)\,B^{*(T-1)}(s < y_0),

        each layer's mass at most :math:`\min_\kappa M_B(\kappa)^{T-1} e^{-\kappa s_i}` (Chernoff; ``kappa[0]`` is 0,
        where ``c[0]`` bounds the bulk's total mass, the last layer's). Unlike a sum of
        per-block bounds, each of which charges the whole tilted mass, this does not grow with the number of blocks
        (as 1/h) where one tilt is near best for many of them. :math:`\Psi`'s values within ``_psi_rho`` (in log) of
        theirs: the differences rounded up from them."""
        tb, lpb = bounds
        rho = self._psi_rho
        t0 = e - y0
        lp0 = self._log_psi(t0)
        # (the layers' masses: Chernoff at each threshold t_b, rounded up as the blocks' bounds are)
        g = c[:, None, None] - kappa[:, None, None] * (e[None, :, None] - tb[None, None, :])
        pad = 1e-12 + 16.0 * _U * (np.abs(c)[:, None, None] + kappa[:, None, None] * (np.abs(e)[None, :, None]
                                                                                    + float(np.max(np.abs(tb)))))
        with np.errstate(invalid="ignore"):
            g = np.min(np.where(np.isnan(g), np.inf, g + pad), axis=0)
        first = np.searchsorted(tb, t0, side="right")        # the first threshold above e - y_0
        idx = np.arange(tb.size)[None, :]
        prev = np.where(idx == first[:, None], lp0[:, None], np.concatenate([[-np.inf], lpb[:-1]])[None, :])
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(np.isfinite(prev), lpb[None, :] - prev - 2.0 * rho, -np.inf)
            layer = prev + rho + np.log(-np.expm1(np.minimum(d, 0.0)))
        layer = np.where((idx >= first[:, None]) & np.isfinite(prev), layer + g, -np.inf)
        last = np.full(e.size, lpb[-1] + rho + c[0])         # (below s_K: at most the bulk's total mass, kappa = 0)
        out = special.logsumexp(np.concatenate([layer, last[:, None]], axis=1), axis=1)
        return out + 1e-12 + 8.0 * _U * tb.size

    def _log_out(self, e):
        """The log of :meth:`_log_out_sides`' bound on the bulk's mass outside the array on either side."""
        return np.logaddexp(*self._log_out_sides(e))

    def _log_out_sides(self, e):
        r"""``(above, below)``: the log of a bound on the bulk's composed mass outside the transform's array, with its
        weight, at each ``e`` (the array spans :math:`[y_0, y_w]`), the smallest of: above it,
        :math:`M_B(\theta)^{T-1} e^{-\theta\varepsilon}\sup_{t \le \varepsilon - y_w} e^{\theta t}\Psi(t)`
        (Chernoff, weight and mass together, :math:`\theta` from the read-out's tilt up); below it,
        :math:`\Psi(\varepsilon - y_0)\min_\theta M_B(-\theta)^{T-1} e^{\theta y_0}` (:math:`\Psi(\varepsilon - s)`
        increases in :math:`s`) or :math:`M_B(\kappa)^{T-1} e^{-\kappa\varepsilon}\sup_{t \ge \varepsilon - y_0}
        e^{\kappa t}\Psi(t)` (:math:`\kappa` up to the read-out's tilt) or by layers (:meth:`_layers`); on either
        side the window's budget
        ``moved`` of tilted mass at the largest weight there, :math:`M_B(\lambda)^{T-1} e^{-\lambda\varepsilon}
        \sup e^{\lambda t}\Psi(t)`. All from the untilted bulk atoms and :math:`\Psi`'s tables, rounded up."""
        x, y0, yw = self._x, float(self.y[0]), float(self.y[-1])
        rows, low, blocks = self._sup_tables()
        moved = self.slack_split_[0]
        out = np.full(e.size, np.inf)
        left = self._log_psi(e - y0) + low + self._psi_rho
        k = np.searchsorted(x, e - yw, side="right")                # cells 0 .. k - 1 reach t <= e - y_w
        j = np.clip(np.searchsorted(x, e - y0, side="right") - 1, 0, x.size - 1)   # cells j .. reach t >= e - y_0
        for th, c, pref, suf, below, side in rows:
            # (t below the grid: e^(th t) Psi(t) <= e^(th min(x_0, e - y_w)) Psi(-inf))
            up = np.maximum(np.where(k > 0, pref[np.maximum(k - 1, 0)], -np.inf),
                            below - th * np.maximum(float(x[0]) - (e - yw), 0.0))
            dn = None if suf is None else np.where(e - y0 < x[0], np.maximum(suf[0], below), suf[j])
            if side == 0:
                if not moved > 0.0:
                    continue
                c = self.log_scale + math.log(moved)
            pad = 1e-12 + 16.0 * _U * (abs(c) + th * np.abs(e) + th * float(np.max(np.abs(x)))) + self._psi_rho
            with np.errstate(invalid="ignore"):
                if side >= 0:
                    out = np.minimum(out, np.where(np.isfinite(up), c - th * e + up + pad, -np.inf))
                if side <= 0:
                    left = np.minimum(left, np.where(np.isfinite(dn), c - th * e + dn + pad, -np.inf))
        # per block of cells from the one holding e - y_0 up (the bulk below the array): each its best tilt, summed
        kappa, c, bmax = blocks[:3]
        v = c[:, None, None] - kappa[:, None, None] * e[None, :, None] + bmax[:, None, :]
        pad = 1e-12 + 16.0 * _U * (np.abs(c)[:, None, None] + kappa[:, None, None] * (np.abs(e)[None, :, None]
                                                                                    + float(np.max(np.abs(x)))))
        with np.errstate(invalid="ignore"):
            v = np.min(np.where(np.isfinite(v), v + pad, np.where(np.isnan(v), np.inf, v)), axis=0)
        first = (j // _BLOCK)[:, None]
        v = np.where(np.arange(v.shape[1])[None, :] >= first, v, -np.inf)
        blk = special.logsumexp(v, axis=1) + self._psi_rho + 1e-12
        # (t below the grid's first point, where e - y_0 < x_0: e^(kappa t) Psi(t) <= Psi(-inf) at kappa = 0)
        blk = np.where(e - y0 < x[0], np.logaddexp(blk, c[0] + self._log_psi_inf), blk)
        left = np.minimum(np.minimum(left, blk), self._layers(e, y0, kappa, c, blocks[3:]))
        # (the bulk's composed losses are grid points in [(T - 1) x_0, (T - 1) x_b]: where the array reaches an end of
        # that range (to a millionth of a cell: grid points lie a cell apart), no mass lies beyond it on that side)
        lo_s, hi_s = self._support
        if y0 <= lo_s + 1e-6 * self.h:
            left = np.full(e.size, -np.inf)
        if yw >= hi_s - 1e-6 * self.h:
            out = np.full(e.size, -np.inf)
        return out, left

    def _main(self, e):
        r"""The bound on the composed atoms' profile at each ``e`` and the bound on its float error (see the module).

        The transform's array holds the bulk's composed masses plus, aliased, what lies outside it (non-negative),
        plus float error at most ``point + rel`` times each mass (:attr:`dpmia.pld.PLD.slack_split`). A dominating
        pair's bound adds the mass outside the array with its weight (:meth:`_log_out`) and the bound on two or
        more large steps; a dominated pair's subtracts the aliased mass (at most ``moved``) at the largest weight
        in the array."""
        e = np.atleast_1d(np.asarray(e, float))
        # (the base class reads the same points once per split of the excess: computed once)
        if self._memo is not None and self._memo[0].shape == e.shape and np.array_equal(self._memo[0], e):
            return self._memo[1]
        self._memo = (e.copy(), self._read(e))
        return self._memo[1]

    def _sums(self, e, keep=None):
        r"""``(main, err)`` at each ``e``: the log of the array's atoms' profile (those at ``keep``, a mask on the
        array, or all) and of its float error bound (see :meth:`_main`: ``point`` at each weight and ``rel`` of the
        sum; for a dominated pair also the aliased mass ``moved`` at the largest weight among them)."""
        y = self.y if keep is None else self.y[keep]
        with np.errstate(divide="ignore"):
            lw1 = self.log_scale - self.lam * y
            lw = lw1 + np.log(self.r if keep is None else self.r[keep])
        moved, point, rel = self.slack_split_
        main = np.full(e.size, -np.inf)
        wsum = np.full(e.size, -np.inf)
        wmax = np.full(e.size, -np.inf)
        for i, v in enumerate(e):
            if y.size:
                lp = self._psi_on_array(v) if keep is None else self._psi_on_array(v)[keep]
                main[i] = np.logaddexp.reduce(lw + lp)
                wsum[i] = np.logaddexp.reduce(lw1 + lp)
                wmax[i] = np.max(lw1 + lp)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            lerr = np.logaddexp(wsum + (math.log(point) if point > 0 else -np.inf),
                                main + (math.log(rel) if rel > 0 else -np.inf))
            if self.kind != "pessimistic":
                # (each weight within a few ulps of its log's size, the largest rounded up; none at all, -inf, stays)
                fin = np.isfinite(wmax)
                w_fin = np.where(fin, wmax, 0.0)
                wmax = np.where(fin, w_fin + 1e-12 + 8.0 * _U * np.abs(w_fin), wmax)
                lerr = np.logaddexp(lerr, wmax + (math.log(moved) if moved > 0 else -np.inf))
        return main, lerr

    def _read(self, e):
        """:meth:`_main`, computed."""
        main, lerr = self._sums(e)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            lm = np.logaddexp(np.logaddexp(main, self._log_r(e)), self._log_out(e)) if (
                self.kind == "pessimistic") else main
        return _finish(lm, lerr)


def _finish(lm, lerr):
    """:meth:`SplitTiltedPair._main`'s result from the logs of the bound and of its error."""
    lerr = lerr + 1e-12
    capped = (lm >= 709.0) | (lerr >= 709.0)
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(np.minimum(lm, 709.0)), np.exp(np.minimum(lerr, 709.0)), capped


def split_tilts(one, steps, e, d_est, fit=None):
    r"""``(b, [lam, ...])``: the split index and the tilts worth trying for a read-out at ``e``, or ``None``: the
    single step's profile slope at ``e`` (runs with one large step: the bulk near its mean, the large step near
    ``e``), and the bulk's saddle point for ``e`` (runs whose bulk alone reaches near ``e``: many small steps);
    every tilt gives certified bounds, the better one the narrower. ``fit(b, lam)``: the index to split at instead
    of :func:`split_index`'s ``b`` (any index gives certified bounds), or ``None`` for none."""
    x = one.losses
    h = one.h
    keep = one.pmf > 0
    with np.errstate(divide="ignore"):
        logq = np.where(keep, np.log(np.where(keep, one.pmf, 1.0)), -np.inf)
    lp = _log_profile(x, _log_tables(logq, h), np.array([e - 4.0 * h, e + 4.0 * h]))
    if not np.all(np.isfinite(lp)):
        return None
    lam = max(float(lp[0] - lp[1]) / (8.0 * h), 0.0)
    b = split_index(one, steps, lam, d_est)
    if b is not None and fit is not None:
        b = fit(b, lam)
    if b is None:
        return None
    lams = [lam]
    live = np.isfinite(logq[:b + 1])
    if steps > 1 and live.sum() > 1:
        lb = _saddle(logq[:b + 1][live], x[:b + 1][live], steps - 1, e)
        if 0.0 < lb < 1e12 and not 0.8 < lb / max(lam, 1e-300) < 1.25:
            lams.append(lb)
    return b, lams

