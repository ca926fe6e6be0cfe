"""Exercise 1.10 (Chapter 1, "Extend dpmia: the Laplace mechanism's privacy profile"). Write the function below;
``pytest exercises/test_ex1_laplace.py`` tells you when it is right."""


def laplace_delta(eps, scale, sensitivity=1.0):
    """Tight δ(ε) of the Laplace mechanism with noise scale ``scale`` and sensitivity ``sensitivity``."""
    raise NotImplementedError("Exercise: write laplace_delta")
