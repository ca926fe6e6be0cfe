r"""Far tails of DP-SGD's privacy profile by exponentially tilted composition, certified.

Where :math:`\delta(\varepsilon)` is far below the float resolution of a composed grid pair (about
:math:`10^{-16}` of its mass), the plain FFT composition cannot tell it from 0. The remedy is the
exponential change of measure (Esscher tilting), used by saddle-point accountants (Alghamdi et al.,
2023) and exact here because the grid pairs are finite: for a single-step grid pair with
:math:`Q`-masses :math:`q_s` at losses :math:`x_s`, put

.. math::
    r_s = q_s e^{\lambda x_s}/M(\lambda), \qquad M(\lambda) = \textstyle\sum_s q_s e^{\lambda x_s}.

Tilting commutes with convolution, so the :math:`T`-fold composed masses are
:math:`q^{(T)}(y) = M(\lambda)^T e^{-\lambda y}\,r^{(T)}(y)` and

.. math::
    \delta_T(\varepsilon) = M(\lambda)^T \sum_{y > \varepsilon} e^{-\lambda y}\,r^{(T)}(y)\,(1 - e^{\varepsilon - y})
    \;[+\ \text{the atoms at } +\infty].

With :math:`\lambda` at the saddle point (:math:`T\,\mathbb E_{r}[x] = \varepsilon`) the tilted composition
:math:`r^{(T)}` has its bulk at :math:`\varepsilon`, where the FFT keeps its relative accuracy. Any
misplaced tilted mass (the FFT's float error and the Chernoff-bounded mass outside its window, both
bounded by :func:`dpmia.pld.compose_pair` as ``slack_q``) sits at some :math:`y`, where its weight is at
most :math:`e^{-\lambda\varepsilon}` for :math:`y > \varepsilon` (and 0 below), so

.. math::
    |\hat\delta_T(\varepsilon) - \delta_T(\varepsilon)| \le M^T e^{-\lambda\varepsilon}\,\mathrm{slack}
    + \rho\,\hat\delta_T(\varepsilon),

with :math:`\rho` the relative rounding of the tilted masses (each within a few ulps, grown
:math:`T`-fold by the products) and of the weights :math:`e^{T\ln M - \lambda y}`. Near the saddle point
:math:`M^T e^{-\lambda\varepsilon}` is about :math:`\delta\,\lambda\sqrt{2\pi T}\,s_\lambda`: the error stays a
small *relative* one however small :math:`\delta` is. Applied to the dominating grid pair this gives an
upper bound (plus its atom at :math:`+\infty`, :math:`1 - (1 - q_\infty)^T`, and :math:`T` times its
slack), to the dominated pair a lower bound (dropping mass only lowers it).
"""

from __future__ import annotations

import math

import numpy as np

from .. import pld as _pld
from ._chain import _single_pair, _sym_pair
from ._tiltexcess import _dominated_sum, _dominating_slack, _excess, _trimmed, weighted_log_factors
from ._tiltstep import _reference, _remove_dominating, _symmetric_reference, _topped

#: Longest FFT of a tilted composition, and the most grids a read-out tries: a far-tail read-out stays near a
#: second (the window of the tilted composition is about as wide as the plain one's).
TILT_MAX_FFT = 2**21
_PASSES = 4
#: Unit roundoff of a double.
_U = np.finfo(float).eps / 2.0


def _log_mgf(logq, x, lam):
    r"""``(log M(lam), E_lam[x], Var_lam[x])`` of the grid pmf with log-masses ``logq`` at losses ``x``."""
    z = logq + lam * x
    mx = float(np.max(z))
    w = np.exp(z - mx)
    tot = float(np.sum(w))
    # (numpy's pairwise sums, not BLAS dots, whose bits depend on their thread count)
    m = float(np.sum(w * x)) / tot
    return mx + math.log(tot), m, float(np.sum(w * (x - m) ** 2)) / tot


