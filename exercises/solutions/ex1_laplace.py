"""Reference solution of the Chapter 1 exercise "the Laplace mechanism's privacy profile"."""
import math


def laplace_delta(eps, scale, sensitivity=1.0):
    r"""Tight :math:`\delta(\varepsilon)` of the Laplace mechanism (noise scale ``scale``, sensitivity ``sensitivity``).

    With :math:`\varepsilon_0=\Delta/s`, the hockey-stick divergence :math:`\int(q-e^\varepsilon p)_+` between
    Laplace(0, s) and Laplace(Δ, s) is :math:`1-e^{(\varepsilon-\varepsilon_0)/2}` for
    :math:`0\le\varepsilon\le\varepsilon_0` and 0 beyond (the privacy loss is at most :math:`\varepsilon_0`).

    >>> round(laplace_delta(0.0, 1.0), 6)       # the total variation 1 - exp(-1/2)
    0.393469
    """
    for name, value in (("eps", eps), ("scale", scale), ("sensitivity", sensitivity)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    if sensitivity < 0:
        raise ValueError(f"sensitivity must be >= 0, got {sensitivity}")
    eps0 = sensitivity / scale
    if eps >= eps0:
        return 0.0
    return -math.expm1((eps - eps0) / 2.0)
