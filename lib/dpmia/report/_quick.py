"""The live calculator's read-outs for one run (:func:`quick_risk`)."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

import numpy as np

from .. import _checks, bounds, gaussian, sgm
from ..tables import fmt_bracket, fmt_upper
from ._rows import gdp_rows


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
    neighbours: str = "add-remove"   #: the neighbouring relation of the worst-case game
    sampler: str = "poisson"         #: how batches were drawn

    def summary(self) -> str:
        """One line: brackets rounded outwards (the printed numbers still hold the value), 4 digits."""
        return (f"ε({self.delta:g}) in {fmt_bracket(*self.epsilon)} | advantage in {fmt_bracket(*self.advantage)} | "
                f"TPR at FPR 1e-3 in {fmt_bracket(*self.tpr_1e3)} | advantage allowed by (ε, δ) "
                f"(Humphries et al.) ≤ {fmt_upper(bounds.humphries_advantage(self.epsilon[1], self.delta))}")

    def plot(self, ax, *, title=None, legend_fontsize=8):
        """The ROC picture on log axes: the (ε, δ) region, the optimal attack's upper curve, the GDP estimate."""
        from .. import plotting  # matplotlib only when drawing (keeps the command fast)
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
        from .. import plotting
        fig, ax = plotting.widget_figure(figsize=figsize, crop=False)
        lines = len(textwrap.wrap(title, 60)) if title else 1
        fig.subplots_adjust(left=0.15, bottom=0.14, top=0.9 - 0.055 * (max(lines, 1) - 1))
        self.plot(ax, title=title)
        plotting.lighten(fig)
        return fig


def quick_risk(q, sigma, steps, delta=1e-5, *, fpr_min=1e-5, points=50, tol_eps=1e-2, tol=1e-4,
               neighbours="add-remove", sampler="poisson") -> QuickRisk:
    """The read-outs of an interactive calculator for ``steps`` DP-SGD steps at rate ``q``, noise ``sigma``.

    Certified brackets on ε(δ) (target relative width ``tol_eps``) and on the advantage and TPR
    (target width ``tol``: absolute, or 1 % of ``tol``/1e-4 relative below 0.01, as in
    :func:`dpmia.sgm.advantage_bracket`), a certified upper bound on the largest TPR on ``points``
    log-spaced FPRs from ``fpr_min`` (in [1e-12, 0.1]) to 1 (Mahloujifar et al., Corollary 11; the
    smaller of the accountant's bound and the region of an (ε, δ)-DP mechanism at the upper end of ε,
    both certified), that region (Kairouz et al.) and the GDP estimate (Dong et al.). The widths are
    looser than :func:`risk_report`'s (which keeps 6 digits) so that a slider answers quickly; every
    number is still certified and printed rounded outwards. ``q``, ``sigma``, ``steps`` and ``delta``
    as in :func:`risk_report` (``sigma`` in [0.01, 1e6], ``steps`` >= 1), and so are ``neighbours`` and
    ``sampler`` (``"poisson"`` or ``"fixed"``: a shuffled run has no certified curve to draw).
    """
    run = sgm.check_run(q, sigma, steps, steps_lo=1, neighbours=neighbours, sampler=sampler)
    qq, ss, tt = run
    kw = {"neighbours": run.neighbours, "sampler": run.sampler}
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    f0 = _checks.scalar("fpr_min", fpr_min, lo=1e-12, hi=1e-1)
    n = _checks.integer("points", points, lo=2, hi=10_000)
    te = _checks.scalar("tol_eps", tol_eps, lo=1e-12, hi=1.0)
    tp = _checks.scalar("tol", tol, lo=1e-12, hi=1.0)
    eps = sgm.epsilon_bracket(qq, ss, tt, d, tol=te, **kw)
    adv = sgm.advantage_bracket(qq, ss, tt, tol=tp, **kw)
    ff = np.logspace(math.log10(f0), 0.0, n)
    t_lo, t_hi = sgm.tpr_bracket(np.append(ff, 1e-3), qq, ss, tt, tol=tp, **kw)
    mu = float(gdp_rows(run, d)[0].value)
    # the run is (eps_hi, delta)-DP, so its ROC also lies under that region: both are certified upper bounds
    region = np.minimum(bounds.tpr_at_fpr(np.append(ff, 1e-3), eps[1], d), 1.0)
    t_up = np.minimum(np.asarray(t_hi, float), region)
    return QuickRisk(qq, ss, tt, d, eps, adv, ff, t_up[:-1], region[:-1], gaussian.tpr_at_fpr(ff, mu),
                     (min(float(t_lo[-1]), float(t_up[-1])), float(t_up[-1])), run.neighbours, run.sampler)