def _saddle(logq, x, steps, eps):
    r"""The tilt :math:`\lambda \ge 0` with :math:`T\,\mathbb E_\lambda[x] \approx \varepsilon` (Newton's method on
    the increasing tilted mean, kept inside a bisection bracket, geometric across decades; any tilt gives a
    certified read-out, a near one an accurate one), 0 where the untilted mean already reaches it, and a tilt onto
    the top atom where ``eps`` lies beyond ``T`` times the largest loss."""
    target = eps / steps
    _, m, v = _log_mgf(logq, x, 0.0)
    if m >= target:
        return 0.0
    if target >= float(x[-1]):
        # beyond the support: tilt onto its top atom (the rest e^-40 below it)
        return 40.0 / max(float(x[-1] - x[-2]), 1e-300) if x.size > 1 else 0.0
    lo, hi, lam = 0.0, math.inf, 0.0
    taken = [math.inf, math.inf]                          # the last two steps' sizes
    for _ in range(60):
        if m < target:
            lo = lam
        else:
            hi = lam
        if math.isfinite(hi) and hi - lo <= 1e-6 * hi:
            return 0.5 * (lo + hi)
        step = (target - m) / v if v > 0 else math.inf
        nxt = lam + step
        # (as rtsafe: Newton's steps can stay inside the bracket and land on alternate sides of the root, the
        # bracket shrinking by a thousandth a step; where a step is not under half the one before last, bisect)
        if not lo < nxt < hi or abs(step) > 0.5 * taken[0]:
            # (bisection, geometric while the bracket spans decades: a first Newton step from 0, where the variance
            # is tiny, can land eight decades above the saddle point)
            nxt = (max(2.0 * lam, 1.0) if not math.isfinite(hi) else hi / 64.0 if lo == 0.0
                   else math.sqrt(lo * hi) if hi > 4.0 * lo else 0.5 * (lo + hi))
        taken = [taken[1], abs(nxt - lam)]
        if abs(nxt - lam) <= 1e-6 * max(abs(nxt), 1e-12) or nxt > 1e12:
            return nxt
        lam = nxt
        _, m, v = _log_mgf(logq, x, lam)
    return lam


def _cheaper_top(one, ref, steps, lam, d_est):
    r"""The dominating single-step pair ``one`` with its top atoms lifted to ``ref`` (:func:`._tiltstep._topped`)
    where that lowers what a read-out near an estimate ``d_est`` of delta is charged, tilted by ``lam``; else ``one``
    (both are certified). A split :math:`(\kappa, s)` of the excess (:func:`._tiltexcess._excess`) costs about
    :math:`T\ln(1+\kappa) + Ts/d` relative; the masses :math:`a_i` added at :math:`x_i` raise :math:`M(\lambda)^T` by
    about :math:`T\sum_i a_i e^{\lambda x_i}/M(\lambda)` relative (at a large tilt a mass of 1e-307 at loss 1.03
    weighs 1e-3: q = 1e-3, sigma = 5, delta 1e-300)."""
    top = _topped(one, ref)
    if top is one or d_est is None or not d_est > 0.0 or not np.sum(top.pmf.astype(np.longdouble)) <= 1.0 + 1e-9:
        return one                      # (a lifted total above 1 + 1e-9 would be refused by TiltedPair)

    def charge(p):
        return min(steps * math.log1p(k) + steps * s_ / d_est for k, s_, _ in _excess(p, ref))
    added = top.pmf > one.pmf
    keep = one.pmf > 0
    lm = _log_mgf(np.log(one.pmf[keep]), one.losses[keep], lam)[0]
    log_w = np.log(top.pmf[added] - one.pmf[added]) + lam * one.losses[added] - lm
    extra = steps * math.exp(min(float(np.max(log_w)) + math.log(log_w.size), 700.0))
    return top if charge(top) + extra < charge(one) else one


