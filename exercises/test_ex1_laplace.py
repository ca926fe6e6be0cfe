"""Chapter 1 exercise: the Laplace mechanism's privacy profile."""
import math

import numpy as np
import pytest
from scipy import integrate, stats


def _hockey_stick(eps, scale, sensitivity):
    """∫ (q − e^ε p)_+ for p = Laplace(0, s), q = Laplace(Δ, s), by quadrature over the pieces of the loss."""
    def f(x):
        return max(stats.laplace.pdf(x, sensitivity, scale) - math.exp(eps) * stats.laplace.pdf(x, 0, scale), 0.0)
    pieces = [(-np.inf, 0.0), (0.0, sensitivity), (sensitivity, np.inf)]
    return sum(integrate.quad(f, a, b, limit=200, epsabs=1e-13)[0] for a, b in pieces)


@pytest.mark.parametrize("eps, scale, sens", [(0.0, 1.0, 1.0), (0.3, 1.0, 1.0), (0.5, 0.5, 1.0), (1.9, 0.5, 1.0),
                                              (0.1, 2.0, 0.5), (3.0, 1.0, 1.0)])
def test_matches_the_hockey_stick_divergence(answer, eps, scale, sens):
    assert answer.laplace_delta(eps, scale, sens) == pytest.approx(_hockey_stick(eps, scale, sens), abs=1e-9)


def test_zero_beyond_eps0_and_decreasing(answer):
    assert answer.laplace_delta(2.0, 0.5) == 0.0 and answer.laplace_delta(2.5, 0.5) == 0.0
    values = [answer.laplace_delta(e, 0.5) for e in np.linspace(0, 2, 21)]
    assert all(a >= b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("kwargs, name", [(dict(eps=-0.1, scale=1.0), "eps"), (dict(eps=0.1, scale=0.0), "scale"),
                                          (dict(eps=0.1, scale=-1.0), "scale"),
                                          (dict(eps=0.1, scale=1.0, sensitivity=-1.0), "sensitivity"),
                                          (dict(eps=float("nan"), scale=1.0), "eps")])
def test_bad_input_names_the_parameter(answer, kwargs, name):
    with pytest.raises(ValueError, match=name):
        answer.laplace_delta(**kwargs)
