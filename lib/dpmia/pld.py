r"""Privacy-loss distributions (PLDs) on a grid, with certified brackets.

A *pair* :math:`(P, Q)` (output law without / with the target) is summarised by its privacy
profile :math:`\delta(\varepsilon) = H_{e^\varepsilon}(Q\|P) = \int (q - e^\varepsilon p)_+`, for all
real :math:`\varepsilon`. Every read-out of the book is a function of this profile:

* advantage :math:`\mathrm{TV} = \delta(0)`;
* scaled TV (Mahloujifar et al., Def. 4) :math:`\mathrm{TV}_a(P,Q) = a\,\delta(-\ln a) + (1-a)/2`;
* :math:`\varepsilon(\delta)`, and the ROC :math:`\mathrm{TPR}(\alpha) = \inf_\varepsilon\,[e^\varepsilon\alpha + \delta(\varepsilon)]`.

**Discretisation with a certificate.** Writing :math:`y = e^{\varepsilon}`, the profile
:math:`y \mapsto \delta` is convex. A pair supported on the grid :math:`x_j = j h` of privacy-loss
values has a profile that is piecewise linear in :math:`y` with kinks at :math:`e^{x_j}`, and
every such convex piecewise-linear curve is the profile of a unique grid pair
(:func:`from_profile`). Hence

* **pessimistic**: interpolate the exact profile at the grid points ("connect the dots",
  Doroshenko et al. 2022). Chords of a convex function lie above it, so the grid pair *dominates*
  the true one;
* **optimistic**: lower each grid value by the largest possible chord gap,
  :math:`\tfrac14(\text{slope change})(\text{width})` on each side, and take the greatest convex
  minorant; it lies below the exact profile, so the true pair dominates the grid pair.

Domination is preserved by composition (Blackwell), so composing each grid pair :math:`T`
times by FFT and reading off gives a lower and an upper value that bracket the exact one. Both
errors are second order in :math:`h` per step. The FFT works on a window of the composed loss;
the mass outside it is bounded by a Chernoff bound on the grid pair, and the floating-point
error of the FFT by a bound computed from the transform itself (it scales with the mass, so tiny
values keep their relative accuracy); both are added to the bracket (``PLD.slack_q``).

Everything is computed from :math:`Q`-masses and losses, with :math:`e^{\varepsilon - x}\le 1` in
every product, so read-outs work for any :math:`\varepsilon` (also above 709, where
:math:`e^\varepsilon` overflows). No wall clock anywhere: the same input gives the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import fft as _fft
from scipy import optimize, signal, special

from . import _checks

__all__ = ["PLD", "from_profile", "compose", "compose_pair", "compose_many", "same_support", "MAX_FFT", "KINDS",
           "GridError"]


class GridError(ValueError):
    """The grid cannot carry a certified optimistic pair (x = 0 inside a cell pinned to 1 - y at both ends)."""

#: Largest FFT length (complex128: 2**24 points is about 256 MB). Larger requests raise.
MAX_FFT = 2**24
KINDS = ("pessimistic", "optimistic")
_U = np.finfo(float).eps / 2.0


def _normalise(offset, shift, h):
    """(offset, shift) with the same losses (offset + s) h + shift and shift in [0, h)."""
    k = math.floor(shift / h)
    return int(offset + k), float(shift - k * h)


def _kind(kind):
    if kind not in KINDS:
        raise ValueError(f"kind must be 'pessimistic' or 'optimistic', got {kind!r}")
    return kind


@dataclass(frozen=True)
class PLD:
    r"""A discrete pair on the grid :math:`x_s = (\text{offset}+s)\,h + \text{shift}`, plus atoms at :math:`\pm\infty`.

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
    shift: float = 0.0

    def __post_init__(self):
        _checks.positive("h", self.h)
        _checks.integer("offset", self.offset)
        _kind(self.kind)
        p = np.asarray(self.pmf)
        if p.ndim != 1 or p.size == 0:
            raise ValueError(f"pmf must be a non-empty 1-d array, got shape {p.shape}")
        _checks.real("pmf", p.astype(float), lo=0.0)
        for name in ("inf_mass", "neg_inf_mass", "slack_q", "slack_p"):
            _checks.real(name, getattr(self, name), lo=0.0)
        _checks.real("shift", self.shift)

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.pmf.size)) * self.h + self.shift

    @property
    def _sign(self) -> float:
        return 1.0 if self.kind == "pessimistic" else -1.0

    def _tables(self):
        r"""Suffix tables: ``cq[k]`` = Q-mass at :math:`x_s \ge x_k`, ``S[k]`` = :math:`\sum_{s\ge k} q_s e^{-(x_s-x_k)}`.

        ``S`` follows the stable recursion :math:`S_k = q_k + e^{-h} S_{k+1}` (no :math:`e^{x}` anywhere).
        Both have a trailing 0 (index ``pmf.size``).
        """
        p = np.asarray(self.pmf, float)
        cq = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        S = np.concatenate([signal.lfilter([1.0], [1.0, -math.exp(-self.h)], p[::-1])[::-1], [0.0]])
        return cq, S

    def _const(self) -> float:
        return self.inf_mass + self._sign * self.slack_q

    def _delta_raw(self, e):
        """Profile at the real array ``e`` before slack and clipping."""
        cq, S = self._tables()
        xg = self.losses
        idx = np.searchsorted(xg, e, side="right")          # first grid index with x_s > e
        xs = np.where(idx < xg.size, xg[np.minimum(idx, xg.size - 1)], np.inf)
        with np.errstate(over="ignore", under="ignore"):
            f = np.exp(np.minimum(e - xs, 0.0))
        return np.maximum(cq[idx] - f * S[idx], 0.0)

    # ----------------------------------------------------------------- read-outs
    def delta(self, eps):
        r""":math:`H_{e^\varepsilon}(Q\|P) = \sum_s q_s (1 - e^{\varepsilon - x_s})_+ + q_\infty` for real ``eps``.

        For a pessimistic PLD an upper bound on the true value, for an optimistic one a lower bound.
        """
        e = np.atleast_1d(_checks.real("eps", eps)).astype(float)
        res = np.clip(self._delta_raw(e) + self._const(), 0.0, 1.0)
        return float(res[0]) if np.ndim(eps) == 0 else res

    def reflect(self) -> "PLD":
        r"""The pair with the roles of :math:`P` and :math:`Q` swapped (losses negated, masses re-weighted).

        Meant for a single-step pair; compose the reflection to get the remove-direction profile
        :math:`H(P\|Q)` (reflecting a composed pair would multiply FFT round-off by :math:`e^{-x}`).
        """
        x = self.losses
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            pm = np.where(self.pmf > 0, np.exp(np.log(np.maximum(self.pmf, 1e-320)) - x), 0.0)[::-1]
        if not np.all(np.isfinite(pm)):
            raise ValueError("reflect: P-masses overflow (a composed pair far left of 0); reflect the single step")
        off, sh = _normalise(-(self.offset + self.pmf.size - 1), -self.shift, self.h)
        return PLD(self.h, off, pm, self.neg_inf_mass, self.inf_mass, self.kind, self.slack_p, self.slack_q, sh)

    def delta_reverse(self, eps):
        r""":math:`H_{e^\varepsilon}(P\|Q)` for real ``eps``: the profile of the reflected pair."""
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

    def epsilon(self, delta, *, direction="add"):
        r"""Smallest :math:`\varepsilon \ge 0` with profile :math:`\le` ``delta``, solved exactly for this grid pair.

        ``direction``: ``"add"`` (:math:`H(Q\|P)`), ``"remove"`` (:math:`H(P\|Q)`, read from the
        reflected pair) or ``"both"`` (the max). Between grid points the profile of a grid pair is
        :math:`A - e^{\varepsilon - x_k}B`, so the crossing is found in one pass and solved in closed
        form (in log space: no overflow for any :math:`\varepsilon`). A pessimistic PLD gives an
        upper bound on the tight :math:`\varepsilon`, an optimistic one a lower bound; ``inf`` if
        the profile never falls to ``delta`` (mass at infinity or slack above ``delta``).
        """
        d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True)
        if direction not in ("add", "remove", "both"):
            raise ValueError(f"direction must be 'add', 'remove' or 'both', got {direction!r}")
        pairs = [self] if direction == "add" else [self.reflect()] if direction == "remove" else [self, self.reflect()]
        return max(p_._epsilon_add(d) for p_ in pairs)

    def _epsilon_add(self, d: float) -> float:
        const = self._const()
        if const > d:
            return math.inf
        if float(self._delta_raw(np.array([0.0]))[0]) + const <= d:
            return 0.0
        x0, h, n = self.offset * self.h + self.shift, self.h, self.pmf.size
        cq, S = self._tables()
        # profile at each grid point x_k (atoms s >= k + 1): cq[k+1] - e^{-h} S[k+1]
        vals = np.maximum(cq[1:] - math.exp(-h) * S[1:], 0.0) + const
        k0 = int(max(0, math.ceil(-x0 / h)))          # first grid index with x_k >= 0
        hit = np.flatnonzero(vals[k0:] <= d)
        if hit.size == 0:
            return math.inf
        k = k0 + int(hit[0])
        left = max(x0 + (k - 1) * h, 0.0) if k > k0 else 0.0
        xk = x0 + k * h
        # on (x_{k-1}, x_k]: profile = A - e^{eps - x_k} B with the atoms s >= k
        A, B = cq[k] + const, S[k]
        if B <= 0.0 or A <= d:
            return float(left)
        e = xk + math.log((A - d) / B)
        return float(min(max(e, left), xk))

    def _delta_grid(self):
        """Profile at every grid point (atoms strictly above), with slack, clipped to [0, 1]."""
        cq, S = self._tables()
        return np.clip(np.maximum(cq[1:] - math.exp(-self.h) * S[1:], 0.0) + self._const(), 0.0, 1.0)

    def roc(self, fpr):
        r"""Largest TPR at false-positive rate ``fpr``: :math:`\inf_\varepsilon[e^\varepsilon\,\mathrm{fpr} + \delta(\varepsilon)]`.

        Evaluated over the grid values of :math:`\varepsilon`: for a pessimistic PLD every term is an
        upper bound, so the infimum over any set of them is one. Never below ``fpr``.
        For an optimistic PLD the exact ROC of the grid pair (a lower bound) is returned.
        """
        f = _checks.probability("fpr", fpr)
        f_ = np.atleast_1d(f)
        x = self.losses
        dk = self._delta_grid()
        out = np.empty(f_.size)
        if self.kind == "pessimistic":
            with np.errstate(over="ignore", divide="ignore"):
                for i, a in enumerate(f_):
                    out[i] = min(1.0, float(np.min(np.exp(np.minimum(x + math.log(a), 700.0)) + dk))) if a > 0 \
                        else min(1.0, float(dk[-1]) if dk.size else 1.0)
        else:
            out[:] = self._roc_exact(f_)
        out = np.maximum(out, f_)
        return float(out[0]) if np.ndim(fpr) == 0 else out

    def _roc_exact(self, f_):
        """Exact ROC of the grid pair (Neyman-Pearson, randomised at the threshold atom)."""
        x = self.losses
        with np.errstate(under="ignore", over="ignore"):
            pm = np.where(self.pmf > 0, self.pmf * np.exp(-np.maximum(x, -700.0)), 0.0)
        # reject from the top loss down: FPR = P-mass, TPR = Q-mass (+ atom at +inf first)
        cp = np.concatenate([[0.0], np.cumsum(pm[::-1])])
        cq = np.concatenate([[0.0], np.cumsum(self.pmf[::-1])]) + self.inf_mass
        cq[0] = self.inf_mass
        tpr = np.interp(f_, cp, cq, right=cq[-1])
        return np.clip(tpr + self._sign * self.slack_q, 0.0, 1.0)