class TiltedPair:
    r"""A :math:`T`-fold composed grid pair held in tilted form, read in log space (see the module).

    ``kind`` as the grid pair it came from; :meth:`delta` gives a certified bound on the true
    :math:`\delta_T(\varepsilon)` (upper for ``"pessimistic"``, lower for ``"optimistic"``) at an array of
    :math:`\varepsilon`, valid for every :math:`\varepsilon`, relatively accurate near the tilt's centre, for
    :math:`T \ge 2`: the tilted masses that underflow to 0 (each below 1e-320) are covered by the composition's
    float slack, which a single step (returned as it is, without slack) does not have; one-step read-outs use the
    exact single step instead.
    ``ref``: the reference values of the single step at its grid points (see :func:`._tiltexcess._excess`).
    """

    def __init__(self, one, ref, steps, lam, lm, comp, lo):
        x = one.losses
        keep = one.pmf > 0
        self.kind, self.steps, self.lam = one.kind, steps, lam
        self.log_scale = steps * lm                       # log M^T
        self.y, self.r, self.slack = comp.losses, comp.pmf, comp.slack_q
        self._log_split = self._split_weight(comp, lam)
        # (T log(1 + kappa), slack) per threshold: the log of the factor (1 + kappa)^T, and the slack inside it:
        # T s c^(T-1) for a dominating pair (>= s sum_{j<T} (1 + kappa)^(j - T) c^(T-1-j)), and for a dominated one
        # s sum_{k=1..T} c^(k-1) (1 + kappa)^-k times (1 + kappa)^T, with c >= 1 its atoms' Q-total (each of the
        # other factors in the one-at-a-time swap has Q-total at most c / (1 + kappa); c reaches 1 + 1e-16)
        c_ld = np.sum(one.pmf.astype(np.longdouble))
        if not c_ld <= 1.0 + 1e-9:
            raise ValueError("a single-step pair with Q-mass above 1")
        c_hi = max(float(np.nextafter(float(c_ld), np.inf)), 1.0)
        # (and for a dominated pair, each split again with its absolute excess weighted instead, where the true step's
        # moment generating function is bounded: log_w, the log of the weighted excess's coefficient of e^{-lam e}
        # once composed, see ._tiltexcess; -inf where there is none)
        pess = one.kind == "pessimistic"
        parts = _excess(one, ref, None if pess else lam)
        self.splits = [(steps * math.log1p(k), 0.0 if not s_ > 0.0 else _dominating_slack(s_, c_hi, steps)
                        if pess else s_ * _dominated_sum(k, c_hi, steps), -math.inf) for k, s_, _ in parts]
        if not pess:
            self.splits += [(steps * math.log1p(k), 0.0, log_w) for (k, _, _), log_w in
                            zip(parts, weighted_log_factors(one, ref, steps, lam, parts)) if math.isfinite(log_w)]
        # relative rounding: each tilted mass within (6 + |lam x| + |log M|) u, grown at most 1.01 T-fold by
        # the products (while that is small); the weights e^{T log M - lam y} within (8 + |T log M| + |lam y|)
        # u each, their sum within its length times u
        big = float(np.max(np.abs(x[keep]))) if keep.any() else 0.0
        ymax = float(np.max(np.abs(self.y)))
        self.rho = (1.01 * steps * (6.0 + lam * big + abs(lm)) + 4.0 * (8.0 + abs(self.log_scale) + lam * ymax)
                    + 8.0 * self.y.size * (1.0 + abs(lm) + lam * ymax)) * _U
        # a dominating pair is read from its atoms alone (its atom at +infinity, where the grid ends or
        # float noise left P-mass short, is inside s): with Q-total c <= 1 they are c times a probability
        # pair whose profile at e is at most the atoms' at e + log c over c, T-fold: c^-T and a shift T log c
        c = float(c_ld)
        self.log_c = steps * math.log(min(c, 1.0)) if one.kind == "pessimistic" else 0.0
        self._base = None
        # a misplaced tilted mass at y > e weighs e^{T log M - lam y}(1 - e^{e - y}) <= e^{T log M - lam e} times
        # max_t e^{-lam t}(1 - e^{-t}) = (lam / (1 + lam))^lam / (1 + lam) (at e^-t = lam / (1 + lam)), rounded up
        self._log_peak = (-lam * math.log1p(1.0 / lam) - math.log1p(lam) if lam > 0 else 0.0) + 1e-12
        # read-outs look at eps >= lo only
        self.lo = lo - 2.0 * one.h + self.log_c

    @staticmethod
    def _split_weight(comp, lam):
        r"""The log of :math:`\mathrm{moved}\cdot p_\lambda + \mathrm{point}\,(p_\lambda + 1/(h\lambda(\lambda+1)))` and
        the atoms' relative error ``rel``, or ``None``: the error weight of a composed pair whose slack comes split
        (:attr:`dpmia.pld.PLD.slack_split`; ``rel`` adds that share of the read-out itself).
        Mass that may sit anywhere weighs at most the peak :math:`p_\lambda` of :math:`e^{-\lambda t}(1 - e^{-t})`
        (times :math:`M^T e^{-\lambda\varepsilon}`); an error of at most ``point`` at each atom weighs at most the sum
        of that function over the grid points above :math:`\varepsilon`, which (unimodal) is at most its peak plus
        its integral over the step, :math:`\int_0^\infty e^{-\lambda t}(1 - e^{-t})\,dt = 1/(\lambda(\lambda+1))`.
        Far below the whole slack times the peak where the read-out weighs few atoms (a large tilt)."""
        if comp.slack_split is None or not lam > 0.0:
            return None
        moved, point, rel = comp.slack_split
        peak = (lam / (1.0 + lam)) ** lam / (1.0 + lam)
        c = (moved * peak + point * (peak + 1.0 / (comp.h * lam * (lam + 1.0)))) * (1.0 + 1e-12)
        return (math.log(c) if c > 0.0 else -math.inf), rel

    def _tables(self):
        r"""Log suffix tables of the weighted masses :math:`w_j = M^T e^{-\lambda y_j} r^{(T)}_j` above ``lo``:
        :math:`S_k = \sum_{j\ge k} w_j e^{-(y_j - y_k)}` and
        :math:`D_k = \sum_{j>k} w_j(1 - e^{-(y_j-y_k)})` (the profile at :math:`y_k`), as
        :math:`\ln S_k = kh + \mathrm{LSE}_{j\ge k}(\ln w_j - jh)` and
        :math:`\ln D_k = \ln(1-e^{-h}) + \mathrm{LSE}_{j>k} \ln S_j`: sums of positive terms, accumulated in log
        space (each step within a few ulps; the length times u is in ``rho``)."""
        if self._base is None:
            k0 = max(int(np.searchsorted(self.y, self.lo, side="right")) - 1, 0)
            y, r = self.y[k0:], self.r[k0:]
            h = float(y[1] - y[0]) if y.size > 1 else 1.0
            j = np.arange(y.size) * h
            with np.errstate(divide="ignore"):
                lw = self.log_scale - self.lam * y + np.log(r)
            log_s = np.logaddexp.accumulate((lw - j)[::-1])[::-1] + j
            tail = np.logaddexp.accumulate(log_s[::-1])[::-1]
            log_d = np.concatenate([tail[1:], [-np.inf]]) + math.log(-math.expm1(-h))
            self._base = (y, log_s, log_d)
        return self._base

    def _main(self, e):
        r"""The profile of the composed atoms, :math:`\sum_{y>\varepsilon} w_y (1 - e^{\varepsilon - y})`, at each
        ``e`` (``e`` at least ``lo``), and the bound on its error from misplaced tilted mass,
        :math:`M^T e^{-\lambda\varepsilon}\,\mathrm{slack}\,\max_{t>0} e^{-\lambda t}(1 - e^{-t})`, or the smaller
        one from the slack's split (:meth:`_split_weight`)."""
        y, log_s, log_d = self._tables()
        k = np.searchsorted(y, e, side="right")
        inside = k < y.size
        kk = np.minimum(k, y.size - 1)
        with np.errstate(divide="ignore", under="ignore", over="ignore"):
            g = np.log(-np.expm1(np.minimum(e - y[kk], 0.0)))
            lm = np.where(inside, np.logaddexp(log_d[kk], g + log_s[kk]), -np.inf)
            # (both capped at e^709: any value that large makes the upper bound 1, and delta() makes the lower
            # bound 0 wherever a term reaches the cap, since a capped error term no longer bounds anything)
            log_err = self.log_scale - self.lam * e + self._log_peak + (math.log(self.slack) if self.slack > 0
                                                                        else -np.inf)
            out = np.exp(np.minimum(lm, 709.0))
            err = np.exp(np.minimum(log_err, 709.0))
            capped = (lm >= 709.0) | (log_err >= 709.0)
            if self._log_split is not None:
                log_sp = self.log_scale - self.lam * e + self._log_split[0]
                err = np.where(log_sp < 709.0, np.minimum(err, np.exp(np.minimum(log_sp, 709.0))
                                                          + self._log_split[1] * out), err)
                capped = (lm >= 709.0) | ((log_err >= 709.0) & (log_sp >= 709.0))
        return out, err, capped

    def delta(self, eps):
        r"""The certified bound on the true :math:`\delta_T` (upper or lower by ``kind``) at each ``eps`` (at
        least ``lo``): the best over the splits of the single step's excess (:func:`._tiltexcess._excess`)."""
        e = np.atleast_1d(np.asarray(eps, float))
        pess = self.kind == "pessimistic"
        best = np.full(e.size, 1.0 if pess else 0.0)
        main, err, capped = self._main(e + self.log_c if pess else e)
        for shift, slack, log_w in self.splits:
            if shift > 1.0:
                continue                      # (a factor above e: vacuous)
            with np.errstate(over="ignore"):
                if pess:
                    # delta_B^T(e) <= (1 + kappa)^T [c^-T delta_A^T(e + T log c) + T s]
                    a = (main * (1.0 + self.rho) + err) * math.exp(-self.log_c) + slack
                    best = np.minimum(best, a * math.exp(shift) * (1.0 + 4.0 * _U))
                else:
                    # delta_B^T(e) >= (1 + kappa)^-T [delta_A^T(e) - s ((1 + kappa)^T - 1) / kappa - W e^{-lam e}]
                    w, big = self._weighted(e, log_w)
                    a = np.where(capped | big, 0.0, main * (1.0 - self.rho) - err - slack - w)
                    best = np.maximum(best, a * math.exp(-shift) * (1.0 - 4.0 * _U))
        return np.clip(best, 0.0, 1.0)

    def _weighted(self, e, log_w):
        """``(W e^{-lam e}, capped)``: a split's weighted excess at each ``e`` (0 where it has none), and where it is
        too large to subtract (a term that large bounds nothing)."""
        if log_w == -math.inf:
            return 0.0, False
        lg = log_w - self.lam * e
        return np.exp(np.minimum(lg, 709.0)), lg >= 709.0


