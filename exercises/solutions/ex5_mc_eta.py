"""Reference solution of the Chapter 5 exercise "Monte Carlo eta"."""
import numpy as np

from dpmia import mip


def mc_eta_mean_laplace(values, b, n_draws, rng):
    r"""Monte Carlo estimate of :math:`\eta` for the mean of a uniformly random half of ``values`` plus Laplace(0, b).

    For each target value with exact laws :math:`L` (``mip.mean_laws``): draw the membership bit (probability
    1/2), a lattice point from :math:`L.p_{\rm in}` or :math:`L.p_{\rm out}` and the noise; the posterior is
    :math:`f_{\rm in}/(f_{\rm in}+f_{\rm out})` with :math:`f=\sum_s p(s)\,\mathrm{Lap}(\hat\theta;\theta_s,b)`, and the
    Bayes attacker's accuracy :math:`\tfrac12+\eta(x^*)` is the mean of
    :math:`\max(\text{posterior}, 1-\text{posterior})`.
    Returns ``(estimate, standard_error)`` for the target with the largest estimate.
    """
    best = (-np.inf, 0.0)
    for laws in mip.mean_laws(values).values():
        atoms = laws.atoms
        member = rng.random(n_draws) < 0.5
        idx = np.where(member, rng.choice(atoms.size, n_draws, p=laws.p_in / laws.p_in.sum()),
                       rng.choice(atoms.size, n_draws, p=laws.p_out / laws.p_out.sum()))
        theta = atoms[idx] + rng.laplace(0.0, b, n_draws)
        correct = np.empty(n_draws)
        for start in range(0, n_draws, 2000):        # the n x S kernel in pieces
            t = theta[start:start + 2000, None]
            kernel = np.exp(-np.abs(t - atoms[None, :]) / b)
            f_in, f_out = kernel @ laws.p_in, kernel @ laws.p_out
            post = f_in / (f_in + f_out)
            correct[start:start + 2000] = np.maximum(post, 1.0 - post)
        est = correct.mean() - 0.5
        if est > best[0]:
            best = (float(est), float(correct.std(ddof=1) / np.sqrt(n_draws)))
    return best
