r"""The rows of the risk report, group by group; each names the game it answers.

Sources and derivations (the chapter that treats each in brackets):

* **ε(δ)** of the run under its neighbouring relation and sampler (the certified accountant,
  :mod:`dpmia.sgm`), and Rényi DP's (add/remove, Poisson, as Opacus reports it) [3];
* **what any (ε, δ)-DP mechanism allows** in the worst-case game: Erlingsson et al.'s and Humphries
  et al.'s advantage bounds (Yeom et al.'s and Thudi et al.'s hold for pure ε-DP only; DP-SGD always has
  δ > 0) [2];
* **the optimal attack on this run**: Theorem 6's advantage, Corollary 11's TPR at each FPR, the
  precision of "member" calls under the prior, the advantage over the best prior guess [3];
* **the other worst-case game** (add/remove against replace-one) for the same run;
* **a random half of a pool** (Izzo et al.'s η-MIP) [5]: the best accuracy is
  :math:`\tfrac12 + \tfrac12\mathrm{TV}(P_{\rm in}, P_{\rm out})` (their Prop. 2), the two laws mixtures
  over training sets with and without the target. Coupling each set with the target to the one that
  replaces it by another pool member (a replace-one pair) gives
  :math:`\eta \le \tfrac12\mathrm{TV}_{\rm replace}` at the certified upper end; their Theorem 4 at the
  replace-one ε is the looser ε-only route;
* **attackers who know less** [4, 6]: Kaissis et al.'s energy (GLRT) attacker, who does not know the
  direction of the target's gradient, under per-step subsampling (needs the model's dimension), and
  Lowy et al.'s practical membership privacy, bounded by the replace-one ε (its tighter value needs
  the data distribution);
* **risks beyond membership** from the same certified trade-off curve: reconstruction (Hayes et al.
  2023: success at most the TPR at FPR equal to the attack's baseline success, by concavity of the
  blow-up function), attribute inference and re-identification (Kulynych et al. 2025, the same bound
  with their baselines), Bayes security :math:`\beta^* = 1 - \mathrm{advantage}` (Chatzikokolakis et al.
  2023; Cherubin et al. 2024);
* the Gaussian-DP (CLT) approximation: an estimate, not a bound.
"""

from __future__ import annotations

import math

from .. import bounds, gaussian, glrt, mip, sgm
from ._table import WORST_CASE, RiskRow

_REL = {"add-remove": "add/remove", "replace-one": "replace-one"}


def _label(run):
    """The accountant's name for the run's game."""
    if run.sampler == "fixed":
        return ("fixed-size batches, replace-one (upper: Balle et al. 2018 at sigma/2, Dong et al. 2022 Thm 4.2; "
                "lower: a dataset that attains it at one step)")
    return f"Poisson sampling, {_REL[run.neighbours]}"


def privacy_rows(run, d):
    """ε(δ) of the run, certified; Rényi DP's for add/remove with Poisson sampling."""
    kw = {"neighbours": run.neighbours, "sampler": run.sampler}
    e_lo, e_hi = sgm.epsilon_bracket(run.q, run.sigma, run.steps, d, **kw)
    g = "privacy parameters"
    source = f"PLD accountant: {_label(run)}"
    if run.neighbours == "add-remove" and run.sampler == "poisson" and \
            e_hi >= sgm.epsilon_rdp_certified([(run.q, run.sigma, run.steps)], d)[0]:
        # the accountant's upper end is never above Renyi accounting's: say when that one answered
        source += "; upper end from Renyi accounting (integer orders), which no grid improved here"
    rows = [RiskRow(g, "epsilon (tight)" if run.sampler == "poisson" else "epsilon", e_hi, e_lo, e_hi,
                    source, neighbours=_REL[run.neighbours])]
    if run.neighbours == "add-remove":
        e_rdp, order = sgm.epsilon_rdp(run.q, run.sigma, run.steps, d)
        rows.append(RiskRow(g, "epsilon (Renyi DP)", e_rdp, source="RDP, Balle et al. (2020) conversion (as Opacus)",
                            note=f"order {order:g}"))
    return rows, (e_lo, e_hi)


