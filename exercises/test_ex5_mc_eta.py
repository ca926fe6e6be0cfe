"""Chapter 5 exercise: Monte Carlo eta."""
import numpy as np
import pytest

from dpmia import mip


def _bp(n):
    """The chapter's blood-pressure data set of size n (the first of its draws with seed 42)."""
    g = np.random.default_rng(42)
    return np.clip(np.round(g.normal(120, 15, n)), 70, 200).astype(int)


def test_agrees_with_the_exact_eta(answer):
    values, b = _bp(20), 5.0
    est, se = answer.mc_eta_mean_laplace(values, b, 20_000, np.random.default_rng(1))
    exact = mip.exact_eta_laplace(values, b)
    assert 0 < se < 0.01
    assert abs(est - exact) <= 5 * se, (est, se, exact)


def test_no_noise_no_privacy_much_noise_little_leak(answer):
    values = [0, 0, 10, 10]
    est, se = answer.mc_eta_mean_laplace(values, 1e3, 4_000, np.random.default_rng(2))
    assert abs(est) <= 5 * se + 1e-3
    est, se = answer.mc_eta_mean_laplace(values, 0.01, 4_000, np.random.default_rng(3))
    assert est == pytest.approx(mip.exact_eta_laplace(values, 0.01), abs=5 * se + 1e-3)
