"""The LiRA / loss-threshold audit: protocol, null baseline, certified epsilon, and the bound."""
import math

import numpy as np
import pytest

from dpmia import attacks, audit, learning, sgm


@pytest.fixture(scope="module")
def data():
    return learning.load_digits()


def test_logit_confidence_is_stable():
    W = np.array([[50.0, -50.0], [0.0, 0.0]])
    X = np.array([[1.0, 1.0], [-1.0, 1.0]])
    phi = audit.logit_confidence(W, X, [0, 0])
    assert phi[0] == pytest.approx(100.0) and phi[1] == pytest.approx(-100.0)   # p_y rounds to 1 or 0
    p = learning.predict_proba(np.array([[0.3, -0.2, 0.1]]), np.array([[1.0]]))[0]
    assert audit.logit_confidence(np.array([[0.3, -0.2, 0.1]]), [[1.0]], [2])[0] == pytest.approx(
        math.log(p[2] / (1 - p[2])))


def test_epsilon_lower_bound():
    g = attacks.GameResult(1000, 1000, 900, 10, 0.95)
    e = audit.epsilon_lower_bound(g, 1e-5)
    lv = 0.975
    t_lo = attacks.clopper_pearson(900, 1000, lv)[0]
    f_hi = attacks.clopper_pearson(10, 1000, lv)[1]
    assert e == pytest.approx(max(math.log((t_lo - 1e-5) / f_hi), math.log((1 - f_hi - 1e-5) / (1 - t_lo))), rel=1e-12)
    assert audit.epsilon_lower_bound(attacks.GameResult(100, 100, 10, 12, 0.95), 1e-5) == 0.0
    with pytest.raises(ValueError, match="delta"):
        audit.epsilon_lower_bound(g, 1.5)


def test_non_private_model_leaks_and_noise_stops_it(data):
    a0 = audit.lira_audit(data, sigma=0.0, q=0.1, epochs=30, n_canaries=48, n_models=12, n_null=6, lr=4.0, seed=1)
    o = a0.outcomes[("lira", 0.1)]
    assert o.game.tpr_ci[0] > o.null.tpr_ci[1] and o.epsilon_lower > 1.0
    a = audit.lira_audit(data, sigma=2.0, q=0.1, epochs=30, n_canaries=48, n_models=12, n_null=6, lr=4.0, seed=1)
    adv = sgm.advantage_bound(0.1, 2.0, a.steps)
    eps = sgm.epsilon(0.1, 2.0, a.steps, 1e-5)
    for (_name, _f), o in a.outcomes.items():
        assert o.game.advantage_ci[0] <= adv and o.epsilon_lower <= eps
        assert o.game.tpr_ci[0] <= sgm.tpr_at_fpr(o.game.fpr_ci[1], 0.1, 2.0, a.steps)
        lo, hi = o.null.advantage_ci
        assert lo <= 0.0 <= hi or abs(o.null.advantage) < 0.1       # the null baseline shows no leak
    scores, member = a.scores["lira"]
    assert scores.shape == member.shape == (6 * 48,)


def test_same_seed_same_audit(data):
    kw = dict(sigma=1.0, q=0.2, epochs=5, n_train=50, n_canaries=16, n_models=10, n_null=2, seed=3)
    a, b = audit.lira_audit(data, **kw), audit.lira_audit(data, **kw)
    assert a.outcomes == b.outcomes and a.accuracy == b.accuracy


def test_lira_audit_bad_input(data):
    with pytest.raises(TypeError, match="Digits"):
        audit.lira_audit("digits", sigma=1.0, q=0.1, epochs=1)
    with pytest.raises(ValueError, match="n_models"):
        audit.lira_audit(data, sigma=1.0, q=0.1, epochs=1, n_models=5)
    with pytest.raises(ValueError, match="sigma"):
        audit.lira_audit(data, sigma=-1.0, q=0.1, epochs=1)
    with pytest.raises(ValueError, match="target_fprs"):
        audit.lira_audit(data, sigma=1.0, q=0.1, epochs=1, target_fprs=(0.0,))
