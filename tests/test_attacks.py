"""dpmia.attacks: simulated games agree with the exact quantities and stay under the bounds."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import attacks as at
from dpmia import bounds as b
from dpmia import gaussian as g


def test_clopper_pearson_known_values():
    lo, hi = at.clopper_pearson(0, 10, 0.95)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-12)
    lo, hi = at.clopper_pearson(10, 10, 0.95)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10), rel=1e-12)
    lo, hi = at.clopper_pearson(50, 100, 0.95)
    assert lo == pytest.approx(0.3983, abs=1e-4) and hi == pytest.approx(0.6017, abs=1e-4)


@pytest.mark.parametrize("mu", [0.0, 0.3, 1.0, 3.0])
def test_gaussian_game_within_four_standard_errors(mu):
    r = at.gaussian_game(mu, 100_000, seed=1)
    assert abs(r.advantage - g.tv(mu)) <= 4 * r.advantage_se + 1e-12
    lo, hi = r.advantage_ci
    assert lo <= r.advantage <= hi


@pytest.mark.parametrize("fpr", [1e-3, 1e-2, 0.2])
def test_lr_attack_at_fpr_lands_on_the_exact_roc(fpr):
    r = at.gaussian_lr_attack_at_fpr(1.0, fpr, 400_000, seed=2)
    exact = g.tpr_at_fpr(fpr, 1.0)
    se = np.sqrt(exact * (1 - exact) / r.n_in)
    assert abs(r.tpr - exact) <= 4 * se
    assert abs(r.fpr - fpr) <= 4 * np.sqrt(fpr * (1 - fpr) / r.n_out)


def test_empirical_roc_shape_and_auc():
    si, so = at.gaussian_llr_scores(1.0, 20_000, 20_000, seed=3)
    fpr, tpr = at.empirical_roc(si, so)
    assert fpr[0] == tpr[0] == 0.0 and fpr[-1] == tpr[-1] == 1.0
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    auc = np.trapezoid(tpr, fpr)
    from scipy.special import ndtr
    assert auc == pytest.approx(ndtr(1.0 / np.sqrt(2)), abs=0.01)  # AUC of N(0,1) vs N(1,1)


def test_empirical_roc_ties():
    fpr, tpr = at.empirical_roc([1.0, 1.0], [1.0, 0.0])
    np.testing.assert_allclose(fpr, [0, 0.5, 1.0])
    np.testing.assert_allclose(tpr, [0, 1.0, 1.0])


@settings(max_examples=15)
@given(st.floats(0.0, 4.0), st.floats(-2.0, 4.0), st.integers(0, 10_000))
def test_no_attack_beats_the_dp_bounds(mu, tau, seed):
    # every simulated attack (any threshold) stays inside the (eps, delta(eps)) region, up to noise
    # 4 standard errors (floored at 1/n): a 95 % interval would fail by chance in one run in ~20
    r = at.gaussian_game(mu, 20_000, threshold=tau, seed=seed)
    eps = 1.0
    bound = b.humphries_advantage(eps, g.delta(eps, mu))
    slack = 4 * max(r.advantage_se, 1 / 20_000)
    assert r.advantage - slack <= g.tv(mu) <= bound + 1e-12


def test_reproducible_with_seed_and_rng():
    r1 = at.gaussian_game(1.0, 1000, seed=5)
    r2 = at.gaussian_game(1.0, 1000, rng=np.random.default_rng(5))
    assert r1 == r2


def test_play_game_generic():
    r = at.play_game(lambda g_, k: g_.integers(0, 2, k), lambda g_, k: np.ones(k),
                     lambda y: y > 0.5, 10_000, seed=0)
    assert r.tpr == 1.0 and abs(r.fpr - 0.5) < 0.03


BAD = [
    (at.gaussian_game, dict(mu=-1.0, n_trials=10, seed=0), ValueError, "mu"),
    (at.gaussian_game, dict(mu=1.0, n_trials=1, seed=0), ValueError, "n_trials"),
    (at.gaussian_game, dict(mu=1.0, n_trials=2.5, seed=0), ValueError, "n_trials"),
    (at.gaussian_game, dict(mu=1.0, n_trials=True, seed=0), TypeError, "n_trials"),
    (at.gaussian_game, dict(mu=1.0, n_trials=10), ValueError, "seed"),
    (at.gaussian_game, dict(mu=1.0, n_trials=10, seed=-1), ValueError, "seed"),
    (at.gaussian_game, dict(mu=1.0, n_trials=10, rng=5), TypeError, "rng"),
    (at.gaussian_game, dict(mu=1.0, n_trials=10, seed=0, level=1.0), ValueError, "level"),
    (at.gaussian_lr_attack_at_fpr, dict(mu=1.0, fpr=0.0, n_trials=10, seed=0), ValueError, "fpr"),
    (at.clopper_pearson, dict(k=11, n=10), ValueError, "k"),
    (at.clopper_pearson, dict(k=1, n=0), ValueError, "n"),
    (at.empirical_roc, dict(scores_in=[1.0, float("nan")], scores_out=[0.0]), ValueError, "scores_in"),
    (at.gaussian_llr_scores, dict(mu=1.0, n_in=0, n_out=5, seed=0), ValueError, "n_in"),
]


@pytest.mark.parametrize("fn,kwargs,exc,name", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_bad_input_raises_clearly(fn, kwargs, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        fn(**kwargs)


def test_dpsgd_toy_matches_closed_form():
    sigma = 4.0412
    off, mem = at.dpsgd_toy_weights(200_000, sigma, seed=0)
    acc = np.mean((off <= -0.5) == mem)
    exact = g.threshold_accuracy(0.5 / sigma, 1 / sigma)
    assert abs(acc - exact) <= 4 * np.sqrt(exact * (1 - exact) / off.size)
    # the simulated update: members shift by exactly -1 (clipped gradient +1), noise std sigma
    assert abs(off[~mem].mean()) < 4 * sigma / np.sqrt((~mem).sum())
    assert abs(off[mem].mean() + 1) < 4 * sigma / np.sqrt(mem.sum())
    with pytest.raises(ValueError, match="sigma"):
        at.dpsgd_toy_weights(10, 0.0, seed=0)


def test_hamming_ball_game_limits():
    from dpmia import sgm
    r = at.hamming_ball_game(10**7, 1000, 0.1, 1.0, 50, 20_000, seed=3)   # essentially no duplicates
    assert abs(r["ima_lr"].advantage - sgm.advantage_bound(0.1, 1.0, 50)) <= 4 * r["ima_lr"].advantage_se
    assert abs(r["fma"].advantage - sgm.final_model_tv(0.1, 1.0, 50)) <= 4 * r["fma"].advantage_se
    with pytest.raises(ValueError, match="d"):
        at.hamming_ball_game(0, 10, 0.1, 1.0, 5, 10, seed=0)
