"""dpmia.sgm's engine (white box): single-step pairs, two-level chains, bulk pairs, far tails and ten million steps."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import pld, sgm


def inside(bracket, ref, tol):
    lo, hi = bracket
    return lo - tol <= ref <= hi + tol


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-4, 0.5), st.floats(0.01, 2.0), st.floats(-3.0, 3.0))
def test_one_step_delta_bracket_contains_both_directions(q, s, e):
    # the accountant's own (anchored) grid pairs at T = 1, both directions, against the exact profile;
    # remove from add: H_a(P||Q) = a H_{1/a}(Q||P) + 1 - a. 1e-12: float error of that identity at |eps| <= 3
    lo, hi = sgm.delta_bracket(q, s, 1, e)
    a = math.exp(e)
    ex = max(float(sgm.profile(e, q, s)[0]), a * float(sgm.profile(-e, q, s)[0]) + 1.0 - a)
    assert lo <= ex + 1e-12 and ex <= hi + 1e-12


def test_optimistic_pair_has_no_mass_at_minus_infinity():
    # regression: P-mass left at -infinity by the optimistic pair made its remove direction claim
    # delta >= 5e-4 at eps = 2e4, above the certified upper end (1e-6)
    lo, hi = sgm.delta_bracket(0.01, 0.01, 10, 2e4)
    assert lo <= hi <= 2e-6
    lo, hi = sgm.epsilon_bracket(0.01, 0.01, 10, 1e-5)
    assert hi - lo <= 1e-3 * hi


@pytest.mark.parametrize("direction", ["add", "remove"])
@pytest.mark.parametrize("q, s, T, h", [(0.01, 1.0, 100, 1e-3), (0.3, 1.0, 3000, 3e-4), (1e-4, 10.0, 500, 1e-6)])
def test_regrid_keeps_each_side(direction, q, s, T, h):
    # a composed pair re-gridded 3, 10 and 50 times coarser: the pessimistic pair stays above the fine
    # one and the optimistic pair below it (with their slack), at every loss, both sides of 0
    from dpmia.sgm import _chain as sgmchain
    fine = sgmchain._composed_pairs(sgm.check_run(q, s, T), h, direction, 1e-10, 2**21)
    for m in (3, 10, 50):
        for f in fine:
            c = pld.regrid(f, m * h)
            assert c.kind == f.kind and c.h == m * h and c.shift == 0.0
            e = np.union1d(np.linspace(f.losses[0] - 1, f.losses[-1] + 1, 3001), c.losses)
            # each read-out rounds outward by 8 (n + 8) u of its value (n its atoms): allow both
            rd = 8 * (f.pmf.size + c.pmf.size + 16) * 1.2e-16 * f.delta(e)
            if f.kind == "pessimistic":
                assert np.all(c.delta(e) >= f.delta(e) - rd - 1e-12)   # double read-outs near 1
                assert abs(c.pmf.sum() + c.inf_mass - (f.pmf.sum() + f.inf_mass)) <= 1e-13
            else:
                # a pair's profile is >= 1 - y; the computed fine one may dip below it by float noise
                line = np.maximum(-np.expm1(np.minimum(e, 0.0)), 0.0)
                # double read-outs near 1
                assert np.all(c.delta(e) <= np.maximum(f.delta(e), line - f.slack_q) + rd + 1e-12)
                assert c.pmf.sum() <= 1.0 + 1e-12 and c.neg_inf_mass >= 0.0


def test_regrid_error_shrinks_with_the_step():
    from dpmia.sgm import _chain as sgmchain
    pe, op = sgmchain._composed_pairs(sgm.check_run(0.01, 1.0, 100), 1e-3, "add", 1e-10, 2**21)
    e = np.linspace(-1, 5, 601)
    gaps = [float(np.max(pld.regrid(pe, h).delta(e) - pld.regrid(op, h).delta(e))) for h in (0.01, 0.04)]
    # 4x the step: 16x the width where the loss has a smooth density, 4x at its near-atoms (the
    # unsampled steps' peak); never worse than first order
    assert gaps[1] >= 3.5 * gaps[0] and gaps[0] <= 2e-4


@pytest.mark.parametrize("q, s, T", [(0.01, 1.0, 5000), (0.3, 1.0, 4096), (1e-4, 10.0, 20000)])
def test_two_level_and_one_level_brackets_agree(q, s, T):
    # both are certified, so they must overlap; two levels are at least as tight at these T
    from dpmia.sgm import _chain as sgmchain
    two = sgm.epsilon_bracket(q, s, T, 1e-5), sgm.advantage_bracket(q, s, T)
    old = sgmchain._SPLIT_STEPS
    try:
        sgmchain._SPLIT_STEPS = 10**12
        sgm.clear_caches()
        one = sgm.epsilon_bracket(q, s, T, 1e-5), sgm.advantage_bracket(q, s, T)
    finally:
        sgmchain._SPLIT_STEPS = old
        sgm.clear_caches()
    for a, b in zip(two, one):
        assert max(a[0], b[0]) <= min(a[1], b[1])


@pytest.mark.parametrize("q, s, T, lo_min, hi_max", [
    (0.3, 0.01, 10**7, 1.50e10, 1.503e10), (0.01, 0.01, 10**7, 5.06e8, 5.063e8), (0.3, 0.1, 10**7, 1.441e8, 1.443e8)])
def test_huge_epsilon_at_ten_million_steps_is_tight(q, s, T, lo_min, hi_max):
    # before the two-level composition no grid fitted: the bracket was [lower at T / 4^k, RDP], up to
    # 100x wide. The ranges here are far wider than the brackets (2e-4 relative)
    lo, hi = sgm.epsilon_bracket(q, s, T, 1e-5)
    assert lo_min <= lo <= hi <= hi_max and hi - lo <= 1e-3 * hi


@pytest.mark.parametrize("q, s, h", [(1.39e-6, 0.308, 2.4e-5), (2.25e-6, 0.618, 4.7e-6), (0.02, 2.0, 1.4e-4),
                                     (0.3, 0.05, 1e-2)])
def test_merged_first_cell_is_dominated(q, s, h):
    # The dominated single-step pair merges every output with loss <= x[k+1] into one atom just above
    # the grid point x[k] (a post-processing of the step, so its compositions are lower bounds). Its
    # profile stays below the exact one in both directions; where nearly all mass sits in a hair
    # above ln(1-q) (tiny q), the first point above the merged cell keeps most of its value, where
    # lowering that cell by its chord gap took all of it.
    from dpmia.sgm import _chain as sgmchain
    from dpmia.sgm import _step as sgmstep
    x, d, _, _, _, _, k = sgmstep._cached_grid(q, s, h, 1e-18, True)[:7]
    assert k >= 0 and x[k] >= math.log1p(-q) - 32 * abs(math.ulp(math.log1p(-q)))   # (a margin of ulps below the atom)
    assert x[0] <= math.log1p(-q)
    op = sgmchain._single_pair(q, s, h, "optimistic", "add", 1e-18)
    e = np.unique(np.concatenate([x[max(k - 5, 0):k + 200], np.linspace(x[0], x[-1], 4001), [0.0]]))
    add = sgm.profile(e, q, s)[0]
    assert np.all(op.delta(e) <= add + 1e-15 + op.slack_q)
    rem = (1.0 - np.exp(e)) + np.exp(e) * sgm.profile(-e, q, s)[0]
    assert np.all(op.reflect().delta(e) <= np.maximum(rem, 0.0) + 1e-15 + op.slack_p * np.exp(np.maximum(e, 0)))
    assert op.delta(x[k + 1]) >= 0.5 * d[k + 1]


def test_dominated_tail_has_no_clipped_kink():
    # At tiny q the single-step tail is far wider than a fine step: dropping the dominated curve to 0
    # within one cell broke convexity, and the clipped atom (5e-11 here) became slack grown T-fold
    # (1.5e-5 at T = 128959, 1 % of the advantage). The tangent to the end keeps it below 1e-15.
    from dpmia.sgm import _chain as sgmchain
    op = sgmchain._single_pair(2.25e-6, 0.618, 4.75e-7, "optimistic", "add", 7.8e-16)
    assert op.slack_q <= 1e-15 and op.slack_p <= 1e-15
    e = np.linspace(op.losses[0], op.losses[-1] + 0.1, 5001)
    assert np.all(op.delta(e) <= sgm.profile(e, 2.25e-6, 0.618)[0] + 1e-15)   # (read-outs of 1 - y round by u)


def test_tiny_q_mid_sigma_lower_end_not_vacuous():
    # the lower end of eps was 0 (the dominated pair collapsed above the unsampled steps' peak) and
    # the advantage bracket 50 % wide
    lo, hi = sgm.epsilon_bracket(1.39e-6, 0.308, 93, 1e-5)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3)
    lo, hi = sgm.advantage_bracket(2.25e-6, 0.618, 128959)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3)


def test_chernoff_window_is_tight_for_concentrated_steps():
    # tiny q: nearly all mass within 1e-5 of the bottom of a support 0.3 wide. With equal bins the
    # bulk sat in one bin whose chord, grown T-fold, put the lower edge 30 sd below the mean
    from dpmia.sgm import _chain as sgmchain
    one = sgmchain._single_pair(2.25e-6, 0.618, 4.83e-7, "pessimistic", "add", 5e-17)
    mean = 128959 * float(np.sum(one.pmf * one.losses))
    lo = pld.compose(one, 128959, tail=6.7e-12).losses[0]
    assert mean - 0.03 <= lo < mean - 0.005


@pytest.mark.parametrize("q, s, h", [(0.01, 1.0, 1e-4), (3.6e-6, 334.0, 1e-10), (0.3, 0.05, 1e-2),
                                     (2.25e-6, 0.618, 4.8e-7)])
def test_dominating_atoms_keep_to_their_share(q, s, h):
    # the atoms' Q-mass at most 1 - inf_mass (reflected, more would be P-mass above 1, lowering the
    # remove profile T-fold) and at least that minus 1e-18 (what is missing sits at +infinity)
    from dpmia.sgm import _chain as sgmchain
    pe = sgmchain._single_pair(q, s, h, "pessimistic", "add", 1e-18)
    total = np.sum(pe.pmf, dtype=np.longdouble)
    assert total <= 1 - np.longdouble(pe.inf_mass)
    assert total + np.longdouble(pe.inf_mass) >= 1
    assert 1 - np.longdouble(pe.inf_mass) - total <= 1e-18
    rem = sgmchain._single_pair(q, s, h, "pessimistic", "remove", 1e-18)
    # (at the pair's own losses (offset + s) h + shift in extended precision, up to the 1e-17 this sum rounds by; the
    # excess was 4u = 4.4e-16. The losses rounded to double would be off by u |x|: 4e-15 of P-mass at (0.3, 0.05))
    ld = np.longdouble
    x = (rem.offset + np.arange(rem.pmf.size, dtype=ld)) * ld(rem.h) + ld(rem.shift)
    assert np.sum(rem.pmf * np.exp(-x)) <= 1 - ld(rem.neg_inf_mass) + 1e-17


@pytest.mark.parametrize("q, s, h", [(3.63643308967474e-06, 333.8261569071428, 3.942845426319683e-09),
                                     (0.01, 1.0, 1e-4), (2.25e-6, 0.618, 4.8e-7), (0.3, 0.05, 1e-2)])
def test_dominated_atoms_hold_their_masses_to_extended_precision(q, s, h):
    # the dominated pair's Q-mass at most 1 and its P-mass at least 1 (in extended precision): P-mass short of 1 would
    # raise the profile left of its support, and that is slack composition multiplies T-fold (at the first setting
    # double products and a scaling left 2.3e-16 a step, 1.4e-3 of eps(1e-5) over 8.5e6 steps)
    from dpmia.sgm import _chain as sgmchain
    op = sgmchain._single_pair(q, s, h, "optimistic", "add", 1e-18)
    x = op.losses.astype(np.longdouble)
    # (1e-18: this sum's own rounding over 4e4 atoms)
    assert np.sum(op.pmf, dtype=np.longdouble) <= 1 + np.longdouble(1e-18)
    assert np.sum(op.pmf * np.exp(-x)) >= 1 - np.longdouble(1e-18)
    # (the measured construction slack is float noise: 2.2e-17 where numpy's exp and log take their AVX2 paths, at
    # most 1e-17 with AVX-512; the regression this guards against left 2.3e-16)
    assert op.slack_q <= 5e-17


def test_both_directions_consistent_at_ten_million_steps():
    # at (3.6e-6, 334, 8.5e6) the dominating remove pair gave eps below the dominated one's (4u of
    # excess P-mass a step, grown 8.5e6-fold)
    from dpmia.sgm import _chain as sgmchain
    q, s, T, h = 3.63643308967474e-06, 333.8261569071428, 8475262, 2.76e-9
    eps = {(k, d): sgmchain._composed(sgm.check_run(q, s, T), h, k, d, 1e-11, 2**21).epsilon(1e-5)
           for k in ("pessimistic", "optimistic") for d in ("add", "remove")}
    for d in ("add", "remove"):
        assert eps["optimistic", d] <= eps["pessimistic", d]


def test_tiny_q_large_sigma_ten_million_steps_is_tight():
    # eps about 5.7e-6: every 1e-16 a step (P-mass rounding, a shed margin) becomes 1e-9 of delta
    # after 8.5e6 steps, 1e-3 of eps; the bracket was 1.5e-3 and 2.1e-3 wide with such errors
    lo, hi = sgm.epsilon_bracket(3.63643308967474e-06, 333.8261569071428, 8475262, 1e-5)
    assert 5.70e-6 <= lo <= hi <= lo * (1 + 1e-3) and hi <= 5.73e-6


@pytest.mark.parametrize("q, s, e", [(1e-6, 0.05, 0.0), (1e-5, 0.05, 0.0), (1e-4, 0.5, -0.3), (1e-4, 1.0, -0.3),
                                     (0.3, 100.0, -0.3)])
def test_one_step_delta_bracket_contains_the_exact_value(q, s, e):
    # found by an independent check: lower ends 3e-17 to 2e-13 above the exact value, from the read-out's
    # cancellation (Q-mass minus y P-mass, both near 1); the positive-term read-out rounds outward
    add = float(sgm.profile(e, q, s)[0])
    rem = -math.expm1(e) + math.exp(e) * float(sgm.profile(-e, q, s)[0])
    lo, hi = sgm.delta_bracket(q, s, 1, e)
    assert lo <= max(add, rem) <= hi


def test_tiny_delta_at_ten_million_steps_not_vacuous():
    # delta = 1e-9 is below the grid's float slack after 1e7 steps: the upper end was Renyi
    # accounting's, 695326 for a true value near 100; the sampling-pattern bound gives 105
    lo, hi = sgm.epsilon_bracket(1e-6, 0.2, 10**7, 1e-9)
    assert 100.0 <= lo <= hi <= 110.0
    lo, hi = sgm.delta_bracket(1e-4, 1000.0, 10**7, 1.0)
    assert lo == 0.0 and hi < 1e-60


def test_far_tail_eps_of_two_steps_uses_a_coarse_enough_grid():
    # eps at delta = 1e-9 after two steps reads the far tail, 1000 spreads out: the grid capped at
    # the spread / 20 had 5e5 points and still left the bracket 0.8 % wide (5.8 s)
    lo, hi = sgm.epsilon_bracket(1e-5, 0.5, 2, 1e-9)
    assert 0.0969 <= lo <= hi <= 0.0972 and hi - lo <= 2e-3 * hi


def _two_step_delta(eps, q, s):
    # delta_2(eps) = E_{z ~ Q}[delta_1(eps - l(z))], delta_1 the exact one-step profile (any real argument)
    from scipy import integrate, stats

    from dpmia.sgm import privacy_loss

    def f(z, mean):
        return stats.norm.pdf(z, mean, s) * float(sgm.profile(eps - float(privacy_loss(z, q, s)), q, s)[0])
    tot = 0.0
    for w, mean in ((1 - q, 0.0), (q, 1.0)):
        pts = np.linspace(mean - 14 * s, mean + 14 * s, 113)
        tot += w * sum(integrate.quad(f, a, b, args=(mean,), epsabs=0, epsrel=1e-13, limit=400)[0]
                       for a, b in zip(pts[:-1], pts[1:]))
    return tot


@pytest.mark.parametrize("q, s, d", [(1e-5, 0.5, 1e-5), (1e-6, 0.2, 1.9e-6)])
def test_bulk_bracket_contains_the_exact_two_step_eps(q, s, d):
    # few sampled steps, delta just below the TV: eps is set near 0 at the scale of q (the uniform
    # grid gave 2.6e-3 and 16 % relative here); the exact two-step profile, by quadrature of the
    # one-step one, crosses delta inside the bracket
    lo, hi = sgm.epsilon_bracket(q, s, 2, d)
    assert hi - lo <= 1e-3 * hi
    assert _two_step_delta(lo, q, s) > d >= _two_step_delta(hi, q, s)


@pytest.mark.parametrize("q, s, T, d", [(1e-5, 0.5, 3, 1e-5), (1e-4, 0.3, 3, 2.5e-4), (1e-6, 0.2, 12, 1e-5),
                                        (3e-6, 0.3, 5, 1e-5), (1e-5, 0.3, 2, 1e-5)])
def test_bulk_bracket_is_tight_and_inside_the_uniform_grids(q, s, T, d):
    from dpmia.sgm import _bulk as sgmbulk
    from dpmia.sgm import _epsilon as sgmeps
    lo, hi = sgmbulk._bulk_epsilon(sgm.check_run(q, s, T), d, 1e-3)
    assert 0 < lo <= hi <= lo * (1 + 1e-3)
    g_lo, g_hi = sgmeps._eps_refined(sgm.check_run(q, s, T), d, 1e-3)      # the uniform grid alone (wider here)
    assert g_lo <= lo and hi <= g_hi
    assert sgm.epsilon_bracket(q, s, T, d) == (max(lo, sgm.epsilon_bracket(q, s, 1, d)[0]), hi)


def test_flat_profile_gets_the_window_budget_it_needs():
    # eps ~ 26 from a few far sampled steps: delta is nearly flat in eps, so the windows' slack (1e-8)
    # moved eps by 1.2e-3 relative; the read-out now asks for the budget the measured slope needs
    lo, hi = sgm.epsilon_bracket(2e-6, 0.1, 6, 1e-5)
    assert 26.0 < lo <= hi <= lo * (1 + 1e-3)


def test_straddle_first_step_up_lands_on_the_lattice():
    """A miss is followed by exactly 1 + rtol above it, even where a larger sigma is already known to meet the
    target within that step: then the answer's check 1 + rtol below it is, where a float allows, the miss just read
    (capping the step at the known sigma would leave that check to a further read)."""
    from dpmia.sgm import _search

    r = 1e-3
    reads = []

    def ok(x):
        reads.append(x)
        return x >= 1.0

    lo, hi = _search._straddle(ok, 0.9996, r, known=(None, 1.0002))
    assert not ok(lo) and ok(hi)
    assert hi == _search._above(lo, r) > 1.0002
    assert len(reads) == 2 + 2


@pytest.mark.parametrize("q, s, T", [(0.9, 0.5, 10), (0.01, 1.0, 10_000), (0.999, 3.0, 10), (0.5, 0.3, 5)])
def test_remove_direction_left_out_only_where_certainly_below(q, s, T):
    # eps and delta read the remove direction on a grid four times coarser first and leave it out where its
    # dominating pair is at or below the add direction's lower end: the brackets still hold both directions'
    # lower ends read on a fine grid (at q = 0.999, sigma = 3 the coarse grid cannot tell them apart: both are composed)
    from dpmia.sgm._chain import _composed, _initial_step
    from dpmia.sgm._setting import check_run
    run = check_run(q, s, T)
    h = _initial_step(run, 1e-3) / 2
    lo, hi = sgm.epsilon_bracket(q, s, T, 1e-5)
    for direction in ("add", "remove"):
        assert _composed(run, h, "optimistic", direction, 1e-10, pld.MAX_FFT).epsilon(1e-5) <= hi
    e = 0.3 * lo
    dlo, dhi = sgm.delta_bracket(q, s, T, e)
    for direction in ("add", "remove"):
        assert _composed(run, h, "optimistic", direction, 1e-10, pld.MAX_FFT).delta(e) <= dhi
    assert dlo <= dhi


def _exact_profile_mp(x, q, s):
    """The add direction's one-step profile at the float ``x`` in 60-digit arithmetic."""
    import mpmath as mp
    with mp.workdps(60):
        X, Q, S = mp.mpf(x), mp.mpf(q), mp.mpf(s)
        if X <= mp.log(1 - Q):
            return 1 - mp.e ** X
        ep = mp.log(1 + (mp.e ** X - 1) / Q)
        ts = S * S * ep + mp.mpf(1) / 2
        return Q * (mp.ncdf(-(ts - 1) / S) - mp.e ** ep * mp.ncdf(-ts / S))


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-6, 1.0), st.floats(0.01, 1000.0), st.floats(-8.0, 2.5))
def test_profile_error_bound_covers_the_float_error(q, s, lx):
    # the error bound behind the midpoint chord gaps, against 60-digit arithmetic, with a factor 4 to spare: in the
    # bulk (x ~ q) and far along the tail (x up to 10^2.5, profile down to the subnormal range)
    from dpmia.sgm._step import _value_error, _values
    x = np.array([10.0 ** lx, -(10.0 ** lx) * q, q * 10.0 ** (lx / 4.0)])
    f, ep, lin, _, (lnu, _, _) = _values(x, q, s)
    err = _value_error(x, q, s, f, np.where(lin, 0.0, ep), lnu)
    for xi, fi, ei in zip(x, f, err):
        assert abs(float(fi) - _exact_profile_mp(float(xi), q, s)) <= 0.25 * ei