# --------------------------------------------------------------------------------------
# building a grid pair from an exact profile
# --------------------------------------------------------------------------------------
def _masses(dv, x0, h):
    r"""Atoms of the grid pair whose profile has the increments ``dv`` between the grid points :math:`x_j = x_0 + jh`.

    With :math:`u_j = (v_{j+1} - v_j)/(e^h - 1)` (:math:`y_j` times the slope right of :math:`y_j`)
    the atom at :math:`x_j` is :math:`u_j - e^h u_{j-1}`; left of :math:`y_0` the profile is
    :math:`1 - y` (:math:`y_0 u_{-1} = -y_0`), right of the last point it is flat. No
    :math:`e^{x}` is formed, so any loss range works.
    """
    em = math.expm1(h)
    u = np.asarray(dv, float) / em
    u_prev = np.concatenate([[-math.exp(x0 - h)], u])       # e^h u_{-1} = -y_0  ->  u_{-1} = -y_0 e^{-h}
    u_next = np.concatenate([u, [0.0]])
    return u_next - math.exp(h) * u_prev


def _increments(values, exact, dprofile):
    """Increments of ``values``: the exact ``dprofile`` where both ends are ``exact`` (unmodified profile), else differences."""
    d = np.diff(values)
    if dprofile is None:
        return d
    both = exact[:-1] & exact[1:]
    return np.where(both, dprofile, d)


