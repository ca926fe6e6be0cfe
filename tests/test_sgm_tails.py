"""dpmia.sgm's far tails (white box): the sub-mixture floor and tilted compositions, against exact values."""
import math

import numpy as np
import pytest

from dpmia import sgm
from dpmia.sgm._setting import check_run
from dpmia.sgm._tvbounds import _tail_delta_lower


def test_far_tail_floor_never_crosses_the_certified_upper_end():
    rng = np.random.default_rng(3)
    for _ in range(25):
        q, s, T = 10 ** rng.uniform(-3, -0.1), 10 ** rng.uniform(-0.5, 0.7), int(rng.integers(1, 60))
        for e in (0.5, 3.0, 12.0):
            lo_tail = _tail_delta_lower(check_run(q, s, T), e)
            # one step: the exact profile; more: the certified upper end of the grid accountant
            hi = float(sgm.profile(e, q, s)[0]) if T == 1 else sgm.delta_bracket(q, s, T, e)[1]
            assert lo_tail <= hi * (1 + 1e-9), (q, s, T, e, lo_tail, hi)
    # the far tail of eps: the lower end is no longer far below (was 36.7 for an upper end of 114.8)
    lo, hi = sgm.epsilon_bracket(0.5, 1.0, 10, 1e-300)
    assert lo <= hi <= lo * 1.01


def test_tilted_brackets_contain_the_exact_gaussian_tail():
    # q = 1: T steps are the Gaussian mechanism at mu = sqrt(T) / sigma, whose far tail is known in log space
    from dpmia import gaussian
    from dpmia.sgm._chain import _initial_step
    from dpmia.sgm._fartail import tilted_delta_bracket
    for sigma, T, e in ((1.0, 4, 20.0), (2.0, 10, 12.0), (0.5, 3, 60.0)):
        run = check_run(1.0, sigma, T)
        exact = float(np.exp(gaussian.log_delta(e, np.sqrt(T) / sigma)))
        lo, hi = tilted_delta_bracket(run, e, 1e-3, _initial_step(run, 1e-3), exact / 10)
        assert lo <= exact <= hi, (sigma, T, e, lo, exact, hi)
        assert lo >= 0.5 * exact          # (q = 1 never reaches the tilt in the accountant: a loose check)
    # one step of the subsampled Gaussian: the read-outs use the closed form (within tol); the tilted read-out
    # declines it (a single tilted step carries no composition slack to cover its masses that underflow to 0, which
    # a review found could leave an upper end below the value far below the tilt's centre)
    for q, sigma, e in ((0.01, 1.0, 15.0), (0.3, 0.5, 40.0), (0.001, 2.0, 3.0)):
        run = check_run(q, sigma, 1)
        ex_lo, ex_hi = sgm.delta_bracket(q, sigma, 1, e)
        assert 0.0 < ex_lo <= ex_hi and ex_hi - ex_lo <= 1e-3 * ex_hi, (q, sigma, e, ex_lo, ex_hi)
        assert tilted_delta_bracket(run, e, 1e-3, _initial_step(run, 1e-3), ex_lo / 10) is None


def test_tilted_brackets_agree_with_the_grid_where_it_resolves_delta():
    # at delta around 1e-6 the plain grid bracket is tight: the tilted one must overlap it
    from dpmia.sgm._chain import _initial_step
    from dpmia.sgm._fartail import tilted_delta_bracket
    for q, s, T, e in ((0.05, 1.0, 50, 3.0), (0.2, 0.8, 20, 6.0), (0.01, 0.7, 300, 2.5)):
        g_lo, g_hi = sgm.delta_bracket(q, s, T, e)
        run = check_run(q, s, T)
        t_lo, t_hi = tilted_delta_bracket(run, e, 1e-3, _initial_step(run, 1e-3), g_lo)
        assert t_lo <= g_hi * (1 + 1e-12) and g_lo <= t_hi * (1 + 1e-12), (q, s, T, e, g_lo, g_hi, t_lo, t_hi)


def test_far_tails_within_tol_and_below_renyi():
    # epsilon to 1e-3 relative down to delta = 1e-300 at T <= 1e4, never above the certified Renyi bound
    for q, s, T, d in ((0.01, 1.0, 1000, 1e-30), (0.01, 1.0, 10_000, 1e-300), (0.1, 0.5, 100, 1e-200),
                       (1e-3, 1.0, 10**6, 1e-12)):
        lo, hi = sgm.epsilon_bracket(q, s, T, d)
        assert hi - lo <= 1e-3 * hi, (q, s, T, d, lo, hi)
        assert hi <= sgm.epsilon_rdp_certified([(q, s, T)], d)[0]
    # delta(eps) in the far tail: within its relative tol (1e-3 below 0.01)
    lo, hi = sgm.delta_bracket(0.01, 1.0, 1000, 9.34)
    assert 0 < lo <= hi <= lo * 1.001
    # and the two read-outs agree: eps at the delta just read lies in the eps bracket's reach
    e_lo, e_hi = sgm.epsilon_bracket(0.01, 1.0, 1000, hi)
    assert e_lo <= 9.34 * (1 + 1e-3) and e_hi >= 9.34 * (1 - 1e-3)


# eps(delta) and delta(eps) far in the tail, from an independent computation (own code, not dpmia: the one-step
# loss law from exact bin masses, tilted to the saddle point, composed by FFT, untilted in log space, the grid
# refined until the digits below stopped moving; errors about 1e-5 relative or smaller)
INDEPENDENT = [
    ("delta", (0.01, 1.0, 1000, 9.34), 1.01483e-30, 2e-5),
    ("eps", (0.01, 1.0, 1000, 1e-30), 9.341896, 1e-6),
    ("delta", (0.5, 1.0, 10, 114.5), 3.55803e-301, 2e-5),
    ("eps", (0.5, 1.0, 10, 1e-300), 114.4113381, 1e-8),
    ("eps", (0.01, 1.0, 10_000, 1e-300), 101.18665, 1e-7),
    ("eps", (0.1, 0.5, 100, 1e-200), 430.9940, 1e-6),
    # two steps at tiny q and large sigma (exact: a 1-D quadrature with the inner integral in closed form, mpmath
    # at 30 digits with the integrand scaled to a peak of 1): the single-step grids sized from a floor of 2.7e-129
    # gave (0, 7.7e-40); sized again from the upper ends found
    ("delta", (0.01, 5.0, 2, 0.15897169654821397), 1.0000000000037097e-50, 1e-12),
    ("delta", (0.001, 2.0, 2, 0.8867692569592975), 9.99999955474e-51, 1e-10),
    # two steps at sigma 3 and 5 (the same quadrature, over 600 pieces of the integrand's support, 40 digits; its
    # two resolutions agree to 1e-5 and 2e-6): 1.3e-2 and 8.6e-2 wide while the one-step lower end was not used to
    # size the single-step grids and the tilted window's budget ignored how far the tilted mass lies from eps
    ("delta", (0.01, 3.0, 2, 0.8242041106354123), 9.999372804875816e-51, 1e-4),
    ("delta", (0.01, 5.0, 2, 1.6161249392586838), 9.998582781916626e-201, 1e-4),
    # q = 1e-3, sigma = 5 (resolutions agree to 3e-7): the composed tilted mass near eps is 1e-14 of the whole, so
    # the FFT's float error, weighed in L1 at the peak weight, left the bracket 6 % wide; weighed per atom, 3.4e-4
    ("delta", (0.001, 5.0, 2, 0.334452), 9.335129276616304e-201, 1e-5),
    # an independent computation (own code): exact bin masses in log space, losses rounded up and down; where one
    # large step sets the tail, that step's exact profile against the other steps' tilted composition (Chernoff
    # bounds on the rest), else a full tilted composition. Values: the brackets' midpoints, rel: their half-width
    ("delta", (0.001, 5.0, 10, 0.337486), 9.992047e-201, 4.7e-5),
    ("delta", (0.01, 5.0, 100, 1.67784), 9.937649e-201, 1.4e-4),
    ("delta", (0.01, 3.0, 10, 8.27747), 9.986965e-301, 4.8e-5),
    ("delta", (0.001, 5.0, 30, 0.33987), 9.704512e-201, 3.8e-5),
    ("delta", (0.01, 5.0, 30, 1.64241), 9.737260e-201, 4.1e-5),
    ("delta", (0.9, 5.0, 10, 18.3105), 1.189607e-200, 4.9e-5),
    # large sigma (another independent computation, own code: the inverse Laplace integral of e^{-z eps} / (z (z + 1))
    # times the one-step MGF to the power T along the saddle-point line, cross-checked by a tilted FFT composition;
    # the two agree to 1e-11): the reflected remove pair's float error at its top, and the shift of eps by
    # T log(1 + kappa), left four of these seven vacuous or wider than tol
    ("delta", (1e-4, 100.0, 10, 4.48636e-05), 9.95662256e-51, 1e-8),
    ("delta", (1e-4, 100.0, 1000, 9.45166e-04), 9.90748167e-201, 1e-8),
    ("delta", (0.01, 100.0, 1000, 0.0950765), 5.25029562e-201, 1e-8),
    ("delta", (1e-3, 20.0, 10_000, 0.150843), 8.50867844e-201, 1e-8),
    ("delta", (0.1, 100.0, 10_000, 3.01205), 6.77897352e-201, 1e-8),
    ("delta", (0.01, 20.0, 10, 0.0254021), 9.73174990e-51, 1e-8),
    ("delta", (1e-3, 100.0, 10, 9.864e-04), 9.87629068e-201, 1e-8),
]


