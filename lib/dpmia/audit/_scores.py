r"""Audit your own model's scores: the empirical ROC, TPR and FPR at chosen FPRs with valid intervals, and an ε
lower bound, all at one joint level.

The input is what any framework can produce: one score per (model, canary) — higher means "more likely a
member" — its 0/1 membership, and, for shadow-model audits, the model it came from (``groups``).

* **Thresholds.** For each target FPR f the attack "member iff score ≥ t" uses the smallest threshold whose
  empirical FPR on the non-members is at most f (or the thresholds given, e.g. chosen on other models).
* **Intervals.** TPR and FPR at each threshold get two-sided intervals: Clopper–Pearson, or with ``groups`` the
  Korn–Graubard interval that accounts for the dependence of one model's decisions
  (:func:`~dpmia.audit.proportion_interval`).
* **ε lower bound.** ``method="intervals"``: an (ε, δ)-DP mechanism has TPR ≤ e^ε FPR + δ and
  1 − FPR ≤ e^ε (1 − TPR) + δ at every threshold (Kairouz et al. 2015), so each row's interval ends give
  :math:`\varepsilon \ge \max(\ln\frac{\mathrm{TPR}_{lo} - \delta}{\mathrm{FPR}_{hi}},
  \ln\frac{1 - \mathrm{FPR}_{hi} - \delta}{1 - \mathrm{TPR}_{lo}})`; the bound is the largest over rows.
  ``method="one-run"``: Steinke et al.'s bound (:func:`~dpmia.audit.one_run_epsilon`) for guessing "member" on the
  r highest scores, for r on a fixed grid of fractions of the examples (0.1 %, 1 %, 3 %, 10 %, 30 %), the best of
  them — valid however the canaries depend on each other, but it needs every example to have been included by its
  own fair coin (checked: an implausible member fraction is refused).
* **One joint level.** ``level`` covers everything returned together: with ``k`` FPRs there are ``2k`` intervals
  (and, one-run, one bound per candidate r), each computed at ``1 - (1 - level)/(number of statements)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .. import _checks
from ..attacks import empirical_roc
from ._intervals import epsilon_from_ends, proportion_interval, split_level
from ._onerun import one_run_epsilon

__all__ = ["audit_scores", "ScoreAudit", "FprRow", "ONE_RUN_FRACTIONS"]

#: Fractions of the examples guessed "member" (the highest scores) by the one-run bound's candidates.
ONE_RUN_FRACTIONS = (0.001, 0.01, 0.03, 0.1, 0.3)


@dataclass(frozen=True)
class FprRow:
    """The attack "member iff score ≥ threshold" at one target FPR, with its counts and intervals."""

    target_fpr: float
    threshold: float
    n_members: int
    n_nonmembers: int
    true_positives: int
    false_positives: int
    tpr_ci: tuple
    fpr_ci: tuple

    @property
    def tpr(self) -> float:
        return self.true_positives / self.n_members

    @property
    def fpr(self) -> float:
        return self.false_positives / self.n_nonmembers

    def epsilon_lower(self, delta) -> float:
        """ε certified by this row's interval ends (0 if none): see the module docstring."""
        return epsilon_from_ends(self.tpr_ci[0], self.fpr_ci[1], delta)


