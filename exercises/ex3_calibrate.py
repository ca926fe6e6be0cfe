"""Chapter 3 exercise "Extend dpmia: calibrate the noise to an ε". Write the function below;
``pytest exercises/test_ex3_calibrate.py`` tells you when it is right."""


def calibrate_sigma_for_epsilon(q, steps, eps, delta):
    """Smallest noise multiplier (to relative 1e-4) whose certified ε(δ) (``sgm.epsilon``) is at most ``eps``."""
    raise NotImplementedError("Exercise: write calibrate_sigma_for_epsilon")