@pytest.mark.parametrize("what, args, value, rel", INDEPENDENT)
def test_far_tail_brackets_contain_an_independent_computation(what, args, value, rel):
    fn = sgm.delta_bracket if what == "delta" else sgm.epsilon_bracket
    lo, hi = fn(*args)
    assert lo <= value * (1 + rel) and value * (1 - rel) <= hi, (args, lo, value, hi)
    assert hi - lo <= 1e-3 * hi


def test_single_step_excess_is_set_by_the_pair_not_by_the_rounding_bound():
    # the tilted read-outs grow the single step's relative excess kappa to (1 + kappa)^T; with the suffix sums
    # in double, their rounding bound 8 (n + 8) u (about 4e-11 here) forced kappa = 1e-9 and shifted eps by
    # 1e-3 at T = 1e6; in extended precision the smallest threshold keeps a negligible absolute slack
    from dpmia.sgm._chain import _single_pair
    from dpmia.sgm._tiltexcess import _excess
    if np.finfo(np.longdouble).eps >= np.finfo(float).eps:
        pytest.skip("no extended precision on this platform")
    for kind in ("pessimistic", "optimistic"):
        one = _single_pair(1e-3, 1.0, 5.441e-5, kind, "add", 1e-22)
        kappa, s, _ = _excess(one, one.ref)[0]
        assert kappa <= 1e-13 and 10**6 * s <= 1e-15, (kind, kappa, s)


def test_delta_at_a_million_steps_within_tol_and_consistent_with_eps():
    # was [9.82e-11, 9.94e-11] (1.2e-2 wide)
    lo_e, hi_e = sgm.epsilon_bracket(1e-3, 1.0, 10**6, 1e-10)
    lo, hi = sgm.delta_bracket(1e-3, 1.0, 10**6, hi_e)
    assert hi - lo <= 1e-3 * hi and lo <= 1e-10
    assert sgm.delta_bracket(1e-3, 1.0, 10**6, lo_e)[1] >= 1e-10


def _two_step_delta(q, sigma, eps):
    """H_{e^eps}(M x M || N x N) for M = (1-q) N(0, s^2) + q N(1, s^2), N = N(0, s^2), by one quadrature: for each
    x the integral over y is closed (r(y) = M/N(y) exceeds e^eps / r(x) above a point y*)."""
    import mpmath as mp
    with mp.workdps(30):
        q, s, big = mp.mpf(q), mp.mpf(sigma), mp.e ** mp.mpf(eps)

        def r(x):
            return 1 - q + q * mp.e ** ((2 * x - 1) / (2 * s * s))

        def f(x):
            rx = r(x)
            t = big / rx
            if t <= 1 - q:
                v = rx - big
            else:
                ys = (2 * s * s * mp.log((t - (1 - q)) / q) + 1) / 2
                v = rx * ((1 - q) * mp.ncdf(-ys / s) + q * mp.ncdf(-(ys - 1) / s)) - big * mp.ncdf(-ys / s)
            return v * mp.npdf(x, 0, s) if v > 0 else mp.mpf(0)
        pts = [mp.mpf(v) for v in (-50, 0, 20, 40, 50, 55, 60, 65, 70, 75, 80, 90, 110, 150)]
        return float(mp.quad(f, pts, maxdegree=8))


@pytest.mark.parametrize("q, sigma, eps", [
    # at eps >= -T ln(1 - q) the remove direction's delta is exactly 0; its tilted read-out (onto the top atom of a
    # grid that rounds losses up) had left only its slack, 1e-100 here, as the upper end (delta about 5.6288e-210)
    (0.1, 3.0, 9.9515),
    # the first grid could not carry a tilted pair (no reference values there) and the read-out gave up:
    # (4.8e-11, 7.4e-10) around 1e-10; a finer grid does
    (0.9, 3.0, 2.739516958522813),
    # delta about 9.3e-101: the dominating single step's curve, made convex by its minorant plus the largest
    # shortfall (1e-16, added everywhere), had no atoms left above loss 2.22 on a fine grid, so the tilt went
    # onto its top atom and the read-out kept a coarse grid's bracket, 3.8e-2 wide (sgm now raises slopes)
    (0.9, 5.0, 5.798),
])
def test_far_tail_at_two_steps_within_tol(q, sigma, eps):
    exact = _two_step_delta(q, sigma, eps)
    lo, hi = sgm.delta_bracket(q, sigma, 2, eps)
    assert lo <= exact <= hi and hi - lo <= 1e-3 * hi, (lo, exact, hi)


def test_far_tail_grid_reaches_the_loss_the_tilt_needs():
    # q = 1e-3, sigma = 5, two steps, delta about 1e-100: the single-step grids were sized from a floor (the
    # upper end found so far, 1e-37 ... 1e-57) and ended below eps / T, so the tilt went onto their top atom
    # and the bracket stayed vacuous, (3.5e-270, 9.4e-58); they now reach min(eps, 4 eps / T). The reference is
    # an independent mpmath quadrature (30 digits) of the two-step integral.
    exact = 9.9999999992177612376e-101
    lo, hi = sgm.delta_bracket(0.001, 5.0, 2, 0.061895111766647304)
    assert lo <= exact <= hi and hi - lo <= 1e-3 * hi, (lo, hi)


def _two_step_remove_delta(q, sigma, eps):
    """H_{e^eps}(N x N || M x M) for M = (1-q) N(0, s^2) + q N(1, s^2), N = N(0, s^2): for each x the integral over
    y is closed (N(y) - t M(y) > 0 below the point y* where M/N(y) = 1/t, t = e^eps M/N(x))."""
    import mpmath as mp
    with mp.workdps(30):
        q, s, big = mp.mpf(q), mp.mpf(sigma), mp.e ** mp.mpf(eps)

        def f(x):
            t = big * (1 - q + q * mp.e ** ((2 * x - 1) / (2 * s * s)))
            if 1 / t <= 1 - q:
                return mp.mpf(0)
            ys = (2 * s * s * mp.log((1 / t - (1 - q)) / q) + 1) / 2
            v = mp.ncdf(ys / s) - t * ((1 - q) * mp.ncdf(ys / s) + q * mp.ncdf((ys - 1) / s))
            return v * mp.npdf(x, 0, s) if v > 0 else mp.mpf(0)
        pts = [mp.mpf(v) * s for v in (-60, -40, -30, -20, -15, -10, -5, -2, 0, 2, 5, 10)]
        return float(mp.quad(f, pts, maxdegree=8))