def _tilted(one, lam):
    """``(tilted grid pmf as a PLD, log M(lam))`` of a single-step grid pair's atoms."""
    keep = one.pmf > 0
    x = one.losses
    with np.errstate(divide="ignore"):
        logq = np.where(keep, np.log(np.where(keep, one.pmf, 1.0)), -np.inf)
    lm = _log_mgf(logq[keep], x[keep], lam)[0]
    with np.errstate(under="ignore"):
        r = np.exp(logq + lam * x - lm)
    return _pld.PLD(one.h, one.offset, r, 0.0, 0.0, one.kind, shift=one.shift), lm


def _budget(tail, d_est, steps, lm, lam, eps_c, h):
    """``(tail, fine)``: the window's budget and whether the composition runs in extended precision
    (:func:`_tilted_direction`), for tilt ``lam`` with log-MGF ``lm`` a step."""
    if d_est is None or not d_est > 0.0 or not lam > 0.0:
        return tail, False
    log_peak = -lam * math.log1p(1.0 / lam) - math.log1p(lam)
    log_f = steps * lm - lam * eps_c + log_peak
    tail = min(tail, max(1e3 * tail * math.exp(min(math.log(d_est) - log_f, 0.0)), 1e-300))
    atoms = 1.0 + math.exp(-log_peak) / (h * lam * (lam + 1.0))     # (the weight of the atoms over the peak)
    return tail, log_f + math.log(1e-16 * atoms) > math.log(1e2) + math.log(tail) + math.log(d_est)


