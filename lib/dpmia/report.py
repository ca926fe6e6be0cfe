r"""Every bound of the book for one DP-SGD training run, side by side, with where each comes from.

:func:`risk_report` takes the run as (sampling rate ``q``, noise multiplier ``sigma``, ``steps``) and
the δ at which ε is read; :func:`training_setting` turns (dataset size, batch size, epochs) into
``(q, steps)``. The report lists

* ε(δ): tight (certified bracket of the PLD accountant) and from Rényi DP (Opacus' conversion);
* what that ε implies for *any* (ε, δ)-DP mechanism in the worst-case membership game: Erlingsson et
  al.'s and Humphries et al.'s advantage bounds (Yeom et al.'s and Thudi et al.'s hold for pure ε-DP
  only, and DP-SGD always has δ > 0: they are not rows);
* what holds for this mechanism exactly in that game: the optimal advantage (Mahloujifar et al.,
  Theorem 6), the largest TPR at given FPRs (Corollary 11), the precision of "member" calls at those
  FPRs under the prior, and, for a prior other than ½, the advantage over the best prior guess
  (corrected Theorem 21);
* membership in a random half of a pool (Izzo et al.'s η-MIP): η is half the total variation between
  the outputs with and without the target (Izzo et al., Prop. 2). Coupling each training set that holds
  the target with the one that replaces it gives replace-one pairs, and each such pair is at most the
  sum of two add/remove pairs (through the set without the target), so η ≤ Theorem 6's advantage;
* the Gaussian-DP (CLT) approximation: an estimate, not a bound.

Every row says which game it answers (``game``), the neighbouring relation it is stated for
(``neighbours``), what the attacker is assumed to know (``knows``) and its ``kind`` (certified
bracket, certified bound, or estimate). Rows with a certified bracket give it; the value shown is the
safe end (the upper end). Printed numbers keep six significant digits, upper ends rounded up and lower
ends down.
"""

from __future__ import annotations

import html
import math
import textwrap
from dataclasses import asdict, dataclass, field

import numpy as np

from . import _checks, bounds, gaussian, sgm
from .learning import steps_for_epochs
from .tables import fmt, fmt_bracket, fmt_upper, nobreak_numbers

__all__ = ["risk_report", "training_setting", "quick_risk", "QuickRisk", "RiskReport", "RiskRow", "DEFAULT_FPRS"]

#: False-positive rates at which the report gives the largest TPR.
DEFAULT_FPRS = (1e-3, 1e-2, 0.1)
#: The worst-case membership game: is the target in the training set, with everything else fixed?
WORST_CASE = "worst case: target in or out, all else fixed"
#: What the attacker of the worst-case game knows.
KNOWS_ALL = "every other record and every noisy update"


@dataclass
class RiskRow:
    """One quantity: its safe value, the certified bracket when there is one, its source, a note, and
    the game it answers (``game``, ``neighbours``, what the attacker ``knows``); ``kind`` follows from
    the rest: "certified bracket", "certified bound" or "estimate"."""

    group: str
    quantity: str
    value: float
    lower: float | None = None
    upper: float | None = None
    source: str = ""
    note: str = ""
    estimate: bool = False  #: an approximation (printed to nearest), not a bound (printed rounded up)
    game: str = WORST_CASE
    neighbours: str = "add/remove"
    knows: str = KNOWS_ALL
    kind: str = field(init=False)

    def __post_init__(self):
        self.kind = ("estimate" if self.estimate else
                     "certified bracket" if self.lower is not None else "certified bound")


