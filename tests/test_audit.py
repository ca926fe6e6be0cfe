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
    o = a0.outcomes["lira"]
    assert o.audit.rows[0].tpr > o.audit.rows[0].fpr and o.epsilon_lower > 1.0
    a = audit.lira_audit(data, sigma=2.0, q=0.1, epochs=30, n_canaries=48, n_models=12, n_null=6, lr=4.0, seed=1)
    adv = sgm.advantage_bound(0.1, 2.0, a.steps)
    eps = sgm.epsilon(0.1, 2.0, a.steps, 1e-5)
    for o in a.outcomes.values():
        assert o.epsilon_lower <= eps
        for r in o.audit.rows:
            assert r.tpr_ci[0] - r.fpr_ci[1] <= adv
            assert r.tpr_ci[0] <= sgm.tpr_at_fpr(r.fpr_ci[1], 0.1, 2.0, a.steps)
        for r in o.null.rows:                  # the null baseline shows no leak
            assert r.tpr_ci[0] <= r.fpr_ci[1] and r.fpr_ci[0] <= r.tpr_ci[1]
    scores, member, model = a.scores["lira"]
    assert scores.shape == member.shape == model.shape == (6 * 48,)
    # the four audits' statements share 1 - level: their levels' shortfalls add up to it
    assert sum(1 - x for o in a.outcomes.values() for x in (o.audit.level, o.null.level)) == pytest.approx(0.05)


def test_same_audit_for_any_n_jobs_and_any_sharding(data):
    kw = dict(sigma=1.0, q=0.2, epochs=5, n_train=50, n_canaries=16, n_models=8, n_null=2, seed=3)
    a, b = audit.lira_audit(data, **kw), audit.lira_audit(data, **kw, n_jobs=2)
    assert a.outcomes == b.outcomes and a.accuracy == b.accuracy
    setting = audit.AuditSetting.checked(data, **kw, target_fprs=(0.01, 0.1), clip=1.0, lr=2.0, delta=1e-5,
                                         level=0.95)
    lines = [ln for i in (2, 0, 1) for ln in audit.shard_lines(setting, (i, 3), data=data)]
    st, recs = audit.merge_records(lines)
    assert st == setting and audit.analyse(st, recs).outcomes == a.outcomes
    with pytest.raises(ValueError, match="models 0 ... 9"):
        audit.analyse(st, recs[:-1])
    with pytest.raises(ValueError, match="twice"):
        audit.merge_records(lines + lines[1:2])
    other = audit.AuditSetting.checked(data, **{**kw, "seed": 4}, target_fprs=(0.01, 0.1), clip=1.0, lr=2.0,
                                       delta=1e-5, level=0.95)
    with pytest.raises(ValueError, match="another setting"):
        audit.merge_records(lines + list(audit.shard_lines(other, (0, 9), data=data)))


def test_lira_audit_bad_input(data):
    with pytest.raises(TypeError, match="Digits"):
        audit.lira_audit("digits", sigma=1.0, q=0.1, epochs=1)
    with pytest.raises(ValueError, match="n_models"):
        audit.lira_audit(data, sigma=1.0, q=0.1, epochs=1, n_models=5)
    with pytest.raises(ValueError, match="sigma"):
        audit.lira_audit(data, sigma=-1.0, q=0.1, epochs=1)
    with pytest.raises(ValueError, match="target_fprs"):
        audit.lira_audit(data, sigma=1.0, q=0.1, epochs=1, target_fprs=(0.0,))
    with pytest.raises(ValueError, match="n_jobs"):
        audit.lira_audit(data, sigma=1.0, q=0.1, epochs=1, n_jobs=0)


