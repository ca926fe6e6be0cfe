r"""The generalised likelihood-ratio-test (GLRT) adversary against the Gaussian mechanism.

Kaissis, Ziller, Kolek Martinez de Azagra and Rueckert, *Generalised Likelihood Ratio Testing
Adversaries through the Differential Privacy Lens*. The adversary of DP (the Neyman-Pearson-optimal,
"NPO", one) knows the direction of :math:`f(D') - f(D)`; the GLRT adversary knows :math:`f`,
:math:`\Delta` and :math:`\sigma` but not the direction, plugs in its maximum-likelihood estimate and
thresholds the energy :math:`T = \|y\|^2/\sigma^2`. Without the target :math:`T \sim \chi^2_d`, with it
:math:`T\sim\chi^2_d(\lambda)`, :math:`\lambda = \Delta^2/\sigma^2` (Theorem 1), and :math:`N` releases
with the same unknown direction give :math:`\lambda = N\Delta^2/\sigma^2` (Theorem 2). Everything here
depends on the dimension ``d`` and the noncentrality ``lam`` only.

* :func:`roc`, :func:`roc_reverse` - Theorem 1's curves :math:`R`, :math:`R'`; :func:`roc_d1` -
  Corollary 1; :func:`roc_symmetric` - the symmetrised, concavified curve :math:`R_s` with its
  :func:`tangent_points`; :func:`tv`, :func:`auc`, :func:`best_accuracy`.
* :func:`delta` / :func:`epsilon` - the privacy profile of :math:`R_s` (both directions) by the exact
  likelihood-ratio method: the slope of :math:`R` at threshold :math:`t` is :math:`e^{L(t)}`
  (:func:`dpmia.chisq.log_likelihood_ratio`), so :math:`\delta(\varepsilon)` is read at the
  :math:`t` with :math:`L(t) = \varepsilon`. Both are rounded to the safe side.
* :func:`noncentrality`, :func:`noncentrality_heterogeneous` (Theorem 2), :func:`gdp_mu_asymptotic`
  and :func:`roc_clt` (Theorem 3, eq. 35 corrected), :func:`amplified_delta` /
  :func:`amplified_epsilon` (Sec. 4.6, Poisson subsampling), :func:`energy_epsilon_bracket`
  (per-round subsampling through :mod:`dpmia.pld`).

The NPO side is :mod:`dpmia.gaussian` with :math:`\mu = \sqrt\lambda` (one implementation of the
Gaussian profile in the library).
"""

from ._asymptotics import gdp_mu_asymptotic, noncentrality, noncentrality_heterogeneous, roc_clt
from ._curves import auc, best_accuracy, roc, roc_d1, roc_reverse, roc_symmetric, tangent_points, tv
from ._energy import energy_epsilon_bracket
from ._profile import SAFETY_MARGIN, delta, delta_d1, delta_forward, delta_reverse, epsilon, epsilon_bracket
from ._subsampling import amplified_delta, amplified_epsilon

__all__ = ["roc", "roc_reverse", "roc_d1", "tangent_points", "roc_symmetric", "tv", "auc",
           "best_accuracy", "delta", "delta_forward", "delta_reverse", "delta_d1", "epsilon",
           "epsilon_bracket", "noncentrality", "noncentrality_heterogeneous", "gdp_mu_asymptotic",
           "roc_clt", "amplified_delta", "amplified_epsilon", "energy_epsilon_bracket",
           "SAFETY_MARGIN"]