def _line(x):
    """max(1 - e^x, 0): the profile of a pair with all P-mass below x."""
    return np.maximum(-np.expm1(np.minimum(x, 0.0)), 0.0)


def from_profile(x, profile, nu_tail, kind, *, log_cell=None, dprofile=None, gap=None):
    r"""Grid pair on the losses ``x`` (uniform step, :math:`x_0 \le` the smallest loss) from the exact profile.

    ``profile[j]`` = :math:`\delta(x_j)`; ``nu_tail[j]`` = :math:`P(L > x_j)` (minus the profile's slope
    in :math:`y` at :math:`e^{x_j}`); optionally ``log_cell[j]`` = :math:`x_j + \log P(x_j < L \le x_{j+1})`
    (computed stably by the caller; otherwise from ``nu_tail``) and ``dprofile[j]`` =
    :math:`\delta(x_{j+1}) - \delta(x_j)` (computed from cell masses, where differences of profile
    values would lose every digit on a plateau) and ``gap[j]``, an upper bound on the gap between
    the chord and the profile on cell j (the optimistic pair uses the smaller of it and
    :math:`\tfrac14 (e^h - 1)\,e^{x_j} P(\text{cell}_j)`). Returns a :class:`PLD` with full
    :math:`Q`-mass whose profile lies above (``"pessimistic"``) or below (``"optimistic"``) the exact one.
    """
    _kind(kind)
    x = np.asarray(x, float)
    v = np.asarray(profile, float)
    h = float(x[1] - x[0])
    x0 = float(x[0])
    offset, shift = _normalise(0, x0, h)
    xg = x0 + h * np.arange(x.size)
    line = _line(xg)
    if kind == "pessimistic":
        vv = np.maximum(v, line)
        dvv = _increments(vv, v >= line, dprofile)
        m = _masses(dvv, x0, h)
        inf_mass = max(float(vv[-1]), 0.0)              # Q-mass beyond the grid goes to +infinity
        if np.any(m < 0):
            # float noise made an atom negative: raise the slopes right of it (the curve stays above
            # its chords, so still pessimistic). With u_j = y_j * slope, convexity is
            # u_j >= e^h u_{j-1}, i.e. r_j = log(-u_j) <= r_{j-1} + h: a running minimum of r_j - j h.
            em = math.expm1(h)
            u = np.concatenate([[-math.exp(x0 - h)], dvv / em])
            with np.errstate(divide="ignore"):
                r = np.log(np.maximum(-u, 0.0))
            j = np.arange(u.size)
            u2 = -np.exp(np.minimum.accumulate(r - j * h) + j * h)
            m = np.maximum(np.concatenate([u2[1:], [0.0]]) - math.exp(h) * u2, 0.0)
            inf_mass += em * float(np.sum(u2[1:] - u[1:]))   # the end of the raised curve
        # x_0 may sit above losses of negligible probability: the curve is pinned to 1 - y at y_0,
        # which lowers it by v_0 - (1 - y_0); record that as slack so read-outs stay upper bounds
        pin = max(float(vv[0] - line[0]), 0.0)
    else:
        if log_cell is None:
            nu = np.asarray(nu_tail, float)
            with np.errstate(divide="ignore", over="ignore"):
                log_cell = xg[:-1] + np.log(np.maximum(nu[:-1] - nu[1:], 0.0))
        with np.errstate(over="ignore", under="ignore"):
            E = np.exp(np.minimum(np.asarray(log_cell, float), 0.0))   # e^{x_j} P(cell_j) <= Q(cell_j) <= 1
        gap_c = 0.25 * math.expm1(h) * E                              # chord-over-curve gap on cell j
        if gap is not None:
            gap_c = np.minimum(gap_c, np.asarray(gap, float))
        gap = gap_c
        c = np.zeros(x.size)
        c[:-1] = gap
        c[1:] = np.maximum(c[1:], gap)
        # A point that cannot be lowered by its full gap (it would cross 1 - y: P has mass 1) leaves
        # the chord of its cells unlowered at that end; the other end then needs the one-sided
        # bound (slope change) x (width) = 4 gap.
        one_sided = 4.0 * gap
        # points within float noise of 1 - y count as on it (w = 1 - y there, which is never above the
        # profile): left to noise, stuck and free points would alternate at the bottom of the grid
        # and their mixed increments give negative atoms
        noise = 64.0 * _U * np.maximum(np.abs(v), np.abs(line))

        def on_line(c):
            # strictly below, or within noise of 1 - y in the run that starts at x_0
            return (v - c < line) | np.logical_and.accumulate(v - c < line + 4.0 * noise)

        for _ in range(4):
            stuck = on_line(c)
            need = np.zeros(x.size)
            need[1:] = np.where(stuck[:-1], one_sided, 0.0)
            need[:-1] = np.maximum(need[:-1], np.where(stuck[1:], one_sided, 0.0))
            if np.all(c >= need):
                break
            c = np.maximum(c, need)
        stuck = on_line(c)
        w = np.where(stuck, line, v - c)
        w[0] = line[0]                                                  # pinned: Q-mass exactly 1
        w[-1] = line[-1]                                               # no mass at +infinity
        # 1 - y bends at x = 0: if 0 lies strictly inside a cell whose ends both sit on 1 - y, the
        # chord there is above 1 - y and may be above the profile; no grid pair fixes that
        a = int(np.searchsorted(xg, 0.0)) - 1
        if 0 <= a < x.size - 1 and xg[a] < 0.0 < xg[a + 1] and w[a] <= line[a] and w[a + 1] <= line[a + 1]:
            raise GridError("x = 0 is not a grid point and both ends of its cell are pinned to 1 - y; "
                            "use a grid with a point at 0")
        lowered = ~stuck
        lowered[0] = lowered[-1] = False
        dw = _increments(w, lowered, None if dprofile is None else dprofile - np.diff(c))
        # on 1 - y at both ends (left of 0): the exact increment -e^{x_j} (e^h - 1), not a difference
        on_line = ~lowered
        both = on_line[:-1] & on_line[1:] & (xg[1:] <= 0.0)
        dw = np.where(both, -np.exp(np.minimum(xg[:-1], 0.0)) * math.expm1(h), dw)
        m = _masses(dw, x0, h)
        if np.any(m < 0):
            corr = _convex_minorant(xg, w)
            m = np.maximum(_masses(dw + np.diff(corr), x0, h), 0.0)
            w = w + corr
        inf_mass = 0.0
        pin = 0.0
    pin_0 = pin
    # Rounding in the second differences (and clipping of float-noise atoms) can leave the Q-mass a
    # few 1e-10 above its exact total; composed T times that would grow T-fold, so rescale.
    total = float(m.sum()) + inf_mass
    if total > 1.0:
        if inf_mass >= 1.0 or m.sum() <= 0.0:       # everything beyond the grid (a very coarse step)
            inf_mass, m = min(inf_mass, 1.0), np.zeros_like(m) if inf_mass >= 1.0 else m
        else:
            m = m * ((1.0 - inf_mass) / float(m.sum()))
    if kind == "optimistic" and m.sum() < 1.0:
        # Q-mass lost to float noise and clipping: put it on x_0, where it changes no profile value
        # at a grid point (atoms count strictly above) and, with P-mass >= 1, none left of x_0
        # either. (Left out, it would make the reflected pair's P-mass short: then its remove
        # profile is no longer a lower bound.)
        m[0] += 1.0 - float(m.sum())
    with np.errstate(under="ignore", over="ignore"):
        pm = m * np.exp(-np.maximum(xg, -700.0))
    p_mass = float(np.sum(pm))
    if kind == "optimistic" and p_mass < 1.0 and m.any():
        # Lowering the profile (and pinning the first point to 1 - y) leaves P-mass 1 - p_mass
        # unplaced. At -infinity it would raise the profile left of x_0 above 1 - y, so the pair would
        # no longer be dominated in the remove direction. Move Q-mass e from the atom with the most
        # P-mass, x_a, down k steps instead: the profile only falls, and the P-mass grows by
        # e e^{-x_a} (e^{kh} - 1) = 1 - p_mass (rounded up; the excess is recorded below).
        a = int(np.argmax(pm))
        need = (1.0 - p_mass) * math.exp(xg[a]) * (1.0 + 1e-12)
        k = max(1, int(math.ceil(math.log1p(need / m[a]) / h)))
        e = min(need / math.expm1(k * h), m[a])
        if k > a:                                        # extend the grid below x_0
            m = np.concatenate([np.zeros(k - a), m])
            xg = np.concatenate([xg[0] - h * np.arange(k - a, 0, -1), xg])
            offset -= k - a
            a = k
        m[a] -= e
        m[a - k] += e
        with np.errstate(under="ignore", over="ignore"):
            pm = m * np.exp(-np.maximum(xg, -700.0))
        p_mass = float(np.sum(pm))
    # What the atoms actually give at the grid points against the values they were built from (a
    # pessimistic curve must not fall below them, an optimistic one must not rise above): the float
    # error of the construction, measured, becomes slack (read-outs widen by it, T-fold when composed)
    realized = _grid_values(m, h) + inf_mass
    intended = vv if kind == "pessimistic" else np.concatenate([_line(xg[:m.size - w.size]), w])
    bad = np.maximum(intended - realized if kind == "pessimistic" else realized - intended, 0.0)
    pin += float(np.max(bad))
    # The remove direction reads the reflected pair: there an error b at x_j weighs e^{-x_j} b
    # (H_a(P||Q) = a H_{1/a}(Q||P) + 1 - a), so it becomes P-side slack
    if kind == "pessimistic":
        bad[0] = max(bad[0], pin_0)
    with np.errstate(over="ignore"):
        pin_p = float(np.max(bad * np.exp(np.minimum(-xg, 700.0))))
    # Float rounding of values near y = 0 can leave the pair with P-mass slightly above 1; record it.
    p_excess = max(p_mass - 1.0, 0.0)
    if kind == "optimistic":
        # any P-mass still missing (float noise) would raise the profile left of x_0 by y (1 - p_mass),
        # and Q-mass above 1 raises every profile value by at most the excess: record both as slack
        miss = max(1.0 - p_mass, 0.0)
        q_excess = max(float(m.sum()) - 1.0, 0.0)
        return PLD(h, offset, m, inf_mass, 0.0, kind, slack_q=pin + q_excess + miss * math.exp(min(xg[0], 0.0)),
                   slack_p=p_excess + miss + pin_p, shift=shift)
    neg_inf = max(1.0 - p_mass, 0.0)
    return PLD(h, offset, m, inf_mass, neg_inf, kind, slack_q=pin, slack_p=p_excess + pin_p, shift=shift)


