"""Chapter 4 exercise: a heterogeneous schedule."""
import pytest

from dpmia import glrt


def test_seventy_equal_releases(answer):
    # the chapter's composition example (Theorem 2): 70 releases at s = 6, d = 1, delta = 1e-2
    assert answer.glrt_epsilon_schedule(1e-2, 1, [1.0] * 70, [6.0] * 70) == pytest.approx(2.9437, abs=5e-5)


def test_less_noise_in_half_the_releases_costs_more(answer):
    mixed = answer.glrt_epsilon_schedule(1e-2, 1, [1.0] * 70, [6.0] * 35 + [3.0] * 35)
    assert mixed > answer.glrt_epsilon_schedule(1e-2, 1, [1.0] * 70, [6.0] * 70)


def test_one_release_is_the_single_mechanism(answer):
    assert answer.glrt_epsilon_schedule(1e-3, 5, [2.0], [1.5]) == pytest.approx(
        glrt.epsilon(1e-3, 5, (2.0 / 1.5) ** 2), rel=1e-9)


def test_mismatched_lengths_are_refused(answer):
    with pytest.raises(ValueError, match="sigmas"):
        answer.glrt_epsilon_schedule(1e-2, 1, [1.0] * 3, [6.0] * 2)
