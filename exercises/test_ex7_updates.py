"""Chapter 7 exercise: an audit of the updates."""
import numpy as np
import pytest

from dpmia import audit, sgm

Q, T = 0.1, 50


def _audit(answer, sigma, seed, n_models=200):
    scores, members, groups = answer.update_attack_scores(Q, sigma, T, n_models, np.random.default_rng(seed))
    assert len(scores) == len(members) == len(groups) == n_models * 16
    assert len(set(np.asarray(groups).tolist())) == n_models
    return audit.audit_scores(scores, members, groups=groups)


def test_the_attack_finds_the_leak(answer):
    # at sigma = 0.8 the run is (8.06, 1e-5)-DP: a strong attack certifies a clearly positive epsilon
    assert _audit(answer, 0.8, 0).epsilon_lower > 1.0


@pytest.mark.parametrize("sigma", [0.8, 2.0, 10.0])
def test_never_beyond_the_certified_bounds(answer, sigma):
    a = _audit(answer, sigma, 1)
    assert a.epsilon_lower <= sgm.epsilon(Q, sigma, T, 1e-5)
    fpr, tpr = a.roc
    n = a.n_members
    assert np.max(np.asarray(tpr) - np.asarray(fpr)) <= sgm.advantage_bound(Q, sigma, T) + 4.0 / np.sqrt(n)
