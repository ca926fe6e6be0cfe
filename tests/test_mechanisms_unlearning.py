"""dpmia.mechanisms (exact posteriors) and dpmia.unlearning (deletion capacity)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import bounds as b
from dpmia import mechanisms as m
from dpmia import unlearning as u


@pytest.mark.parametrize("eps,p", [(1, 0.5), (2, 0.01), (0.1, 0.3), (5, 0.001)])
def test_randomized_response_attains_theorem1(eps, p):
    hi, lo = m.randomized_response_posteriors(eps, p)
    assert hi == pytest.approx(b.posterior_upper(eps, p), rel=1e-12)
    assert lo == pytest.approx(b.posterior_lower(eps, p), rel=1e-12)


def test_enumeration_lemma1_and_sum_release_agree():
    probs = np.array([0.3, 0.5, 0.9])
    masks, w = m.enumerate_datasets(probs)
    assert masks.shape == (8, 3) and w.sum() == pytest.approx(1.0)
    # Lemma 1: Pr(D) (1-p*)/p* = Pr(D \ {x*}) for the pairing D -> D minus x*
    for j in np.flatnonzero(masks[:, 0]):
        partner = np.flatnonzero((masks[:, 1:] == masks[j, 1:]).all(axis=1) & ~masks[:, 0])[0]
        assert w[j] * (1 - probs[0]) / probs[0] == pytest.approx(w[partner], rel=1e-14)
    # brute-force posterior of the sum release equals the convolution
    vals = np.array([1, 2, 1])
    y, post = m.sum_release_posteriors(vals, probs, 0, 0.7, margin=5)
    sums = masks.astype(int) @ vals
    for yy, pp in zip(y, post):
        lik = w * m.geometric_pmf(yy - sums, 0.7, 2)
        assert pp == pytest.approx(lik[masks[:, 0]].sum() / lik.sum(), rel=1e-12)


@settings(max_examples=20)
@given(st.integers(3, 12), st.floats(0.1, 3.0), st.integers(0, 10_000))
def test_every_exact_posterior_inside_theorem1_and_extremes_attained(n, eps, seed):
    rng = np.random.default_rng(seed)
    vals = rng.integers(1, 4, n)
    probs = rng.uniform(0.02, 0.98, n)
    t = int(np.argmax(vals))  # v_t = sensitivity: the tails attain U and L
    y, post = m.sum_release_posteriors(vals, probs, t, eps)
    lo, hi = b.posterior_lower(eps, probs[t]), b.posterior_upper(eps, probs[t])
    assert np.all(post >= lo * (1 - 1e-9)) and np.all(post <= hi * (1 + 1e-9))
    assert post.max() == pytest.approx(hi, rel=1e-9) and post.min() == pytest.approx(lo, rel=1e-9)


def test_joint_nonmembership_conditional_independence_fails_but_Lm_holds():
    y, joint, prod = m.joint_nonmember_posterior(np.ones(10, dtype=int), np.full(10, 0.2), range(5), 1.0)
    assert np.abs(joint - prod).max() > 1e-3
    Lm = u.joint_nonmember_lower(1.0, 0.2, 5)
    assert np.all(joint >= Lm * (1 - 1e-12))
    assert joint.min() == pytest.approx(Lm, rel=1e-9)


def test_spec003_deletion_capacity():
    c = [1, 100, 200]
    np.testing.assert_allclose(u.deletion_capacity(1, c, 10_000, 0.8), [820.929, 8.238, 4.133], rtol=1e-4)
    np.testing.assert_allclose(u.deletion_capacity(1, c, 10_000, 0.8, variant="as_printed"),
                               [6065.176, 60.162, 29.833], rtol=1e-4)
    from scipy.optimize import brentq
    for variant, cross in [("corrected", 28.666), ("as_printed", 77.635)]:
        root = brentq(lambda x, variant=variant: u.deletion_capacity(1, x, 10_000, 0.8, variant=variant) - x, 1, 199)
        assert root == pytest.approx(cross, abs=1e-3)
    small = 1e-4
    ratio = (u.deletion_capacity(1, small, 10_000, 0.8, variant="as_printed")
             / u.deletion_capacity(1, small, 10_000, 0.8))
    assert ratio == pytest.approx(np.exp(2.0), rel=1e-3)
    assert u.deletion_capacity(1, 100, 10_000, 0.8, integer=True) == 8.0


BAD = [
    (u.deletion_capacity, dict(eps=1, c=0, n_pool=100, B=0.8), ValueError, "c"),
    (u.deletion_capacity, dict(eps=1, c=100, n_pool=100, B=0.8), ValueError, "c"),
    (u.deletion_capacity, dict(eps=1, c=10, n_pool=100, B=1.0), ValueError, "B"),
    (u.deletion_capacity, dict(eps=1, c=10, n_pool=100, B=0.5, variant="x"), ValueError, "variant"),
    (u.deletion_capacity, dict(eps=-1, c=10, n_pool=100, B=0.5), ValueError, "eps"),
    (u.joint_nonmember_lower, dict(eps=1, prior=0.2, m=1.5), ValueError, "m"),
    (u.nonmember_lower_uniform, dict(eps=1, c=10, n_pool=True), TypeError, "n_pool"),
    (m.enumerate_datasets, dict(probs=np.full(17, 0.5)), ValueError, "enumeration"),
    (m.sum_release_posteriors, dict(values=[1.5, 2], probs=[0.5, 0.5], target=0, eps=1), TypeError, "values"),
    (m.sum_release_posteriors, dict(values=[1, 2], probs=[0.5, 0.5], target=2, eps=1), ValueError, "target"),
    (m.sum_release_posteriors, dict(values=[1, 2], probs=[0.5], target=0, eps=1), ValueError, "same length"),
    (m.sum_release_posteriors, dict(values=[1, 2], probs=[0.5, 0.5], target=0, eps=0), ValueError, "eps"),
    (m.geometric_pmf, dict(k=np.array([1.0]), eps=1), TypeError, "k"),
    (m.randomized_response_posteriors, dict(eps=1, prior=1.5), ValueError, "prior"),
]


@pytest.mark.parametrize("fn,kwargs,exc,name", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_bad_input_raises_clearly(fn, kwargs, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        fn(**kwargs)
