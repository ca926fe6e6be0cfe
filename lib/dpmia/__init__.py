"""dpmia — the numerical library of the book *What does ε say about membership inference?*

Modules are named by concept (CONTRIBUTING.md):

* :mod:`dpmia.gaussian` — the Gaussian mechanism as a hypothesis test (δ(ε), ε(δ), calibration,
  TV, TV_a, trade-off curve);
* :mod:`dpmia.bounds` — what any (ε, δ)-DP mechanism implies for membership inference;
* :mod:`dpmia.pld` — privacy-loss distributions with certified (pessimistic/optimistic) brackets, FFT composition;
* :mod:`dpmia.sgm` — DP-SGD (subsampled Gaussian): advantage bound, ε, ROC, Pinsker, RDP, CLT, Monte Carlo,
  and noise calibration to a risk target (``calibrate_sigma``, ``max_steps``);
* :mod:`dpmia.chisq` — central and noncentral chi-square laws in log space;
* :mod:`dpmia.glrt` — the GLRT adversary (Kaissis et al.): ROC, exact profile, composition, subsampling;
* :mod:`dpmia.mip` — membership inference privacy (Izzo et al.): DP ⇒ MIP, enumeration, noise calibration;
* :mod:`dpmia.noisy_mean` — exact MIP of a noisy mean of a random half (subset sums, Laplace mixtures);
* :mod:`dpmia.pmp` — practical membership privacy (Lowy et al.): exact exponential mechanism, Gaussian bound;
* :mod:`dpmia.attacks` — Monte Carlo membership games with confidence intervals;
* :mod:`dpmia.mechanisms` — small mechanisms with exact membership posteriors (randomized
  response, geometric count release, dataset enumeration);
* :mod:`dpmia.unlearning` — deletion capacity;
* :mod:`dpmia.learning` — numpy DP-SGD on scikit-learn's bundled digits;
* :mod:`dpmia.audit` — a shadow-model membership audit (loss threshold and LiRA) with a null baseline;
* :mod:`dpmia.report` — every bound of the book for one training run (also ``dpmia risk``);
* :mod:`dpmia.plotting` — the book's visual style;
* :mod:`dpmia.scorecard` — a chapter's reproduction record;
* :mod:`dpmia.tables` — small HTML/Markdown tables for chapters.

Conventions: ``mu = sensitivity / noise std``; "advantage" is TPR − FPR at prior ½; bad input
raises ``ValueError``/``TypeError`` naming the parameter and its valid range.
"""

import importlib as _importlib
import pkgutil as _pkgutil

__version__ = "0.1.0"
__all__ = ["attacks", "audit", "bounds", "chisq", "cli", "gaussian", "glrt", "learning", "mechanisms", "mip",
           "noisy_mean", "pld", "plotting", "pmp", "report", "scorecard", "sgm", "tables", "unlearning", "__version__"]

#: every public module and package (``pld`` and ``sgm`` keep their parts in private modules)
_MODULES = frozenset(m.name for m in _pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def __getattr__(name):
    """Import a module on first use (``dpmia.sgm``), so ``import dpmia`` and the ``dpmia`` command
    start quickly; ``from dpmia import sgm`` works as usual."""
    if name in _MODULES:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'dpmia' has no attribute {name!r}")


def __dir__():
    return sorted({n for n in globals() if not n.startswith("_")} | _MODULES | {"__version__"})