def test_remove_chernoff_bounds_the_exact_remove_profile():
    # one step: the closed form (in log space); two steps: an independent mpmath quadrature
    from dpmia.sgm._onestep import _log_delta_remove
    from dpmia.sgm._removebound import _remove_chernoff
    for q, s in ((0.9, 5.0), (0.5, 1.0), (0.1, 0.5), (0.01, 2.0), (0.999, 0.3), (0.5, 0.05)):
        bound = _remove_chernoff(check_run(q, s, 1))
        top = -math.log1p(-q)
        for frac in (0.01, 0.2, 0.5, 0.8, 0.95, 0.999):
            e = frac * top
            exact = math.exp(_log_delta_remove(e, q, 1.0 / s))
            assert exact <= bound(e) <= 1.0, (q, s, e, exact, bound(e))
        # not vacuous: within a Chernoff factor of the exact value well inside the support
        assert bound(0.5 * top) <= 20.0 * math.exp(_log_delta_remove(0.5 * top, q, 1.0 / s))
    for q, s, e in ((0.9, 5.0, 2.0), (0.9, 5.0, 4.0), (0.5, 1.0, 1.0), (0.9, 1.0, 3.5)):
        exact = _two_step_remove_delta(q, s, e)
        assert exact <= _remove_chernoff(check_run(q, s, 2))(e) <= 20.0 * exact, (q, s, e)


def test_a_far_delta_stopped_by_the_wide_cap_takes_one_pass_at_the_longest(monkeypatch):
    # (a QA sweep's case) at the wide cap (4.2 M points) the tilted delta read-out stopped 2.4e-3 wide: the step tol
    # asks needs a window about twice as long. One more pass at the longest cap, which the width model puts within tol,
    # reads it within tol; the bracket meets the one without that pass (both certified)
    from dpmia.sgm import _fartail
    args = (0.7388642838504059, 0.3157295159701832, 61625, 222936.95036239736)
    used, real = [], _fartail._last_step

    def spy(*a):
        got = real(*a)
        used.append(got)
        return got
    monkeypatch.setattr(_fartail, "_last_step", spy)
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(*args)
    assert any(u is not None for u in used) and hi - lo <= 1e-3 * hi, (used, lo, hi)
    monkeypatch.setattr(_fartail, "_last_step", lambda *a: None)
    sgm.clear_caches()
    b = sgm.delta_bracket(*args)
    assert b[1] - b[0] > 1e-3 * b[1] and max(lo, b[0]) <= min(hi, b[1]), (lo, hi, b)
    sgm.clear_caches()


def test_a_first_delta_pass_that_fits_only_the_longest_cap_takes_it(monkeypatch):
    # replace-one, q 1e-3, sigma 1, T 1e4 at eps(1e-300): the step the width model asks for the first pass (0.7 tol)
    # fits neither cap but the longest; there it reads within tol in one pass
    from dpmia.sgm import _fartail
    caps, real = [], _fartail._attempt
    monkeypatch.setattr(_fartail, "_attempt", lambda run, h, c, lo, tol, ot, cap, *a, **k: caps.append(cap)
                        or real(run, h, c, lo, tol, ot, cap, *a, **k))
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(1e-3, 1.0, 10**4, 54.33290406384735, neighbours="replace-one")
    assert caps[0] == _fartail._LAST_CAP and len(caps) == 1 and hi - lo <= 1e-3 * hi, (caps, lo, hi)
    sgm.clear_caches()


def test_a_far_eps_stopped_by_the_cap_takes_one_pass_at_the_longest(monkeypatch):
    # (1e-5, 0.7, 1e6) at delta 1e-10: the tilted eps read-out stopped 1.2e-3 wide at its cap (2.1 M points); one last
    # pass at the longest cap, which the width model puts within tol, reads it within tol, meeting the bracket without
    from dpmia.sgm import _fartail
    used, real = [], _fartail._last_eps_step
    monkeypatch.setattr(_fartail, "_last_eps_step", lambda *a: used.append(real(*a)) or used[-1])
    sgm.clear_caches()
    lo, hi = sgm.epsilon_bracket(1e-5, 0.7, 10**6, 1e-10)
    assert any(u is not None for u in used) and hi - lo <= 1e-3 * hi, (used, lo, hi)
    monkeypatch.setattr(_fartail, "_last_eps_step", lambda *a: None)
    sgm.clear_caches()
    b = sgm.epsilon_bracket(1e-5, 0.7, 10**6, 1e-10)
    assert b[1] - b[0] > 1e-3 * b[1] and max(lo, b[0]) <= min(hi, b[1]), (lo, hi, b)
    sgm.clear_caches()


def test_the_last_pass_takes_the_order_the_passes_before_measured():
    # the width's order in the step, from two passes narrower than 0.1: 1 at (1e-6, 0.7, 1e6), eps at delta 1e-12 (its
    # passes' own widths), where the second order put a pass at the longest cap within tol that read 2.7e-3
    from dpmia.sgm._fartail import _capped_step, _order
    seen, h, w = (2.4239569997468515e-05, 0.053520284718551026), 2.6506701704141507e-06, 5.681e-03
    p = _order(seen, h, w)
    assert 0.99 < p < 1.05
    assert _capped_step(h, w, 1e-3, 1822500, 2**21, 2**23, 2.0) is not None
    assert _capped_step(h, w, 1e-3, 1822500, 2**21, 2**23, p) is None
    # widths of order 1 (log-ratios of the bounds), steps too close to tell, no pass before: the error model's 2
    assert _order((1.66e-06, 0.38), 2.38e-07, 0.0124) == _order((1.02 * h, 0.05), h, w) == _order(None, h, w) == 2.0
    # and the cap must be what stops the step: a window that fits the step tol asks gets no longer pass
    assert _capped_step(h, w, 1e-3, 1000, 2**21, 2**23, 2.0) is None


def test_a_settled_remove_direction_stands_in_by_a_bound_at_and_above_its_point():
    # two steps, against the independent quadrature: the stand-in a pass leaves for the remove direction (its
    # dominating pair's tilted read-out at x, constant from there on) is above the exact remove profile at x and beyond
    from dpmia.sgm._chain import _initial_step
    from dpmia.sgm._fartail import _remove_settled, _remove_top
    from dpmia.sgm._tilt import tilted_pairs
    for q, s, x in ((0.9, 1.0, 2.0), (0.5, 1.0, 0.8)):
        run = check_run(q, s, 2)
        tp = tilted_pairs(run, _initial_step(run, 1e-5) / 4.0, x, x, 1e-12, 1e-14)
        stand_in = _remove_settled(tp, None, x, 1.0, _remove_top(run))
        assert _remove_settled(tp, None, x, 0.0, _remove_top(run)) is None      # (above d = 0: not settled)
        for v in (x, 1.2 * x, 1.5 * x):
            exact = _two_step_remove_delta(q, s, v)
            assert exact <= stand_in(v) <= 1.5 * _two_step_remove_delta(q, s, x), (q, s, x, v)


