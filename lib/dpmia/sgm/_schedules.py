r"""DP-SGD with a non-adaptive schedule ``[(q_i, sigma_i, T_i), ...]`` (Mahloujifar et al., Sec. 3,
"varying noise"): the per-stage grid pairs composed on one grid, as certified brackets."""

from __future__ import annotations

import math

import numpy as np

from .. import _checks
from .. import pld as _pld
from ._chain import AUTO_MAX_FFT, _composed, _min_step, _refine_step, _spread
from ._rdp import _epsilon_rdp_certified
from ._readout import TOL_EPS, TOL_PROB, _eps_of, _eps_tail, _eps_width, _prob_width
from ._setting import _check_schedule, _check_tol

__all__ = ["advantage_bound_schedule", "advantage_bracket_schedule", "epsilon_bracket_schedule", "tpr_at_fpr_schedule"]


# --------------------------------------------------------------------------------------
def _schedule_chains(stages, h, tail, cap, kind, direction):
    parts = [_composed(run, h, kind, direction, tail, cap, False) for run in stages]
    return _pld.compose_many(parts)


def _schedule_refine(stages, tol, readout, width):
    # the grid step of the hardest stage; the stage spreads add in quadrature
    sd = math.sqrt(sum(_spread(run) ** 2 for run in stages))
    steps = sum(run.steps for run in stages)
    h = float(min(math.sqrt(tol * sd / (0.11 * steps)), sd / 20.0, 0.05))
    min_h = max(_min_step(run, AUTO_MAX_FFT // 2) for run in stages)
    return _refine_step(max(h, min_h), tol, readout, width, min_h)


def advantage_bracket_schedule(schedule, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Certified advantage bracket for a non-adaptive schedule ``[(q_i, sigma_i, T_i), ...]`` (Sec. 3, "varying
    noise").

    Composes the per-stage PLDs on a common grid (pessimistic and optimistic); ``tol``, ``neighbours`` and
    ``sampler`` as in :func:`advantage_bracket` (one relation and sampler for every stage).
    """
    stages = _check_schedule(schedule, neighbours, sampler)
    t = _check_tol("tol", tol)
    if not stages:
        return 0.0, 0.0

    def readout(h):
        pe = _schedule_chains(stages, h, 1e-3 * t, AUTO_MAX_FFT // 2, "pessimistic", "add")
        op = _schedule_chains(stages, h, 1e-3 * t, AUTO_MAX_FFT // 2, "optimistic", "add")
        return op.tv(), pe.tv()

    lo, hi = _schedule_refine(stages, t, readout, _prob_width(t, floor=True))
    return float(lo), float(hi)


def advantage_bound_schedule(schedule, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Certified upper bound on the advantage of a non-adaptive schedule: the upper end of
    :func:`advantage_bracket_schedule` (a float, like :func:`advantage_bound`)."""
    return advantage_bracket_schedule(schedule, tol=tol, neighbours=neighbours, sampler=sampler)[1]


def epsilon_bracket_schedule(schedule, delta, *, tol=TOL_EPS, neighbours="add-remove", sampler="poisson"):
    r"""Certified bracket on the tight :math:`\varepsilon(\delta)` (add/remove) of a schedule
    ``[(q_i, sigma_i, T_i), ...]``."""
    stages = _check_schedule(schedule, neighbours, sampler)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    t = _check_tol("tol", tol)
    if not stages:
        return 0.0, 0.0
    tail = min(_eps_tail(run, d) for run in stages)

    def readout(h):
        return _eps_of({(k, r): _schedule_chains(stages, h, tail, AUTO_MAX_FFT // 2, k, r)
                        for k in ("pessimistic", "optimistic") for r in ("add", "remove")}, d)

    lo, hi = _schedule_refine(stages, t, readout, _eps_width)
    # Renyi accounting (the add direction dominates) caps an upper end the grid could not resolve
    # (add/remove only: the Renyi bounds here are those of the add/remove pair)
    if not stages[0].symmetric:
        hi = min(hi, _epsilon_rdp_certified(stages, d)[0])
    if not lo <= hi:
        lo = 0.0
    return float(lo), float(hi)


def tpr_at_fpr_schedule(fpr, schedule, *, tol=TOL_PROB, neighbours="add-remove", sampler="poisson"):
    r"""Largest TPR at ``fpr`` against a schedule (upper end of the certified bracket)."""
    f = _checks.probability("fpr", fpr)
    stages = _check_schedule(schedule, neighbours, sampler)
    t = _check_tol("tol", tol)
    fa = np.atleast_1d(f)
    if not stages:
        return _checks.scalar_or_array(fa, fpr)

    def readout(h):
        pe = _schedule_chains(stages, h, 1e-3 * t, AUTO_MAX_FFT // 2, "pessimistic", "add")
        op = _schedule_chains(stages, h, 1e-3 * t, AUTO_MAX_FFT // 2, "optimistic", "add")
        return op.roc(fa), pe.roc(fa)

    _, hi = _schedule_refine(stages, t, readout, lambda r: float(np.max(r[1] - r[0])))
    return _checks.scalar_or_array(hi, fpr)