def _grid_values(m, h):
    r"""Profile of the grid pair with atoms ``m`` at its own grid points: :math:`\sum_{s>j} m_s(1 - e^{-(s-j)h})`."""
    cq = np.concatenate([np.cumsum(m[::-1])[::-1], [0.0]])
    S = np.concatenate([signal.lfilter([1.0], [1.0, -math.exp(-h)], m[::-1])[::-1], [0.0]])
    return np.maximum(cq[1:] - math.exp(-h) * S[1:], 0.0)


def _convex_minorant(x, w):
    r"""Correction (<= 0) that turns ``w`` into the greatest convex minorant (in :math:`y = e^x`) of the polyline through :math:`(0, 1), (y_j, w_j)`.

    Its slopes are the weighted isotonic regression of the segment slopes with the segment widths
    as weights. Done in blocks where the widths fit in a float; beyond :math:`x = 700` the profile
    of the pairs of this library is already convex and is kept.
    """
    lim = x <= 700.0
    k = int(np.count_nonzero(lim))
    if x[0] < -700.0:
        # below e^-700 the profile is 1 - y to float precision: keep those points as they are
        return np.zeros(w.size)
    y = np.exp(x[:k])
    yy = np.concatenate([[0.0], y])
    ww = np.concatenate([[1.0], w[:k]])
    dy = np.diff(yy)
    s = np.diff(ww) / dy
    s2 = optimize.isotonic_regression(s, weights=dy, increasing=True).x
    # add the change only: unchanged stretches keep their exact values (PAVA preserves each merged
    # block's total, so the correction returns to zero after every block)
    corr = np.zeros(w.size)
    corr[:k] = np.minimum(np.cumsum((s2 - s) * dy), 0.0)
    return corr


