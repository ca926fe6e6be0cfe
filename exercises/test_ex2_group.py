"""Chapter 2 exercise: group precision."""
import math

import pytest

from dpmia import bounds


@pytest.mark.parametrize("eps, prior", [(0.5, 0.5), (2.0, 0.01), (7.0, 1e-3)])
def test_one_record_is_posterior_upper(answer, eps, prior):
    assert answer.posterior_upper_group(eps, prior, 1) == pytest.approx(bounds.posterior_upper(eps, prior), rel=1e-12)


def test_bayes_with_group_privacy(answer):
    eps, p, k = 0.4, 0.1, 5
    want = 1.0 / (1.0 + math.exp(-k * eps) * (1 - p) / p)
    assert answer.posterior_upper_group(eps, p, k) == pytest.approx(want, rel=1e-12)


def test_increases_with_k(answer):
    values = [answer.posterior_upper_group(0.3, 0.05, k) for k in range(1, 12)]
    assert all(a < b for a, b in zip(values, values[1:])) and values[-1] < 1.0


@pytest.mark.parametrize("k", [0, -2, 1.5])
def test_bad_k_names_k(answer, k):
    with pytest.raises((ValueError, TypeError), match="k"):
        answer.posterior_upper_group(1.0, 0.5, k)