@dataclass(frozen=True)
class ScoreAudit:
    """Result of :func:`audit_scores`. ``level`` is the joint level of ``rows``' intervals and ``epsilon_lower``;
    ``interval_level`` the level of each interval; ``roc`` the empirical ``(fpr, tpr)``; ``one_run`` the guesses
    behind a one-run bound (``None`` for ``method="intervals"``)."""

    rows: tuple
    roc: tuple = field(repr=False, compare=False)
    epsilon_lower: float
    method: str
    level: float
    interval_level: float
    delta: float
    n_members: int
    n_nonmembers: int
    n_groups: int
    one_run: dict = None

    def to_dict(self) -> dict:
        return {"n_members": self.n_members, "n_nonmembers": self.n_nonmembers, "n_groups": self.n_groups,
                "level": self.level, "interval_level": self.interval_level, "delta": self.delta,
                "method": self.method, "epsilon_lower": self.epsilon_lower, "one_run": self.one_run,
                "rows": [{"target_fpr": r.target_fpr, "threshold": r.threshold, "tpr": r.tpr,
                          "tpr_ci": list(r.tpr_ci), "fpr": r.fpr, "fpr_ci": list(r.fpr_ci),
                          "true_positives": r.true_positives, "false_positives": r.false_positives}
                         for r in self.rows]}

    def __str__(self) -> str:
        head = (f"{self.n_members} members, {self.n_nonmembers} non-members"
                + (f", {self.n_groups} models" if self.n_groups > 1 else "")
                + f"; every interval and the bound hold jointly at {self.level:.3g} "
                  f"(each interval at {self.interval_level:.6g})")
        lines = [head, f"{'target FPR':>10}  {'member if score':>15}  {'TPR [interval]':>26}  {'FPR [interval]':>26}"]
        for r in self.rows:
            # the rule is score >= threshold; a threshold just above a score is shown as "> that score"
            below = float(np.nextafter(r.threshold, -np.inf))
            rule = f"> {below:.5g}" if np.isfinite(below) and f"{below:.5g}" == f"{r.threshold:.5g}" else \
                f">= {r.threshold:.5g}"
            lines.append(f"{r.target_fpr:>10.3g}  {rule:>15}  "
                         f"{r.tpr:>7.4f} [{r.tpr_ci[0]:.4f}, {r.tpr_ci[1]:.4f}]  "
                         f"{r.fpr:>7.4f} [{r.fpr_ci[0]:.4f}, {r.fpr_ci[1]:.4f}]")
        how = ("from the intervals (TPR <= e^eps FPR + delta)" if self.method == "intervals" else
               f"one-run analysis (Steinke et al. 2023), {self.one_run['n_correct']} of "
               f"{self.one_run['n_guesses']} guesses right on {self.one_run['n_canaries']} canaries")
        lines.append(f"epsilon lower bound at delta = {self.delta:g}: {math.floor(self.epsilon_lower * 1e4) / 1e4:.4f} "
                     f"({how})")
        return "\n".join(lines)


def _threshold(nonmember_scores, fpr):
    """Smallest threshold with empirical FPR at most ``fpr`` ("member" iff score >= threshold)."""
    out = np.sort(nonmember_scores)[::-1]
    k = int(math.floor(fpr * out.size))          # at most k non-members at or above the threshold
    if k >= out.size:
        return -np.inf
    return float(np.nextafter(out[k], np.inf))   # strictly above the (k+1)-th largest


def _inputs(scores, members, groups):
    raw = np.asarray(scores)
    if raw.dtype.kind == "f" and not np.all(np.isfinite(raw)):
        i = int(np.flatnonzero(~np.isfinite(raw.ravel()))[0])
        raise ValueError(f"scores must be finite numbers: score {i} is {float(raw.ravel()[i])!r}")
    s = np.asarray(_checks.real("scores", scores), dtype=float).ravel()
    if s.size < 2:
        raise ValueError(f"scores must hold at least two scores, got {s.size}")
    mem = np.asarray(members).ravel()
    if mem.shape != s.shape:
        raise ValueError(f"members must give one label per score ({s.size}), got {mem.size}")
    if mem.dtype == bool:
        m = mem
    else:
        mv = np.asarray(_checks.real("members", mem), dtype=float)
        if np.any((mv != 0.0) & (mv != 1.0)):
            bad = mv[(mv != 0.0) & (mv != 1.0)][0]
            raise ValueError(f"members must be 0 or 1 (or True/False), got {bad!r}")
        m = mv == 1.0
    if m.all() or not m.any():
        raise ValueError("members must contain both members (1) and non-members (0)")
    g = None
    if groups is not None:
        g = np.asarray(groups).ravel()
        if g.shape != s.shape:
            raise ValueError(f"groups must give one group per score ({s.size}), got {g.size}")
        if np.unique(g).size < 2:
            raise ValueError("groups must name at least two models (for one model give no groups: in a CSV file, "
                             "drop the group column)")
    return s, m, g


def _candidates(n):
    """The one-run bound's candidate numbers of guesses for ``n`` examples (:data:`ONE_RUN_FRACTIONS`)."""
    return sorted({min(n, max(1, round(f * n))) for f in ONE_RUN_FRACTIONS})