# --------------------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------------------
def _log_mgfs(pmf, x, bins=512, n_lam=80):
    r"""Upper bounds on the one-step log-MGF :math:`\log\sum_s p_s e^{\pm\lambda x_s}` for a grid of :math:`\lambda > 0`.

    Masses are aggregated on at most ``bins`` bins :math:`[a, a + w]` with their mass :math:`P_b` and
    mean :math:`m_b`; by convexity of :math:`e^{\lambda x}`,
    :math:`\sum_{b} p_s e^{\lambda x_s} \le P_b\,e^{\lambda a}\,(1 + \tfrac{m_b - a}{w}(e^{\lambda w} - 1))`,
    which is second order in :math:`w` (the bound stays tight after :math:`T`-fold composition).
    """
    keep = pmf > 0
    m, xs = pmf[keep], x[keep]
    lam = None
    if m.size == 0:
        lam = np.geomspace(1e-3, 1e3, n_lam)
        return lam, np.full(lam.size, -np.inf), np.full(lam.size, -np.inf)
    h = x[1] - x[0] if x.size > 1 else 1.0
    span = max(xs[-1] - xs[0], h)
    nb = int(min(bins, np.ceil(span / h) + 1))
    width = span / nb * (1 + 1e-12)
    k = np.minimum(((xs - xs[0]) / width).astype(int), nb - 1)
    agg = np.bincount(k, weights=m, minlength=nb)
    nz = agg > 0
    a_ = xs[0] + np.arange(nb)[nz] * width
    mom = np.bincount(k, weights=m * (xs - (xs[0] + k * width)), minlength=nb)[nz]
    frac = np.clip(mom / agg[nz] / width, 0.0, 1.0)
    la = np.log(agg[nz])
    # lambda ~ z / sd of the composed loss: from 1e-4 / span (many steps) up to 1e3 / span (few
    # steps of a concentrated pmf, e.g. tiny losses at large sigma and tiny q)
    lam = np.geomspace(1e-4 / max(span, 1e-12), 1e3 * max(1.0, 1.0 / max(span, 1e-12)), n_lam)

    def log_mgf(coef):
        with np.errstate(over="ignore"):
            corr = np.log1p(frac[None, :] * np.expm1(np.minimum(coef[:, None] * width, 700.0)))
        z = la[None, :] + coef[:, None] * a_[None, :] + corr
        mx = z.max(axis=1)
        return mx + np.log(np.exp(z - mx[:, None]).sum(axis=1))

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
    mq = _log_mgfs(p, x)
    lo_s, hi_s = x[nz[0]], x[nz[-1]]
    mass = p.sum()
    mean = float(np.sum(p * x) / mass)
    sd = math.sqrt(max(float(np.sum(p * (x - mean) ** 2) / mass), pld.h ** 2) * steps)
    log_tail = math.log(tail / 2.0)
    lo_full, hi_full = steps * lo_s, steps * hi_s
    # Each edge by bisection on its (monotone) Chernoff bound, between the bulk and the full range
    # (beyond which there is no mass at all): the smallest window whose bound is <= tail / 2 a side.
    hi_c = min(hi_full, steps * mean + 3.0 * sd)
    if _log_tail_above(mq, steps, hi_c) > log_tail:
        a_, b_ = hi_c, hi_full
        for _ in range(100):
            mid = 0.5 * (a_ + b_)
            if not a_ < mid < b_:
                break
            if _log_tail_above(mq, steps, mid) <= log_tail:
                b_ = mid
            else:
                a_ = mid
        hi_c = b_
    lo_c = max(lo_full, steps * mean - 3.0 * sd)
    if _log_tail_below(mq, steps, lo_c) > log_tail:
        a_, b_ = lo_full, lo_c
        for _ in range(100):
            mid = 0.5 * (a_ + b_)
            if not a_ < mid < b_:
                break
            if _log_tail_below(mq, steps, mid) <= log_tail:
                a_ = mid
            else:
                b_ = mid
        lo_c = a_
    return lo_c, hi_c, (steps * lo_s, steps * hi_s, mq)