def implied_rows(run, d, e_hi):
    """What any (ε, δ)-DP mechanism allows in the worst-case game of the run's relation."""
    g = "implied by (epsilon, delta) for any mechanism"
    nb = _REL[run.neighbours]
    return [RiskRow(g, "advantage, Erlingsson et al.", float(bounds.erlingsson_advantage(e_hi, d)),
                    source="Erlingsson et al. (2019)", neighbours=nb),
            RiskRow(g, "advantage, Humphries et al.", float(bounds.humphries_advantage(e_hi, d)),
                    source="Humphries et al. (2020), tight for (eps, delta)", neighbours=nb)]


def attack_rows(run, fs, p):
    """The optimal attack on the run: advantage, TPR at each FPR, precision, the prior's advantage."""
    kw = {"neighbours": run.neighbours, "sampler": run.sampler}
    fixed = run.sampler == "fixed"
    nb = _REL[run.neighbours]
    g = "this run, the optimal attack (certified)"
    a_lo, a_hi = sgm.advantage_bracket(run.q, run.sigma, run.steps, **kw)
    src = "Mahloujifar et al., Theorem 6" if not fixed else "the bound of the privacy row; a dataset below"

    def row(name, hi, lo, source, **extra):
        return RiskRow(g, name, hi, lo, hi, source, neighbours=nb, **extra)

    rows = [row("advantage, optimal attack", a_hi, a_lo, src)]
    t_lo, t_hi = sgm.tpr_bracket(fs, run.q, run.sigma, run.steps, **kw)
    for f, lo, hi in zip(fs, t_lo, t_hi):
        rows.append(row(f"TPR at FPR {f:g}", float(hi), float(lo), "Mahloujifar et al., Corollary 11"))
    for f, lo, hi in zip(fs, t_lo, t_hi):
        prec = lambda t, f=f: p * t / (p * t + (1.0 - p) * f)  # noqa: E731 - increasing in t
        rows.append(row(f"precision of 'member' at FPR {f:g}", prec(float(hi)), prec(float(lo)),
                        "Bayes with the TPR above"))
        rows[-1].note = (rows[-1].note + "; " if rows[-1].note else "") + f"prior {p:g}"
    if p != 0.5:
        prior_adv = sgm.prior_advantage(run.q, run.sigma, run.steps, p, **kw)
        rows.append(RiskRow(g, "advantage over the prior guess", prior_adv,
                            source="Mahloujifar et al., Theorem 21 (corrected)", note=f"prior {p:g}", neighbours=nb))
    return rows, (a_lo, a_hi), (t_lo, t_hi)


def other_game_rows(run, d):
    """The same Poisson run in the other worst-case game (add/remove against replace-one)."""
    if run.sampler != "poisson":
        return []
    other = "replace-one" if run.neighbours == "add-remove" else "add-remove"
    g = f"the same run, worst case under {_REL[other]} neighbours"
    a_lo, a_hi = sgm.advantage_bracket(run.q, run.sigma, run.steps, neighbours=other)
    e_lo, e_hi = sgm.epsilon_bracket(run.q, run.sigma, run.steps, d, neighbours=other)
    src = f"PLD accountant: Poisson sampling, {_REL[other]}"
    return [RiskRow(g, f"advantage ({_REL[other]})", a_hi, a_lo, a_hi, src, neighbours=_REL[other]),
            RiskRow(g, f"epsilon ({_REL[other]})", e_hi, e_lo, e_hi, src, neighbours=_REL[other])]


def mip_rows(run, d):
    """η of Izzo et al.'s random-half game: half the replace-one TV, and Theorem 4 at the replace-one ε."""
    kw = {"neighbours": "replace-one", "sampler": run.sampler}
    r_lo, r_hi = sgm.advantage_bracket(run.q, run.sigma, run.steps, **kw)
    e_hi = sgm.epsilon(run.q, run.sigma, run.steps, d, **kw)
    g = "membership in a random half of a pool (eta-MIP, Izzo et al.)"
    game = dict(game="random half of a pool", neighbours="replace-one (coupling in- and out-sets)",
                knows="the pool and the algorithm, not which half was used")
    return [RiskRow(g, "eta (best accuracy 1/2 + eta)", 0.5 * r_hi,
                    source="Izzo et al., Prop. 2 (accuracy 1/2 + TV/2), coupled: eta <= TV(replace-one)/2",
                    note="2 eta, the advantage in this game, is the replace-one worst case's", **game),
            RiskRow(g, "eta, Theorem 4 at the replace-one epsilon", float(mip.eta_from_dp(e_hi, d)),
                    source="Izzo et al., Theorem 4 (epsilon-only route, looser)", **game)]