def test_a_remove_direction_shown_below_the_add_one_is_composed_once(monkeypatch):
    # (1e-3, 2, 1e5), delta at eps 1.27876 (about 1e-15): the first tilted pass bounds the remove direction below the
    # add direction's lower end, so the passes after it compose the add direction alone (at (1e-4, 1, 1e7) a pass of
    # 3.8 M points); composing both directions in every pass gives the same bracket
    from dpmia.sgm import _fartail
    calls, real = [], _fartail.tilted_pairs
    monkeypatch.setattr(_fartail, "tilted_pairs", lambda *a, **k: calls.append(k["directions"]) or real(*a, **k))
    e = 1.2787590643909619
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(1e-3, 2.0, 10**5, e)
    assert len(calls) >= 2 and calls[0] == ("add", "remove") and set(calls[1:]) == {("add",)}, calls
    assert hi - lo <= 1e-3 * hi
    monkeypatch.setattr(_fartail, "_remove_settled", lambda *a: None)
    calls.clear()
    sgm.clear_caches()
    both = sgm.delta_bracket(1e-3, 2.0, 10**5, e)
    assert set(calls) == {("add", "remove")} and len(calls) >= 2, calls
    assert max(lo, both[0]) <= min(hi, both[1]), (lo, hi, both)
    sgm.clear_caches()


@pytest.mark.parametrize("q, sigma, steps, delta", [(0.9, 5.0, 10, 1e-200), (0.9, 5.0, 2, 1e-50),
                                                     (0.5, 3.0, 100, 1e-300), (0.9, 2.0, 1000, 1e-200)])
def test_far_tails_at_large_q_within_tol(q, sigma, steps, delta):
    # the remove pairs, reflected from the add pairs, lose that direction's far tail (it sits below values near 1
    # in the add profile): their tilted read-outs stalled near 1e-42, so delta(eps) had a vacuous upper end (e.g.
    # (3.3e-202, 3.2e-184) at (0.9, 5, 10), eps 18.38) and eps was 1.2e-2 wide at (0.9, 5, 2, 1e-50); the remove
    # direction's own Chernoff bound caps them, far below the add direction's delta here
    lo, hi = sgm.epsilon_bracket(q, sigma, steps, delta)
    assert hi - lo <= 1e-3 * hi and hi <= sgm.epsilon_rdp_certified([(q, sigma, steps)], delta)[0]
    dlo, dhi = sgm.delta_bracket(q, sigma, steps, hi)
    assert 0.0 < dlo <= delta and dhi - dlo <= 1e-3 * dhi
    assert sgm.delta_bracket(q, sigma, steps, lo)[1] >= delta


def test_far_tail_set_by_one_large_step_within_tol():
    # q = 0.01, sigma = 5, 100 steps, delta near 1e-200: the tail is set by one large step (the loss's tail is
    # log-normal-like below 1), so the tilted composed mass near eps is a small share of the whole and the window's
    # left-out mass weighs far more than delta; its budget now follows that weight, and the single-step grids are
    # sized from one step's exact delta (a lower end) rather than a floor of 1e-300 (was 15 % wide after 4.8 s)
    lo, hi = sgm.delta_bracket(0.01, 5.0, 100, 1.67784)
    assert 0.0 < lo and hi - lo <= 1e-3 * hi
    e_lo, e_hi = sgm.epsilon_bracket(0.01, 5.0, 100, hi)
    assert e_lo <= 1.67784 * (1 + 1e-3) and e_hi >= 1.67784 * (1 - 1e-3)
    # one step is a certified lower end of delta (an attacker may ignore the later steps)
    assert sgm.delta_bracket(0.01, 5.0, 1, 1.67784)[0] <= lo


@pytest.mark.parametrize("q, sigma, steps, d", [(1e-4, 100.0, 10, 1e-50), (0.01, 100.0, 1000, 1e-200),
                                                (1e-3, 20.0, 10_000, 1e-200)])
def test_eps_at_large_sigma_within_tol_and_consistent_with_delta(q, sigma, steps, d):
    # a near-Gaussian far tail at large sigma: the lower ends known before the tilted read-out are far below the
    # truth, and a tilt centred midway read nothing accurate (60-98 % wide before: the CLT estimate centres it)
    lo, hi = sgm.epsilon_bracket(q, sigma, steps, d)
    assert hi - lo <= 1e-3 * hi
    assert sgm.delta_bracket(q, sigma, steps, hi)[0] <= d <= sgm.delta_bracket(q, sigma, steps, lo)[1]


def test_remove_pair_from_the_add_cells_dominates_and_is_tight():
    # the remove direction's dominating single step built from the add cells' masses (sgm._tiltstep._remove_dominating)
    # against the exact remove profile (sgm._onestep._log_delta_remove): above it at every grid point, and close
    # where the reflected add pair carried float error of about u per atom to its top
    from dpmia.sgm._chain import _single_pair
    from dpmia.sgm._onestep import _log_delta_remove
    from dpmia.sgm._tiltexcess import _grid_profile
    from dpmia.sgm._tiltstep import _remove_dominating
    for q, sigma, h in ((1e-4, 100.0, 1.6e-9), (0.01, 2.0, 1e-4), (0.3, 1.0, 1e-3)):
        refl = _single_pair(q, sigma, h, "pessimistic", "remove", 1e-60)
        one = _remove_dominating(q, sigma, refl, 1e-60)
        assert one is not refl
        g = _grid_profile(one, with_inf=True)[0]
        x = one.losses
        pos = (x >= 0.0) & (x < -math.log1p(-q))
        exact = np.exp([_log_delta_remove(v, q, 1.0 / sigma, safe=False) for v in x[pos]])
        # (tight where the mass left beyond the grid's top, at +infinity, is a small share)
        live = exact > max(1e3 * one.inf_mass, 1e-280)
        assert np.all(g[pos] >= exact * (1.0 - 1e-9)), (q, sigma)
        assert live.sum() > 10 and np.all(g[pos][live] <= exact[live] * (1.0 + 1e-2)), (q, sigma)


def test_a_million_steps_at_small_q_and_sigma_reads_without_overflow():
    # the dominated pairs' slack weight (1 + kappa)^T overflowed for a coarse threshold's kappa at T = 1e6
    # (OverflowError at the start of this stop); that split is vacuous and skipped
    from dpmia.sgm import epsilon_rdp_certified
    lo, hi = sgm.epsilon_bracket(1e-4, 0.8, 10**6, 1e-9)
    assert 0.0 < lo <= hi <= epsilon_rdp_certified([(1e-4, 0.8, 10**6)], 1e-9)[0]
    assert sgm.delta_bracket(1e-4, 0.8, 10**6, hi)[0] <= 1e-9 <= sgm.delta_bracket(1e-4, 0.8, 10**6, lo)[1]


def test_a_float_limited_plain_eps_read_is_taken_coarse(monkeypatch):
    # at a million steps and delta 1e-9 the plain composition's float slack (extended precision, about 0.4 u a step)
    # sets its eps bracket's width at any grid: the grid of tol 1e-3 reads no narrower than that of 3e-3, and neither
    # meets tol. So the plain read runs at ten times the tol where the far-tail read-outs follow (which meet it), and
    # at 3e-3 where they do not (calibration's finest tier)
    from dpmia.sgm import _epsilon, epsilon_rdp_certified
    run = check_run(1e-4, 0.6710895, 10**6)
    rdp = epsilon_rdp_certified([(run.q, run.sigma, run.steps)], 1e-9)[0]
    fine, mid = (_epsilon._eps_refined(run, 1e-9, t, rdp, 0.0, False) for t in (1e-3, 3e-3))
    assert (fine[1] - fine[0]) / fine[1] > 5e-3
    assert (mid[1] - mid[0]) <= 1.05 * (fine[1] - fine[0])
    tols = []
    real = _epsilon._eps_refined
    monkeypatch.setattr(_epsilon, "_eps_refined", lambda r, d, t, *a: tols.append(t) or real(r, d, t, *a))
    lo, hi = sgm.epsilon_bracket(run.q, run.sigma, run.steps, 1e-9)
    assert tols == [1e-2] and hi - lo <= 1e-3 * hi and hi <= rdp
    assert max(lo, fine[0]) <= min(hi, fine[1])
    finest, third = (_epsilon._epsilon_bracket(run, 1e-9, t, far=False) for t in (1e-3, 3e-3))
    assert finest == third