@pytest.mark.parametrize("q, s, h, tail", [(0.01, 1.0, 1e-3, 1e-18), (1e-4, 1.0, 2e-6, 1e-18), (0.3, 0.5, 1e-2, 1e-18),
                                           (1e-3, 20.0, 1e-6, 1e-18), (0.5, 1.0, 0.05, 1e-300)])
def test_midpoint_chord_gaps_bound_the_gap_and_halve_the_old_bound(q, s, h, tail):
    # on cells across the grid the chord of the exact profile (linear in y = e^x) rises above it by at most the
    # tightened bound (sampled at 201 points a cell, within their float error), and in the bulk the bound is at most
    # three quarters of the old one, DA / (D + A) or (e^h - 1) E / 4 (twice the gap of a cell of uniform density).
    # The last grid reaches values near 1e-300, where products of a cell's bounds leave the normal range
    from dpmia.sgm._step import _cached_grid, _grid_arrays, _value_error, _values
    x, d, log_nu, log_cell, _, gap, _, _ = _cached_grid(q, s, h, tail)
    old = np.minimum(_grid_arrays(x, q, s)[4], 0.25 * math.expm1(h) * np.exp(np.minimum(log_cell, 0.0)))
    last = np.arange(max(x.size - 12, 0), x.size - 1)
    cells = np.unique(np.concatenate([np.linspace(0, x.size - 2, 60), last]).astype(int))
    for j in cells:
        t = np.linspace(0.0, 1.0, 201)
        xs = x[j] + np.log1p(t * math.expm1(x[j + 1] - x[j]))
        f, ep, lin, _, (lnu, _, _) = _values(xs, q, s)
        chord = d[j] + t * (d[j + 1] - d[j])
        noise = _value_error(xs, q, s, f, np.where(lin, 0.0, ep), lnu) + 1e-15 * np.abs(f)
        assert np.max(chord - f - noise) <= gap[j] * (1.0 + 1e-9), (j, x[j])
    bulk = np.flatnonzero(old > 1e-3 * np.max(old))
    assert np.median(gap[bulk] / old[bulk]) <= 0.75


