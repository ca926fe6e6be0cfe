"""Chapter 3 exercise: calibrate the noise to an ε."""
import pytest

from dpmia import sgm


@pytest.mark.parametrize("q, steps", [(0.1, 50), (0.01, 1000)])
def test_meets_the_target_and_is_the_smallest(answer, q, steps):
    eps, delta = 4.0, 1e-5
    s = answer.calibrate_sigma_for_epsilon(q, steps, eps, delta)
    assert sgm.epsilon(q, s, steps, delta) <= eps
    assert sgm.epsilon(q, 0.999 * s, steps, delta) > eps


def test_agrees_with_the_library(answer):
    s = answer.calibrate_sigma_for_epsilon(0.1, 50, 2.0, 1e-5)
    assert s == pytest.approx(sgm.calibrate_sigma(0.1, 50, epsilon=2.0, delta=1e-5), rel=2e-3)