def _outside(win, steps, lo_c, hi_c):
    """Chernoff bound on the Q-mass outside ``[lo_c, hi_c]``."""
    lo_full, hi_full, mq = win
    bq = 0.0
    if hi_c < hi_full:
        bq += math.exp(_log_tail_above(mq, steps, hi_c))
    if lo_c > lo_full:
        bq += math.exp(_log_tail_below(mq, steps, lo_c))
    return bq


def _fft_power(rows, steps, dtype):
    r"""Circular ``steps``-fold self-convolution of each row by FFT in ``dtype``, and a bound on its float error.

    Returns ``(out, fp)``: the rows as doubles and, per row, a bound on the L1 error from the input
    FFT (amplified T-fold by the power), the power itself and the inverse FFT: the smaller of
    (a) per frequency, :math:`8u\log_2 n` per unit of mass on both halves of the spectrum, and
    (b) in L2 (Parseval, :math:`\|F\|_2 = \sqrt n\,\|p\|_2`) times :math:`\sqrt n` for L1, far
    smaller where the pmf is concentrated (tiny q: then (a) sums ~n frequencies with
    :math:`|F| \approx 1`). The power, taken in polar form :math:`|F|^T e^{iT\arg F}`, adds a relative
    error of about :math:`u(745 + (\pi + 2)T)` on the frequencies kept (:math:`|F|` and :math:`\arg F` each
    rounded, then multiplied by T).
    """
    n = rows.shape[1]
    u = float(np.finfo(dtype).eps) / 2.0
    lg = max(math.log2(n), 1.0)
    # |F| and arg F each carry a relative / absolute error of about u, which the power multiplies by T
    rho = u * ((math.pi + 2.0) * steps + 760.0)
    gam = 8.0 * u * lg                           # relative (L2) error of one FFT of length n
    f = _fft.rfft(rows.astype(dtype), axis=1, workers=rows.shape[0])
    af = np.abs(f)
    g = np.zeros_like(f)
    s_pows = []
    with np.errstate(under="ignore", divide="ignore"):
        for r in range(rows.shape[0]):
            # frequencies where |F|^T underflows contribute nothing: power only the others, in polar
            # form |F|^T e^{i T arg F} (the error bound rho below covers it)
            la = np.log(af[r])
            live = np.flatnonzero((steps - 1) * la > -745.0)
            la_l = la[live]
            ph = steps * np.angle(f[r, live])
            mod = np.exp(steps * la_l)
            g[r, live] = mod * np.cos(ph) + 1j * (mod * np.sin(ph))
            s_pows.append(float(np.sum(np.exp((steps - 1) * la_l))))
    out = _fft.irfft(g, n, axis=1, workers=rows.shape[0]).astype(np.float64)
    fps = []
    for r in range(rows.shape[0]):
        s_pow = s_pows[r]
        ag = np.abs(g[r])
        gabs = float(np.sum(ag))
        fp_a = 16.0 * u * lg * (float(rows[r].sum()) * steps * s_pow + gabs) + 2.0 * rho * gabs
        m_pow = max(float(np.max(af[r])), 1.0) ** (steps - 1)
        g2 = math.sqrt(2.0 * float(np.sum(ag * ag)))
        fp_b = 1.01 * (math.sqrt(n) * steps * m_pow * gam * float(np.linalg.norm(rows[r])) + (rho + gam) * g2)
        # + rounding to double and the output's own rounding
        fps.append(min(fp_a, fp_b) + 4.0 * n * u * float(np.max(np.abs(out[r])))
                   + _U * float(np.sum(np.abs(out[r]))))
    return out, fps


