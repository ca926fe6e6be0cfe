"""Reference solution of the Chapter 4 exercise "a heterogeneous schedule"."""
from dpmia import glrt


def glrt_epsilon_schedule(delta, d, sensitivities, sigmas):
    r"""The GLRT adversary's :math:`\varepsilon(\delta)` for releases with sensitivities :math:`\Delta_i` and noise
    :math:`\sigma_i` along a shared direction: the composition is one release with noncentrality
    :math:`\lambda=\sum_i\Delta_i^2/\sigma_i^2` (Theorem 2 of Kaissis et al.), read by ``glrt.epsilon``.
    """
    if len(sensitivities) != len(sigmas):
        raise ValueError(f"sensitivities and sigmas must have the same length, got {len(sensitivities)} "
                         f"and {len(sigmas)}")
    return glrt.epsilon(delta, d, glrt.noncentrality_heterogeneous(sensitivities, sigmas))
