r"""The accountant's probability read-outs: Theorem 6's advantage, the TPR at each FPR, the trade-off
curve and the advantage under a prior, each as a certified bracket (public through :mod:`dpmia.sgm`).

One DP-SGD step with Poisson sampling rate :math:`q` and noise multiplier :math:`\sigma` is, in the
worst case for a target, the pair

.. math:: P = \mathcal N(0, \sigma^2),\qquad Q = (1-q)\,\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)

(without / with the target). Mahloujifar et al. (Theorem 6) show that :math:`T` *adaptive* steps
give an attacker no more than :math:`\mathrm{TV}(P^{\otimes T}, Q^{\otimes T})`, attained by a real
attack; Corollary 11 bounds the TPR at each FPR by the ROC of the same pair. The grid pairs come from
the chain (``_chain``), refined to ``tol`` by its error model; ε and δ(ε) are in ``_epsilon``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _checks, gaussian
from .. import pld as _pld
from ._bulk import clear_caches as _bulk_caches
from ._chain import AUTO_MAX_FFT, _composed, _refine
from ._chain import clear_caches as _chain_caches
from ._rdp import _rdp_int
from ._readout import TOL_PROB, _four, _prob_width
from ._replace import replace_one_tv
from ._setting import Run, _check_tol, check_run
from ._step import _one_step_tv
from ._tvbounds import _chi2_tv_upper, _clt_mu, _sampled_cap, _sum_test_tv, _threshold_count_tv

__all__ = ["plds", "advantage_bound", "advantage_bracket", "tpr_at_fpr", "tpr_bracket", "tradeoff_bracket",
           "prior_advantage", "clear_caches", "AUTO_MAX_FFT"]


def clear_caches():
    """Empty the accountant's caches of single-step grids and composed pairs (for timing runs)."""
    _chain_caches()
    _bulk_caches()
    _rdp_int.cache_clear()