@pytest.mark.parametrize("q, s", [(0.01, 1.0), (1e-4, 1.0)])
def test_dominated_pair_as_close_as_the_dominating_one(q, s):
    # with the midpoint gaps the dominated one-step pair sits on average about as far below the exact profile as the
    # dominating one above it (1.2 to 1.5 times; with the old bound 2.2 to 2.4): eight points a cell across the bulk
    from dpmia.sgm._chain import _single_pair
    h = 1e-3 if q > 1e-3 else 4e-6
    pe, op = (_single_pair(q, s, h, kind, "add", 1e-18) for kind in ("pessimistic", "optimistic"))
    x = pe.losses[(pe.losses > -3 * q) & (pe.losses < 3 * q)]
    t = (np.arange(8) + 0.5) / 8
    pts = (x[:-1, None] + np.log1p(t[None, :] * math.expm1(h))).ravel()
    exact = sgm.profile(pts, q, s)[0]
    up, down = np.mean(pe.delta(pts) - exact), np.mean(exact - op.delta(pts))
    assert up > 0 and down > 0 and down <= 1.6 * up


@pytest.mark.parametrize("q, s", [(0.01, 1.0), (0.1, 2.0)])
def test_replace_one_dominated_pair_as_close_as_the_dominating_one(q, s):
    # the symmetric (replace-one) pair's chord gaps from the profile's lower end in each cell's middle: the dominated
    # pair on average about as far below the profile as the dominating one above it (twice as far before)
    from dpmia.sgm._chain import _sym_pair
    h = 1e-3
    pe, op = (_sym_pair(q, s, "poisson", h, kind, 1e-18) for kind in ("pessimistic", "optimistic"))
    x = pe.losses[(pe.losses > 0) & (pe.losses < 6 * q)]
    t = (np.arange(8) + 0.5) / 8
    pts = (x[:-1, None] + np.log1p(t[None, :] * math.expm1(h))).ravel()
    exact = sgm.profile(pts, q, s, neighbours="replace-one")[0]
    up, down = np.mean(pe.delta(pts) - exact), np.mean(exact - op.delta(pts))
    assert up > 0 and down > 0 and down <= 1.3 * up