@dataclass
class RiskReport:
    """The rows of :func:`risk_report` for one setting; HTML in a notebook, text in a shell, a dict for JSON."""

    setting: dict
    rows: list[RiskRow] = field(default_factory=list)

    def value(self, quantity: str) -> float:
        """The value of the row named ``quantity``."""
        for r in self.rows:
            if r.quantity == quantity:
                return r.value
        rows = "; ".join(r.quantity for r in self.rows)
        raise KeyError(f"no row named {quantity!r}. The rows are: {rows}")

    def to_dict(self) -> dict:
        """JSON-ready: the setting and every row (``None`` where a row has no bracket; an infinite
        value as the string ``"inf"``, which standard JSON can hold)."""
        def clean(v):
            return "inf" if isinstance(v, float) and math.isinf(v) else v
        return {"setting": dict(self.setting),
                "rows": [{k: clean(v) for k, v in asdict(r).items()} for r in self.rows]}

    def _cells(self, r: RiskRow):
        val = fmt(r.value, rounding="nearest" if r.estimate else "up")
        bracket = (f"[{fmt(r.lower, rounding='down')}, {fmt(r.upper, rounding='up')}]"
                   if r.lower is not None else "")
        return val, bracket

    def _title(self) -> str:
        s = self.setting
        return (f"DP-SGD with q = {s['q']:g}, sigma = {s['sigma']:g}, T = {s['steps']:,} steps; "
                f"delta = {s['delta']:g}, prior = {s['prior']:g}")

    def _grouped(self):
        """``(heading or None, row, value text, bracket text)``: a heading where a new group starts."""
        group = None
        for r in self.rows:
            heading = r.group if r.group != group else None
            group = r.group
            yield (heading, r, *self._cells(r))

    @staticmethod
    def _game(r: RiskRow) -> str:
        return f"game: {r.game}; neighbours: {r.neighbours}; the attacker knows {r.knows}"

    def __str__(self) -> str:
        lines = [self._title(), ""]
        width = max(len(r.quantity) for r in self.rows)
        for heading, r, val, bracket in self._grouped():
            if heading:
                lines.append(f"{heading}:")
                lines.append(f"  ({self._game(r)})")
            lines.append(f"  {r.quantity:<{width}}  {val:>11}  {bracket:<26} {r.source}"
                         + (f" ({r.note})" if r.note else ""))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        out = [f"<p><strong>{e(self._title())}</strong></p>", '<table class="dpmia-report">',
               "<thead><tr><th>quantity</th><th>value</th><th>certified bracket</th><th>source</th></tr></thead>"
               "<tbody>"]
        for heading, r, val, bracket in self._grouped():
            if heading:
                out.append(f'<tr><td colspan="4"><em>{e(heading)}</em>'
                           f'<div class="dpmia-detail">{e(self._game(r))}</div></td></tr>')
            note = f'<div class="dpmia-detail">{e(r.note)}</div>' if r.note else ""
            out.append(f"<tr><td>{e(r.quantity)}{note}</td><td>{e(val)}</td><td>{nobreak_numbers(e(bracket))}</td>"
                       f"<td>{e(r.source)}</td></tr>")
        out.append("</tbody></table>")
        return "".join(out)