def weaker_attacker_rows(run, d, dimension, e_replace):
    """Kaissis et al.'s energy attacker (needs the dimension) and Lowy et al.'s PMP; notes where they do not apply."""
    rows, notes = [], []
    if dimension is None:
        notes.append("GLRT attacker (Kaissis et al., chapter 4): give the model's dimension (dimension=..., "
                     "--dimension) for the epsilon of an attacker who does not know the direction of the target's "
                     "gradient.")
    elif run.neighbours != "add-remove" or run.sampler != "poisson":
        notes.append("GLRT attacker (Kaissis et al., chapter 4): its subsampled composition is stated for "
                     "add/remove neighbours with Poisson sampling; see the add/remove report of this run.")
    else:
        try:
            lo, hi = glrt.energy_epsilon_bracket(d, dimension, 1.0 / run.sigma ** 2, run.q, run.steps)
            rows.append(RiskRow("attackers who know less (chapters 4 and 6)", "epsilon, energy (GLRT) attacker", hi,
                                lo, hi, "Kaissis et al., Sec. 4.6 reading B (per-step subsampling, composed)",
                                note=f"model dimension {dimension}", game="unknown direction",
                                knows="every other record and the norm of each noisy update, not the direction of "
                                      "the target's gradient"))
        except ValueError as exc:
            notes.append(f"GLRT attacker (Kaissis et al.): not computed at dimension {dimension} ({exc}).")
    rows.append(RiskRow("attackers who know less (chapters 4 and 6)", "PMP epsilon (at most)", e_replace,
                        source="Lowy et al., Prop. 5: (eps, delta)-DP under replace-one implies (eps, delta)-PMP",
                        note="the eta row bounds this game's accuracy too; PMP's own, tighter epsilon needs the "
                             "parent set and exists for single releases only (Prop. 12; PMP has no composition "
                             "theorem), so for a run of many steps this is what holds (chapter 6)",
                        game="random half of a known parent set of 2n records", neighbours="replace-one",
                        knows="the parent set and the algorithm, not which half was trained on"))
    return rows, notes


def beyond_rows(run, baseline, adv):
    """Reconstruction / attribute inference / re-identification at the baseline, and Bayes security."""
    kw = {"neighbours": run.neighbours, "sampler": run.sampler}
    nb = _REL[run.neighbours]
    g = "risks beyond membership (the same certified curve)"
    lo, hi = sgm.tpr_bracket(baseline, run.q, run.sigma, run.steps, **kw)
    game = dict(game="guess the target's value (reconstruction, an attribute, who it is)",
                knows="every other record and a prior over the target's value whose best blind guess succeeds "
                      f"with probability {baseline:g}")
    rows = [RiskRow(g, f"reconstruction-type success, baseline {baseline:g}", float(hi), float(lo), float(hi),
                    "Hayes et al. (2023), Kulynych et al. (2025): TPR at FPR = baseline", neighbours=nb,
                    note="reconstruction, attribute inference or re-identification", **game)]
    a_lo, a_hi = adv
    rows.append(RiskRow(g, "Bayes security (1 - advantage)", 1.0 - a_hi, 1.0 - a_hi, 1.0 - a_lo,
                        "Chatzikokolakis et al. (2023); Cherubin et al. (2024)",
                        note="the larger the more secure: the certified end is the lower one", neighbours=nb,
                        safe="lower"))
    return rows