def test_one_run_epsilon_closed_form_and_edges():
    # delta = 0, every guess right: p_eps^r = 1 - level, so eps = logit((1 - level)^(1/r))
    for r in (10, 100, 1000):
        x = 0.05 ** (1.0 / r)
        e = audit.one_run_epsilon(r, r, n_canaries=10 * r)
        assert math.log(x / (1 - x)) * (1 - 1e-8) <= e <= math.log(x / (1 - x))
    assert audit.one_run_epsilon(100, 50, n_canaries=100) == 0.0
    assert audit.one_run_epsilon(0, 0, n_canaries=10) == 0.0
    # more canaries with the same guesses: a larger delta term, a smaller bound
    assert audit.one_run_epsilon(1000, 900, n_canaries=10**6, delta=1e-5) < audit.one_run_epsilon(
        1000, 900, n_canaries=1000, delta=1e-5)
    assert audit.one_run_epsilon(10**6, 600_000, n_canaries=10**7, delta=1e-6) > 0.3
    for bad, name in (((10, 11), "n_correct"), ((11, 5), "n_guesses")):
        with pytest.raises(ValueError, match=name):
            audit.one_run_epsilon(*bad, n_canaries=10)
    with pytest.raises(ValueError, match="n_canaries"):
        audit.one_run_epsilon(1, 1, n_canaries=10**400)
    with pytest.raises(ValueError, match="level"):
        audit.one_run_epsilon(1, 1, n_canaries=10, level=1.0)
    with pytest.raises(ValueError, match="n_guesses"):
        audit.one_run_epsilon(1.5, 1, n_canaries=10)
    with pytest.raises(TypeError, match="n_guesses"):
        audit.one_run_epsilon(None, 1, n_canaries=10)


def test_audit_scores_reports_and_refuses():
    rng = np.random.default_rng(3)
    members = rng.random(4000) < 0.5
    scores = rng.normal(1.0 * members, 1.0)
    a = audit.audit_scores(scores, members, fprs=(0.01, 0.1))
    assert a.interval_level == pytest.approx(1 - 0.05 / 4) and a.method == "intervals"
    assert 0 < a.epsilon_lower < 3.0 and "jointly at 0.95" in str(a)
    fpr, tpr = a.roc
    assert fpr[0] == 0 and tpr[-1] == 1 and np.all(np.diff(fpr) >= 0)
    assert a.to_dict()["rows"][1]["target_fpr"] == 0.1
    b = audit.audit_scores(scores, members.astype(int), fprs=(0.01,), method="one-run")
    assert b.one_run["n_canaries"] == 4000 and b.epsilon_lower <= 2.0
    with pytest.raises(ValueError, match="score 3999 is nan"):
        audit.audit_scores(np.r_[scores[:-1], np.nan], members)
    with pytest.raises(ValueError, match="members must be 0 or 1"):
        audit.audit_scores(scores, np.r_[members[:-1].astype(int), 2])
    with pytest.raises(ValueError, match="fprs 0.001 needs at least 1000 non-members"):
        audit.audit_scores(scores[:500], members[:500], fprs=(1e-3,))
    with pytest.raises(ValueError, match="fair coin"):
        audit.audit_scores(scores, np.arange(4000) < 400, method="one-run")
    with pytest.raises(ValueError, match="groups must name at least two"):
        audit.audit_scores(scores, members, groups=np.zeros(4000))
    with pytest.raises(ValueError, match="method"):
        audit.audit_scores(scores, members, method="bootstrap")


def test_one_run_audit_on_digits(data):
    a = audit.one_run_audit(data, sigma=0.0, q=0.1, epochs=50, n_canaries=256, n_train=200, seed=0)
    assert a.epsilon_lower > 0.5 and a.n_correct <= a.n_guesses          # no noise: the canaries are found
    b = audit.one_run_audit(data, sigma=1.0, q=0.1, epochs=50, n_canaries=256, n_train=200, seed=0)
    assert b.epsilon_lower <= sgm.epsilon(0.2, 1.0, b.steps, 1e-5)


def test_one_run_guesses_do_not_follow_the_order_of_tied_scores():
    """Scores that say nothing (two values, independent of membership), members listed first: guessing the first
    rows among ties would be right on every guess; ties are broken independently of the data, so nothing is
    refuted (the reviewer's reproducer gave 4.14)."""
    rng = np.random.default_rng(0)
    m = rng.random(4000) < 0.5
    s = (rng.random(4000) < 0.5).astype(float)
    o = np.argsort(~m, kind="stable")
    assert audit.audit_scores(s[o], m[o], fprs=(), method="one-run").epsilon_lower == 0.0