@pytest.mark.parametrize("q, sigma, steps, tail", [(0.01, 1.0, 100, 1e-10), (0.5, 1.0, 10, 1e-12),
                                                   (1e-3, 2.0, 1000, 1e-8), (0.01, 1.0, 10_000, 1e-10),
                                                   (1e-4, 0.8, 20_000, 1e-9)])
def test_plain_compositions_cannot_resolve_delta_below_their_floor(q, sigma, steps, tail):
    # eps(delta) reads no plain composition below sgm._epsilon._PLAIN_FLOOR, on the ground that every composed
    # dominating pair (one level, or two levels for long runs) keeps at least that much Q-mass as slack or at
    # +infinity, so its eps there is infinite; this checks the ground on both kinds of composition
    from dpmia.sgm._chain import _composed, _initial_step
    from dpmia.sgm._epsilon import _PLAIN_FLOOR
    run = check_run(q, sigma, steps)
    h = _initial_step(run, 1e-3)
    for direction in ("add", "remove"):
        pe = _composed(run, h, "pessimistic", direction, tail, 2**21)
        assert pe.inf_mass + pe.slack_q >= 4.0 * _PLAIN_FLOOR, (direction, pe.inf_mass, pe.slack_q)
        assert pe.epsilon(_PLAIN_FLOOR) == math.inf


@pytest.mark.parametrize("q, sigma, h", [(1e-6, 2.0, 2.44e-7), (1e-5, 2.0, 1e-6), (1e-3, 1.0, 5e-5)])
def test_remove_reference_bounds_the_exact_profile_at_its_grid_points_and_is_tight_next_to_the_top(q, sigma, h):
    # the remove direction's reference values (what a tilted read-out measures its dominating single step against)
    # at losses z >= 0, up to the top of the support -ln(1 - q), where c = 1 - e^z (1 - q) vanishes and ln c moves by
    # a shift of z over c: at or above the exact profile at each exact grid point (offset + j) h + shift (40-digit
    # mpmath), and within 1e-9 of it (a blanket 1e-14 shift of z had raised them by 1e-6 next to the top, which a
    # read-out over ten million steps grew to a slack of 6e-8)
    import mpmath as mp

    from dpmia.sgm._chain import _single_pair
    from dpmia.sgm._tiltstep import _reference, _remove_dominating
    run = check_run(q, sigma, 10**7)
    one = _remove_dominating(q, sigma, _single_pair(q, sigma, h, "pessimistic", "remove", 1e-22), 1e-22)
    ref = _reference(run, one, "pessimistic", "remove", 1e-22)
    mp.mp.dps = 40
    top = -mp.log1p(-mp.mpf(q))
    mu = 1 / mp.mpf(sigma)

    qm = mp.mpf(q)

    def exact(z):
        c = 1 - mp.exp(z) * (1 - qm)
        if c <= 0:
            return mp.mpf(0)
        a = mp.log(qm * mp.exp(z) / c)       # H_{e^z}(P || Q) = c H_{e^a}(P || R), the Gaussian pair at |a|

        def gauss(e):
            return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)
        return c * (gauss(a) if a >= 0 else 1 - mp.exp(a) + mp.exp(a) * gauss(-a))
    checked = 0
    for j in range(one.pmf.size):
        z = (mp.mpf(one.offset) + j) * mp.mpf(one.h) + mp.mpf(one.shift)
        if z < 0 or z >= top:
            continue
        v = exact(z)
        if v < mp.mpf("1e-250"):
            continue
        assert ref[j] >= v, (j, float(z))
        assert ref[j] <= v * (1 + mp.mpf("1e-9")), (j, float(z), float(ref[j] / v - 1))
        checked += 1
    assert checked >= 3
    mp.mp.dps = 15


# eps(delta) at a million and ten million steps at small q, computed independently of dpmia: delta(eps) by numerical
# inversion of the T-fold moment generating function along the saddle-point contour (E[(1 - e^{eps - X})_+] is the
# inverse Laplace transform of M_X(s) e^{-s eps} / (s (s + 1)), both directions), the one-step cumulant function by
# quadrature; checked against the Gaussian closed form (q = 1, to 1e-11) and two-step quadrature: delta to about
# 1e-9 relative, eps to 3e-11 absolute here
@pytest.mark.parametrize("q, sigma, steps, delta, eps", [
    (1e-6, 2.0, 10**7, 1e-10, 0.008399026806),
    (1e-6, 2.0, 10**6, 1e-12, 0.002986264598),
    (1e-5, 2.0, 10**6, 1e-10, 0.027727191238),
])
def test_long_runs_at_small_q_within_tol_and_contain_an_independent_value(q, sigma, steps, delta, eps):
    lo, hi = sgm.epsilon_bracket(q, sigma, steps, delta)
    assert lo <= eps - 1e-10 and eps + 1e-10 <= hi, (lo, eps, hi)
    assert hi - lo <= 1e-3 * hi, (lo, hi)


