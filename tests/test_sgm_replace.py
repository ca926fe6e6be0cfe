"""dpmia.sgm's single step under replace-one neighbours: the exact profile against 40-digit quadrature-free
references (mpmath), its symmetry, the Gaussian limit and the closed-form TV."""
import math

import mpmath as mp
import numpy as np
import pytest

from dpmia import gaussian, sgm
from dpmia.sgm._replace import replace_one_profile


def _reference(e, q, s):
    r"""H_{e^e}(Q_R || P_R) and P_R(L > e) at 40 digits: the threshold by bisection on the loss, then the
    two Gaussian-mixture tails (an independent route: no Mills ratios, no closed-form threshold)."""
    mp.mp.dps = 40
    q, s, e = mp.mpf(q), mp.mpf(s), mp.mpf(e)

    def phi(t, m):
        return mp.exp(-(t - m) ** 2 / (2 * s * s))

    def loss(t):
        return mp.log((1 - q) * phi(t, 0) + q * phi(t, 1)) - mp.log((1 - q) * phi(t, 0) + q * phi(t, -1))

    lo, hi = -200 * s - 10, 200 * s + 10
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if loss(mid) > e else (mid, hi)
    # at e = 0 the threshold is 0 by symmetry (the loss near 0 can be below 10^-40 at small sigma)
    t0 = (lo + hi) / 2 if e != 0 else mp.mpf(0)
    a = (1 - q) * mp.ncdf(-t0 / s) + q * mp.ncdf(-(t0 - 1) / s)
    b = (1 - q) * mp.ncdf(-t0 / s) + q * mp.ncdf(-(t0 + 1) / s)
    return float(a - mp.exp(e) * b), float(b)


SETTINGS = [(0.01, 1.0), (0.3, 0.5), (1e-4, 2.0), (0.9, 0.1), (1.0, 1.0), (0.01, 50.0), (1e-6, 0.3),
            (0.05, 300.0), (0.01, 0.01), (0.5, 1000.0)]


@pytest.mark.parametrize("q, s", SETTINGS)
def test_bracket_holds_the_reference(q, s):
    e = np.array([-30.0, -3.0, -0.5, 0.0, 1e-9, 0.01, 0.3, 1.0, 3.0, 8.0, 30.0, 700.0])
    lo, hi, tail = replace_one_profile(e, q, s)
    for i, ei in enumerate(e):
        ref, ref_tail = _reference(ei, q, s)
        assert lo[i] <= ref * (1 + 1e-15) + 1e-300 and ref <= hi[i] * (1 + 1e-15) + 1e-300, (ei, lo[i], ref, hi[i])
        assert hi[i] - lo[i] <= 1e-8 * ref + 1e-300
        assert tail[i] == pytest.approx(ref_tail, rel=1e-10, abs=1e-300)


def test_symmetric_pair_and_gaussian_limit():
    e = np.linspace(-4.0, 4.0, 33)
    d, _ = sgm.profile(e, 0.2, 0.7, neighbours="replace-one")
    dn, _ = sgm.profile(-e, 0.2, 0.7, neighbours="replace-one")
    # H_{1/y} = 1 - 1/y + (1/y) H_y for the pair that is its own reflection
    assert np.allclose(dn, -np.expm1(-e) + np.exp(-e) * d, rtol=1e-9, atol=1e-15)
    # q = 1: N(1) against N(-1), the Gaussian mechanism with mu = 2 / sigma
    d1, _ = sgm.profile(np.abs(e), 1.0, 0.7, neighbours="replace-one")
    assert np.allclose(d1, gaussian.delta(np.abs(e), 2.0 / 0.7), rtol=1e-9)


@pytest.mark.parametrize("q, s", [(0.01, 1.0), (0.3, 0.2), (1e-5, 30.0)])
def test_tv_and_profile_at_zero(q, s):
    tv = sgm.single_step_tv(q, s, neighbours="replace-one")
    assert tv == pytest.approx(q * math.erf(1.0 / (s * math.sqrt(2.0))), rel=1e-14)
    assert float(sgm.profile(0.0, q, s, neighbours="replace-one")[0]) == pytest.approx(tv, rel=1e-9)
    # one step under replace-one is at most two add/remove steps (through the set without the record)
    assert tv <= 2.0 * sgm.single_step_tv(q, s) * (1 + 1e-12)