@pytest.mark.parametrize("q, s, T, e, exact", [
    (0.01, 1.0, 3, 0.5, 6.850307024985435e-07), (0.01, 1.0, 2, 0.5, 4.497212184766142e-07),
    (0.5, 1.0, 2, 0.5, 0.14792013341095417), (0.9, 0.5, 2, 0.5, 0.7188101363987058),
    (0.1, 1.0, 2, 2.0, 6.944861264848264e-06), (0.9, 5.0, 2, 2.0, 1.9345817715009527e-15),
    (0.01, 2.0, 2, 2.0, 3.1910040391824212e-40), (0.01, 5.0, 2, 0.5, 2.1471074539016914e-100)])
def test_lower_ends_below_independent_two_and_three_step_values(q, s, T, e, exact):
    # delta of T = 2, 3 steps computed without dpmia (the last coordinate in closed form, the others by nested
    # quadrature split where the integrand changes form; 1e-12 relative or better, checked against 30-digit
    # mpmath): the brackets with the midpoint chord gaps contain them, the lower ends closest to them of 96 such
    # settings (the first two sit 1 % of the width above their lower end)
    lo, hi = sgm.delta_bracket(q, s, T, e)
    assert lo <= exact * (1.0 + 1e-11) and exact * (1.0 - 1e-11) <= hi
    assert hi - lo <= 1e-3 * hi