def training_setting(dataset_size, batch_size, epochs):
    """``(q, steps)`` of a run: Poisson rate ``batch_size / dataset_size`` and ``floor(epochs / q)`` steps.

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


def risk_report(q, sigma, steps, delta=1e-5, prior=0.5, *, fprs=DEFAULT_FPRS) -> RiskReport:
    """Every bound of the book for ``steps`` DP-SGD steps at rate ``q`` and noise multiplier ``sigma``.

    ``delta`` is where ε is read (0 < δ < 1); ``prior`` the attacker's prior probability that the
    target was in the training set (0 < p < 1); ``fprs`` the false-positive rates at which the
    largest TPR is reported. See the module docstring for the rows and their sources.

    Examples
    --------
    >>> from dpmia import report
    >>> rep = report.risk_report(0.01, 1.0, 1000, delta=1e-5)
    >>> round(rep.value("advantage, optimal attack"), 4), round(rep.value("epsilon (tight)"), 3)
    (0.161, 1.829)
    """
    qq, ss, tt = sgm.check_run(q, sigma, steps, steps_lo=1)
    d = float(_checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True))
    p = float(_checks.real("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True))
    fs = [float(_checks.real("fprs", f, lo=0.0, hi=1.0, lo_open=True, hi_open=True)) for f in fprs]
    rep = RiskReport({"q": qq, "sigma": ss, "steps": tt, "delta": d, "prior": p})
    add = rep.rows.append

    e_lo, e_hi = sgm.epsilon_bracket(qq, ss, tt, d)
    e_rdp, order = sgm.epsilon_rdp(qq, ss, tt, d)
    g = "privacy parameters (Poisson sampling)"
    add(RiskRow(g, "epsilon (tight)", e_hi, e_lo, e_hi, "PLD accountant, add/remove (Theorem 6's pair)"))
    add(RiskRow(g, "epsilon (Renyi DP)", e_rdp, source="RDP, Balle et al. (2020) conversion (as Opacus)",
                note=f"order {order:g}"))

    g = "implied by (epsilon, delta) for any mechanism"
    add(RiskRow(g, "advantage, Erlingsson et al.", float(bounds.erlingsson_advantage(e_hi, d)),
                source="Erlingsson et al. (2019)"))
    add(RiskRow(g, "advantage, Humphries et al.", float(bounds.humphries_advantage(e_hi, d)),
                source="Humphries et al. (2023), tight for (eps, delta)"))

    g = "this mechanism, exactly (certified)"
    a_lo, a_hi = sgm.advantage_bracket(qq, ss, tt)
    add(RiskRow(g, "advantage, optimal attack", a_hi, a_lo, a_hi, "Mahloujifar et al., Theorem 6"))
    t_lo, t_hi = sgm.tpr_bracket(fs, qq, ss, tt)
    for f, lo, hi in zip(fs, t_lo, t_hi):
        add(RiskRow(g, f"TPR at FPR {f:g}", float(hi), float(lo), float(hi), "Mahloujifar et al., Corollary 11"))
    for f, lo, hi in zip(fs, t_lo, t_hi):
        prec = lambda t, f=f: p * t / (p * t + (1.0 - p) * f)  # noqa: E731 - increasing in t
        add(RiskRow(g, f"precision of 'member' at FPR {f:g}", prec(float(hi)), prec(float(lo)), prec(float(hi)),
                    "Bayes with the TPR above", note=f"prior {p:g}"))
    if p != 0.5:
        add(RiskRow(g, "advantage over the prior guess", sgm.prior_advantage(qq, ss, tt, p),
                    source="Mahloujifar et al., Theorem 21 (corrected)", note=f"prior {p:g}"))

    g = "membership in a random half of a pool (eta-MIP)"
    add(RiskRow(g, "eta (best accuracy 1/2 + eta)", a_hi, source="Izzo et al., Prop. 2 (eta = TV/2), coupled",
                note="replace-one pairs, each at most twice Theorem 6's advantage", game="random half of a pool",
                neighbours="replace-one (coupling in and out sets)",
                knows="the pool and the algorithm, not which half was used"))

    g = "Gaussian-DP approximation (CLT; an estimate, not a bound)"
    mu = float(sgm.clt_mu(qq, ss, tt))
    add(RiskRow(g, "mu (GDP)", mu, source="CLT, Dong et al. / Bu et al.", estimate=True))
    add(RiskRow(g, "advantage (GDP)", float(sgm.clt_advantage(qq, ss, tt)), source="2 Phi(mu/2) - 1", estimate=True))
    eps_gdp = float(gaussian.epsilon(d, mu)) if 0 < mu < math.inf else (0.0 if mu == 0 else math.inf)
    add(RiskRow(g, "epsilon (GDP)", eps_gdp, source="Balle and Wang's delta(eps) at mu", estimate=True,
                note="" if mu < 10 else "mu is large: far outside the CLT regime, not meaningful"))
    return rep


@dataclass
class QuickRisk:
    """The live calculator's read-outs for one run (:func:`quick_risk`): certified brackets at the
    accuracy a slider needs, the optimal attack's ROC and the region any (ε, δ)-DP mechanism allows."""

    q: float
    sigma: float
    steps: int
    delta: float
    epsilon: tuple          #: certified bracket on the tight ε(δ)
    advantage: tuple        #: certified bracket on Theorem 6's advantage
    fpr: np.ndarray         #: FPR grid of the curves
    tpr: np.ndarray         #: certified upper bound on the largest TPR (Corollary 11; never above ``tpr_dp``)
    tpr_dp: np.ndarray      #: largest TPR of any (ε, δ)-DP mechanism at the upper end of ε
    tpr_gdp: np.ndarray     #: Gaussian-DP (CLT) estimate of the ROC, not a bound
    tpr_1e3: tuple          #: certified bracket on the largest TPR at FPR 1e-3

    def summary(self) -> str:
        """One line: brackets rounded outwards (the printed numbers still hold the value), 4 digits."""
        return (f"ε({self.delta:g}) in {fmt_bracket(*self.epsilon)} | advantage in {fmt_bracket(*self.advantage)} | "
                f"TPR at FPR 1e-3 in {fmt_bracket(*self.tpr_1e3)} | advantage allowed by (ε, δ) "
                f"(Humphries et al.) ≤ {fmt_upper(bounds.humphries_advantage(self.epsilon[1], self.delta))}")

    def plot(self, ax, *, title=None, legend_fontsize=8):
        """The ROC picture on log axes: the (ε, δ) region, the optimal attack's upper curve, the GDP estimate."""
        from . import plotting  # matplotlib only when drawing (keeps the command fast)
        plotting.roc_axes(ax, log=True, fpr_min=float(self.fpr[0]),
                          title=None if title is None else "\n".join(textwrap.wrap(title, 60)))
        ax.fill_between(self.fpr, self.fpr, self.tpr_dp, color=plotting.COLORS["bound"], alpha=0.12,
                        label=f"(ε, δ) region, ε ≤ {fmt_upper(self.epsilon[1], 3)} at δ = {self.delta:g}")
        ax.plot(self.fpr, self.tpr, color=plotting.COLORS["exact"], label="best attack (Corollary 11)")
        ax.plot(self.fpr, self.tpr_gdp, color=plotting.COLORS["neutral"], ls="-.", lw=1, label="GDP estimate")
        ax.legend(loc="lower right", fontsize=legend_fontsize)
        return ax

    def figure(self, *, title=None, figsize=(6.4, 4.0)):
        """The calculator's figure (:meth:`plot` on a :func:`dpmia.plotting.widget_figure`, fixed
        margins that hold the labels, lightened for a quick redraw)."""
        from . import plotting
        fig, ax = plotting.widget_figure(figsize=figsize, crop=False)
        lines = len(textwrap.wrap(title, 60)) if title else 1
        fig.subplots_adjust(left=0.15, bottom=0.14, top=0.9 - 0.055 * (max(lines, 1) - 1))
        self.plot(ax, title=title)
        plotting.lighten(fig)
        return fig