def compose(pld: PLD, T: int, *, tail=1e-14, max_fft=None) -> PLD:
    r""":math:`T`-fold self-composition by one FFT (cost independent of :math:`T` beyond the window).

    The composed loss is computed on a window around its bulk, chosen by Chernoff bounds so that
    the :math:`Q`-mass outside is at most ``tail``; that mass (which the circular FFT folds back into
    the window) and the FFT's floating-point error, bounded from the transform itself, are
    recorded in ``slack_q``. Raises ``ValueError`` (with a hint) if the window needs more than
    ``max_fft`` (default :data:`MAX_FFT`) points.
    """
    if not isinstance(pld, PLD):
        raise TypeError(f"pld must be a PLD, got {type(pld).__name__}")
    return compose_pair(pld, None, T, tail=tail, max_fft=max_fft)[0]


def compose_pair(a: PLD, b, T: int, *, tail=1e-14, max_fft=None):
    r"""Compose two PLDs on the same grid (e.g. the pessimistic and optimistic pairs) ``T`` times each.

    Both are transformed together (one two-row FFT on two threads), on the union of their
    windows; see :func:`compose`. ``b`` may be ``None``. Returns ``(a_T, b_T)``.
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
        res = [_empty(p_, steps) if w is None else compose_pair(p_, None, steps, tail=tl, max_fft=max_fft)[0]
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
        raise ValueError(f"the composed window needs an FFT of {n} points (> cap {cap}); "
                         f"use a coarser grid h (now {h:g}) or fewer steps")
    t_shift = steps * a.shift                    # the composed grid is (offset + s) h + T shift
    s_lo = int(math.floor((lo_c - t_shift) / h))
    rows = np.zeros((len(plds), n))
    start = a.offset % n                         # the grid wraps around the FFT circle at most once
    first = min(size, n - start)
    for r, p_ in enumerate(plds):
        rows[r, start:start + first] = p_.pmf[:first]
        rows[r, :size - first] = p_.pmf[first:]
    out, fps = _fft_power(rows, steps, np.float64)
    if max(fps) > 10.0 * tl and np.finfo(np.longdouble).eps < np.finfo(np.float64).eps:
        # the float error would be well above the window's own tail budget (the power amplifies
        # the transform's rounding T-fold): redo it in extended precision
        out, fps = _fft_power(rows, steps, np.longdouble)
    pos = (s_lo + np.arange(n)) % n
    off, sh = _normalise(s_lo, t_shift, h)
    res = []
    for r, p_ in enumerate(plds):
        pmf = out[r, pos]
        fp = fps[r]
        neg = float(-np.sum(pmf[pmf < 0]))
        bq = _outside(wins[r][2], steps, lo_c, hi_c)
        inf_mass = -math.expm1(steps * math.log1p(-p_.inf_mass)) if p_.inf_mass < 1 else 1.0
        neg_inf = -math.expm1(steps * math.log1p(-p_.neg_inf_mass)) if p_.neg_inf_mass < 1 else 1.0
        res.append(PLD(h, off, np.maximum(pmf, 0.0), float(inf_mass), float(neg_inf), p_.kind,
                       slack_q=float(steps * p_.slack_q + bq + fp + neg), slack_p=float(steps * p_.slack_p),
                       shift=sh))
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
        return replace(p_, offset=lo, pmf=m)
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
    fp = 16.0 * _U * lg * (others + float(np.sum(np.abs(f)))) + 4.0 * n * _U * float(np.max(np.abs(out)))
    neg = float(-np.sum(out[out < 0]))
    inf_mass = 1.0 - float(np.prod([1.0 - p_.inf_mass for p_ in plds]))
    neg_inf = 1.0 - float(np.prod([1.0 - p_.neg_inf_mass for p_ in plds]))
    return PLD(h, lo, np.maximum(out, 0.0), max(inf_mass, 0.0), max(neg_inf, 0.0), kind,
               slack_q=float(sum(p_.slack_q for p_ in plds) + fp + neg),
               slack_p=float(sum(p_.slack_p for p_ in plds)), shift=sh)
