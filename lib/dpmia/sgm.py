r"""DP-SGD (the subsampled Gaussian mechanism): everything a chapter or a practitioner asks of it.

One DP-SGD step with Poisson sampling rate :math:`q` and noise multiplier :math:`\sigma` is, in the
worst case for a target, the pair :math:`P = \mathcal N(0, \sigma^2)`,
:math:`Q = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(1,\sigma^2)`; Mahloujifar et al. (Theorem 6)
bound the advantage of any attack on :math:`T` adaptive steps by
:math:`\mathrm{TV}(P^{\otimes T}, Q^{\otimes T})`. This module gathers:

* the certified accountant (:mod:`dpmia.accountant`): advantage, ε(δ), δ(ε), TPR at FPR, trade-off
  curve, prior advantage and schedules, each as a certified bracket or its safe end;
* noise calibration to a risk target (:mod:`dpmia.calibrate`): :func:`calibrate_sigma`,
  :func:`max_steps`, :func:`target_met`;
* the exact single step (:mod:`dpmia.sgmstep`), Rényi DP, KL and Pinsker (:mod:`dpmia.rdp`), and the
  PLD-free bounds and CLT approximation (:mod:`dpmia.tvbounds`).
"""

from .accountant import (AUTO_MAX_FFT, advantage_bound, advantage_bracket, clear_caches, delta_bracket, epsilon,
                         epsilon_bracket, plds, prior_advantage, tpr_at_fpr, tpr_bracket, tradeoff_bracket)
from .calibrate import SIGMA_MAX, calibrate_sigma, max_steps, target_met
from .rdp import OPACUS_ORDERS, epsilon_rdp, epsilon_rdp_certified, kl, pinsker_bound, privacy_loss, rdp
from .schedules import (advantage_bound_schedule, advantage_bracket_schedule, epsilon_bracket_schedule,
                        tpr_at_fpr_schedule)
from .sgmstep import profile, single_step_grid, single_step_tv
from .tvbounds import SIGMA_MIN, clt_advantage, clt_mu, final_model_tv, mc_advantage

__all__ = ["profile", "plds", "advantage_bound", "advantage_bracket", "epsilon", "epsilon_bracket",
           "delta_bracket", "single_step_grid", "tpr_at_fpr", "tpr_bracket", "tradeoff_bracket", "single_step_tv",
           "kl", "pinsker_bound", "rdp", "epsilon_rdp", "epsilon_rdp_certified", "OPACUS_ORDERS", "privacy_loss",
           "clt_mu", "clt_advantage", "mc_advantage", "prior_advantage", "advantage_bound_schedule",
           "advantage_bracket_schedule", "epsilon_bracket_schedule", "tpr_at_fpr_schedule",
           "final_model_tv", "clear_caches", "AUTO_MAX_FFT", "SIGMA_MIN", "SIGMA_MAX",
           "calibrate_sigma", "max_steps", "target_met"]
