r"""Every bound of the book for one DP-SGD training run, side by side, with where each comes from.

:func:`risk_report` takes the run as (sampling rate ``q``, noise multiplier ``sigma``, ``steps``) and
the δ at which ε is read; :func:`training_setting` turns (dataset size, batch size, epochs) into
``(q, steps)``. The report lists

* ε(δ): tight (certified bracket of the PLD accountant) and from Rényi DP (Opacus' conversion);
* what that ε implies for *any* (ε, δ)-DP mechanism: Yeom et al.'s, Erlingsson et al.'s and Humphries
  et al.'s advantage bounds, Izzo et al.'s η-MIP (Theorem 4), Thudi et al.'s posterior bound
  (Theorem 1; for pure ε-DP only);
* what holds for this mechanism exactly: the optimal advantage (Mahloujifar et al., Theorem 6), the
  largest TPR at given FPRs (Corollary 11), the precision of "member" calls at those FPRs under the
  prior, and the advantage over the best prior guess (corrected Theorem 21);
* the Gaussian-DP (CLT) approximation: an estimate, not a bound.

Rows with a certified bracket give it; the value shown is the safe end (the upper end). Printed
numbers keep six significant digits, upper ends rounded up and lower ends down.
"""

from __future__ import annotations

import html
import math
from dataclasses import asdict, dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

from . import _checks, bounds, gaussian, mip
from .accountant import advantage_bracket, epsilon_bracket, prior_advantage, tpr_bracket
from .learning import steps_for_epochs
from .rdp import epsilon_rdp
from .sgmstep import check_args
from .tables import nobreak_numbers
from .tvbounds import clt_advantage, clt_mu

__all__ = ["risk_report", "training_setting", "RiskReport", "RiskRow", "DEFAULT_FPRS"]

#: False-positive rates at which the report gives the largest TPR.
DEFAULT_FPRS = (1e-3, 1e-2, 0.1)