def test_neighbours_is_checked():
    with pytest.raises(ValueError, match="neighbours must be 'add-remove'"):
        sgm.profile(0.0, 0.1, 1.0, neighbours="replace")
    with pytest.raises(ValueError, match="neighbours"):
        sgm.single_step_tv(0.1, 1.0, neighbours=None)


def test_cell_mass_error_bound_holds_into_subnormal_tails():
    # the symmetric pair's cell masses carry error bounds that its gaps multiply by y = e^x: an absolute floor there
    # must cover only the subnormal roundings (a floor of 1e-300 zeroed the dominated pair beyond eps 9); each
    # bound against 50-digit mpmath, for cells from the normal range down to masses that underflow
    from dpmia.sgm._symmetric import _mass

    mp.mp.dps = 50
    lo = np.array([20.0, 30.0, 36.0, 37.5, 38.2, 38.5, 39.0])
    hi = lo + np.array([1e-3, 0.01, 0.02, 0.01, 0.05, 0.2, 0.5])
    lo, hi = np.append(lo, 45.0), np.append(hi, 45.01)
    for m in (0.0, 0.5, -0.5):
        mass, err, log_mass, rel = _mass(lo, hi, m)
        for a, b, v, e, lv, r in zip(lo, hi, mass, err, log_mass, rel):
            ref = (mp.ncdf(-(mp.mpf(a) - m)) - mp.ncdf(-(mp.mpf(b) - m)))
            assert abs(mp.mpf(float(v)) - ref) <= e, (a, b, m, v, ref, e)
            assert e <= 1e-6 * ref + 1e-320       # on the mass's scale (the floor is only for subnormals)
            # the log, relatively accurate also where the mass underflows
            assert abs(mp.mpf(float(lv)) - mp.log(ref)) <= r <= 1e-6, (a, b, m, lv, r)


def test_replace_one_far_tail_of_few_steps_within_tol():
    # at q = 1e-4, sigma = 2, T = 10 the far tail at delta = 1e-300 is set by one large step; the dominated pair kept
    # no mass there (lower ends of 1e-301 for delta, eps 1.1e-3 wide), now each read-out meets tol and the two agree
    e_lo, e_hi = sgm.epsilon_bracket(1e-4, 2.0, 10, 1e-300, neighbours="replace-one")
    assert e_hi - e_lo <= 1e-3 * e_hi
    d_lo, d_hi = sgm.delta_bracket(1e-4, 2.0, 10, e_hi, neighbours="replace-one")
    assert d_hi - d_lo <= 1e-3 * d_hi
    assert d_lo <= 1e-300                      # delta at the upper end of eps(1e-300) is at most 1e-300
    assert sgm.delta_bracket(1e-4, 2.0, 10, e_lo, neighbours="replace-one")[1] >= 1e-300


@pytest.mark.parametrize("eps, delta", [(9.2864, 1.00481539032e-300), (9.28637, 1.00703649873e-300),
                                        (9.28656, 9.93051891708e-301)])
def test_replace_one_far_tail_of_few_steps_holds_an_independent_value(eps, delta):
    # computed independently of dpmia in 50-digit mpmath: the runs with one step above a cut c (l(c) = 0.5) exactly,
    # the other nine tilted and integrated by quadrature, two or more large steps bounded by 7e-334 (checked on one
    # and two steps against direct quadrature); eps(1e-300) = 9.28646526858 there, delta to 1e-9 relative
    lo, hi = sgm.delta_bracket(1e-4, 2.0, 10, eps, neighbours="replace-one")
    assert lo <= delta * (1 - 1e-8) and delta * (1 + 1e-8) <= hi, (lo, delta, hi)
    e_lo, e_hi = sgm.epsilon_bracket(1e-4, 2.0, 10, 1e-300, neighbours="replace-one")
    assert e_lo <= 9.28646526858 - 1e-9 and 9.28646526858 + 1e-9 <= e_hi


