r"""DP-SGD (the subsampled Gaussian mechanism): what an attacker can do against a training run, certified.

One DP-SGD step with Poisson sampling rate :math:`q` and noise multiplier :math:`\sigma` is, in the
worst case for a target, the pair :math:`P = \mathcal N(0, \sigma^2)` (without the target) against
:math:`Q = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(1,\sigma^2)` (with it). Mahloujifar et al.
(Theorem 6) bound the advantage of any membership attack on :math:`T` adaptive steps by
:math:`\mathrm{TV}(P^{\otimes T}, Q^{\otimes T})`, and Corollary 11 its TPR at each FPR by the ROC of
the same pair. The package answers, for a run ``(q, sigma, steps)``, under the neighbouring relation
and sampler the run used (``neighbours="add-remove"`` or ``"replace-one"``; ``sampler="poisson"`` or
``"fixed"``, every read-out and tool takes both):

* **read-outs** as certified brackets ``(lower, upper)`` or their safe end:
  :func:`advantage_bracket` / :func:`advantage_bound`, :func:`epsilon_bracket` / :func:`epsilon`,
  :func:`delta_bracket`, :func:`tpr_bracket` / :func:`tpr_at_fpr`, :func:`tradeoff_bracket`,
  :func:`prior_advantage`; the ``*_schedule`` variants for non-adaptive schedules of
  :math:`(q_i, \sigma_i, T_i)` stages;
* **noise calibration**: :func:`calibrate_sigma` (the smallest σ whose certified bound meets one
  target), :func:`max_steps`, :func:`target_met`;
* **the exact single step** (:func:`profile`, :func:`single_step_tv`, :func:`single_step_grid`);
* **bounds that need no PLD**: Rényi DP (:func:`rdp`, :func:`epsilon_rdp`, :func:`epsilon_rdp_certified`),
  KL and Pinsker, the χ² upper bound (:func:`chi2_tv_upper`), exact attacks as lower bounds
  (:func:`threshold_count_tv`, :func:`sum_test_tv`), the sampling-pattern bound
  (:func:`mixture_delta_upper`) and the cap :func:`sampled_cap`;
* **approximations** (not bounds): the CLT (:func:`clt_mu`, :func:`clt_advantage`) and Monte Carlo
  (:func:`mc_advantage`); :func:`final_model_tv` for an attacker who sees only the final model;
* **shuffled epochs**, which no tight accountant covers: certified lower bounds
  (:func:`shuffled_advantage_lower`, :func:`shuffled_tpr_lower`) and the loose upper bound without
  amplification (:func:`shuffled_gdp_mu`);
* **constants**: ``SIGMA_MIN`` = 0.01, the smallest noise multiplier accepted (read-outs accept up to
  1e6); ``SIGMA_MAX`` = 1e3, the upper end of :func:`calibrate_sigma`'s search; ``AUTO_MAX_FFT`` = 2**21,
  the longest FFT the automatic grid uses; ``OPACUS_ORDERS``, Opacus' default Rényi orders.

Examples
--------
>>> from dpmia import sgm
>>> round(sgm.advantage_bound(0.01, 1.0, 1000), 4)
0.161
>>> lo, hi = sgm.epsilon_bracket(0.01, 1.0, 1000, 1e-5)
>>> lo <= hi <= sgm.epsilon_rdp(0.01, 1.0, 1000, 1e-5)[0]
True

How the accountant works
------------------------
Every public function checks its arguments once into a frozen :class:`Run` and passes it down the
engine, whose layers call downward only: the single step (exact profile on a grid), the chain
(composed grid pairs of a run and the choice of their grid), the bulk pairs, the read-outs,
schedules and calibration.

*Certified brackets.* Each read-out composes a dominating ("pessimistic") and a dominated
("optimistic") grid pair of the single step by FFT (:mod:`dpmia.pld`), adds the FFT window's
Chernoff tail and a floating-point error bound computed from the transform itself, and reads both:
the true value lies between. Both pairs keep total P- and Q-mass 1, so the dominated pair's
reflection is a valid lower bound for the remove direction. Cell quantities are computed without
cancellation (Gauss–Legendre on narrow cells). The dominated pair merges every output whose loss lies
in its first cell into one atom (a post-processing of the step): at tiny :math:`q`, where almost all
mass sits just above :math:`\ln(1-q)`, that cell is then exact instead of lowered by its chord gap.

*Accuracy is an argument, never a clock.* ``tol`` is 1e-5 absolute for probabilities of at least
0.01 and 1e-3 relative below (never narrower than 1e-6 absolute for the advantage), and 1e-3
relative for ε. The grid step is predicted from an error model (bracket width about
:math:`0.11\,T h^2/\mathrm{sd}_T`; for ε scaled by the CLT estimate of ε) and refined at most five
times from the measured width, as :math:`h^p` with :math:`p` measured from the last two widths,
stopping where a finer grid no longer helps. The same call gives the same bits under any load. Where
the FFT caps (``AUTO_MAX_FFT`` points) stop the refinement the bracket is wider but still
certified; if no grid fits, ε falls back to Rényi accounting (an upper bound) and the lower ends to
the exact value of one step or of fewer steps.

*Long runs* (:math:`T \ge 4096`) are composed in two levels: :math:`T_1 \approx \sqrt T` steps on a
grid :math:`m \approx \sqrt{T_1}/2` times finer, re-gridded by :func:`dpmia.pld.regrid` and composed
:math:`T/T_1` times, which cuts the discretisation error from :math:`T h^2` to about
:math:`5\sqrt T h^2`. At small σ with few sampled steps per :math:`T_1` one level is kept.

*Cheap bounds first.* Before any PLD, :func:`advantage_bracket` tries the bounds that need none (χ²,
sum of outputs, threshold counting, the single step, the cap :math:`1-(1-q)^T`); where they meet
``tol`` the PLD is skipped. For ε and δ(ε), where δ is below what a grid resolves (its float slack
reaches a quarter of δ) the upper end also uses the sampling-pattern bound
:math:`\delta(\varepsilon) \le \sum_k \mathrm{Bin}(k; T, q)\,\delta_{\mathcal N}(\varepsilon; \sqrt k/\sigma)`
(joint convexity over which steps sample the target), and never exceeds Rényi accounting's.

*Far tails.* Where :math:`\delta` lies below a composed grid pair's float resolution (about 1e-16 of its mass), the
Poisson read-outs (add/remove, and replace-one's symmetric pair, one direction) compose the single-step grid pairs
*exponentially tilted* to the saddle point of the :math:`\varepsilon` read (:math:`r_s \propto q_s e^{\lambda x_s}`;
tilting commutes with convolution, so the FFT's float error stays relative to :math:`\delta`), and untilt in log space.
Each single-step pair is compared with certified profile values (rounded to the safe side); the atoms' relative excess
:math:`\kappa` over them scales the pair, a factor :math:`(1+\kappa)^{\pm T}` instead of an absolute slack; a dominated
pair's absolute excess (float noise next to the bulk of the losses) is weighted by :math:`e^{-\lambda\varepsilon}`,
which the true step's moment generating function (bounded from its profile on the grid) carries through the :math:`T`
steps, so it costs a far tail nearly nothing. The remove direction's dominating single step is built from the add
direction's cell masses (its far tail sits at the add pair's lowest losses, where a reflected pair carries float error
of about u per atom), and its Chernoff bound, or a first pass's bound on it, stands in for it where it is certainly
below the add direction. Long runs (:math:`T \ge 2^{16}`) are tilted and composed in two levels where that is shorter:
:math:`T_1 \approx \sqrt T` steps on the fine grid, the composite moved to a grid :math:`\sqrt{T_1}/2` times coarser
(split between coarse points for the dominating side, its chords lowered by their gaps for the dominated one), composed
:math:`T/T_1` times; each coarse pair is measured against the composite at every fine point, and what it is off by is
charged in the read-out. Where one large step sets the far tail (small q, :math:`\sigma` of a few: the loss's tail is
then that of one sampled step, and one tilt puts its mass on rare huge steps, not near ε) each step's atoms are split at
a loss b: the bulk below it is tilted and composed :math:`T - 1` times and read against one step's profile, which counts
the runs with one step above b exactly; runs with two or more are bounded (Chernoff over the pairs of places); with few
sampled steps (:math:`qT \le 1`) an :math:`\varepsilon` read tries this split first. Below :math:`\delta = 10^{-16}` an
:math:`\varepsilon` read composes no plain grid pair at all (each keeps at least about 4e-16 of its mass as slack), nor
below :math:`T` times the unit roundoff where more than one step is sampled (a :math:`T`-fold composition's slack is
about that; the split, for add/remove only, and the tilted read-outs answer there). The tilted compositions' FFTs
stop at :math:`2^{21}` points (:math:`2^{22}` for δ); where that cap, not the error model, keeps a pass from the step
tol asks, and the model puts one pass at :math:`2^{23}` points within tol, that pass runs (a few seconds, about a
gigabyte: far tails of runs of some thousands of steps and more). Brackets stay within tol down to
:math:`\delta = 10^{-300}` wherever one of the two read-outs centres the composed loss near ε; elsewhere (a tail set by
several large steps, or a bulk too wide for the split's grids) they are certified but can be wider.

*Neighbouring relations and samplers.* Under replace-one with Poisson sampling one step is the pair
:math:`(1-q)\mathcal N(0,\sigma^2) + q\mathcal N(\pm1,\sigma^2)` (Zhu, Dong and Wang 2022), symmetric, so one
direction is composed. Fixed-size batches drawn without replacement (``q`` = batch size / dataset
size) are analysed under replace-one: by advanced joint convexity (Balle, Barthe and Gaboardi 2018,
Theorem 2) each step's profile at :math:`\varepsilon \ge 0` is at most that of the add/remove pair at
:math:`\sigma/2`, which the accountant makes symmetric and composes (a certified upper bound, not
necessarily attained); fixed-size batches with add/remove are refused. Both symmetric pairs are built
from their atoms above 0, mirrored (the ``_symmetric`` layer derives it). The cheap bounds other than the cap,
the sampling-pattern bound and the sum test are add/remove only; under replace-one with Poisson sampling Rényi
accounting caps ε from the add/remove divergences plus :math:`\ln(1/(1-q))` a step (loose, but finite where a far
tail lies beyond one step's grids).

*Few sampled steps* (:math:`qT \le 0.05`): ε may be set by the composed loss near 0 at the scale of
:math:`q`. Each step's outputs are split at a loss :math:`b`: the output patterns with a step above
:math:`b` are disjoint from the rest and, for ε below :math:`b + (T-1)\ln(1-q)`, add exactly
:math:`(1 - q_B^T) - e^\varepsilon(1 - p_B^T)`; the rest is the :math:`T`-fold composition of the
normalised bulk pair on a grid over :math:`[\ln(1-q), b]` only. Where the profile is flat in ε, the
ε read-out measures its slope and composes once more with the window budget that slope needs.
"""

