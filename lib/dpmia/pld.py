r"""Privacy-loss distributions (PLDs) on a grid, with certified brackets.

A *pair* :math:`(P, Q)` (output law without / with the target) is summarised by its privacy
profile :math:`\delta(\varepsilon) = H_{e^\varepsilon}(Q\|P) = \int (q - e^\varepsilon p)_+`, for all
real :math:`\varepsilon`. Every read-out of the book is a function of this profile:

* advantage :math:`\mathrm{TV} = \delta(0)`;
* scaled TV (Mahloujifar et al., Def. 4) :math:`\mathrm{TV}_a(P,Q) = a\,\delta(-\ln a) + (1-a)/2`;
* the reverse profile :math:`H_{e^\varepsilon}(P\|Q)`, hence :math:`\varepsilon(\delta)` for add/remove adjacency;
* the ROC: :math:`\mathrm{TPR}(\alpha) = \inf_\varepsilon\,[e^\varepsilon\alpha + \delta(\varepsilon)]`.

**Discretisation with a certificate.** Writing :math:`y = e^{\varepsilon}`, the profile
:math:`y \mapsto \delta` is convex. A pair supported on the grid :math:`x_j = j h` of privacy-loss
values has a profile that is piecewise linear in :math:`y` with kinks at :math:`e^{x_j}`, and
every such convex piecewise-linear curve is the profile of a unique grid pair
(:func:`_masses_from_profile`). Hence

* **pessimistic**: interpolate the exact profile at the grid points ("connect the dots",
  Doroshenko et al. 2022). Chords of a convex function lie above it, so the grid pair *dominates*
  the true one;
* **optimistic**: lower each grid value by the largest possible chord gap,
  :math:`\tfrac14(\text{slope change})(\text{width})` on each side, and keep the curve convex; it
  lies below the exact profile, so the true pair dominates the grid pair.

Domination is preserved by composition (Blackwell), so composing each grid pair :math:`T`
times by FFT and reading off gives a lower and an upper value that bracket the exact one. Both
errors are second order in :math:`h` per step. The FFT works on a window of the composed loss;
the mass outside it is bounded by a Chernoff bound on the grid pair and added to the bracket,
together with an allowance for floating-point error in the FFT. Brackets are therefore
certified up to that stated allowance (``PLD.slack``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from . import _checks

__all__ = ["PLD", "from_profile", "compose", "compose_many", "MAX_FFT"]

#: Largest FFT length (complex128: 2**24 points is about 256 MB). Larger requests raise.
MAX_FFT = 2**24
_EPS64 = np.finfo(float).eps


@dataclass(frozen=True)
class PLD:
    r"""A discrete pair on the grid :math:`x_s = (\text{offset}+s)\,h`, plus atoms at :math:`\pm\infty`.

    ``pmf[s]`` is the :math:`Q`-mass at loss :math:`x_s` (the :math:`P`-mass there is
    ``pmf[s] * exp(-x_s)``), ``inf_mass`` the :math:`Q`-mass where :math:`P = 0`, ``neg_inf_mass`` the
    :math:`P`-mass where :math:`Q = 0`. ``slack_q`` / ``slack_p`` bound the :math:`Q`- / :math:`P`-mass
    that may be misplaced (FFT window tails and floating point); read-outs widen by them.
    ``kind`` is ``"pessimistic"`` (dominates the true pair: read-outs are upper bounds) or
    ``"optimistic"`` (dominated: lower bounds).
    """

    h: float
    offset: int
    pmf: np.ndarray
    inf_mass: float
    neg_inf_mass: float
    kind: str
    slack_q: float = 0.0
    slack_p: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.pmf.size)) * self.h

    def _p_masses(self) -> np.ndarray:
        """P-masses pmf * e^{-x} (zero where pmf is zero, without overflow)."""
        x = self.losses
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(self.pmf > 0, self.pmf * np.exp(-x), 0.0)

    @property
    def _sign(self) -> float:
        return 1.0 if self.kind == "pessimistic" else -1.0

    def _finish(self, value):
        v = np.asarray(value, dtype=float)
        return np.clip(v, 0.0, 1.0)

    def reflect(self) -> "PLD":
        r"""The pair with the roles of :math:`P` and :math:`Q` swapped (losses negated, masses re-weighted).

        Composing the reflection gives the remove-direction profile :math:`H(P\|Q)` without
        multiplying tiny masses by :math:`e^{-x}` (which would amplify round-off).
        """
        x = self.losses
        pm = (self.pmf * np.exp(-x))[::-1]
        return PLD(self.h, -(self.offset + self.pmf.size - 1), pm, self.neg_inf_mass, self.inf_mass,
                   self.kind, self.slack_p, self.slack_q)

    # ----------------------------------------------------------------- read-outs
    def delta(self, eps):
        r""":math:`H_{e^\varepsilon}(Q\|P) = \sum_s q_s (1 - e^{\varepsilon - x_s})_+ + q_\infty` for real ``eps``.

        For a pessimistic PLD an upper bound on the true value, for an optimistic one a lower bound.
        """
        e = np.atleast_1d(_checks.real("eps", eps)).astype(float)
        x = self.losses
        out = np.empty(e.size)
        # sort eps to use cumulative sums: sum_{x_s > e} q_s - e^e sum_{x_s > e} q_s e^{-x_s}
        qe = self._p_masses()
        cq = np.cumsum(self.pmf[::-1])[::-1]
        cp = np.cumsum(qe[::-1])[::-1]
        idx = np.searchsorted(x, e, side="right")
        inside = idx < x.size
        out[:] = 0.0
        ii = idx[inside]
        out[inside] = np.maximum(cq[ii] - np.exp(e[inside]) * cp[ii], 0.0)
        out += self.inf_mass + self._sign * self.slack_q
        res = self._finish(out)
        return float(res[0]) if np.ndim(eps) == 0 else res

    def delta_reverse(self, eps):
        r""":math:`H_{e^\varepsilon}(P\|Q)` for real ``eps``: the profile of the reflected pair.

        Read from :meth:`reflect`, so that tiny masses are never multiplied by :math:`e^{-x}` on
        this grid (which would amplify FFT round-off).
        """
        return self.reflect().delta(eps)

    def tv(self) -> float:
        r"""Total variation :math:`\delta(0)` = the largest membership advantage (TPR - FPR)."""
        return float(self.delta(0.0))

    def tv_a(self, a):
        r"""Scaled TV :math:`\mathrm{TV}_a(P,Q) = \tfrac12\int|p - a q| = a\,\delta(-\ln a) + (1-a)/2`."""
        av = _checks.positive("a", a)
        av_ = np.atleast_1d(av)
        res = av_ * np.atleast_1d(self.delta(-np.log(av_))) + (1.0 - av_) / 2.0
        return float(res[0]) if np.ndim(a) == 0 else res

    def epsilon(self, delta, *, direction="both"):
        r"""Smallest :math:`\varepsilon \ge 0` with profile :math:`\le` ``delta``, solved exactly for this grid pair.

        ``direction``: ``"add"`` (:math:`H(Q\|P)`), ``"remove"`` (:math:`H(P\|Q)`, read from the
        reflected pair) or ``"both"`` (the max, add/remove adjacency). Between grid points the profile
        of a grid pair is :math:`A - e^{\varepsilon}B`, so the crossing is found in one pass over the
        grid and solved in closed form. A pessimistic PLD gives an upper bound on the tight
        :math:`\varepsilon`, an optimistic one a lower bound. ``inf`` if unattainable (mass at infinity).
        """
        d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True)
        if direction not in ("add", "remove", "both"):
            raise ValueError(f"direction must be 'add', 'remove' or 'both', got {direction!r}")
        pairs = {"add": [self], "remove": [self.reflect()], "both": [self, self.reflect()]}[direction]
        return max(p_._epsilon_add(d) for p_ in pairs)

    def _epsilon_add(self, d: float) -> float:
        x = self.losses
        const = self.inf_mass + self._sign * self.slack_q
        if const > d:
            return float("inf")
        cq = np.concatenate([np.cumsum(self.pmf[::-1])[::-1], [0.0]])   # Q-mass of {x_s >= x_k}
        cp = np.concatenate([np.cumsum(self._p_masses()[::-1])[::-1], [0.0]])

        def prof(e):  # profile at eps = e
            k = int(np.searchsorted(x, e, side="right"))
            return max(cq[k] - np.exp(e) * cp[k], 0.0) + const

        if prof(0.0) <= d:
            return 0.0
        # profile at each grid point x_k >= 0 (terms with x_s > x_k: s >= k + 1)
        k0 = int(np.searchsorted(x, 0.0, side="left"))
        ks = np.arange(k0, x.size)
        with np.errstate(over="ignore", invalid="ignore"):
            vals = np.maximum(cq[ks + 1] - np.exp(x[ks]) * cp[ks + 1], 0.0) + const
        hit = np.flatnonzero(vals <= d)
        if hit.size == 0:
            return float("inf")
        k = int(ks[hit[0]])
        left = max(x[k - 1], 0.0) if k > k0 else 0.0
        # on (left, x_k): profile = A - e^eps B with the atoms s >= k
        A, B = cq[k] + const, cp[k]
        if B <= 0.0:
            return float(left)
        e = float(np.log(max(A - d, 1e-300) / B))
        return float(min(max(e, left), x[k]))

    def roc(self, fpr):
        r"""Largest TPR at false-positive rate ``fpr``: :math:`\inf_\varepsilon[e^\varepsilon\,\mathrm{fpr} + \delta(\varepsilon)]`.

        Evaluated over the grid values of :math:`\varepsilon`: for a pessimistic PLD every term is an
        upper bound, so the infimum over any set of them is one. Never below ``fpr`` (random guessing).
        """
        f = _checks.probability("fpr", fpr)
        f_ = np.atleast_1d(f)
        x = self.losses
        # delta at every grid point at once
        qe = self._p_masses()
        cq = np.concatenate([np.cumsum(self.pmf[::-1])[::-1], [0.0]])
        cp = np.concatenate([np.cumsum(qe[::-1])[::-1], [0.0]])
        # at eps = x_k (k), terms with x_s > x_k: indices s >= k+1
        dk = np.maximum(cq[1:] - np.exp(x) * cp[1:], 0.0) + self.inf_mass + self._sign * self.slack_q
        dk = np.clip(dk, 0.0, 1.0)
        # restrict to the informative range of eps (finite values, ignore far tails)
        ex = np.exp(x)
        out = np.empty(f_.size)
        for i, a in enumerate(f_):
            out[i] = min(1.0, float(np.min(ex * a + dk)))
        out = np.maximum(out, f_)  # the best test is never worse than random guessing
        return float(out[0]) if np.ndim(fpr) == 0 else out


# --------------------------------------------------------------------------------------
# building a grid pair from an exact profile
# --------------------------------------------------------------------------------------
def _lower_convex(y, w):
    """Lower convex hull of the points (y, w) (y increasing), evaluated back at every y.

    Andrew's monotone chain: the hull lies below the polyline through the points, is convex, and
    keeps the first and last points.
    """
    hull = [0]
    for k in range(1, len(y)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b if it lies on or above the segment a -> k
            if (w[b] - w[a]) * (y[k] - y[a]) >= (w[k] - w[a]) * (y[b] - y[a]):
                hull.pop()
            else:
                break
        hull.append(k)
    hull = np.asarray(hull)
    return np.interp(y, y[hull], w[hull])


def from_profile(x, profile, nu_tail, kind):
    r"""Grid pair on the losses ``x`` (uniform step, :math:`x_0 \le \log(1-q)`) from the exact profile.

    ``profile[j]`` = :math:`\delta(x_j)`, ``nu_tail[j]`` = :math:`P(L > x_j)` (minus the profile's slope
    in :math:`y` at :math:`e^{x_j}`). Left of :math:`e^{x_0}` the exact profile must be :math:`1-y`
    (no loss below :math:`x_0`). Returns a :class:`PLD` with full :math:`Q`-mass whose profile lies above
    (``"pessimistic"``) or below (``"optimistic"``) the exact one.
    """
    x = np.asarray(x, float)
    v = np.asarray(profile, float)
    nu = np.asarray(nu_tail, float)
    h = float(x[1] - x[0])
    offset = int(round(x[0] / h))
    y = np.exp(x)
    yy = np.concatenate([[0.0], y])
    dy = np.diff(yy)
    if kind == "pessimistic":
        vv = np.concatenate([[1.0], np.maximum(v, 1.0 - y)])
        s = np.diff(vv) / dy
        s = np.maximum.accumulate(s)          # repair float noise: bends up only, stays above chords
        vals = 1.0 + np.cumsum(s * dy)
        inf_mass = max(float(vals[-1]), 0.0)  # Q-mass beyond the grid goes to +infinity
    elif kind == "optimistic":
        dnu = nu[:-1] - nu[1:]                # P-mass of each cell, = slope change of the profile
        gap = 0.25 * dnu * np.diff(y)          # largest chord-over-curve gap on each segment
        c = np.zeros(x.size)
        c[:-1] = np.maximum(c[:-1], gap)
        c[1:] = np.maximum(c[1:], gap)
        # values at the grid points: lowered by the gap bound, never below 1 - y (P has mass 1).
        # Where a point cannot be lowered (it would cross 1 - y), lower its neighbour by the
        # one-sided bound (slope change) x (width) instead, which also keeps the chord below.
        line = np.maximum(1.0 - y, 0.0)
        one_sided = dnu * np.diff(y)
        for _ in range(3):
            w = np.maximum(v - c, line)
            stuck = (v - c < line) & (v - line < c)   # could not be lowered by the full gap
            need = np.zeros(x.size)
            need[1:] = np.where(stuck[:-1], one_sided, 0.0)
            need[:-1] = np.maximum(need[:-1], np.where(stuck[1:], one_sided, 0.0))
            if np.all(c >= need):
                break
            c = np.maximum(c, need)
        w[-1] = max(0.0, 1.0 - y[-1])          # no mass at +infinity
        vals = _lower_convex(yy, np.concatenate([[1.0], w]))[1:]
        inf_mass = 0.0
    else:
        raise ValueError(f"kind must be 'pessimistic' or 'optimistic', got {kind!r}")
    full = np.concatenate([[1.0], vals])
    s = np.diff(full) / dy                     # slope left of each y_j
    s_right = np.concatenate([s[1:], [0.0]])
    pmf = np.maximum(y * (s_right - s), 0.0)
    neg_inf = max(1.0 + float(s[0]), 0.0)
    # Float rounding of profile values near y = 0 (where they are 1 - y to 1e-16) can leave the pair
    # with P-mass slightly above 1 (about 1e-9, up to 1e-6 for q within 1e-5 of 1); record the excess
    # as misplaced mass so every P-side read-out widens by it.
    p_excess = max(float(np.sum(pmf * np.exp(-x))) + neg_inf - 1.0, 0.0)
    return PLD(h, offset, pmf, inf_mass, neg_inf, kind, slack_q=0.0, slack_p=p_excess)


# --------------------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------------------
def _log_mgfs(pmf, x, shift=0.0, bins=4096):
    """Upper bounds on the one-step log-MGF of ``pmf * exp(shift * x)`` at +-lam, for a grid of lam.

    Returns ``(lam, up, dn)`` with ``up[i] >= log sum pmf e^{(shift + lam_i) x}`` and
    ``dn[i] >= log sum pmf e^{(shift - lam_i) x}``: masses are binned on at most ``bins`` bins and
    moved to the bin end that maximises each term, which keeps the Chernoff bounds cheap.
    """
    keep = pmf > 0
    m, xs = pmf[keep], x[keep]
    h = x[1] - x[0] if x.size > 1 else 1.0
    span = max(xs[-1] - xs[0], h)
    nb = int(min(bins, np.ceil(span / h) + 1))
    width = span / nb * (1 + 1e-12)
    k = np.minimum(((xs - xs[0]) / width).astype(int), nb - 1)
    agg = np.bincount(k, weights=m, minlength=nb)
    nz = agg > 0
    la = np.log(agg[nz])
    x_dn = xs[0] + np.arange(nb)[nz] * width
    x_up = x_dn + width
    lam = np.geomspace(1e-3, 1e3, 36)

    def log_mgf(coef):
        pts = np.where(coef[:, None] >= 0.0, x_up[None, :], x_dn[None, :])
        return special.logsumexp(la[None, :] + coef[:, None] * pts, axis=1)

    return lam, log_mgf(lam + shift), log_mgf(shift - lam)


def _tail_above(mgfs, T, c):
    """Chernoff bound on the T-fold composed mass above c."""
    lam, up, _ = mgfs
    return float(np.exp(min(np.min(T * up - lam * c), 0.0)))


def _tail_below(mgfs, T, c):
    """Chernoff bound on the T-fold composed mass below c."""
    lam, _, dn = mgfs
    return float(np.exp(min(np.min(T * dn + lam * c), 0.0)))


def compose(pld: PLD, T: int, *, tail=1e-14, max_fft=None) -> PLD:
    r""":math:`T`-fold self-composition by one FFT (cost independent of :math:`T` beyond the window).

    The composed loss is computed on a window around its bulk; the :math:`Q`- and :math:`P`-mass
    outside the window is bounded by Chernoff bounds on the grid pair and recorded in ``slack_q`` /
    ``slack_p``, with an allowance for floating-point error of the FFT
    (:math:`4\sqrt N\,T\,\varepsilon_{\rm mach}\log_2 N`). Raises ``ValueError`` (with a hint)
    if the window needs more than :data:`MAX_FFT` points.
    """
    steps = _checks.integer("T", T, lo=1)
    if steps == 1:
        return pld
    x = pld.losses
    p = pld.pmf
    mass = p.sum()
    mean = float(np.sum(p * x) / mass) if mass > 0 else 0.0
    var = float(np.sum(p * (x - mean) ** 2) / mass) if mass > 0 else 0.0
    # P-side statistics too (P-mass = p e^{-x})
    pp = p * np.exp(-x)
    pm = pp.sum()
    mean_p = float(np.sum(pp * x) / pm) if pm > 0 else mean
    var_p = float(np.sum(pp * (x - mean_p) ** 2) / pm) if pm > 0 else var
    sd = np.sqrt(steps * max(var, var_p, pld.h**2))
    mq = _log_mgfs(p, x)
    mp = _log_mgfs(p, x, shift=-1.0)
    lo_c = min(steps * mean_p, steps * mean) - 16.0 * sd
    hi_c = max(steps * mean_p, steps * mean) + 16.0 * sd
    for _ in range(30):
        bq = _tail_above(mq, steps, hi_c) + _tail_below(mq, steps, lo_c)
        bp = _tail_above(mp, steps, hi_c) + _tail_below(mp, steps, lo_c)
        if bq <= tail and bp <= tail:
            break
        lo_c -= 4.0 * sd
        hi_c += 4.0 * sd
    width = (hi_c - lo_c) / pld.h + x.size + 2
    n = 1 << int(np.ceil(np.log2(width)))
    cap = MAX_FFT if max_fft is None else min(int(max_fft), MAX_FFT)
    if n > cap:
        raise ValueError(f"the composed window needs an FFT of {n} points (> cap {cap}); "
                         f"use a coarser grid h (now {pld.h:g}) or fewer steps")
    s_lo = int(np.floor(lo_c / pld.h))
    arr = np.zeros(n)
    idx = (pld.offset + np.arange(p.size)) % n
    np.add.at(arr, idx, p)
    f = np.fft.rfft(arr)
    f = f**steps
    out = np.fft.irfft(f, n)
    # window positions s_lo .. s_lo + n - 1
    pos = (s_lo + np.arange(n)) % n
    pmf = np.maximum(out[pos], 0.0)
    fp = 4.0 * np.sqrt(n) * steps * _EPS64 * np.log2(n)
    # Cut the far tails where only FFT round-off lives (it would be amplified by e^{-x} in P-side
    # read-outs): below c_lo the P-mass, above c_hi the Q-mass, are bounded by Chernoff.
    xw = (s_lo + np.arange(n)) * pld.h
    mid = 0.5 * (steps * mean_p + steps * mean)
    c_lo, c_hi = xw[0], xw[-1]
    for k in (6.0, 8.0, 10.0, 12.0, 14.0):
        cand = steps * mean_p - k * sd
        if c_lo < cand < mid and _tail_below(mp, steps, cand) <= tail:
            b = _tail_below(mp, steps, cand)
            c_lo, bp, bq = cand, bp + b, bq + b * np.exp(cand)
            break
    for k in (6.0, 8.0, 10.0, 12.0, 14.0):
        cand = steps * mean + k * sd
        if mid < cand < c_hi and _tail_above(mq, steps, cand) <= tail:
            b = _tail_above(mq, steps, cand)
            c_hi, bq, bp = cand, bq + b, bp + b * np.exp(-cand)
            break
    pmf[(xw < c_lo) | (xw > c_hi)] = 0.0
    inf_mass = 1.0 - (1.0 - pld.inf_mass) ** steps
    neg_inf = 1.0 - (1.0 - pld.neg_inf_mass) ** steps
    return PLD(pld.h, s_lo, pmf, float(inf_mass), float(neg_inf), pld.kind,
               slack_q=float(steps * pld.slack_q + bq + fp), slack_p=float(steps * pld.slack_p + bp + fp))


def compose_many(plds) -> PLD:
    r"""Composition of several PLDs with the same grid and kind (heterogeneous schedules).

    Each element may itself be a :math:`T`-fold composition; the product of the DFTs is taken on a
    common window covering the sum of the supports (bounded by Chernoff as in :func:`compose`).
    """
    plds = list(plds)
    if not plds:
        raise ValueError("plds must contain at least one PLD")
    h, kind = plds[0].h, plds[0].kind
    if any(abs(p_.h - h) > 1e-15 * h or p_.kind != kind for p_ in plds):
        raise ValueError("all PLDs must share the grid step h and the kind")
    lo = sum(p_.offset for p_ in plds)
    hi = sum(p_.offset + p_.pmf.size for p_ in plds)
    n = 1 << int(np.ceil(np.log2(hi - lo + 2)))
    if n > MAX_FFT:
        raise ValueError(f"composition needs an FFT of {n} points (> MAX_FFT = {MAX_FFT}); coarsen h")
    f = np.ones(n // 2 + 1, dtype=complex)
    for p_ in plds:  # place each pmf at its own offset; the product's offset is the sum of offsets
        arr = np.zeros(n)
        arr[: p_.pmf.size] = p_.pmf
        f *= np.fft.rfft(arr)
    out = np.maximum(np.fft.irfft(f, n), 0.0)
    size = hi - lo
    fp = 4.0 * np.sqrt(n) * len(plds) * _EPS64 * np.log2(n)
    inf_mass = 1.0 - np.prod([1.0 - p_.inf_mass for p_ in plds])
    neg_inf = 1.0 - np.prod([1.0 - p_.neg_inf_mass for p_ in plds])
    return PLD(h, lo, out[:size], float(inf_mass), float(neg_inf), kind,
               slack_q=float(sum(p_.slack_q for p_ in plds) + fp),
               slack_p=float(sum(p_.slack_p for p_ in plds) + fp))
