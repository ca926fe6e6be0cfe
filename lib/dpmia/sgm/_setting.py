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
    """A checked DP-SGD setting: sampling rate ``q`` in [0, 1], noise multiplier ``sigma`` in
    [``SIGMA_MIN``, 1e6], ``steps`` >= 0, the neighbouring relation and the sampler. Hashable (the
    engine caches on it); unpacks as ``q, sigma, steps``."""

    q: float
    sigma: float
    steps: int
    #: ``"add-remove"`` or ``"replace-one"``: the neighbouring relation the run is accounted under.
    neighbours: str = "add-remove"
    #: ``"poisson"`` (each record in each batch independently with probability q) or ``"fixed"``
    #: (batches of a fixed size drawn without replacement, q = batch size / dataset size).
    sampler: str = "poisson"

    def __iter__(self):
        return iter((self.q, self.sigma, self.steps))

    @property
    def symmetric(self) -> bool:
        """Whether one step's worst-case pair is symmetric (as under replace-one, where one direction suffices)."""
        return self.neighbours == "replace-one"

    def with_steps(self, steps: int) -> Run:
        """The same run with another number of steps (the engine's fewer-step bounds and levels)."""
        return replace(self, steps=int(steps))


def check_run(q, sigma, steps, *, steps_lo=0, neighbours="add-remove", sampler="poisson") -> Run:
    """The :class:`Run` of ``(q, sigma, steps)`` under ``neighbours`` and ``sampler``; ``ValueError``/``TypeError``
    naming the argument otherwise (also for a sampler the theory does not cover under that relation)."""
    qq = _checks.real("q", q, lo=0.0, hi=1.0)
    if np.ndim(qq) != 0:
        raise TypeError(f"q must be a scalar (the Poisson sampling rate), got an array of shape {np.shape(qq)}")
    ss = _checks.real("sigma", sigma, lo=SIGMA_MIN, hi=_SIGMA_HI)
    if np.ndim(ss) != 0:
        raise TypeError(f"sigma must be a scalar (the noise multiplier), got an array of shape {np.shape(ss)}")
    tt = _checks.integer("steps", steps, lo=steps_lo, hi=_STEPS_HI)
    nb, sp = check_neighbours(neighbours), check_sampler(sampler)
    if sp == "fixed" and nb == "add-remove":
        raise ValueError("sampler='fixed' needs neighbours='replace-one': batches of a fixed size drawn without "
                         "replacement are analysed with one record replaced by another (Balle, Barthe and Gaboardi "
                         "2018, Theorem 10); adding or removing a record changes the dataset size, which the "
                         "fixed-size analysis does not cover")
    return Run(float(qq), float(ss), int(tt), nb, sp)


def _check_tol(name, tol):
    """A checked accuracy target in [1e-12, 1]."""
    return _checks.scalar(name, tol, lo=1e-12, hi=1.0)


def _check_schedule(schedule, neighbours="add-remove", sampler="poisson") -> list[Run]:
    """The :class:`Run` of each stage of a non-adaptive schedule ``[(q_i, sigma_i, T_i), ...]``, without the
    stages that release nothing (q = 0 or T = 0); ``TypeError``/``ValueError`` naming the stage otherwise."""
    if isinstance(schedule, (str, bytes)) or not hasattr(schedule, "__iter__"):
        raise TypeError(f"schedule must be a sequence of (q, sigma, steps) triples, got {type(schedule).__name__}")
    out = []
    for i, st in enumerate(schedule):
        if not isinstance(st, (tuple, list)) or len(st) != 3:
            raise ValueError(f"schedule[{i}] must be a (q, sigma, steps) triple, got {st!r}")
        try:
            out.append(check_run(*st, neighbours=neighbours, sampler=sampler))
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


#: The samplers the accountant knows: Poisson sampling, or fixed-size batches drawn without replacement.
SAMPLERS = ("poisson", "fixed")


def check_sampler(sampler) -> str:
    """The checked sampler, ``"poisson"`` or ``"fixed"``; shuffled epochs are refused with the reason."""
    if isinstance(sampler, str) and sampler in ("shuffle", "shuffled", "shuffling"):
        raise ValueError("sampler='shuffled' has no certified upper bound: shuffled epochs are not covered by "
                         "Poisson or fixed-size accounting (Chua et al. 2024 show the gap can be large); "
                         "dpmia.report shows a lower bound on a shuffled run's risk instead")
    if not isinstance(sampler, str) or sampler not in SAMPLERS:
        raise ValueError(f"sampler must be 'poisson' (each record in each batch independently with probability q) "
                         f"or 'fixed' (batches of a fixed size without replacement), got {sampler!r}")
    return sampler
