r"""Every bound of the book for one DP-SGD training run, side by side, each row naming its game.

:func:`risk_report` takes the run as (sampling rate ``q``, noise multiplier ``sigma``, ``steps``), how it
was trained (``neighbours``: the relation the guarantee is stated for, ``sampler``: Poisson sampling,
fixed-size batches or shuffled epochs) and the δ at which ε is read; :func:`training_setting` turns
(dataset size, batch size, epochs) into ``(q, steps)``. Every row says which game it answers (``game``),
the neighbouring relation (``neighbours``), what the attacker is assumed to know (``knows``) and its
``kind``: certified bracket, certified bound, certified lower bound, estimate, or not a bound for this
run. Rows with a certified bracket give it; the value shown is the safe end. Printed numbers keep six
significant digits, rounded to the safe side. The groups and their sources are listed in
the docstring of the module ``_rows`` in this package and derived in chapter 7:

* ε(δ) (certified) and Rényi DP's; what any (ε, δ)-DP mechanism allows (Erlingsson, Humphries);
* the optimal attack on the run (Mahloujifar et al., Theorem 6 and Corollary 11), precision, prior;
* the same run in the other worst-case game (add/remove or replace-one);
* a random half of a pool (Izzo et al.'s η-MIP: half the replace-one TV, and Theorem 4);
* attackers who know less: Kaissis et al.'s GLRT (energy) attacker, Lowy et al.'s PMP;
* risks beyond membership: reconstruction, attribute inference and re-identification at a baseline
  (Hayes et al. 2023; Kulynych et al. 2025), Bayes security (Chatzikokolakis et al. 2023);
* the Gaussian-DP (CLT) estimate; for shuffled epochs, certified lower bounds next to the Poisson
  numbers, which do not hold for them.
"""

from __future__ import annotations

from .. import _checks, sgm
from ..learning import steps_for_epochs
from . import _rows
from ._quick import QuickRisk, quick_risk
from ._table import KINDS, KNOWS_ALL, WORST_CASE, RiskReport, RiskRow

__all__ = ["risk_report", "training_setting", "quick_risk", "QuickRisk", "RiskReport", "RiskRow", "DEFAULT_FPRS",
           "SAMPLERS", "KINDS", "WORST_CASE", "KNOWS_ALL"]

#: False-positive rates at which the report gives the largest TPR.
DEFAULT_FPRS = (1e-3, 1e-2, 0.1)
#: The samplers a report knows (the accountant's two, and shuffled epochs with lower bounds only).
SAMPLERS = ("poisson", "fixed", "shuffled")


def training_setting(dataset_size, batch_size, epochs):
    """``(q, steps)`` of a run: sampling rate ``batch_size / dataset_size`` and ``floor(epochs / q)`` steps.

    The same for each sampler: Poisson sampling (expected batch size), fixed-size batches and shuffled
    epochs (``1/q`` batches per epoch).

    Examples
    --------
    >>> from dpmia import report
    >>> report.training_setting(60_000, 256, 30)          # 60,000 records, batches of 256, 30 epochs
    (0.004266666666666667, 7031)
    """
    n = _checks.integer("dataset_size", dataset_size, lo=1)
    b = _checks.integer("batch_size", batch_size, lo=1)
    if b > n:
        raise ValueError(f"batch_size must be at most dataset_size ({n}), got {b}")
    q = b / n
    return q, steps_for_epochs(q, epochs)


def _check_sampler(sampler):
    if not isinstance(sampler, str) or sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    return sampler


def risk_report(q, sigma, steps, delta=1e-5, prior=0.5, *, fprs=DEFAULT_FPRS, neighbours="add-remove",
                sampler="poisson", baseline=1e-3, dimension=None) -> RiskReport:
    """Every bound of the book for ``steps`` DP-SGD steps at rate ``q`` and noise multiplier ``sigma``.

    ``delta`` is where ε is read (0 < δ < 1); ``prior`` the attacker's prior probability that the
    target was in the training set (0 < p < 1); ``fprs`` the false-positive rates at which the
    largest TPR is reported; ``neighbours`` ``"add-remove"`` or ``"replace-one"``; ``sampler``
    ``"poisson"``, ``"fixed"`` (replace-one only) or ``"shuffled"`` (no certified upper bound: the report
    gives certified lower bounds and, marked as such, the Poisson numbers); ``baseline`` the success
    probability of the best blind guess for the beyond-membership rows; ``dimension`` the model's
    number of parameters, for the GLRT attacker (optional). See the module docstring for the rows.

    Examples
    --------
    >>> from dpmia import report
    >>> rep = report.risk_report(0.01, 1.0, 1000, delta=1e-5)
    >>> round(rep.value("advantage, optimal attack"), 4), round(rep.value("epsilon (tight)"), 3)
    (0.161, 1.829)
    >>> rep.row("eta (best accuracy 1/2 + eta)").neighbours
    'replace-one (coupling in- and out-sets)'
    """
    sp = _check_sampler(sampler)
    run = sgm.check_run(q, sigma, steps, steps_lo=1, neighbours=neighbours,
                        sampler="poisson" if sp == "shuffled" else sp)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    p = _checks.scalar("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    fs = [_checks.scalar("fprs", f, lo=0.0, hi=1.0, lo_open=True, hi_open=True) for f in fprs]
    b = _checks.scalar("baseline", baseline, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dim = None if dimension is None else _checks.integer("dimension", dimension, lo=1, hi=10**9)
    rep = RiskReport({"q": run.q, "sigma": run.sigma, "steps": run.steps, "delta": d, "prior": p,
                      "neighbours": run.neighbours, "sampler": sp, "baseline": b, "dimension": dim})
    if sp == "shuffled":
        rows, notes = _rows.shuffled_rows(run, d, fs)
        rep.rows += rows
        rep.notes += notes
        return rep
    rows, (_, e_hi) = _rows.privacy_rows(run, d)
    rep.rows += rows
    rep.rows += _rows.implied_rows(run, d, e_hi)
    rows, adv, _ = _rows.attack_rows(run, fs, p)
    rep.rows += rows
    rep.rows += _rows.other_game_rows(run, d)
    mip = _rows.mip_rows(run, d)
    rep.rows += mip
    e_replace = e_hi if run.neighbours == "replace-one" else sgm.epsilon(run.q, run.sigma, run.steps, d,
                                                                        neighbours="replace-one")
    rows, notes = _rows.weaker_attacker_rows(run, d, dim, e_replace)
    rep.rows += rows
    rep.notes += notes
    rep.rows += _rows.beyond_rows(run, b, adv)
    rep.rows += _rows.gdp_rows(run, d)
    if sp == "fixed":
        rep.notes.append("Fixed-size batches: upper ends from the add/remove pair at sigma/2 made symmetric (Balle, "
                         "Barthe and Gaboardi 2018; Dong, Roth and Su 2022, Theorem 4.2), lower ends from a dataset "
                         "whose other gradients oppose the target's (it attains the bound at one step).")
    return rep