def test_the_convex_minorant_leaves_a_far_tails_lowered_values_exact():
    # the minorant's correction is summed block by block: one running sum over the curve carried a block's float
    # residual (about u times its terms: 1.2e-19 from the cells next to 0 here, replace-one at q = 1e-3, sigma = 0.5
    # on this step) onto every point after it, which took the dominated pair's lowered values of 1e-19 and below to
    # 0 and a far tail read from it to vacuous (delta at eps(1e-300) read (0, 1.05e-300) on this grid)
    from dpmia.sgm._chain import _sym_pair
    from dpmia.sgm._replace import replace_one_profile
    from dpmia.sgm._setting import check_run
    from dpmia.sgm._tiltstep import _symmetric_reference
    one = _sym_pair(1e-3, 0.5, "poisson", 0.0011537350998065377, "optimistic", 1e-309)
    ref = _symmetric_reference(check_run(1e-3, 0.5, 1, neighbours="replace-one"), one).values
    x = one.losses
    far = (x > 5.0) & (replace_one_profile(np.maximum(x, 0.0), 1e-3, 0.5)[0] > 1e-30)
    exact = replace_one_profile(x[far], 1e-3, 0.5)[0]
    assert far.sum() > 1000 and np.all(ref[far] <= exact) and np.all(ref[far] >= 0.999 * exact)


def test_one_replace_one_step_reads_its_closed_form():
    # one replace-one step's delta is its profile's closed form (its ends rounded outward): the composed read-out's
    # upper end sat near its slack, 1e-9, whatever the value (7e-30 here); eps(delta) there inverts the same profile
    from dpmia.sgm._replace import replace_one_profile
    q, s = 0.03792869608525836, 16.796369555667706
    for e in (0.0326, 0.2, -0.3):
        lo, hi = sgm.delta_bracket(q, s, 1, e, neighbours="replace-one")
        plo, phi, _ = replace_one_profile(np.array([e]), q, s)
        assert lo == plo[0] and hi == max(phi[0], 5e-324) and 0.0 < lo <= hi <= lo * (1 + 1e-9), (e, lo, hi)
    e_lo, e_hi = sgm.epsilon_bracket(q, s, 1, 1e-20, neighbours="replace-one")
    assert sgm.delta_bracket(q, s, 1, e_hi, neighbours="replace-one")[0] <= 1e-20
    assert 1e-20 <= sgm.delta_bracket(q, s, 1, e_lo, neighbours="replace-one")[1]
    # beyond the float range the upper end is the least double, not 0: delta is positive at every eps
    assert sgm.delta_bracket(q, s, 1, 50.0, neighbours="replace-one") == (0.0, 5e-324)


@pytest.mark.parametrize("h", [0.01, 0.00043056274361658113])
def test_a_dominated_pair_whose_first_cell_holds_most_of_the_mass_keeps_its_far_tail(h):
    # replace-one at q = 5.61e-5, sigma = 0.522: the losses of the runs without the target lie within 1e-4 of 0, so the
    # first cell's chord rises above the profile by more than the profile's value at h; lowering both ends by it left
    # the dominated pair 0 above h (and a far eps(2.19e-188) at T = 154 read (47.25, 85.26)). The cell's ends now
    # share the lowering in proportion to their values (pld.chord_lowering), and the far tail keeps its value
    from dpmia.sgm._chain import _sym_pair
    from dpmia.sgm._replace import replace_one_profile
    from dpmia.sgm._setting import check_run
    from dpmia.sgm._tiltstep import _symmetric_reference
    q, s = 5.61e-5, 0.522
    one = _sym_pair(q, s, "poisson", h, "optimistic", 1e-300)
    ref = _symmetric_reference(check_run(q, s, 1, neighbours="replace-one"), one).values
    x = one.losses
    far = (x > 5.0) & (x < 40.0)
    exact = replace_one_profile(x[far], q, s)[0]
    assert far.sum() > 800 and np.all(ref[far] <= exact) and np.all(ref[far] >= 0.99 * exact)
    assert np.all(one.delta(x[x > 0]) <= replace_one_profile(x[x > 0], q, s)[1])


