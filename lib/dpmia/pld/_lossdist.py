r"""The grid pair of a privacy-loss distribution (:class:`PLD`) and its read-outs.

A pair :math:`(P, Q)` on the loss grid :math:`x_s = (\text{offset}+s)h + \text{shift}` is stored by
its :math:`Q`-masses; its privacy profile :math:`\delta(\varepsilon) = H_{e^\varepsilon}(Q\|P)` gives
every read-out (TV, scaled TV, :math:`\varepsilon(\delta)`, ROC). Built by
``_discretise`` (and ``_coarsen``), composed by ``_composition``;
:mod:`dpmia.pld` gathers them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import signal

from .. import _checks

__all__ = ["PLD", "GridError", "FFTCapError", "MAX_FFT", "KINDS"]


class FFTCapError(ValueError):
    """A composition needs more FFT points than allowed; ``points`` and ``cap`` say by how much."""

    def __init__(self, message, points, cap):
        super().__init__(message)
        self.points, self.cap = int(points), int(cap)


class GridError(ValueError):
    """The grid cannot carry a certified optimistic pair (x = 0 inside a cell pinned to 1 - y at both ends)."""

#: Largest FFT length (complex128: 2**24 points is about 256 MB). Larger requests raise.
MAX_FFT = 2**24
KINDS = ("pessimistic", "optimistic")
#: Unit roundoff of a double.
_UNIT_ROUNDOFF = np.finfo(float).eps / 2.0


def _normalise(offset, shift, h):
    """(offset, shift) with the same losses (offset + s) h + shift and shift in [0, h)."""
    k = math.floor(shift / h)
    return int(offset + k), float(shift - k * h)


def _check_kind(kind):
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
    #: The certified profile values at the grid points that a single-step pair's atoms were built from by
    #: :func:`from_profile` (upper values for a dominating pair, lowered ones for a dominated pair), so that a
    #: relative read-out can measure the atoms against them (the far-tail read-outs of :mod:`dpmia.sgm`);
    #: ``None`` for composed or re-gridded pairs.
    ref: object = field(default=None, compare=False, repr=False)
    #: For a dominated single-step pair, ``(lower, upper)``: the profile's own values at its grid points as the caller
    #: computed them, before :func:`from_profile` lowered them (set by :mod:`dpmia.sgm`, which rounds them outward
    #: for its far-tail read-outs); ``None`` otherwise.
    ref_points: object = field(default=None, compare=False, repr=False)
    #: The split of a composed pair's ``slack_q`` (set by :func:`compose_pair`, else ``None``), for read-outs that
    #: weigh atoms unequally, as ``(moved, point, rel)``: the part that may sit at any loss (mass the window left
    #: out, the factors' own slack), and each atom's float error, at most ``point + rel * pmf[s]`` (the rest of
    #: ``slack_q`` bounds that error in L1).
    slack_split: object = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        # (plain floats in range, as the library's own constructions pass them, are accepted at once; anything else
        # goes through the full checks, with their messages)
        h = self.h
        if not (type(h) is float and 0.0 < h < math.inf):
            _checks.positive("h", h)
        if not (type(self.offset) is int and -2**53 <= self.offset <= 2**53):
            _checks.integer("offset", self.offset)
        _check_kind(self.kind)
        p = np.asarray(self.pmf)
        if p.ndim != 1 or p.size == 0:
            raise ValueError(f"pmf must be a non-empty 1-d array, got shape {p.shape}")
        if not (p.dtype == np.float64 and p.min() >= 0.0 and math.isfinite(p.max())):
            _checks.real("pmf", p.astype(float), lo=0.0)       # the full check, with its message
        for name in ("inf_mass", "neg_inf_mass", "slack_q", "slack_p"):
            v = getattr(self, name)
            if not (type(v) is float and 0.0 <= v < math.inf):
                _checks.real(name, v, lo=0.0)
        if not (type(self.shift) is float and math.isfinite(self.shift)):
            _checks.real("shift", self.shift)

    @cached_property
    def losses(self) -> np.ndarray:
        """The grid's losses (computed once per pair; read-only)."""
        x = (self.offset + np.arange(self.pmf.size)) * self.h + self.shift
        x.setflags(write=False)
        return x

    def _count_at_most(self, v: float) -> int:
        """``np.searchsorted(self.losses, v, side="right")`` (how many grid losses are at most ``v``), from the losses'
        own formula at a few indices near ``v``: the same answer without building the grid (a read-out reads near
        one point of a composed pair of many)."""
        n, h, off, sh = self.pmf.size, self.h, self.offset, self.shift
        guess = (v - sh) / h - off
        if "losses" in self.__dict__ or not -1.0 <= guess <= n + 1.0:
            return int(np.searchsorted(self.losses, v, side="right"))
        k = min(max(int(guess), 0), n)
        while k < n and (off + k) * h + sh <= v:        # (the losses' formula: exact int, then * h, then + shift)
            k += 1
        while k > 0 and (off + k - 1) * h + sh > v:
            k -= 1
        return k

    @property
    def _sign(self) -> float:
        return 1.0 if self.kind == "pessimistic" else -1.0

    @cached_property
    def _tables(self):
        r"""Suffix tables ``(S, D)``: ``S[k]`` = :math:`\sum_{s\ge k} q_s e^{-(x_s-x_k)}` and
        ``D[k]`` = :math:`\sum_{s>k} q_s (1 - e^{-(x_s-x_k)})`, the profile at :math:`x_k`.

        ``S`` follows the stable recursion :math:`S_k = q_k + e^{-h} S_{k+1}` (no :math:`e^{x}` anywhere) and
        ``D`` the positive one :math:`D_k = D_{k+1} + (1 - e^{-h}) S_{k+1}`: sums of positive terms, each
        with a relative error below :math:`4nu` (:meth:`_outward` covers it), where
        :math:`\sum q_s - e^{-h}S` would lose :math:`nu` *absolute* to cancellation. Both have a trailing
        0 (index ``pmf.size``). Computed once per pair (a cached attribute).
        """
        return self._suffix(0)

    def _suffix(self, k):
        r"""``(S[k:], D[k:])`` of :attr:`_tables`, with the recursions run from the top down to index ``k`` only.

        Both recursions start at the top of the grid, so their values at and above ``k`` do not depend on
        what lies below: a read-out near the upper tail (a small FPR, a small delta) computes the part it
        reads, and a later call with a smaller ``k`` continues from the stored part (``lfilter`` from its
        last state, the sum from its last value): the same bits as the full tables.
        """
        n = self.pmf.size
        k = min(max(int(k), 0), n)
        if "_tables" in self.__dict__:
            S, D = self.__dict__["_tables"]
            return S[k:], D[k:]
        # (k1, S, D): the tables are filled from index k1 up (at first only their trailing 0)
        k1, S, D = self.__dict__.get("_top") or (n, np.zeros(n + 1), np.zeros(n + 1))
        if k < k1:
            p = np.asarray(self.pmf, float)
            e, c = math.exp(-self.h), -math.expm1(-self.h)
            # the filter's state after S_{k1} is e S_{k1} (0 at the top); the sum continues from D_{k1}
            S[k:k1] = signal.lfilter([1.0], [1.0, -e], p[k:k1][::-1], zi=[S[k1] * e])[0][::-1]
            D[k:k1] = np.cumsum(np.concatenate([D[k1:k1 + 1], S[k + 1:k1 + 1][::-1] * c]))[:0:-1]
            self.__dict__["_top"] = (k, S, D)
        return S[k:], D[k:]

    def _outward(self) -> float:
        """Factor that rounds a profile value from :meth:`_tables` to the safe side: 1 +- 8 (n + 8) u."""
        return 1.0 + self._sign * 8.0 * (self.pmf.size + 8) * _UNIT_ROUNDOFF

    def _const(self) -> float:
        return self.inf_mass + self._sign * self.slack_q

    def _delta_raw(self, e):
        r"""Profile at the real array ``e`` before slack and clipping, rounded to the safe side: on
        :math:`(x_{k-1}, x_k]` it is :math:`D_k + (1 - e^{\varepsilon - x_k}) S_k`, two positive terms.
        For a few values of ``e`` (e.g. the TV alone) the sum :math:`\sum_{x_s > e} q_s (1 - e^{e - x_s})`,
        also of positive terms, is taken directly, whether or not the tables exist (a pair may be shared
        through a cache: the rounding must not depend on what was read from it before)."""
        if e.size <= 4:
            return self._delta_direct(e)
        return self._delta_table(e)

    def _delta_table(self, e):
        """:meth:`_delta_raw` from the suffix tables, whatever the size of ``e`` (for callers that need the
        tables anyway: the same bits whichever was read first)."""
        n = self.pmf.size
        if e.size <= 8 and "losses" not in self.__dict__ and np.all(np.isfinite(e)):
            idx = np.array([self._count_at_most(float(v)) for v in e], dtype=np.intp)
        else:
            idx = np.searchsorted(self.losses, e, side="right")          # first grid index with x_s > e
        k = int(np.min(idx)) if idx.size else n
        S, D = self._suffix(k)
        # (the grid's loss at each index, by the formula of :attr:`losses`)
        xs = np.where(idx < n, (self.offset + np.minimum(idx, n - 1)) * self.h + self.shift, np.inf)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            g = -np.expm1(np.minimum(e - xs, 0.0))
        g = np.where(idx < n, g, 0.0)
        return (D[idx - k] + g * S[idx - k]) * self._outward()

    def _delta_direct(self, e):
        x = self.losses
        p = np.asarray(self.pmf, float)
        out = np.empty(e.size)
        for i, ei in enumerate(e):
            k = int(np.searchsorted(x, ei, side="right"))
            with np.errstate(under="ignore"):
                # (numpy's own pairwise sum, not a BLAS dot, whose bits depend on its thread count)
                out[i] = float(np.sum(p[k:] * -np.expm1(np.minimum(ei - x[k:], 0.0)))) if k < x.size else 0.0
        return out * self._outward()

    # ----------------------------------------------------------------- read-outs
    def delta(self, eps):
        r""":math:`H_{e^\varepsilon}(Q\|P) = \sum_s q_s (1 - e^{\varepsilon - x_s})_+ + q_\infty` for real ``eps``.

        For a pessimistic PLD an upper bound on the true value, for an optimistic one a lower bound.
        """
        e = np.atleast_1d(_checks.real("eps", eps)).astype(float)
        res = np.clip(self._delta_raw(e) + self._const(), 0.0, 1.0)
        return float(res[0]) if np.ndim(eps) == 0 else res

    def reflect(self) -> PLD:
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
        return self._tv

    @cached_property
    def _tv(self) -> float:
        # (one direct sum per pair: the same bits whoever reads it first)
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
        n, x0, h = self.pmf.size, self.offset * self.h + self.shift, self.h
        k0 = int(max(0, math.ceil(-x0 / h)))          # first grid index with x_k >= 0
        f = self._outward()
        # the profile at the grid points x_k, k >= k0 (atoms s >= k + 1), is non-increasing in k (so are its
        # rounded values): from the top down in blocks, to the last point j above delta
        j, hi, step = -1, n, max(n // 16, 1)
        while hi > k0 and j < 0:
            k = max(hi - step, k0)
            above = np.flatnonzero(f * self._suffix(k)[1][:hi - k] + const > d)
            j, hi = (k + int(above[-1]) if above.size else -1), k
        # the profile at 0 is at least that at any grid point above 0 (as rounded): where one is above
        # delta, eps = 0 is not enough, and only then is the profile at 0 read
        if j < self._count_at_most(0.0) \
                and float(self._delta_table(np.array([0.0]))[0]) + const <= d:
            return 0.0
        if k0 >= n:
            return math.inf
        k = max(j + 1, k0)                            # the first grid point x_k >= 0 with profile <= delta
        left = max(x0 + (k - 1) * h, 0.0) if k > k0 else 0.0
        xk = x0 + k * h
        # on (x_{k-1}, x_k]: profile = A - e^{eps - x_k} B with the atoms s >= k
        S, D = self._suffix(k)
        A, B = f * (D[0] + S[0]) + const, f * S[0]
        if B <= 0.0 or A <= d:
            return float(left)
        e = xk + math.log((A - d) / B)
        return float(min(max(e, left), xk))

    def _grid_profile(self, k, hi):
        """Profile at the grid points ``k .. hi - 1`` (atoms strictly above), with slack, clipped to [0, 1]."""
        _, D = self._suffix(k)
        return np.clip(D[:hi - k] * self._outward() + self._const(), 0.0, 1.0)

    def roc(self, fpr):
        r"""Largest TPR at false-positive rate ``fpr``:
        :math:`\inf_\varepsilon[e^\varepsilon\,\mathrm{fpr} + \delta(\varepsilon)]`.

        Evaluated over the grid values of :math:`\varepsilon`: for a pessimistic PLD every term is an
        upper bound, so the infimum over any set of them is one. Never below ``fpr``.
        For an optimistic PLD the exact ROC of the grid pair (a lower bound) is returned.
        """
        f = _checks.probability("fpr", fpr)
        f_ = np.atleast_1d(f)
        out = np.empty(f_.size)
        if self.kind == "pessimistic":
            for i, a in enumerate(f_):
                out[i] = self._roc_upper(float(a))
        else:
            out[:] = self._roc_exact(f_)
        out = np.maximum(out, f_)
        return float(out[0]) if np.ndim(fpr) == 0 else out

    def _roc_upper(self, a):
        r""":math:`\min(1, \min_k [e^{x_k} a + \delta(x_k)])` over the grid points, taken from the top down in
        blocks: the profile only grows downwards, so below a point whose profile alone reaches the minimum
        so far no term is smaller, and the rest of the grid is not read."""
        n = self.pmf.size
        if not a > 0:
            return min(1.0, float(self._grid_profile(n - 1, n)[-1]))
        x, la = self.losses, math.log(a)
        best, hi, step = math.inf, n, max(n // 16, 1)
        while hi > 0:
            k = max(hi - step, 0)
            dk = self._grid_profile(k, hi)
            with np.errstate(over="ignore"):
                best = min(best, float(np.min(np.exp(np.minimum(x[k:hi] + la, 700.0)) + dk)))
            if dk[0] >= best:
                break
            hi = k
        return min(1.0, best)

    def _roc_exact(self, f_):
        """Exact ROC of the grid pair (Neyman-Pearson, randomised at the threshold atom).

        The cumulative masses are summed from the top loss down, in blocks, until the P-mass passes every
        FPR asked for: the interpolation reads no further, and the part summed is the same either way."""
        x, p = self.losses, self.pmf
        top = float(np.max(f_)) if f_.size else 0.0
        # reject from the top loss down: FPR = P-mass, TPR = Q-mass (+ atom at +inf first)
        cp, hi, step = np.zeros(1), p.size, max(p.size // 16, 1)
        while True:
            k = max(hi - step, 0)
            with np.errstate(under="ignore", over="ignore"):
                pm = np.where(p[k:hi] > 0, p[k:hi] * np.exp(-np.maximum(x[k:hi], -700.0)), 0.0)
            cp = np.concatenate([cp, np.cumsum(np.concatenate([cp[-1:], pm[::-1]]))[1:]])
            if k == 0 or cp[-1] > top:
                break
            hi = k
        cq = np.concatenate([[0.0], np.cumsum(p[k:][::-1])]) + self.inf_mass
        cq[0] = self.inf_mass
        tpr = np.interp(f_, cp, cq, right=cq[-1])
        return np.clip(tpr + self._sign * self.slack_q, 0.0, 1.0)
