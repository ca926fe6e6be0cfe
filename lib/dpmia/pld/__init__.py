r"""Privacy-loss distributions (PLDs) on a grid, with certified brackets.

A *pair* :math:`(P, Q)` (output law without / with the target) is summarised by its privacy
profile :math:`\delta(\varepsilon) = H_{e^\varepsilon}(Q\|P) = \int (q - e^\varepsilon p)_+`, for all
real :math:`\varepsilon`. Every read-out of the book is a function of this profile:

* advantage :math:`\mathrm{TV} = \delta(0)`;
* scaled TV (Mahloujifar et al., Def. 4) :math:`\mathrm{TV}_a(P,Q) = a\,\delta(-\ln a) + (1-a)/2`;
* :math:`\varepsilon(\delta)`, and the ROC
  :math:`\mathrm{TPR}(\alpha) = \inf_\varepsilon\,[e^\varepsilon\alpha + \delta(\varepsilon)]`.

**Discretisation with a certificate.** Writing :math:`y = e^{\varepsilon}`, the profile
:math:`y \mapsto \delta` is convex. A pair supported on the grid :math:`x_j = j h` of privacy-loss
values has a profile that is piecewise linear in :math:`y` with kinks at :math:`e^{x_j}`, and
every such convex piecewise-linear curve is the profile of a unique grid pair
(:func:`from_profile`). Hence

* **pessimistic**: interpolate the exact profile at the grid points ("connect the dots",
  Doroshenko et al. 2022). Chords of a convex function lie above it, so the grid pair *dominates*
  the true one;
* **optimistic**: lower each grid value by the largest possible chord gap,
  :math:`\tfrac14(\text{slope change})(\text{width})` on each side, and take the greatest convex
  minorant; it lies below the exact profile, so the true pair dominates the grid pair.

Domination is preserved by composition (Blackwell), so composing each grid pair :math:`T`
times by FFT and reading off gives a lower and an upper value that bracket the exact one. Both
errors are second order in :math:`h` per step. The FFT works on a window of the composed loss;
the mass outside it is bounded by a Chernoff bound on the grid pair, and the floating-point
error of the FFT by a bound computed from the transform itself (it scales with the mass, so tiny
values keep their relative accuracy); both are added to the bracket (``PLD.slack_q``).

**Two levels.** For long runs a composed pair is re-gridded onto a coarser grid
(:func:`regrid`: the same two constructions, from the composed pair's exact profile) and composed
again; each level's error is second order in its own step, so :math:`T_1` steps on a fine grid and
:math:`T/T_1` on a coarse one beat :math:`T` steps on either.

Everything is computed from :math:`Q`-masses and losses, with :math:`e^{\varepsilon - x}\le 1` in
every product, so read-outs work for any :math:`\varepsilon` (also above 709, where
:math:`e^\varepsilon` overflows). No wall clock anywhere: the same input gives the same bits.
"""

from __future__ import annotations

from ._chords import chord_lowering
from ._coarsen import regrid
from ._composition import compose, compose_many, compose_pair, composed_length, same_support
from ._discretise import from_profile, shed_p_excess
from ._lossdist import KINDS, MAX_FFT, PLD, FFTCapError, GridError

__all__ = ["PLD", "from_profile", "regrid", "compose", "compose_pair", "compose_many", "composed_length",
           "same_support", "MAX_FFT", "KINDS", "GridError", "FFTCapError", "shed_p_excess",
           "chord_lowering"]