def test_replace_one_far_tail_of_few_steps_at_small_noise_within_tol():
    e_lo, e_hi = sgm.epsilon_bracket(5.61e-5, 0.522, 154, 2.19e-188, neighbours="replace-one")
    assert e_hi - e_lo <= 1e-3 * e_hi


@pytest.mark.parametrize("q, s, T, eps, delta", [(5.61e-5, 0.522, 154, 85.2589, 2.190169335e-188),
                                                 (3.86e-5, 0.865, 480, 42.5983, 6.853278792e-276),
                                                 (5.61e-5, 0.522, 2, 20.0, 1.141837280e-49)])
def test_replace_one_far_tails_at_small_q_hold_independent_values(q, s, T, eps, delta):
    # computed independently of dpmia: each step split smoothly into bulk and jumps at the tilted density's low point,
    # the all-bulk term left out (a Chernoff bound puts it 1e-132 ... 1e-555 of delta below), the rest inverted by a
    # Bromwich contour integral at the saddle point and, separately, by an FFT of the tilted characteristic function
    # (Richardson-extrapolated); the two agree to 4e-10 or better, each within 2e-10 of the closed form at q = 1, and
    # at T = 2 within 1e-12 of a 40-digit one-dimensional quadrature
    lo, hi = sgm.delta_bracket(q, s, T, eps, neighbours="replace-one")
    assert lo <= delta * (1 - 1e-8) and delta * (1 + 1e-8) <= hi, (lo, delta, hi)
    assert hi - lo <= 1e-3 * hi


def test_a_dominating_pair_keeps_its_top_where_the_p_masses_are_subnormal():
    # at the top of a far grid (q = 1e-5, sigma = 0.5: losses 60 ... 64.8, the profile 1e-271 ... 1e-308) a cell's
    # P-mass is e^-x times its Q-mass, subnormal, and y P(cell) lost its digits: the dominating pair's profile ran up
    # to 18 times its reference values there, and a delta read at T = 1000 near 1e-300 was 6 % wide. They are now
    # taken from the masses' logs
    from dpmia.sgm._chain import _sym_pair
    from dpmia.sgm._setting import check_run
    from dpmia.sgm._tiltexcess import _grid_profile
    from dpmia.sgm._tiltstep import _symmetric_reference
    q, s = 1e-5, 0.5
    one = _sym_pair(q, s, "poisson", 0.00011201753671277184, "pessimistic", 1e-308)
    ref = np.asarray(_symmetric_reference(check_run(q, s, 1, neighbours="replace-one"), one), float)
    g, _ = _grid_profile(one, with_inf=True)
    top = one.losses > 60.0
    assert top.sum() > 40000 and np.all(g[top] <= ref[top] * (1 + 1e-9)), np.max(g[top] / ref[top])
    lo, hi = sgm.delta_bracket(q, s, 1000, 128.35287169501316, neighbours="replace-one")
    assert hi - lo <= 1e-3 * hi and lo <= 1e-300, (lo, hi)      # (eps: an upper end on eps(1e-300))


@pytest.mark.parametrize("neighbours", ["replace-one", "add-remove"])
def test_a_far_tail_read_takes_its_first_step_from_the_width_model(monkeypatch, neighbours):
    # the tilted eps read-out's first grid step: the plain model's (sized by the bulk's spread, about 1e-5 at q = 1e-5)
    # resolved 1.4e-7 under replace-one at (1e-5, 0.8, 10, 1e-30) in 5 s; the width model, from the saddle point's
    # tilt, asks for a step far coarser, which meets tol at once. Add/remove keeps the plain model's step where the
    # width model asks for a coarser one (tails at sigma 2 read nothing on coarser grids)
    from dpmia.sgm import _fartail
    q, s, T, d = (1e-5, 0.8, 10, 1e-30) if neighbours == "replace-one" else (1e-4, 2.0, 10, 1e-200)
    real = _fartail._attempt

    def first_step(model):
        steps = []
        sgm.clear_caches()
        with monkeypatch.context() as m:
            m.setattr(_fartail, "_attempt", lambda run, h, *a, **k: steps.append(h) or real(run, h, *a, **k))
            if not model:
                m.setattr(_fartail, "_saddle_log_delta", lambda *a, **k: None)
            lo, hi = sgm.epsilon_bracket(q, s, T, d, neighbours=neighbours)
        assert steps and hi - lo <= 1e-3 * hi
        return steps[0], (lo, hi)

    (h_model, (lo, hi)), (h_plain, _) = first_step(True), first_step(False)
    if neighbours == "replace-one":
        assert h_model > 20.0 * h_plain, (h_model, h_plain)
    else:
        assert h_model == h_plain
    assert sgm.delta_bracket(q, s, T, hi, neighbours=neighbours)[0] <= d <= sgm.delta_bracket(q, s, T, lo,
                                                                                             neighbours=neighbours)[1]


