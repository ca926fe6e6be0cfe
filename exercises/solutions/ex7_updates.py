"""Reference solution of the Chapter 7 exercise "an audit of the updates"."""
import numpy as np


def update_attack_scores(q, sigma, steps, n_models, rng, canaries=16):
    r"""Scores of the attacker who sees every noisy update (Chapter 3's game, Theorem 6's pair).

    Each canary has its own gradient direction (orthogonal to the others' and to the rest of the data), so
    along it step :math:`t` releases :math:`u_t = B_t\,m + N(0,\sigma^2)`, with :math:`m` the membership bit and
    :math:`B_t\sim\mathrm{Bernoulli}(q)` Poisson sampling (clipped gradient norm 1). The optimal score is the
    log-likelihood ratio :math:`\sum_t\ln\big(1-q+q\,e^{(2u_t-1)/(2\sigma^2)}\big)`. Each canary is a member
    with probability 1/2; ``groups`` is the run each canary belongs to.
    """
    n = n_models * canaries
    members = rng.random(n) < 0.5
    sampled = rng.random((n, steps)) < q
    updates = rng.normal(0.0, sigma, (n, steps)) + (members[:, None] & sampled)
    scores = np.log1p(q * np.expm1((2.0 * updates - 1.0) / (2.0 * sigma ** 2))).sum(axis=1)
    return scores, members, np.repeat(np.arange(n_models), canaries)
