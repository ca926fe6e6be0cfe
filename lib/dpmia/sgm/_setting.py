"""A DP-SGD setting, validated once: the value every layer of the accountant receives.

Public functions of :mod:`dpmia.sgm` check their arguments here, once, and pass the frozen
:class:`Run` down the engine (single step, chain, bulk pairs, read-outs), which trusts it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import _checks

#: Smallest noise multiplier accepted: below it one step's privacy loss spans more than the grids hold.
SIGMA_MIN = 0.01
#: Largest noise multiplier accepted.
_SIGMA_HI = 1e6
#: Largest number of steps accepted.
_STEPS_HI = 10**9


@dataclass(frozen=True)
class Run:
    """A checked DP-SGD setting: Poisson sampling rate ``q`` in [0, 1], noise multiplier ``sigma`` in
    [``SIGMA_MIN``, 1e6] and ``steps`` >= 0. Hashable (the engine caches on it); unpacks as
    ``q, sigma, steps``."""

    q: float
    sigma: float
    steps: int

    def __iter__(self):
        return iter((self.q, self.sigma, self.steps))

    def with_steps(self, steps: int) -> Run:
        """The same run with another number of steps (the engine's fewer-step bounds and levels)."""
        return replace(self, steps=int(steps))


def check_run(q, sigma, steps, *, steps_lo=0) -> Run:
    """The :class:`Run` of ``(q, sigma, steps)``; ``ValueError``/``TypeError`` naming the argument otherwise."""
    qq = _checks.real("q", q, lo=0.0, hi=1.0)
    if np.ndim(qq) != 0:
        raise TypeError(f"q must be a scalar (the Poisson sampling rate), got an array of shape {np.shape(qq)}")
    ss = _checks.real("sigma", sigma, lo=SIGMA_MIN, hi=_SIGMA_HI)
    if np.ndim(ss) != 0:
        raise TypeError(f"sigma must be a scalar (the noise multiplier), got an array of shape {np.shape(ss)}")
    tt = _checks.integer("steps", steps, lo=steps_lo, hi=_STEPS_HI)
    return Run(float(qq), float(ss), int(tt))


def _check_tol(name, tol):
    """A checked accuracy target in [1e-12, 1]."""
    return float(_checks.real(name, tol, lo=1e-12, hi=1.0))


def _check_schedule(schedule) -> list[Run]:
    """The :class:`Run` of each stage of a non-adaptive schedule ``[(q_i, sigma_i, T_i), ...]``, without the
    stages that release nothing (q = 0 or T = 0); ``TypeError``/``ValueError`` naming the stage otherwise."""
    if isinstance(schedule, (str, bytes)) or not hasattr(schedule, "__iter__"):
        raise TypeError(f"schedule must be a sequence of (q, sigma, steps) triples, got {type(schedule).__name__}")
    out = []
    for i, st in enumerate(schedule):
        if not isinstance(st, (tuple, list)) or len(st) != 3:
            raise ValueError(f"schedule[{i}] must be a (q, sigma, steps) triple, got {st!r}")
        try:
            out.append(check_run(*st))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"schedule[{i}]: {exc}") from None
    return [r for r in out if r.q > 0 and r.steps > 0]


#: The neighbouring relations the accountant knows: add or remove one record, or replace one by another.
NEIGHBOURS = ("add-remove", "replace-one")


def check_neighbours(neighbours) -> str:
    """The checked neighbouring relation, ``"add-remove"`` or ``"replace-one"``."""
    if not isinstance(neighbours, str) or neighbours not in NEIGHBOURS:
        raise ValueError(f"neighbours must be 'add-remove' (a record added or removed) or 'replace-one' "
                         f"(a record replaced by another), got {neighbours!r}")
    return neighbours