def _one_run_bound(s, m, delta, level_each):
    """Best one-run bound over the candidate numbers of guesses (the highest scores guessed "member")."""
    n = s.size
    # ties broken by keys drawn independently of the data (fixed seed: the same bits on every run): guessing the
    # first rows among equal scores would let the file's order, which may follow membership, make the guesses
    key = np.random.default_rng(20231219).random(n)
    order = np.lexsort((key, -s))
    correct = np.cumsum(m[order])
    cands = _candidates(n)
    best = (0.0, cands[0], int(correct[cands[0] - 1]))
    for r in cands:
        e = one_run_epsilon(r, int(correct[r - 1]), n_canaries=n, delta=delta, level=level_each)
        if e > best[0]:
            best = (e, r, int(correct[r - 1]))
    return best, len(cands)


def audit_scores(scores, members, *, groups=None, fprs=(1e-3, 1e-2, 0.1), delta=1e-5, level=0.95,
                 method="intervals", thresholds=None) -> ScoreAudit:
    r"""Audit a model's membership scores: ROC, TPR and FPR at ``fprs`` with intervals, and ``epsilon_lower``, all
    holding jointly at ``level`` (module docstring). ``scores`` higher = more likely a member; ``members`` 0/1;
    ``groups`` the model of each score for shadow-model audits; ``method`` ``"intervals"`` or ``"one-run"``
    (Steinke et al. 2023; needs members drawn by fair coins); ``thresholds`` one per FPR to use instead of
    choosing them on these scores.

    Examples
    --------
    >>> import numpy as np
    >>> from dpmia import audit
    >>> rng = np.random.default_rng(0)
    >>> members = rng.random(20_000) < 0.5
    >>> scores = rng.normal(2.0 * members, 1.0)          # a Gaussian mechanism with mu = 2
    >>> a = audit.audit_scores(scores, members, fprs=(0.01, 0.1), delta=1e-5)
    >>> round(a.epsilon_lower, 3)                       # the mechanism's true eps(1e-5) is 10.0
    3.302
    >>> round(a.rows[1].tpr, 2)
    0.77
    """
    s, m, g = _inputs(scores, members, groups)
    fl = list(dict.fromkeys(_checks.scalar("fprs", f, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
                            for f in np.atleast_1d(fprs)))       # (a repeated FPR counted once)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, hi_open=True)
    lv = _checks.scalar("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if method not in ("intervals", "one-run"):
        raise ValueError(f"method must be 'intervals' or 'one-run', got {method!r}")
    if method == "intervals" and not fl:
        raise ValueError("fprs must name at least one FPR for method='intervals' (the bound comes from its rows)")
    if thresholds is not None:
        th = [float(_checks.scalar("thresholds", t, allow_inf=True)) for t in np.atleast_1d(thresholds)]
        if len(th) != len(fl):
            raise ValueError(f"thresholds must give one threshold per FPR ({len(fl)}), got {len(th)}")
    n_in, n_out = int(m.sum()), int((~m).sum())
    for f in fl:
        if thresholds is None and n_out * f < 1.0:
            raise ValueError(f"fprs {f:g} needs at least {math.ceil(1.0 / f)} non-members to be measured, "
                             f"got {n_out}")
    n_stat = 2 * len(fl)
    one = None
    if method == "one-run":
        pv = stats.binomtest(n_in, s.size, 0.5).pvalue
        if pv < 1e-6:
            raise ValueError(f"members: the one-run analysis needs each example included by a fair coin; "
                             f"{n_in} members of {s.size} is implausible for fair coins (p = {pv:.1e})")
        n_stat += len(_candidates(s.size))
    each = split_level(lv, max(n_stat, 1))
    rows = []
    for i, f in enumerate(fl):
        t = th[i] if thresholds is not None else _threshold(s[~m], f)
        dec = s >= t
        lo_t = proportion_interval(dec[m], groups=None if g is None else g[m], level=each)
        lo_f = proportion_interval(dec[~m], groups=None if g is None else g[~m], level=each)
        rows.append(FprRow(f, float(t), n_in, n_out, int(dec[m].sum()), int(dec[~m].sum()), lo_t, lo_f))
    if method == "one-run":
        (eps, r, v), _ = _one_run_bound(s, m, d, each)
        one = {"n_guesses": r, "n_correct": v, "n_canaries": int(s.size)}
    else:
        eps = max(r.epsilon_lower(d) for r in rows)
    return ScoreAudit(tuple(rows), empirical_roc(s[m], s[~m]), float(eps), method, lv, each, d, n_in, n_out,
                      1 if g is None else int(np.unique(g).size), one)