def test_a_far_delta_set_by_one_large_step_is_read_by_the_split_first(monkeypatch):
    # replace-one, two steps at q = 1e-5: one large step sets delta (T times one step's, 1.0163e-150 at eps 5.754).
    # The split read-out from the width model's step goes first and meets tol alone (the tilted read-outs took 13 s
    # there before it); where several large steps set the tail its first pass reads 0 and it gives way at once
    from dpmia.sgm import _splitread
    calls = []
    for name, tag in (("tilted_delta_bracket", "tilted"), ("split_delta_bracket", "split")):
        real = getattr(_splitread, name)
        monkeypatch.setattr(_splitread, name, lambda *a, real=real, tag=tag, **k: calls.append(tag) or real(*a, **k))
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(1e-5, 1.5, 2, 5.754, neighbours="replace-one")
    assert calls == ["split"] and 0.0 < hi - lo <= 1e-3 * hi
    # the bracket the tilted and split read-outs gave before (both certified): the two must meet
    assert max(lo, 1.0162710607349321e-150) <= min(hi, 1.0162725031158266e-150)
    calls.clear()
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(1e-4, 0.5, 10, 14.195288331154487, neighbours="replace-one")
    assert calls[:2] == ["split", "tilted"] and 0.0 < hi - lo <= 1e-3 * hi


def test_the_dominated_pair_keeps_the_values_next_to_0_at_tiny_q():
    # replace-one at q = 1e-6 on a step of 1e-3: the profile falls from 5e-7 at 0 to 3e-31 at h. Each of the first
    # cells drops its left end to the line through its right end (pld.chord_lowering's rise); lowering both ends, or
    # a test for 1 - y's noise on the cancelled difference v - c, took the values at 0 ... 4h to 0
    from dpmia.sgm._symmetric import _symmetric_grid, _symmetric_pair
    op = _symmetric_pair(1e-6, 1.5, "poisson", 1e-3, "optimistic", 1e-300)
    lo = _symmetric_grid(1e-6, 1.5, "poisson", 1e-3, 1e-300)[1][0]
    i = int(np.argmin(np.abs(op.losses)))
    assert op.losses[i] == 0.0
    ref = op.ref[i:i + 6]
    assert np.all(ref > 0.0) and np.all(ref <= lo[:6])
    assert ref[1] >= 1e-4 * lo[1] and ref[4] >= 0.05 * lo[4]


def test_the_dominated_pair_keeps_the_large_steps_that_set_a_far_delta():
    # replace-one at q = 1e-5, T = 1000: one large step sets delta(15.42) = 1e-100. The dominated single step's atoms
    # above 2.86 exceeded their reference by 1e-9 relative and were trimmed (1.6e-104 a step: the very tail), which
    # left the tilted read 4.0e-3 wide; trimmed only where the excess moves a T-fold read by 1e-4, it meets tol
    lo, hi = sgm.delta_bracket(1e-5, 0.8, 1000, 15.419249365605413, neighbours="replace-one")
    assert 0.0 < hi - lo <= 1e-3 * hi
    assert max(lo, 9.923640803190791e-101) <= min(hi, 9.963158806839546e-101)       # the bracket given before
