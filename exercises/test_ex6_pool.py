"""Chapter 6 exercise: a pool of size αn."""
import numpy as np
import pytest

from dpmia import pmp


@pytest.fixture
def losses():
    return np.random.default_rng(6).uniform(0, 1, size=(4, 9))


def test_alpha_two_is_the_papers_setting(answer, losses):
    part = losses[:, :6]
    assert answer.exponential_mechanism_alpha(part, 3.0, 3) == pytest.approx(
        pmp.exponential_mechanism(part, 3.0).eps_tilde, rel=1e-9)


def test_within_the_dp_guarantee(answer, losses):
    # each subset holding x is a replace-one neighbour of one that does not: the ratio of the averages is at
    # most exp(2 beta Delta), Delta the sensitivity of the mean loss, (max - min) / n
    beta, n = 4.0, 3
    eps = answer.exponential_mechanism_alpha(losses, beta, n)
    assert 0 < eps <= 2 * beta * (losses.max() - losses.min()) / n + 1e-12


def test_a_flat_loss_leaks_nothing(answer):
    assert answer.exponential_mechanism_alpha(np.ones((3, 8)), 5.0, 2) == pytest.approx(0.0, abs=1e-12)


def test_a_hand_computed_pool(answer):
    # one point (column 0) changes the loss of candidate 0; pool of 3, n = 1: D = {i} with probability 1/3
    losses = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    beta = 2.0
    p_w0 = {0: np.exp(-beta) / (np.exp(-beta) + 1.0), 1: 0.5, 2: 0.5}      # P(w = 0 | D = {i})
    want = max(abs(np.log(p_w0[0] / 0.5)), abs(np.log((1 - p_w0[0]) / 0.5)))
    assert answer.exponential_mechanism_alpha(losses, beta, 1) == pytest.approx(want, rel=1e-12)