def plds(q, sigma, steps, *, h=None, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Composed (pessimistic, optimistic) PLDs of :math:`T` SGM steps (add direction) on grid step ``h``.

    ``h=None`` chooses the grid for an advantage bracket of width ``tol``. Under replace-one the pair
    is symmetric and its one direction is returned.
    """
    run = check_run(q, sigma, steps, steps_lo=1, neighbours=neighbours, sampler=sampler)
    if run.q == 0.0:
        raise ValueError("q must be in (0, 1] for a PLD (q = 0 releases nothing: every read-out is 0)")
    t = _check_tol("tol", tol)
    if h is None:
        return _plds(run, t)
    hh = _checks.scalar("h", h, lo=1e-9, hi=1.0)
    tail = _pld_tail(run, t)
    return (_composed(run, hh, "pessimistic", "add", tail, _pld.MAX_FFT),
            _composed(run, hh, "optimistic", "add", tail, _pld.MAX_FFT))


def _pld_tail(run, t):
    # the Q-mass the windows may drop: 1e-2 tol, relative to the TV's certified ceiling where that is
    # below 0.01 (the width asked for is relative there)
    return 1e-2 * t * min(1.0, _sampled_cap(run) / 1e-2)


def _plds(run, t):
    """The composed (pessimistic, optimistic) add-direction pairs refined for an advantage bracket of width ``t``."""
    tail = _pld_tail(run, t)
    return _refine(run, t, lambda hh, cap: (_composed(run, hh, "pessimistic", "add", tail, cap),
                                           _composed(run, hh, "optimistic", "add", tail, cap)),
                  lambda pair: _prob_width(t, floor=True)((pair[1].tv(), pair[0].tv())), tail=tail)


def advantage_bracket(q, sigma, steps, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Certified bracket ``(lower, upper)`` on Theorem 6's bound :math:`\mathrm{TV}(P^{\otimes T},Q^{\otimes T})`.

    ``q`` in [0, 1], ``sigma`` in [0.01, 1e6] (noise multiplier), ``steps`` integer >= 0; ``tol`` the
    target width: absolute for values of at least 0.01, relative (``tol`` / 0.01, so 1e-3 at the
    default) below, so that small values keep their digits, but never narrower than ``tol`` / 10
    absolute (a TV under 1e-4 gets a bracket at most 1e-6 wide, from the bounds that need no grid
    where they reach it). Deterministic: the grid is
    chosen from ``tol`` by an error model. Closed forms: :math:`q = 1` gives
    :math:`2\Phi(\sqrt T/(2\sigma)) - 1`, :math:`T = 1` gives :math:`q(2\Phi(1/(2\sigma)) - 1)`.

    ``neighbours="replace-one"``: the pair :math:`(1-q)\mathcal N(0,\sigma^2) + q\mathcal N(\pm 1,\sigma^2)` of a
    replaced record, attained when the other records' gradients vanish (one direction: it is symmetric).
    ``sampler="fixed"`` (replace-one only): batches of a fixed size drawn afresh without replacement at
    each step, ``q`` = batch size / dataset size. The upper end is the add/remove pair at :math:`\sigma/2`
    made symmetric (Balle, Barthe and Gaboardi 2018, Theorem 2; Dong, Roth and Su 2022, Theorem 4.2;
    derived in :mod:`dpmia.sgm`), the lower end what a concrete dataset attains (every other gradient
    opposite to the target's: the add/remove run at :math:`\sigma/2`), so the bracket holds the run's
    worst case; it is wider than ``tol`` where the two differ (several steps).
    """
    run = check_run(q, sigma, steps, neighbours=neighbours, sampler=sampler)
    return _advantage_bracket(run, _check_tol("tol", tol))


def _advantage_bracket(run, t):
    qq, ss, tt = run
    if qq == 0.0 or tt == 0:
        return 0.0, 0.0
    if run.symmetric:
        return _advantage_bracket_r(run, t)
    if qq == 1.0 or tt == 1:
        # closed forms, rounded outward by a few ulps of their float error
        v = gaussian.tv(math.sqrt(tt) / ss) if qq == 1.0 else qq * gaussian.tv(1.0 / ss)
        return max(v * (1.0 - 1e-14), 0.0), min(v * (1.0 + 1e-14), 1.0)
    # TV never exceeds the probability that the target is ever sampled, 1 - (1-q)^T (rounded up)
    cap = _sampled_cap(run)
    # cheap certified bounds first: the chi-square bound and the cap (upper); one step, the sum of
    # the outputs (small TV) and the threshold-counting attacker (small sigma) (lower). Where they
    # already meet tol the PLD is not needed.
    def done(lo_hi):
        return _prob_width(t, floor=True)(lo_hi) <= t

    hi = min(cap, _chi2_tv_upper(run))
    lo = min(_one_step_tv(qq, ss) * (1.0 - 1e-14), hi)        # TV grows with T; rounded down
    if hi <= 0.05 or (hi >= 1.0 - 0.1 * t and _clt_mu(run) > 10.0):
        # (the second: a TV so close to 1 that the sum test alone may close the bracket)
        lo = max(lo, min(_sum_test_tv(run), hi))
    if ss <= 0.5 and not done((lo, hi)):
        lo = max(lo, min(_threshold_count_tv(run), hi))
    if not done((lo, hi)):
        try:
            pe, op = _plds(run, t)
            lo, hi = max(lo, min(op.tv(), hi)), min(pe.tv(), hi)
        except ValueError:
            pass
        lo, hi = _tv_lower_fewer(run, t, lo, hi, counted=ss <= 0.5)
        if not done((lo, hi)) and hi > 0.05:
            # the sum of the outputs: the near-optimal test where the privacy loss is almost linear
            lo = max(lo, min(_sum_test_tv(run), hi))
    return lo, hi


def _advantage_bracket_r(run, t):
    """:func:`advantage_bracket` under replace-one: the cap :math:`1-(1-q)^T` (the replaced slot is never
    sampled otherwise) and, for Poisson sampling, twice the add/remove chi-square bound (the triangle
    inequality through the dataset without the record); one step and fewer steps as lower ends; then
    the grid pairs."""
    qq, ss, tt = run
    if (qq == 1.0 and run.sampler == "poisson") or tt == 1:
        # N(1, s^2) against N(-1, s^2), T times; one step: q (2 Phi(1/s) - 1), also the fixed-batch bound's
        v = gaussian.tv(2.0 * math.sqrt(tt) / ss) if tt > 1 else replace_one_tv(qq, ss)
        return max(v * (1.0 - 1e-14), 0.0), min(v * (1.0 + 1e-14), 1.0)
    hi = min(_sampled_cap(run), 1.0)
    if run.sampler == "poisson":
        hi = min(hi, 2.0 * _chi2_tv_upper(Run(qq, ss, tt)))
    lo = min(_one_step_tv_run(run) * (1.0 - 1e-14), hi)

    def done(lo_hi):
        return _prob_width(t, floor=True)(lo_hi) <= t

    # real attacks on the worst-case dataset (the same for both samplers: the slot is in each batch with
    # probability q): the sum of the outputs where the TV is small or near 1, counting at small sigma
    if hi <= 0.05 or (hi >= 1.0 - 0.1 * t and _clt_mu(run) > 10.0):
        lo = max(lo, min(_sum_test_tv(run), hi))
    if ss <= 0.5 and not done((lo, hi)):
        lo = max(lo, min(_threshold_count_tv(run), hi))
    if done((lo, hi)):
        return lo, hi
    if run.sampler == "fixed":
        # the grid pairs bound the run from above only (their lower end is the bound's, not the run's):
        # the lower end is what real attacks reach, on the datasets above and on the one of _attained
        try:
            hi = min(_plds(run, t)[0].tv(), hi)
        except ValueError:
            pass
        return max(lo, min(_advantage_bracket(_attained(run), t)[0], hi)), hi
    try:
        pe, op = _plds(run, t)
        lo, hi = max(lo, min(op.tv(), hi)), min(pe.tv(), hi)
    except ValueError:
        pass
    return _tv_lower_fewer(run, t, lo, hi, counted=True)


def _attained(run):
    r"""The add/remove run at :math:`\sigma/2` that a concrete dataset attains with fixed-size batches: every
    other record's gradient opposite to the target's (one clipping norm each), so that the target in a
    batch displaces one of them and moves the update by two clipping norms; the other world holds the
    replacement, with the others' gradient. Its read-outs' lower ends are lower ends for the fixed-batch
    run (the two orders of the pair are both neighbours)."""
    return Run(run.q, 0.5 * run.sigma, run.steps)


def _one_step_tv_run(run):
    r"""TV of one step: add/remove :math:`q(2\Phi(1/(2\sigma))-1)`, replace-one :math:`q(2\Phi(1/\sigma)-1)`;
    fixed-size batches: that of the bounding pair, :math:`q(2\Phi(1/\sigma)-1)` as well."""
    if run.neighbours == "replace-one":
        return replace_one_tv(run.q, run.sigma)
    return _one_step_tv(run.q, run.sigma)


def _mu_full(run):
    """The Gaussian mu of a run that samples every record at every step (q = 1, Poisson): sqrt(T) / sigma,
    twice that under replace-one (the two means are 2 apart)."""
    return (2.0 if run.symmetric else 1.0) * math.sqrt(run.steps) / run.sigma


def _tv_lower_fewer(run, tol, lo, hi, depth=3, counted=False):
    """Raise a weak lower end with the bound at fewer steps (TV increases with T), at one step,
    and with the threshold-counting attacker (unless already ``counted``)."""
    lo = max(lo, _one_step_tv_run(run) * (1.0 - 1e-14))
    if lo < hi - tol and depth == 3 and not counted and not run.symmetric:
        lo = max(lo, _threshold_count_tv(run))
    if lo < 0.5 * hi and run.steps >= 8 and depth > 0:
        fewer = run.with_steps(run.steps // 4)
        try:
            pe, op = _plds(fewer, tol)
            lo = max(lo, op.tv())
        except ValueError:
            pass
        return _tv_lower_fewer(fewer, tol, lo, hi, depth - 1) if lo < 0.5 * hi else (lo, hi)
    return lo, hi


def advantage_bound(q, sigma, steps, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Theorem 6 of Mahloujifar et al.: the largest membership advantage against :math:`T` DP-SGD steps.

    .. math:: \mathrm{Adv} \le \mathrm{TV}\big(\mathcal N(0,\sigma^2)^{\otimes T},\
              [(1-q)\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)]^{\otimes T}\big)

    Returns the upper end of :func:`advantage_bracket` (never below the exact value, never above 1).

    Examples
    --------
    >>> from dpmia import sgm
    >>> round(sgm.advantage_bound(0.01, 1.0, 1000), 4)   # q = 0.01, sigma = 1, 1000 steps
    0.161
    """
    return advantage_bracket(q, sigma, steps, tol=tol, neighbours=neighbours, sampler=sampler)[1]


def tpr_bracket(fpr, q, sigma, steps, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Certified bracket ``(lower, upper)`` on the largest TPR at ``fpr`` (Corollary 11; the ROC of the dominating
    pair).

    Upper: :math:`\inf_\varepsilon[e^\varepsilon\,\mathrm{fpr} + \delta(\varepsilon)]` on the pessimistic
    pair; lower: the exact ROC of the optimistic pair. ``fpr`` scalar or array in [0, 1].
    """
    try:
        f = _checks.probability("fpr", fpr)
        run = check_run(q, sigma, steps, neighbours=neighbours, sampler=sampler)
    except (TypeError, ValueError) as exc:
        # the FPR comes first, unlike every other read-out: say so where the order was likely mixed up
        raise type(exc)(f"{exc} (the arguments are (fpr, q, sigma, steps): the false-positive rate comes "
                        f"first, then the run's sampling rate, noise multiplier and number of steps)") from None
    return _tpr_bracket(f, fpr, run, _check_tol("tol", tol))


def _tpr_bracket(f, fpr, run, t):
    """:func:`tpr_bracket` for a checked ``f`` (of the caller's ``fpr``, which sets the output's form) and run."""
    qq, ss, tt = run
    fa = np.atleast_1d(f)
    if qq == 0.0 or tt == 0:
        return _checks.scalar_or_array(fa, fpr), _checks.scalar_or_array(fa, fpr)
    if qq == 1.0 and run.sampler == "poisson":
        v = gaussian.tpr_at_fpr(f, _mu_full(run))
        return v, v
    pe, op = _plds(run, t)
    hi = pe.roc(fa)
    # fixed-size batches: the grid pairs bound from above only; the lower end is a concrete dataset's
    if run.sampler == "fixed":
        lo = np.minimum(np.atleast_1d(_tpr_bracket(f, fpr, _attained(run), t)[0]), hi)
    else:
        lo = op.roc(fa)
    return _checks.scalar_or_array(lo, fpr), _checks.scalar_or_array(hi, fpr)


def tpr_at_fpr(fpr, q, sigma, steps, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Largest TPR at ``fpr`` of any attack on :math:`T` DP-SGD steps (Corollary 11), never understated.

    Examples
    --------
    >>> from dpmia import sgm
    >>> round(float(sgm.tpr_at_fpr(1e-3, 0.01, 1.0, 1000)), 5)   # at FPR 0.1 %, no attack exceeds this TPR
    0.00407
    """
    return tpr_bracket(fpr, q, sigma, steps, tol=tol, neighbours=neighbours, sampler=sampler)[1]


def tradeoff_bracket(q, sigma, steps, *, alpha=None, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""The symmetric (add/remove) trade-off curve :math:`\beta(\alpha)` of :math:`T` DP-SGD steps, as arrays.

    Returns ``(alpha, beta_lower, beta_upper)``: the smallest type-II error of any test at type-I
    error :math:`\alpha`, for the worse of the two directions; ``beta_lower`` is certified (an
    attacker can do no better), ``beta_upper`` shows the bracket. ``alpha`` defaults to 200 points
    log-spaced in [1e-6, 1].
    """
    run = check_run(q, sigma, steps, neighbours=neighbours, sampler=sampler)
    qq, ss, tt = run
    t = _check_tol("tol", tol)
    a = (np.concatenate([[0.0], np.geomspace(1e-6, 1.0, 199)]) if alpha is None
         else np.atleast_1d(_checks.probability("alpha", alpha)).astype(float))
    if qq == 0.0 or tt == 0:
        return a, 1.0 - a, 1.0 - a
    if qq == 1.0 and run.sampler == "poisson":
        b = gaussian.tradeoff(a, _mu_full(run))
        return a, b, b

    def readout(h, cap):
        c = _four(run, h, 1e-3 * t, cap)
        up = np.maximum(c["pessimistic", "add"].roc(a), c["pessimistic", "remove"].roc(a))
        lo = np.maximum(c["optimistic", "add"].roc(a), c["optimistic", "remove"].roc(a))
        return lo, up

    # any test's power is at most alpha + TV, and the TV at most the chance that the target is sampled at
    # all (and, Poisson add/remove, the chi-square bound): where that is within tol, no grid is needed; where
    # no grid fits, it is the certified answer
    tv_up = min(_sampled_cap(run), _chi2_tv_upper(run) if run.sampler == "poisson" and not run.symmetric else 1.0)
    cheap = (np.minimum(a + tv_up * (1.0 + 1e-15), 1.0), a)
    if tv_up <= t:
        lo, up = cheap[1], cheap[0]
    else:
        try:
            lo, up = _refine(run, t, readout, lambda r: float(np.max(r[1] - r[0])), tail=1e-3 * t)
        except ValueError:
            lo, up = cheap[1], cheap[0]
    return a, np.clip(1.0 - up, 0.0, 1.0), np.clip(1.0 - lo, 0.0, 1.0)


def prior_advantage(q, sigma, steps, prior, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Largest advantage over the best prior guess under membership prior :math:`p` (corrected Theorem 21).

    :math:`\mathrm{Adv}(p) = 2\Pr[b=b'] - 2\max(p,1-p) = 2(1-p)\,\mathrm{TV}_{p/(1-p)}(P,Q) - |1-2p|`,
    with :math:`P` the output law without the target. The paper prints :math:`+1-2p`, which is
    positive even for identical :math:`P = Q`. Upper end of the certified bracket.
    """
    run = check_run(q, sigma, steps, neighbours=neighbours, sampler=sampler)
    qq, ss, tt = run
    p = _checks.scalar("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    t = _check_tol("tol", tol)
    a = p / (1 - p)
    if qq == 0.0 or tt == 0:
        return 0.0
    if qq == 1.0 and run.sampler == "poisson":
        tva = gaussian.tv_a(a, _mu_full(run))
    else:
        pe, _ = _plds(run, t)
        tva = pe.tv_a(a)
    return float(min(max(2 * (1 - p) * tva - abs(1 - 2 * p), 0.0), 2 * min(p, 1 - p)))
