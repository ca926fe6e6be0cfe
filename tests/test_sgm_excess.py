"""dpmia.sgm: how the far-tail read-outs certify a single-step grid pair against the true one (white box).

The dominated pair's excess over the true profile is compared cell by cell with the profile's floor where its
lowered values are 0, and its absolute part is weighted by e^{-lambda eps}, which the true step's moment generating
function carries through T steps (sgm._tiltexcess); that function is bounded from upper profile values on the grid
(sgm._stepmgf), checked here against independent quadrature.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate

from dpmia import sgm
from dpmia.sgm._chain import _single_pair, _sym_pair
from dpmia.sgm._setting import check_run
from dpmia.sgm._tiltstep import _reference, _symmetric_reference

#: a run whose far tail at delta 1e-188 is set by two sampled steps of 15,710 (a QA sweep's draw)
TWO_STEPS = (6.756e-06, 0.8907, 15710)


def _exact_log_mgf(q, sigma, lam, which):
    r""":math:`\ln \mathbb E_Q[e^{\lambda L}] = \ln \int Q^{\lambda+1} P^{-\lambda}` by adaptive quadrature over the
    output (independent of dpmia): add (Q the mixture, P = N(0)), remove (the two swapped) or replace-one."""
    def log_dens(t, m):
        return -0.5 * ((t - m) / sigma) ** 2 - math.log(sigma * math.sqrt(2.0 * math.pi))

    def log_mix(t, m):
        a, b = math.log1p(-q) + log_dens(t, 0.0), math.log(q) + log_dens(t, m)
        return max(a, b) + math.log1p(math.exp(-abs(a - b)))

    def f(t):
        if which == "add":
            a, b = log_mix(t, 1.0), log_dens(t, 0.0)
        elif which == "remove":
            a, b = log_dens(t, 0.0), log_mix(t, 1.0)
        else:
            a, b = log_mix(t, 1.0), log_mix(t, -1.0)
        return math.exp(min((lam + 1.0) * a - lam * b, 700.0))
    # (the integrand's peak lies near t = lam + 1 for the add direction: split the range there)
    pts = sorted({-12.0 * sigma - 2.0, 0.0, 1.0, lam + 1.0, lam + 1.0 + 14.0 * sigma})
    total = sum(integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=400)[0] for a, b in zip(pts, pts[1:]))
    return math.log(total)


@pytest.mark.parametrize("q, sigma, h", [(0.01, 1.0, 0.01), (1e-3, 2.0, 0.005), (0.3, 0.5, 0.02), (0.1, 5.0, 0.001)])
@pytest.mark.parametrize("lam", [0.5, 2.0, 7.3])
def test_the_moment_bound_lies_above_an_independent_quadrature_and_close(q, sigma, h, lam):
    run = check_run(q, sigma, 10)
    rr = check_run(q, sigma, 10, neighbours="replace-one")
    refs = {"add": _reference(run, _single_pair(q, sigma, h, "optimistic", "add", 1e-300), "optimistic", "add",
                              1e-300),
            "remove": _reference(run, _single_pair(q, sigma, h, "optimistic", "remove", 1e-300), "optimistic",
                                 "remove", 1e-300),
            "replace": _symmetric_reference(rr, _sym_pair(q, sigma, "poisson", h, "optimistic", 1e-300))}
    for which, ref in refs.items():
        exact = _exact_log_mgf(q, sigma, lam, which)
        bound = ref.log_mgf(lam)
        assert bound >= exact - 1e-12 * abs(exact), (which, bound, exact)
        # (the chords' pair: about (lam h)^2 above, relative to the log of a moment near 1)
        assert bound - exact <= 0.05 * abs(exact) + 2.0 * (lam * h) ** 2, (which, bound, exact)


def test_the_moment_bound_of_the_exact_binomial_orders():
    # integer orders: the binomial expansion (Mironov et al. 2019) at alpha = lam + 1
    from dpmia.sgm._rdp import rdp
    for q, sigma, h in ((6.756e-6, 0.8907, 1.2e-4), (0.01, 1.0, 0.01)):
        run = check_run(q, sigma, 10)
        ref = _reference(run, _single_pair(q, sigma, h, "optimistic", "add", 1e-300), "optimistic", "add", 1e-300)
        for lam in (1, 5, 19):
            exact = lam * rdp(q, sigma, lam + 1)
            assert exact <= ref.log_mgf(float(lam)) <= exact + 0.05 * exact + 2.0 * (lam * h) ** 2


def test_a_dominated_pair_keeps_its_tail_next_to_a_first_cell_that_holds_the_bulk():
    # the cell after the merged one holds most of the P-mass above 0, and its chord gap exceeded the profile at its
    # right end: lowered to 0 there, the pair's minorant was 0 above it, and its mass above loss 5 was 1e-8 of the
    # dominating pair's (h = 1.19e-4); its ends now share that cell's lowering
    q, sigma = TWO_STEPS[:2]
    for h in (1.2e-4, 1.1920958813826134e-4):
        op, pe = (_single_pair(q, sigma, h, kind, "add", 5.6e-199) for kind in ("optimistic", "pessimistic"))
        above = [float(np.sum(p.pmf[p.losses > 5.0])) for p in (op, pe)]
        assert 0.999 * above[1] <= above[0] <= above[1] * (1.0 + 1e-9)


def test_a_far_delta_set_by_two_sampled_steps_within_tol():
    # one sampled step's delta at 23.445 is 2.5e-197, two steps' tail sets it near 2.4e-188: the dominated pair's
    # absolute excess next to the bulk (1e-20 a step), charged 15,710-fold, made its lower end 0 (1e9 wide)
    q, sigma, steps = TWO_STEPS
    lo, hi = sgm.delta_bracket(q, sigma, steps, 23.445)
    assert 0.0 < lo <= hi and hi - lo <= 1e-3 * hi, (lo, hi)
    elo, ehi = sgm.epsilon_bracket(q, sigma, steps, 2.46e-188)
    assert ehi - elo <= 1e-3 * ehi
    # consistent: delta at eps's ends on either side of the target
    assert sgm.delta_bracket(q, sigma, steps, elo)[1] >= 2.46e-188 >= sgm.delta_bracket(q, sigma, steps, ehi)[0]


def test_a_weighted_excess_is_charged_where_the_dominated_pair_is_raised():
    # the certificate can fail: the dominated pair's atoms in the two steps' region raised by half (no longer
    # dominated), its lower end must still lie below the true delta, which the dominating pair bounds from above
    from dpmia.sgm import _fartail as FT
    from dpmia.sgm import _tilt
    run = check_run(*TWO_STEPS)
    e, d = 23.445, 8.7e-192
    one_tail = FT._one_tail(run, d, 0.1)
    h = 1.2e-4
    pe, op = (_single_pair(run.q, run.sigma, h, kind, "add", one_tail) for kind in ("pessimistic", "optimistic"))
    refs = (_reference(run, pe, "pessimistic", "add", one_tail), _reference(run, op, "optimistic", "add", one_tail))
    upper, lower = _tilt._tilted_direction(pe, op, refs, run.steps, e, e, 1e-5, _tilt.TILT_MAX_FFT, d)
    up, fair = upper.delta(e)[0], lower.delta(e)[0]
    assert 0.99 * up <= fair <= up
    raised = op.pmf.copy()
    raised[(op.losses > 10.0) & (op.losses < 13.0)] *= 1.5
    bad = dataclasses.replace(op, pmf=raised)
    low = _tilt._tilted_direction(pe, bad, refs, run.steps, e, e, 1e-5, _tilt.TILT_MAX_FFT, d)[1].delta(e)[0]
    assert low <= up


def test_a_dominating_pair_keeps_mass_whose_increments_underflow():
    # replace-one at sigma = 0.01: a sampled step's loss is near 5000, and the profile's increments below loss 1500
    # underflow to 0; the raised slopes took that 0 as a slope bound and put all 0.3 of that mass at +infinity
    pe = _sym_pair(0.3, 0.01, "poisson", 9.93, "pessimistic", 1e-308)
    assert pe.inf_mass <= 1e-12
    assert abs(float(np.sum(pe.pmf[pe.losses > 4000.0])) - 0.3) <= 1e-9
    lo, hi = sgm.epsilon_bracket(0.3, 0.01, 1000, 1e-300, neighbours="replace-one")
    assert hi - lo <= 1e-3 * hi and lo >= 4.3e6


#: a QA sweep's draw whose far delta a finer grid read wider: its dominated pair's atoms were clipped at a kink
KINKED = (1.198629984172291e-06, 0.9702230430667997, 40449, 21.74034797146234)


def test_a_dominated_pair_realises_its_values_where_their_lowering_kinks_them():
    # next to the bulk the lowered values kinked (an atom of -1.1e-10 at h = 8.8e-5); clipped as float noise it
    # raised the atoms' profile 0.7 % to 10 % above the values of 5e-12 at the points below it, and the far tail's
    # lower end by that excess, T-fold: the tilted read-outs take the convex minorant of the values instead (the
    # plain ones keep the clip, and their bits)
    from dpmia.sgm import _fartail as FT
    from dpmia.sgm._tiltexcess import _grid_profile
    run = check_run(*KINKED[:3])
    one_tail = FT._one_tail(run, 9.5e-243, 1e-3)
    for h in (8.844590735485825e-05, 1.276389509e-4):
        op = _single_pair(run.q, run.sigma, h, "optimistic", "add", one_tail, kinks="minorant")
        g, rnd = _grid_profile(op, with_inf=True)
        ref = np.asarray(op.ref, float)
        live = ref > 1e-300
        assert np.max(g[live] * (1.0 + rnd) / ref[live] - 1.0) <= 1e-7      # (it was 0.1)


def test_a_far_delta_is_where_its_passes_meet():
    # two tilted passes, the first 1.33e-3 wide: read together, within tol (each certified, so they meet)
    lo, hi = sgm.delta_bracket(*KINKED)
    assert 0.0 < lo <= hi and hi - lo <= 1e-3 * hi, (lo, hi)
