"""Chapter 7 exercise "Extend dpmia: an audit of the updates". Write the function below;
``pytest exercises/test_ex7_updates.py`` tells you when it is right."""


def update_attack_scores(q, sigma, steps, n_models, rng, canaries=16):
    """Membership scores of an attacker who sees every noisy update of DP-SGD (Chapter 3's game), for
    ``canaries`` canaries in each of ``n_models`` runs: ``(scores, members, groups)``, groups = the run of each."""
    raise NotImplementedError("Exercise: write update_attack_scores")