@dataclass
class RiskRow:
    """One quantity: its safe value, the certified bracket when there is one, its source and a note."""

    group: str
    quantity: str
    value: float
    lower: float | None = None
    upper: float | None = None
    source: str = ""
    note: str = ""
    estimate: bool = False  #: an approximation (printed to nearest), not a bound (printed rounded up)


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
        raise KeyError(f"no row {quantity!r}; rows: {[r.quantity for r in self.rows]}")

    def to_dict(self) -> dict:
        """JSON-ready: the setting and every row (``None`` where a row has no bracket; an infinite
        value as the string ``"inf"``, which standard JSON can hold)."""
        def clean(v):
            return "inf" if isinstance(v, float) and math.isinf(v) else v
        return {"setting": dict(self.setting),
                "rows": [{k: clean(v) for k, v in asdict(r).items()} for r in self.rows]}

    def _cells(self, r: RiskRow):
        val = _fmt(r.value, None if r.estimate else ROUND_CEILING)
        bracket = (f"[{_fmt(r.lower, ROUND_FLOOR)}, {_fmt(r.upper, ROUND_CEILING)}]"
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

    def __str__(self) -> str:
        lines = [self._title(), ""]
        width = max(len(r.quantity) for r in self.rows)
        for heading, r, val, bracket in self._grouped():
            if heading:
                lines.append(f"{heading}:")
            lines.append(f"  {r.quantity:<{width}}  {val:>11}  {bracket:<26} {r.source}"
                         + (f" ({r.note})" if r.note else ""))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        out = [f"<p><strong>{e(self._title())}</strong></p>", '<table class="dpmia-report">',
               "<thead><tr><th>quantity</th><th>value</th><th>certified bracket</th><th>source</th></tr></thead><tbody>"]
        for heading, r, val, bracket in self._grouped():
            if heading:
                out.append(f'<tr><td colspan="4"><em>{e(heading)}</em></td></tr>')
            note = f'<div class="dpmia-detail">{e(r.note)}</div>' if r.note else ""
            out.append(f"<tr><td>{e(r.quantity)}{note}</td><td>{e(val)}</td><td>{nobreak_numbers(e(bracket))}</td>"
                       f"<td>{e(r.source)}</td></tr>")
        out.append("</tbody></table>")
        return "".join(out)


def _fmt(x, rounding=None, digits=6) -> str:
    """``digits`` significant digits; an upper bound is rounded up and a lower bound down, so that the
    printed number is still a bound (``rounding`` None: to nearest, for estimates)."""
    if x is None:
        return ""
    x = float(x)
    if math.isinf(x) or x == 0:
        return "inf" if x > 0 else ("-inf" if x < 0 else "0")
    exp = math.floor(math.log10(abs(x)))
    q = Decimal(1).scaleb(exp - digits + 1)
    d = Decimal(x).quantize(q, rounding=rounding or ROUND_HALF_EVEN)
    if -4 <= exp < 6:
        return f"{d:f}"
    return f"{d:.{digits - 1}e}"


def training_setting(dataset_size, batch_size, epochs):
    """``(q, steps)`` of a run: Poisson rate ``batch_size / dataset_size`` and ``floor(epochs / q)`` steps."""
    n = _checks.integer("dataset_size", dataset_size, lo=1)
    b = _checks.integer("batch_size", batch_size, lo=1, hi=n)
    q = b / n
    return q, steps_for_epochs(q, epochs)


def risk_report(q, sigma, steps, delta=1e-5, prior=0.5, *, fprs=DEFAULT_FPRS) -> RiskReport:
    """Every bound of the book for ``steps`` DP-SGD steps at rate ``q`` and noise multiplier ``sigma``.

    ``delta`` is where ε is read (0 < δ < 1); ``prior`` the attacker's prior probability that the
    target was in the training set (0 < p < 1); ``fprs`` the false-positive rates at which the
    largest TPR is reported. See the module docstring for the rows and their sources.
    """
    qq, ss, tt = check_args(q, sigma, steps, steps_lo=1)
    d = float(_checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True))
    p = float(_checks.real("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True))
    fs = [float(_checks.real("fprs", f, lo=0.0, hi=1.0, lo_open=True, hi_open=True)) for f in fprs]
    rep = RiskReport({"q": qq, "sigma": ss, "steps": tt, "delta": d, "prior": p})
    add = rep.rows.append

    e_lo, e_hi = epsilon_bracket(qq, ss, tt, d)
    e_rdp, order = epsilon_rdp(qq, ss, tt, d)
    g = "privacy parameters"
    add(RiskRow(g, "epsilon (tight)", e_hi, e_lo, e_hi, "PLD accountant, add/remove (Theorem 6's pair)"))
    add(RiskRow(g, "epsilon (Renyi DP)", e_rdp, source="RDP, Balle et al. (2020) conversion (as Opacus)",
                note=f"order {order:g}"))

    g = "implied by (epsilon, delta) for any mechanism"
    add(RiskRow(g, "advantage, Yeom et al.", float(bounds.yeom_advantage(e_hi)), source="Yeom et al. (2018)",
                note="min(1, e^eps - 1); for pure eps-DP (ignores delta)"))
    add(RiskRow(g, "advantage, Erlingsson et al.", float(bounds.erlingsson_advantage(e_hi, d)),
                source="Erlingsson et al. (2019)"))
    add(RiskRow(g, "advantage, Humphries et al.", float(bounds.humphries_advantage(e_hi, d)),
                source="Humphries et al. (2023), tight for (eps, delta)"))
    add(RiskRow(g, "eta-MIP (best accuracy 1/2 + eta)", float(mip.eta_from_dp(e_hi, d)),
                source="Izzo et al., Theorem 4"))
    add(RiskRow(g, "posterior of 'member', Thudi et al.", float(bounds.posterior_upper(e_hi, p)),
                source="Thudi et al., Theorem 1",
                note="holds for pure eps-DP only; with delta > 0 it can fail (Thudi et al., Sec. 5.2)"))

    g = "this mechanism, exactly (certified)"
    a_lo, a_hi = advantage_bracket(qq, ss, tt)
    add(RiskRow(g, "advantage, optimal attack", a_hi, a_lo, a_hi, "Mahloujifar et al., Theorem 6"))
    t_lo, t_hi = tpr_bracket(fs, qq, ss, tt)
    for f, lo, hi in zip(fs, t_lo, t_hi):
        add(RiskRow(g, f"TPR at FPR {f:g}", float(hi), float(lo), float(hi), "Mahloujifar et al., Corollary 11"))
    for f, lo, hi in zip(fs, t_lo, t_hi):
        prec = lambda t: p * t / (p * t + (1.0 - p) * f)  # noqa: E731 - increasing in t
        add(RiskRow(g, f"precision of 'member' at FPR {f:g}", prec(float(hi)), prec(float(lo)), prec(float(hi)),
                    "Bayes with the TPR above", note=f"prior {p:g}"))
    if p != 0.5:
        add(RiskRow(g, "advantage over the prior guess", prior_advantage(qq, ss, tt, p),
                    source="Mahloujifar et al., Theorem 21 (corrected)", note=f"prior {p:g}"))

    g = "Gaussian-DP approximation (CLT; an estimate, not a bound)"
    mu = float(clt_mu(qq, ss, tt))
    add(RiskRow(g, "mu (GDP)", mu, source="CLT, Dong et al. / Bu et al.", estimate=True))
    add(RiskRow(g, "advantage (GDP)", float(clt_advantage(qq, ss, tt)), source="2 Phi(mu/2) - 1", estimate=True))
    eps_gdp = float(gaussian.epsilon(d, mu)) if 0 < mu < math.inf else (0.0 if mu == 0 else math.inf)
    add(RiskRow(g, "epsilon (GDP)", eps_gdp, source="Balle and Wang's delta(eps) at mu", estimate=True,
                note="" if mu < 10 else "mu is large: far outside the CLT regime, not meaningful"))
    return rep
