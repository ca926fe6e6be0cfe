"""Chapter 4 exercise "Extend dpmia: a heterogeneous schedule". Write the function below;
``pytest exercises/test_ex4_schedule.py`` tells you when it is right."""


def glrt_epsilon_schedule(delta, d, sensitivities, sigmas):
    """The GLRT adversary's ε at ``delta`` for releases with different noise levels and a shared direction."""
    raise NotImplementedError("Exercise: write glrt_epsilon_schedule")