@pytest.mark.parametrize("q, sigma, h", [(0.01, 1.0, 0.02), (0.5, 1.0, 0.05), (0.1, 2.0, 0.01)])
def test_replace_one_reference_values_bound_the_exact_profile(q, sigma, h):
    # the values a replace-one single step's tilted read-out is certified against (sgm._tiltstep._symmetric_reference)
    # against the exact profile H(x) = Q_R(L > x) - e^x P_R(L > x) at each exact grid point (50-digit mpmath, the
    # threshold output t* by root finding): at or above it for the dominating pair, at or below for the dominated one,
    # and the upper values within 1e-9 of it wherever it is above 1e-250
    import mpmath as mp

    from dpmia.sgm._chain import _sym_pair
    from dpmia.sgm._tiltstep import _symmetric_reference
    run = check_run(q, sigma, 100, neighbours="replace-one")
    mp.mp.dps = 50
    qm, s = mp.mpf(q), mp.mpf(sigma)

    def loss(t):
        return mp.log((1 - qm) + qm * mp.exp((2 * t - 1) / (2 * s * s))) - \
            mp.log((1 - qm) + qm * mp.exp((-2 * t - 1) / (2 * s * s)))

    def exact(x):
        t = mp.findroot(lambda v: loss(v) - x, (mp.mpf(-200), mp.mpf(200)), solver="anderson")
        tail_q = (1 - qm) * mp.ncdf(-t / s) + qm * mp.ncdf(-(t - 1) / s)
        tail_p = (1 - qm) * mp.ncdf(-t / s) + qm * mp.ncdf(-(t + 1) / s)
        return tail_q - mp.exp(x) * tail_p
    checked = 0
    for kind in ("pessimistic", "optimistic"):
        one = _sym_pair(q, sigma, "poisson", h, kind, 1e-60)
        ref = _symmetric_reference(run, one)
        assert ref is not None and np.size(ref[0] if kind == "optimistic" else ref) == one.pmf.size
        n = one.pmf.size
        for j in list(range(0, n, max(n // 40, 1))) + [n // 2, n // 2 + 1, n - 1]:
            x = (mp.mpf(one.offset) + j) * mp.mpf(one.h)
            v = exact(x)
            if kind == "pessimistic":
                assert ref[j] >= v, (j, float(x))
                if v > mp.mpf("1e-250"):
                    assert ref[j] <= v * (1 + mp.mpf("1e-9")) + mp.mpf("1e-300"), (j, float(x), float(ref[j] / v - 1))
            else:
                # (the dominated pair's reference: lowered values and points below, upper values above, sgm._tiltstep)
                assert ref.values[j] <= v and ref.points[j] <= v <= ref.upper[j], (j, float(x))
                if v > mp.mpf("1e-250"):
                    assert ref.points[j] >= v * (1 - mp.mpf("1e-9")), (j, float(x), float(ref.points[j] / v - 1))
            checked += 1
    assert checked >= 60
    mp.mp.dps = 15


@pytest.mark.parametrize("q, sigma, steps, delta", [(0.01, 1.0, 1000, 1e-30), (0.5, 1.0, 10, 1e-50),
                                                    (0.1, 2.0, 100, 1e-20)])
def test_replace_one_far_tails_within_tol_and_consistent_with_delta(q, sigma, steps, delta):
    # under replace-one the far tail is read from tilted compositions of the symmetric pair: eps(delta) within tol,
    # above the add/remove eps (a replace-one neighbour is a removal and an addition), and delta(eps) at its ends on
    # either side of delta
    lo, hi = sgm.epsilon_bracket(q, sigma, steps, delta, neighbours="replace-one")
    assert hi - lo <= 1e-3 * hi, (lo, hi)
    assert hi >= sgm.epsilon_bracket(q, sigma, steps, delta)[0]
    assert sgm.delta_bracket(q, sigma, steps, lo, neighbours="replace-one")[1] >= delta
    d_lo, d_hi = sgm.delta_bracket(q, sigma, steps, hi, neighbours="replace-one")
    assert d_lo <= delta and d_hi - d_lo <= 1e-3 * d_hi, (d_lo, d_hi)


# replace-one eps(delta) computed independently of dpmia: delta(eps) of the symmetric pair by numerical inversion of
# the T-fold moment generating function along the saddle-point contour or line (validated on q = 1 against the
# Gaussian closed form and on one and two steps against direct quadrature), eps to about 1e-9 absolute in the first
# three, 1e-12 relative in the last three, with eps in the hundreds to thousands at delta = 1e-100 and 1e-300 (there
# the read-out stopped at (216.4, inf) and (613.5, inf) on the first two, and 47 % wide on the third, before the
# re-centring schedule)
@pytest.mark.parametrize("q, sigma, steps, delta, eps, err", [
    (0.01, 1.0, 1000, 1e-30, 10.542983554789641, 1e-8),
    (0.1, 2.0, 100, 1e-20, 9.761626602679005, 1e-8),
    (0.5, 1.0, 10, 1e-50, 50.447645821219716, 1e-8),
    (0.1, 0.5, 1000, 1e-300, 1170.05183509645, 1.2e-7),
    (0.01, 0.5, 10_000, 1e-300, 623.644106082075, 6.3e-8),
    (0.5, 0.5, 10_000, 1e-100, 15547.6811515096, 1.6e-6),
    # (its dominating pairs' tops lifted to their reference values, sgm._tiltstep._topped: before, (3349.5, 6034.7)
    # from the Renyi cap; the value by the same inversion, cross-checked at 32 digits and by an extrapolated lattice)
    (0.1, 0.5, 10_000, 1e-300, 3354.39265856779, 1e-8),
])
def test_replace_one_far_tails_contain_an_independent_value(q, sigma, steps, delta, eps, err):
    lo, hi = sgm.epsilon_bracket(q, sigma, steps, delta, neighbours="replace-one")
    assert lo <= eps - err and eps + err <= hi < math.inf and hi - lo <= 1e-3 * hi, (lo, eps, hi)


@pytest.mark.parametrize("q, sigma, h", [(0.5, 1.0, 0.05), (0.01, 1.0, 0.01)])
def test_replace_one_lowered_values_stay_below_the_profile_between_points_in_a_far_tail(q, sigma, h):
    # the dominated replace-one pair's values are lowered by a bound on each cell's chord gap, D A / (D + A); in a far
    # tail (values near 1e-160) D A underflowed to 0, the bound with it, and the values sat on the chord: a tilted
    # read-out's lower end then stood 4e-6 above the true delta (at q = 0.65, sigma = 0.19, one step, 1e-163). The
    # chord of the values, at each cell's midpoint in e^x, must lie at or below the profile there
    from dpmia.sgm._chain import _sym_pair
    from dpmia.sgm._replace import replace_one_profile
    from dpmia.sgm._tiltstep import _symmetric_reference
    one = _sym_pair(q, sigma, "poisson", h, "optimistic", 1e-305)
    ref = _symmetric_reference(check_run(q, sigma, 1, neighbours="replace-one"), one).values
    x = one.losses
    j = np.flatnonzero(x >= 0.0)[:-1]
    assert replace_one_profile(x[-2:-1], q, sigma)[0][0] < 1e-200       # (the grid reaches the far tail)
    mid = np.log(0.5 * (np.exp(x[j]) + np.exp(x[j + 1])))
    assert np.all(0.5 * (ref[j] + ref[j + 1]) <= replace_one_profile(mid, q, sigma)[0])
    lo, hi = sgm.delta_bracket(0.6534182746337438, 0.18545524060615726, 1, 161.2627323682791,
                               neighbours="replace-one")
    assert lo <= 6.381594115097809e-163 <= hi        # (the exact value, 60-digit mpmath)


@pytest.fixture
def passes(monkeypatch):
    """The far-tail read-outs' tilted passes, as they run: ``(h, size)`` for each one composed, ``(h, None)`` for each
    the FFT cap refused (or that no grid could carry)."""
    from dpmia.sgm import _fartail
    seen = []
    attempt = _fartail._attempt

    def spy(*args, **kwargs):
        tp, h = attempt(*args, **kwargs)
        seen.append((args[1], None if tp is None else tp["pessimistic", "add"].y.size))
        return tp, h
    monkeypatch.setattr(_fartail, "_attempt", spy)
    sgm.clear_caches()
    return seen


def test_far_tail_recentres_before_it_refines(passes, monkeypatch):
    # replace-one starts a far tail from the single step and the sampling-pattern bound, here (36.8, 303.8) around
    # 66.52 (without Renyi accounting's bound, which starts it narrower): without the saddle-point estimate, the first
    # tilt, centred midway, reads an upper end and nothing below.
    # The width is then the centre's, not the grid's: the read-out re-centres on grids about as coarse as the first
    # (within tol there), and does not build the finest grid the FFT cap allows (two million points, seconds) for a
    # value a tenth of it resolves
    from dpmia.sgm import _fartail
    saddle = _fartail._saddle_epsilon
    from dpmia.sgm import _epsilon
    rdp = _epsilon._epsilon_rdp_replace_one
    monkeypatch.setattr(_fartail, "_saddle_epsilon", lambda run, d: None)
    monkeypatch.setattr(_epsilon, "_epsilon_rdp_replace_one", lambda run, d: math.inf)
    lo, hi = sgm.epsilon_bracket(1e-3, 0.5, 10, 1e-100, neighbours="replace-one")
    sizes = [n for _, n in passes if n is not None]
    assert hi - lo <= 1e-3 * hi, (lo, hi)
    assert len(sizes) >= 2 and max(sizes) <= 2**18, sizes
    # with it, the first tilt is centred near the value: one pass, on a grid as coarse
    monkeypatch.setattr(_fartail, "_saddle_epsilon", saddle)
    monkeypatch.setattr(_epsilon, "_epsilon_rdp_replace_one", rdp)
    sgm.clear_caches()
    del passes[:]
    lo2, hi2 = sgm.epsilon_bracket(1e-3, 0.5, 10, 1e-100, neighbours="replace-one")
    sizes = [n for _, n in passes if n is not None]
    assert hi2 - lo2 <= 1e-3 * hi2 and max(lo, lo2) <= min(hi, hi2), (lo, hi, lo2, hi2)
    assert len(sizes) == 1 and sizes[0] <= 2**18, sizes


def test_far_tail_without_an_upper_end_refines_until_it_reads_one():
    # where the dominating pair's floor (its single step's absolute excess, T-fold: about 3e-289 here on the first
    # grid) lies above delta, no grid of that step reads an upper end, and the read-out used to stop at (216.4, inf);
    # finer grids lower the floor: eps within tol, above the add/remove eps (1101.1), delta on either side at its ends
    lo, hi = sgm.epsilon_bracket(0.1, 0.5, 1000, 1e-300, neighbours="replace-one")
    assert hi - lo <= 1e-3 * hi, (lo, hi)
    assert hi >= sgm.epsilon_bracket(0.1, 0.5, 1000, 1e-300)[0]
    assert sgm.delta_bracket(0.1, 0.5, 1000, lo, neighbours="replace-one")[1] >= 1e-300
    assert sgm.delta_bracket(0.1, 0.5, 1000, hi, neighbours="replace-one")[0] <= 1e-300


def test_saddle_point_converges_where_newton_alternates():
    # the replace-one pair at (1e-3, 0.5), ten steps, centred at 78.68: Newton's steps stayed inside the bracket and
    # alternated about the root (3.2, 4.31, 3.2, ...) for all 60 iterations, and the tilt returned was the last of
    # them; bisecting where a step is not under half the one before last finds the root (the tilted mean T E[x] at
    # the centre)
    from dpmia.sgm import _chain, _tilt
    h, centre, steps = 0.0011575637135072116, 78.68055234185638, 10
    pe = _chain._sym_pair(1e-3, 0.5, "poisson", h, "pessimistic", 1e-106)
    keep = pe.pmf > 0
    logq, x = np.log(pe.pmf[keep]), pe.losses[keep]
    lam = _tilt._saddle(logq, x, steps, centre)
    assert abs(steps * _tilt._log_mgf(logq, x, lam)[1] - centre) <= 1e-4 * centre


def test_far_tail_first_grid_fits_the_fft_cap(passes):
    # ten steps at (1e-4, 2), delta 1e-200: the first grid the error model asks for (h 8.4e-6) needs a tilted window
    # three times the FFT cap, and was built (0.6 s) before the composition refused it; the window, measured on a
    # coarse grid first, now sizes the first grid to fit
    lo, hi = sgm.epsilon_bracket(1e-4, 2.0, 10, 1e-200)
    assert hi - lo <= 1e-3 * hi and all(n is not None for _, n in passes), (lo, hi, passes)
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(1e-4, 2.0, 10, 5.8371264)
    assert hi - lo <= 1e-3 * hi and all(n is not None for _, n in passes), (lo, hi, passes)


def test_recentred_pass_refines_where_the_grid_is_too_coarse(passes):
    # a million steps at (1e-4, 0.8), delta 1e-12: a pass centred off the value (1.43 against 1.387) read both ends of
    # a bracket 2.3e-3 wide, its own width at both ends; the next pass re-centred on the same grid read the same width
    # again (0.2 s at a million points) before a finer one met tol. Re-centred passes now refine where the grid's own
    # width at the ends is wider than tol: four passes, not six. Five since the dominated pair keeps its tail next to
    # the bulk (sgm._chain._one_sided): the first pass, on the coarsest grid, now reads a lower end (1.2158), and the
    # second re-centres once on a grid twice as fine before the error model's refinements
    lo, hi = sgm.epsilon_bracket(1e-4, 0.8, 10**6, 1e-12)
    sizes = [n for _, n in passes if n is not None]
    assert hi - lo <= 1e-3 * hi and len(sizes) <= 5 and sizes[1] < 2 * sizes[0], (lo, hi, sizes)


def test_dominated_pair_trimmed_where_its_far_atoms_exceed_the_reference():
    # far out the replace-one dominated pair's atoms were built from values whose errors were near their own size (its
    # products y P(cell) of subnormal P-masses), and their profile exceeded the reference by 1.4e-4 relative at
    # q = 0.01, sigma = 0.5 (losses near 69): a T-fold factor (1 + kappa)^T that cut eps(1e-300)'s lower end at T = 1e4
    # from 623.64 to 616.97. Those products now come from the masses' logs and the pair meets its reference to 1e-9;
    # atoms raised by 1e-4 above loss 60 stand for the old ones: the trimmed pair drops them, its profile lies below
    # the untrimmed one everywhere and within 1e-9 of the reference
    import dataclasses

    from dpmia.sgm._setting import check_run
    from dpmia.sgm._symmetric import _symmetric_pair
    from dpmia.sgm._tiltexcess import _excess, _grid_profile, _trimmed
    from dpmia.sgm._tiltstep import _symmetric_reference

    run = check_run(0.01, 0.5, 10_000, neighbours="replace-one")
    op = _symmetric_pair(0.01, 0.5, "poisson", 0.004501404134681263, "optimistic", 1e-310)
    ref = _symmetric_reference(run, op)
    assert max(k for k, _, _ in _excess(op, ref)) <= 1e-9 and _trimmed(op, ref) is op
    high = dataclasses.replace(op, pmf=np.where(op.losses > 60.0, op.pmf * (1 + 1e-4), op.pmf))
    assert max(k for k, _, _ in _excess(high, ref)) > 1e-6
    cut = _trimmed(high, ref)
    assert cut is not high and np.all(cut.pmf <= high.pmf)
    assert np.all(_grid_profile(cut)[0] <= _grid_profile(high)[0])
    kappa, s, _ = _excess(cut, ref)[2]                  # (the split at relative excess 1e-9)
    assert kappa <= 1e-9 and s == 0.0
    assert _trimmed(cut, ref) is cut                 # nothing left to trim


def test_tilted_step_log_mgf_is_the_renyi_divergence():
    # K(lam) = (alpha - 1) D_alpha at alpha = 1 + lam: the quadrature against the binomial expansion (integer orders)
    from dpmia.sgm._rdp import _rdp, _tilted_step
    for q, s in ((0.01, 1.0), (0.2, 0.7), (1e-4, 3.0)):
        for lam in (1.0, 4.0, 15.0):
            k = _tilted_step(q, s, lam)[0]
            ref = lam * float(_rdp(q, s, np.array([lam + 1.0]))[0])
            assert abs(k - ref) <= 1e-7 * abs(ref) + 1e-12, (q, s, lam, k, ref)   # (T K to 1e-5 at T = 1e7)
        # its mean is K'(lam), by a central difference of K
        lam, d = 3.0, 1e-2
        fd = (_tilted_step(q, s, lam + d)[0] - _tilted_step(q, s, lam - d)[0]) / (2 * d)
        assert abs(_tilted_step(q, s, lam)[1] - fd) <= 1e-3 * abs(fd) + 1e-10, (q, s)


def test_saddle_estimate_sizes_far_reads_near_the_value_and_stands_down_where_skewed():
    from dpmia.sgm._rdp import _saddle_log_delta
    # a tail the bulk of many steps sets: within a factor 25 of the certified value (grids sized from 1e-3 of it)
    for q, s, T, e in ((0.5, 1.0, 10, 32.35), (0.01, 1.0, 1000, 9.34), (0.1, 0.5, 100, 105.9)):
        lo, hi = sgm.delta_bracket(q, s, T, e)
        est = _saddle_log_delta(check_run(q, s, T), e)
        assert est is not None and abs(est - math.log(hi)) <= math.log(25.0), (q, s, T, e, est, math.log(hi))
    # rare large jumps set the tail (the tilted sum is far from normal; the normal estimate is 1e8 ... 1e42 too high)
    for q, s, T, e in ((0.01, 5.0, 100, 0.579), (1e-4, 2.0, 1000, 5.914)):
        assert _saddle_log_delta(check_run(q, s, T), e) is None
    # below the mean loss: no far tail
    assert _saddle_log_delta(check_run(0.01, 1.0, 1000), 0.01) is None
    # replace-one, from its symmetric pair: the same within the same factor, and stands down alike
    for q, s, T, e in ((0.5, 1.0, 10, 40.0), (0.01, 1.0, 1000, 14.0), (0.1, 0.5, 100, 120.0)):
        run = check_run(q, s, T, neighbours="replace-one")
        lo, hi = sgm.delta_bracket(q, s, T, e, neighbours="replace-one")
        est = _saddle_log_delta(run, e)
        assert est is not None and abs(est - math.log(hi)) <= math.log(25.0), (q, s, T, e, est, math.log(hi))
    for q, s, T, e in ((0.01, 5.0, 100, 0.8), (1e-4, 2.0, 1000, 6.5), (0.01, 1.0, 1000, 0.01)):
        assert _saddle_log_delta(check_run(q, s, T, neighbours="replace-one"), e) is None


def test_tilted_step_of_the_replace_one_pair_against_quadrature():
    # K(lam) = ln int Q_R^(1 + lam) P_R^(-lam), Q_R = (1-q) N(0, s^2) + q N(1, s^2), P_R with N(-1, s^2): scipy's quad
    # on the integrand in log form (its own code: log-densities of both mixtures)
    from scipy import integrate, stats

    from dpmia.sgm._rdp import _tilted_step

    def log_mix(x, q, s, m):
        return np.logaddexp(math.log1p(-q) + stats.norm.logpdf(x, 0, s), math.log(q) + stats.norm.logpdf(x, m, s))

    for q, s, lam in ((0.01, 1.0, 3.0), (0.2, 0.8, 1.5), (0.05, 2.0, 10.0)):
        def f(x, q=q, s=s, lam=lam):
            return math.exp((1 + lam) * log_mix(x, q, s, 1.0) - lam * log_mix(x, q, s, -1.0))
        val = integrate.quad(f, -15 * s - 1, 15 * s + 2 + lam, epsabs=0, epsrel=1e-11, limit=400)[0]
        k = _tilted_step(q, s, lam, symmetric=True)[0]
        assert abs(k - math.log(val)) <= 1e-8 * abs(math.log(val)) + 1e-12, (q, s, lam, k, math.log(val))


def test_saddle_epsilon_near_the_certified_value_under_both_relations():
    from dpmia.sgm._rdp import _saddle_epsilon
    for q, s, T, d, nb in ((0.5, 1.0, 10, 1e-300, "add-remove"), (0.01, 1.0, 1000, 1e-30, "add-remove"),
                           (1e-3, 1.0, 10, 1e-300, "replace-one"), (1e-3, 0.5, 1000, 1e-100, "replace-one")):
        lo, hi = sgm.epsilon_bracket(q, s, T, d, neighbours=nb)
        est = _saddle_epsilon(check_run(q, s, T, neighbours=nb), d)
        assert est is not None and abs(est - hi) <= 5e-3 * hi, (q, s, T, d, nb, est, lo, hi)
    # rare large jumps (skewed tilted sum): no estimate; nor above the far tail
    assert _saddle_epsilon(check_run(1e-3, 5.0, 1000, neighbours="replace-one"), 1e-300) is None
    assert _saddle_epsilon(check_run(0.01, 1.0, 1000), 1e-5) is None


def test_replace_one_renyi_cap_bounds_the_pair_and_ends_the_far_tail(monkeypatch):
    # the inequality behind it, D_a(Q_R || P_R) <= D_a(Q_R || N(0, s^2)) + ln 1/(1-q), on the pair's own divergence
    # (by quadrature: K(lam) / lam at a = 1 + lam)
    from dpmia.sgm._rdp import _epsilon_rdp_replace_one, _rdp, _tilted_step
    for q, s in ((0.1, 0.5), (0.01, 1.0), (1e-3, 2.0)):
        for lam in (1.0, 3.0, 10.0):
            ro = _tilted_step(q, s, lam, symmetric=True)[0] / lam
            ar = float(_rdp(q, s, np.array([1.0 + lam]))[0]) - math.log1p(-q)
            assert ro <= ar * (1 + 1e-9), (q, s, lam, ro, ar)
    # a far tail whose dominating pairs carried an absolute excess far above delta (q = 0.1, sigma = 0.5, T = 1e4,
    # delta 1e-300, eps about 3354, before the pairs' tops were lifted, sgm._tiltstep._topped, and their products
    # y P(cell) taken from logs) had no upper end at all; standing in for it, a far read-out that finds none: the cap
    # gives one, above the lower end
    from dpmia.sgm import _epsilon
    cap = _epsilon_rdp_replace_one(check_run(0.1, 0.5, 10_000), 1e-300)
    with monkeypatch.context() as m:
        m.setattr(_epsilon, "_far_epsilon", lambda run, d, lo, hi, t: (lo, math.inf))
        sgm.clear_caches()
        lo, hi = sgm.epsilon_bracket(0.1, 0.5, 10_000, 1e-300, neighbours="replace-one")
    assert 0.0 < lo <= hi < math.inf and hi == cap
    sgm.clear_caches()
    lo, hi = sgm.epsilon_bracket(0.1, 0.5, 10_000, 1e-300, neighbours="replace-one")
    assert 3300.0 < lo <= hi < cap and hi - lo <= 1e-3 * hi
    # where the read-outs are tight the cap stays above them, and does not answer
    for q, s, T, d in ((0.1, 0.5, 1000, 1e-300), (0.01, 1.0, 1000, 1e-5), (1e-3, 1.0, 10, 1e-30)):
        lo, hi = sgm.epsilon_bracket(q, s, T, d, neighbours="replace-one")
        assert hi < _epsilon_rdp_replace_one(check_run(q, s, T), d), (q, s, T, d, lo, hi)


def test_far_delta_reads_in_one_pass_where_the_width_model_gives_the_step(passes):
    # the tilted delta read-out's width is about 0.25 T (lam h)^2 (measured 0.11 ... 0.24): where the saddle-point
    # estimate gives the tilt, the first pass takes the step that model puts within tol, on the longer FFT if it
    # needs it, and reads delta in one pass (two before: 1.3e-3 wide on the cap's step, then 6.2e-4)
    lo, hi = sgm.delta_bracket(0.01, 1.0, 10_000, 40.4631)
    assert 9.3e-101 < lo <= hi < 9.5e-101 and hi - lo <= 1e-3 * hi, (lo, hi)
    assert len([p for p in passes if p[1] is not None]) == 1, passes


@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
def test_delta_far_beyond_the_float_range_is_read_at_once(neighbours):
    # Markov's inequality on e^L bounds delta by E[A/B]^T e^-eps: beyond eps where that is below the least double the
    # read-out answers (0, 5e-324) at once (it composed grids for seconds at eps = 1e308, with float overflows)
    import time

    from dpmia.sgm._tvbounds import _beyond_float
    run = check_run(0.01, 1.0, 100, neighbours=neighbours)
    for e in (1e308, 2.0 * _beyond_float(run)):
        t = time.process_time()
        assert sgm.delta_bracket(0.01, 1.0, 100, e, neighbours=neighbours) == (0.0, 5e-324)
        assert time.process_time() - t < 0.5
    # the Markov bound itself lies above a certified lower end where delta is 1e-250
    log_bound_at = (_beyond_float(run) - 746.0) / (1.0 + 1e-9)          # (T log E[A/B], rounded up)
    e0 = sgm.epsilon_bracket(0.01, 1.0, 100, 1e-250, neighbours=neighbours)[0]
    lo = sgm.delta_bracket(0.01, 1.0, 100, e0, neighbours=neighbours)[0]
    assert 0.0 < lo and math.log(lo) <= log_bound_at - e0
    assert sgm.delta_bracket(0.01, 1.0, 1, 200.0)[1] == 5e-324      # (one add/remove step: its closed form)