from ._accountant import (
                          AUTO_MAX_FFT,
                          advantage_bound,
                          advantage_bracket,
                          clear_caches,
                          plds,
                          prior_advantage,
                          tpr_at_fpr,
                          tpr_bracket,
                          tradeoff_bracket,
)
from ._calibrate import SIGMA_MAX, calibrate_sigma, max_steps, target_met
from ._epsilon import delta_bracket, epsilon, epsilon_bracket
from ._rdp import OPACUS_ORDERS, epsilon_rdp, epsilon_rdp_certified, kl, pinsker_bound, privacy_loss, rdp
from ._schedules import (
                          advantage_bound_schedule,
                          advantage_bracket_schedule,
                          epsilon_bracket_schedule,
                          tpr_at_fpr_schedule,
)
from ._setting import NEIGHBOURS, SAMPLERS, SIGMA_MIN, Run, check_run
from ._shuffle import shuffled_advantage_lower, shuffled_gdp_mu, shuffled_tpr_lower
from ._step import profile, single_step_grid, single_step_tv
from ._tvbounds import (
                          chi2_tv_upper,
                          clt_advantage,
                          clt_mu,
                          final_model_tv,
                          mc_advantage,
                          mixture_delta_upper,
                          sampled_cap,
                          sum_test_tv,
                          threshold_count_tv,
)

__all__ = ["advantage_bound", "advantage_bracket", "epsilon", "epsilon_bracket", "delta_bracket", "tpr_at_fpr",
           "tpr_bracket", "tradeoff_bracket", "prior_advantage", "plds", "advantage_bound_schedule",
           "advantage_bracket_schedule", "epsilon_bracket_schedule", "tpr_at_fpr_schedule", "calibrate_sigma",
           "max_steps", "target_met", "profile", "single_step_tv", "single_step_grid", "rdp", "epsilon_rdp",
           "epsilon_rdp_certified", "kl", "pinsker_bound", "privacy_loss", "chi2_tv_upper", "mixture_delta_upper",
           "sampled_cap", "sum_test_tv", "threshold_count_tv", "clt_mu", "clt_advantage", "mc_advantage",
           "final_model_tv", "Run", "check_run", "clear_caches", "OPACUS_ORDERS", "AUTO_MAX_FFT", "SIGMA_MIN",
           "SIGMA_MAX", "NEIGHBOURS", "SAMPLERS", "shuffled_advantage_lower", "shuffled_tpr_lower",
           "shuffled_gdp_mu"]