def quick_risk(q, sigma, steps, delta=1e-5, *, fpr_min=1e-5, points=50, tol_eps=1e-2, tol=1e-4) -> QuickRisk:
    """The read-outs of an interactive calculator for ``steps`` DP-SGD steps at rate ``q``, noise ``sigma``.

    Certified brackets on ε(δ) (target relative width ``tol_eps``) and on the advantage and TPR
    (target width ``tol``: absolute, or 1 % of ``tol``/1e-4 relative below 0.01, as in
    :func:`dpmia.sgm.advantage_bracket`), a certified upper bound on the largest TPR on ``points``
    log-spaced FPRs from ``fpr_min`` (in [1e-12, 0.1]) to 1 (Mahloujifar et al., Corollary 11; the
    smaller of the accountant's bound and the region of an (ε, δ)-DP mechanism at the upper end of ε,
    both certified), that region (Kairouz et al.) and the GDP estimate (Dong et al.). The widths are
    looser than :func:`risk_report`'s (which keeps 6 digits) so that a slider answers quickly; every
    number is still certified and printed rounded outwards. ``q``, ``sigma``, ``steps`` and ``delta``
    as in :func:`risk_report` (``sigma`` in [0.01, 1e6], ``steps`` >= 1).
    """
    qq, ss, tt = sgm.check_run(q, sigma, steps, steps_lo=1)
    d = float(_checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True))
    f0 = float(_checks.real("fpr_min", fpr_min, lo=1e-12, hi=1e-1))
    n = _checks.integer("points", points, lo=2, hi=10_000)
    te = float(_checks.real("tol_eps", tol_eps, lo=1e-12, hi=1.0))
    tp = float(_checks.real("tol", tol, lo=1e-12, hi=1.0))
    eps = sgm.epsilon_bracket(qq, ss, tt, d, tol=te)
    adv = sgm.advantage_bracket(qq, ss, tt, tol=tp)
    ff = np.logspace(math.log10(f0), 0.0, n)
    t_lo, t_hi = sgm.tpr_bracket(np.append(ff, 1e-3), qq, ss, tt, tol=tp)
    mu = float(sgm.clt_mu(qq, ss, tt))
    # the run is (eps_hi, delta)-DP, so its ROC also lies under that region: both are certified upper bounds
    region = np.minimum(bounds.tpr_at_fpr(np.append(ff, 1e-3), eps[1], d), 1.0)
    t_up = np.minimum(np.asarray(t_hi, float), region)
    return QuickRisk(qq, ss, tt, d, eps, adv, ff, t_up[:-1], region[:-1], gaussian.tpr_at_fpr(ff, mu),
                     (min(float(t_lo[-1]), float(t_up[-1])), float(t_up[-1])))
