"""Chapter 6 exercise "Extend dpmia: a pool of size αn". Write the function below;
``pytest exercises/test_ex6_pool.py`` tells you when it is right."""


def exponential_mechanism_alpha(losses, beta, n):
    """PMP ε̃ of the exponential mechanism when D is a uniformly random n-subset of the pool's αn points
    (the columns of ``losses``, shape (m candidates, αn)), by enumeration."""
    raise NotImplementedError("Exercise: write exponential_mechanism_alpha")
