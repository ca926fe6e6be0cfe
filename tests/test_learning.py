"""DP-SGD on digits, the step count, and the canary audit (held-out threshold, null baseline)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import attacks, learning, sgm


@pytest.fixture(scope="module")
def digits():
    return learning.load_digits(seed=0)


@given(q=st.floats(1e-4, 1.0), epochs=st.floats(0.01, 1e3))
@settings(max_examples=200, deadline=None)
def test_steps_for_epochs_is_floor_and_never_below_one(q, epochs):
    T = learning.steps_for_epochs(q, epochs)
    assert T >= 1
    # T = floor(E/q) up to the documented relative slack of 1e-9 (which can only add a step)
    assert T == max(1, int(np.floor(epochs / q))) or abs(epochs / q - T) <= 1e-9 * epochs / q


def test_steps_for_epochs_exact_ratios():
    assert learning.steps_for_epochs(0.01, 5) == 500          # 5 / 0.01 = 499.99999999999994 in binary
    assert learning.steps_for_epochs(0.02, 50) == 2500
    assert learning.steps_for_epochs(0.3, 1) == 3              # floor(3.33), not round
    assert learning.steps_for_epochs(0.4, 1) == 2
    assert learning.steps_for_epochs(0.35, 1) == 2            # floor(2.86); round() gave 3
    _, T = learning.dpsgd_softmax(np.ones((4, 2)), [0, 1, 0, 1], q=0.35, sigma=1.0, epochs=1, seed=0)
    assert T == 2


@pytest.mark.parametrize("kwargs, name", [
    (dict(q=0.0, epochs=1), "q"), (dict(q=1.5, epochs=1), "q"), (dict(q=0.1, epochs=0), "epochs"),
    (dict(q=1e-300, epochs=1e300), "epochs / q"), (dict(q=0.1, epochs=float("nan")), "epochs")])
def test_steps_for_epochs_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        learning.steps_for_epochs(**kwargs)


def test_heldout_threshold_game_uses_only_the_evaluation_half():
    scores = np.array([5.0, 4.0, -1.0, -2.0, 3.0, 2.5, 1.0, 0.0])
    member = np.array([1, 1, 0, 0, 1, 0, 1, 0], bool)
    calibrate = np.array([1, 1, 1, 1, 0, 0, 0, 0], bool)
    g = attacks.heldout_threshold_game(scores, member, calibrate)
    # threshold from calibration = 4.0 (every member >= 4, no non-member): on evaluation nobody passes
    assert (g.n_in, g.n_out, g.true_positives, g.false_positives) == (2, 2, 0, 0)


def test_heldout_threshold_game_is_unbiased_on_noise():
    rng = np.random.default_rng(1)
    advs = []
    for _ in range(300):
        s = rng.normal(size=200)
        member = rng.permutation(200) < 100
        cal = rng.permutation(200) < 100
        advs.append(attacks.heldout_threshold_game(s, member, cal).advantage)
    # mean of 300 draws, each with sd about 0.1: |mean| < 4 standard errors
    assert abs(np.mean(advs)) < 4 * np.std(advs) / np.sqrt(len(advs))


@pytest.mark.parametrize("member, calibrate, exc, msg", [
    (np.ones(4, bool), np.array([1, 1, 0, 0], bool), ValueError, "non-member"),
    (np.array([1, 0, 1, 0]), np.array([1, 1, 0, 0], bool), TypeError, "member"),
    (np.array([1, 0, 1], bool), np.array([1, 1, 0, 0], bool), ValueError, "member"),
])
def test_heldout_threshold_game_bad_input(member, calibrate, exc, msg):
    with pytest.raises(exc, match=msg):
        attacks.heldout_threshold_game([0.1, 0.2, 0.3, 0.4], member, calibrate)


def test_canary_audit_leaks_without_noise_and_null_is_chance(digits):
    a = learning.canary_audit(digits, n_train=200, n_canaries=100, q=0.1, sigma=0.0, epochs=100, runs=2, seed=0)
    assert a.steps == 1000
    assert a.attack.advantage_ci[0] > 0.2
    lo, hi = a.null.advantage_ci
    assert lo <= 0.0 <= hi
    assert 0.5 < a.accuracy <= 1.0


def test_canary_audit_deterministic_and_below_bound(digits):
    kw = dict(n_train=150, n_canaries=60, q=0.1, sigma=2.0, epochs=50, runs=2, seed=3)
    a, b = learning.canary_audit(digits, **kw), learning.canary_audit(digits, **kw)
    assert a == b
    assert a.attack.advantage_ci[0] <= sgm.advantage_bound(0.1, 2.0, a.steps)


def test_canary_audit_bad_input(digits):
    with pytest.raises(TypeError, match="data"):
        learning.canary_audit((1, 2), n_train=10, n_canaries=5, q=0.1, sigma=1.0, epochs=1)
    with pytest.raises(ValueError, match="n_train"):
        learning.canary_audit(digits, n_train=10**6, n_canaries=5, q=0.1, sigma=1.0, epochs=1)
    with pytest.raises(ValueError, match="n_canaries"):
        learning.canary_audit(digits, n_train=10, n_canaries=1, q=0.1, sigma=1.0, epochs=1)
    with pytest.raises(ValueError, match="sigma"):
        learning.canary_audit(digits, n_train=10, n_canaries=5, q=0.1, sigma=-1.0, epochs=1)