def tilted_width(run, h, eps_c, tail, one_tail, d_est=None):
    r"""The width in loss units of the window a tilted composition of a Poisson ``run`` centred at ``eps_c``
    spans (:func:`dpmia.pld.composed_length` of the add direction's dominating pair, or replace-one's symmetric one,
    tilted as :func:`tilted_pairs` tilts it), read on the grid of step ``h``: about the same on any grid, so a coarse
    one tells how fine a grid the FFT cap allows before a fine one is built."""
    q, sigma, steps = run
    if run.symmetric:
        pe = _sym_pair(q, sigma, run.sampler, h, "pessimistic", max(one_tail, 1e-310))
    else:
        pe = _single_pair(q, sigma, h, "pessimistic", "add", max(one_tail, 1e-310))
    keep = pe.pmf > 0
    with np.errstate(divide="ignore"):
        logq = np.log(pe.pmf[keep])
    lam = _saddle(logq, pe.losses[keep], steps, eps_c)
    a, la = _tilted(pe, lam)
    tail, _ = _budget(tail, d_est, steps, la, lam, eps_c, pe.h)
    return _pld.composed_length(a, steps, tail=tail) * pe.h


def _tilted_direction(pe, op, refs, steps, eps_c, lo, tail, cap, d_est=None):
    r"""The dominating and dominated :class:`TiltedPair` of one direction, tilted alike (to the dominating
    pair's saddle point: any tilt gives certified read-outs) and composed together by one two-row FFT.

    ``d_est``: an estimate of delta at ``eps_c``. The tilted mass the window leaves out (and the FFT's float
    error) weighs up to :math:`F = M^T e^{-\lambda\varepsilon}\max_t e^{-\lambda t}(1 - e^{-t})` in the read-out
    (:meth:`TiltedPair._main`); where :math:`F` is far above delta (the composed tilted mass near
    :math:`\varepsilon` a small share of the whole: a far tail set by one large step, at large sigma and small q)
    the window's budget ``tail`` shrinks to keep that error near a thousandth of ``tail / 1e-4`` (the relative tol)
    of ``d_est``, and where an error of 1e-16 at each atom above :math:`\varepsilon` would weigh more than a
    hundredth of it (:meth:`TiltedPair._split_weight`), the composition runs in extended precision throughout."""
    keep = pe.pmf > 0
    with np.errstate(divide="ignore"):
        logq = np.log(pe.pmf[keep])
    lam = _saddle(logq, pe.losses[keep], steps, eps_c)
    pe = _cheaper_top(pe, refs[0], steps, lam, d_est)
    (a, la), (b, lb) = _tilted(pe, lam), _tilted(op, lam)
    tail, fine = _budget(tail, d_est, steps, max(la, lb), lam, eps_c, pe.h)
    if a.shift == b.shift:
        a, b = _pld.same_support(a, b)
        ca, cb = _pld.compose_pair(a, b, steps, tail=tail, max_fft=cap, fine=fine)
    else:
        ca = _pld.compose_pair(a, None, steps, tail=tail, max_fft=cap, fine=fine)[0]
        cb = _pld.compose_pair(b, None, steps, tail=tail, max_fft=cap, fine=fine)[0]
    return (TiltedPair(pe, refs[0], steps, lam, la, ca, lo), TiltedPair(op, refs[1], steps, lam, lb, cb, lo))


