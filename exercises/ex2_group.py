"""Chapter 2 exercise "Extend dpmia: group precision". Write the function below;
``pytest exercises/test_ex2_group.py`` tells you when it is right."""


def posterior_upper_group(eps, prior, k):
    """Largest posterior that all ``k`` records were in the training set, under an ε-DP mechanism."""
    raise NotImplementedError("Exercise: write posterior_upper_group")
