"""Reference solution of the Chapter 6 exercise "a pool of size αn"."""
import itertools

import numpy as np
from scipy.special import logsumexp


def exponential_mechanism_alpha(losses, beta, n):
    r"""PMP :math:`\tilde\varepsilon` of the exponential mechanism :math:`P(w\mid D)\propto\exp(-\beta\,
    \mathrm{mean}_{i\in D}\,\ell(w,i))` when :math:`D` is a uniformly random ``n``-subset of a pool of
    :math:`|X|=\alpha n` points (footnote 1 of Lowy et al.: :math:`\Pr[x\in D]=1/\alpha`).

    The attacker's likelihood ratio for membership of :math:`x` given the output :math:`w` is the ratio of the
    average of :math:`P(w\mid D)` over the subsets that hold :math:`x` to the average over those that do not, so
    :math:`\tilde\varepsilon=\max_{x,w}|\ln(\mathrm{mean}_{D\ni x}P(w\mid D)/\mathrm{mean}_{D\not\ni x}P(w\mid D))|`;
    at :math:`\alpha=2` both sets of subsets have the same size and this is ``pmp.exponential_mechanism``.
    Enumerates every subset (small pools only), in log space.
    """
    losses = np.asarray(losses, dtype=float)
    m, size = losses.shape
    if not 1 <= n < size:
        raise ValueError(f"n must be between 1 and the pool size minus 1 ({size - 1}), got {n}")
    subsets = np.array(list(itertools.combinations(range(size), n)))
    member = np.zeros((len(subsets), size), dtype=bool)
    member[np.arange(len(subsets))[:, None], subsets] = True
    scores = -beta * losses[:, subsets].mean(axis=2)                 # (m, subsets)
    log_p = scores - logsumexp(scores, axis=0, keepdims=True)        # log P(w | D)
    eps = 0.0
    for x in range(size):
        inside, outside = member[:, x], ~member[:, x]
        lin = logsumexp(log_p[:, inside], axis=1) - np.log(inside.sum())
        lout = logsumexp(log_p[:, outside], axis=1) - np.log(outside.sum())
        eps = max(eps, float(np.max(np.abs(lin - lout))))
    return eps