def tilted_pairs(run, h, eps_c, lo, tail, one_tail, cap=TILT_MAX_FFT, d_est=None, directions=("add", "remove"),
                 levels=None):
    r"""``{(kind, direction): TiltedPair}`` of an add/remove Poisson ``run`` on grid step ``h``, tilted to
    centre ``eps_c``, read at ``eps >= lo``, for each of ``directions``; ``None`` where a single-step pair carries
    no reference values.

    ``one_tail``: the single-step grids end where the profile falls below it (each step puts at most that
    much mass beyond, at :math:`+\\infty` in the dominating pair); ``tail``: the tilted mass the
    composition's window may leave outside (less where ``d_est``, an estimate of delta, asks: see
    :func:`_tilted_direction`). ``levels``: a composition in two levels (:func:`._tiltlevels.leveled_direction`),
    tried first for each direction (``None`` where one level is shorter)."""
    q, sigma, steps = run

    def direction(pe, op, refs):
        got = None if levels is None else levels(pe, op, refs, steps, eps_c, lo, tail, cap, d_est)
        return got if got is not None else _tilted_direction(pe, op, refs, steps, eps_c, lo, tail, cap, d_est)
    if steps < 2:
        return None                     # (one step: TiltedPair's bound needs T >= 2; read-outs use the exact step)
    one_tail = max(one_tail, 1e-310)
    out = {}
    if run.symmetric:
        # replace-one: one symmetric pair, one direction (Poisson only: with fixed-size batches the pair is a bound)
        if run.sampler != "poisson":
            return None
        pe, op = (_sym_pair(q, sigma, run.sampler, h, kind, one_tail) for kind in ("pessimistic", "optimistic"))
        refs = (_symmetric_reference(run, pe), _symmetric_reference(run, op))
        if refs[0] is None or refs[1] is None:
            return None
        # (trimmed only where its excess would move a T-fold read-out by more than 1e-4: at (1e-5, 1.5, 1000), eps
        # 2.71, a trim at 1e-9 relative dropped 1.6e-104 a step above 2.86, the very tail that sets delta = 1e-100)
        op = _trimmed(op, refs[1], theta=max(1e-9, 1e-4 / steps))
        out["pessimistic", "add"], out["optimistic", "add"] = direction(pe, op, refs)
        return out
    for d in directions:
        pe = _single_pair(q, sigma, h, "pessimistic", d, one_tail)
        if d == "remove":
            pe = _remove_dominating(q, sigma, pe, one_tail)
        # (a kink of the dominated pair's values taken out by their minorant: a clipped one raises values near the bulk
        # at tiny q by up to 10 %, which the comparison with the reference grows T-fold, see dpmia.pld.from_profile)
        op = _single_pair(q, sigma, h, "optimistic", d, one_tail, kinks="minorant")
        refs = (_reference(run, pe, "pessimistic", d, one_tail),
                _reference(run, op, "optimistic", d, one_tail, kinks="minorant"))
        if refs[0] is None or refs[1] is None:
            return None
        out["pessimistic", d], out["optimistic", d] = direction(pe, op, refs)
    return out