def gdp_rows(run, d):
    """The Gaussian-DP (CLT) estimate: second-order variance of the privacy loss (not a bound)."""
    q, s, t = run
    if run.sampler == "fixed":
        s = 0.5 * s                       # the bounding pair
    mu2 = 1.0 / (s * s)
    if mu2 > 700:
        mu = math.inf
    elif run.neighbours == "replace-one" and run.sampler == "poisson":
        mu = q * math.sqrt(t * 2.0 * (math.exp(mu2) - math.exp(-mu2)))   # Var L = q^2 4 sinh(mu^2) per step
    elif run.sampler == "poisson":
        mu = float(sgm.clt_mu(q, s, t))
    else:
        mu = q * math.sqrt(t * math.expm1(mu2))
    g = "Gaussian-DP approximation (CLT; an estimate, not a bound)"
    eps = float(gaussian.epsilon(d, mu)) if 0 < mu < 1e6 else (0.0 if mu == 0 else math.inf)
    nb = _REL[run.neighbours]
    return [RiskRow(g, "mu (GDP)", mu, source="CLT, Dong et al. / Bu et al.", estimate=True, neighbours=nb),
            RiskRow(g, "advantage (GDP)", float(gaussian.tv(mu)) if math.isfinite(mu) else 1.0,
                    source="2 Phi(mu/2) - 1", estimate=True, neighbours=nb),
            RiskRow(g, "epsilon (GDP)", eps, source="Balle and Wang's delta(eps) at mu", estimate=True, neighbours=nb,
                    note="" if mu < 10 else "mu is large: far outside the CLT regime, not meaningful")]


def shuffled_rows(run, d, fs):
    """A shuffled run: certified lower bounds (largest-update attack), the loose certified upper bound without
    amplification (replace-one), and the Poisson numbers, which do not hold for it."""
    batches = max(1, round(1.0 / run.q))
    epochs = max(1, run.steps // batches)
    nb = _REL[run.neighbours]
    g = "shuffled epochs: what one attack certainly achieves"
    src = "largest-update attack on worst-case datasets (exact laws)"
    rows = [RiskRow(g, "advantage, at least", sgm.shuffled_advantage_lower(batches, epochs, run.sigma,
                                                                          neighbours=run.neighbours),
                    source=src, kind="certified lower bound", neighbours=nb, safe="lower",
                    note=f"{epochs} epochs of {batches} batches")]
    for f in fs:
        rows.append(RiskRow(g, f"TPR at FPR {f:g}, at least",
                            sgm.shuffled_tpr_lower(f, batches, epochs, run.sigma, neighbours=run.neighbours),
                            source=src, kind="certified lower bound", neighbours=nb, safe="lower"))
    notes = ["Shuffled epochs: no tight accountant covers them, and Chua et al. (ICML 2024) show settings where "
             "their privacy is far worse than the Poisson number. The lower bounds are what one attack achieves on "
             "worst-case datasets; the truth lies at or above them."]
    if run.neighbours == "replace-one":
        mu = sgm.shuffled_gdp_mu(epochs, run.sigma)
        g1 = "shuffled epochs: certified without amplification (loose)"
        rows += [RiskRow(g1, "advantage, at most", float(gaussian.tv(mu)), source=f"{mu:.4g}-GDP: 2 sqrt(E)/sigma",
                         neighbours=nb, note="ignores what shuffling hides"),
                 RiskRow(g1, "epsilon, at most", float(gaussian.epsilon(d, mu)) if mu < 1e6 else math.inf,
                         source="the Gaussian mechanism at that mu", neighbours=nb)]
    else:
        notes.append("Without amplification a shuffled run's add/remove guarantee needs the batch layout (removing a "
                     "record shifts the later batches); none is given here.")
    g2 = "had the run used Poisson sampling (NOT a bound for a shuffled run)"
    kw = {"neighbours": run.neighbours}
    rows += [RiskRow(g2, "advantage (Poisson accounting)", sgm.advantage_bound(run.q, run.sigma, run.steps, **kw),
                     source="PLD accountant, Poisson sampling", kind="not a bound for this run", neighbours=nb),
             RiskRow(g2, "epsilon (Poisson accounting)", sgm.epsilon(run.q, run.sigma, run.steps, d, **kw),
                     source="PLD accountant, Poisson sampling", kind="not a bound for this run", neighbours=nb)]
    return rows, notes


__all__ = ["WORST_CASE"]
