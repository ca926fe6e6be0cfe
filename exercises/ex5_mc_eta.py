"""Chapter 5 exercise "Extend dpmia: Monte Carlo eta". Write the function below;
``pytest exercises/test_ex5_mc_eta.py`` tells you when it is right."""


def mc_eta_mean_laplace(values, b, n_draws, rng):
    """Monte Carlo estimate of η for the mean of a random half of ``values`` plus Laplace(0, b) noise, as
    ``(estimate, standard_error)`` for the worst target value."""
    raise NotImplementedError("Exercise: write mc_eta_mean_laplace")
