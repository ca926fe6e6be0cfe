"""dpmia.sgm's split read-out of far tails set by one large step (white box): the split against the grid atoms
composed directly, the public brackets against independent values, eps(delta) within tol and consistent."""
import math

import numpy as np
import pytest
from scipy import special

from dpmia import sgm
from dpmia.sgm._setting import check_run

#: delta(eps) of the add/remove Poisson SGM (the larger direction) from an independent computation with its own code
#: (no dpmia): the loss on a lattice with mean-preserving splitting, composed by binary powering segment by segment
#: in log scale (no tilt, no loss of dynamic range), Richardson-extrapolated in h^2 over three or four lattices, run
#: with base measure Q and, independently, base P; the two agree to the relative difference given (at most 2.6e-8).
#: At these settings the current tilted read-outs were 3 % to 100 % wide.
INDEPENDENT = [
    # (q, sigma, T, eps, delta, relative agreement of the two bases)
    (1e-4, 2.0, 10, 0.130497, 9.8691647981e-51, 1.5e-11),
    (1e-4, 2.0, 1000, 0.151729, 9.6359089889e-51, 6.1e-11),
    (1e-4, 2.0, 10_000, 0.14, 2.3996740714e-48, 6.5e-10),
    (1e-3, 5.0, 1000, 0.364255, 2.4808603909e-202, 2.4e-10),
    (1e-4, 5.0, 1000, 0.0417639, 1.9871264198e-202, 6.0e-8),
    (1e-3, 5.0, 1000, 0.34, 9.4229715208e-197, 6.4e-10),
    # (another helper, its own code: the steps split at a loss into bulk and jumps, the binomial sum over the number of
    # jumps, each term at its own tilt, by an exact contour integral and by lattices extrapolated in h; the two
    # methods agree to the relative difference given). The tilted read-out stopped at its longest FFT at the first two
    # (4.9e-3 and 3.5e-3 wide); at the third, a tail of many steps just below eps, the split's single-step grid needed
    # 1.5 M points (12 % wide)
    (1e-3, 2.0, 10_000, 8.380456830396454, 9.0435589892e-201, 1e-9),
    (1e-4, 2.0, 10_000, 5.952811846965705, 9.9526192248e-201, 1e-9),
    (1e-4, 5.0, 10_000, 0.062282553997626444, 8.0252947658e-201, 1e-9),
]


def _pairs(q, sigma, steps, h, one_tail, e, d_est):
    from dpmia.sgm._chain import _single_pair
    from dpmia.sgm._setting import Run
    from dpmia.sgm._tiltsplit import SplitTiltedPair, split_tilts
    from dpmia.sgm._tiltstep import _reference
    run = Run(q, sigma, steps)
    out = []
    for kind in ("pessimistic", "optimistic"):
        one = _single_pair(q, sigma, h, kind, "add", one_tail)
        b, lams = split_tilts(one, steps, e, d_est)
        ref = _reference(run, one, kind, "add", one_tail)
        for lam in lams + [0.5 * lams[0], 2.0 * lams[0]]:      # (any tilt must give valid bounds)
            cuts = [e * k for k in (1.0, 1.25, 1.5, 2.0, 3.0)]
            sp = SplitTiltedPair(one, ref, steps, lam, b, e, 1e-20, 2**21, cuts=cuts)
            out.append((one, lam == lams[0], sp))
    return out


def _two_steps_directly(one, e):
    """H(A (x) A)(e) of the grid atoms A, by the double sum over pairs of atoms (log space, in row blocks)."""
    x = np.asarray(one.losses, float)
    keep = one.pmf > 0
    x, lq = x[keep], np.log(one.pmf[keep])
    parts = []
    for i in range(0, x.size, 512):
        s = x[i:i + 512, None] + x[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = lq[i:i + 512, None] + lq[None, :] + np.log(-np.expm1(np.minimum(e - s, 0.0)))
        parts.append(special.logsumexp(np.where(s > e, t, -np.inf)))
    return math.exp(special.logsumexp(parts))


@pytest.mark.parametrize("q, sigma, h, one_tail, e", [(1e-4, 2.0, 1e-4, 1e-57, 0.1305),
                                                      (1e-4, 5.0, 3e-5, 1e-212, 0.0417)])
def test_split_read_bounds_the_atoms_composed_directly(q, sigma, h, one_tail, e):
    # two steps: H(A (x) A) by the double sum over the grid pair's atoms, against the split read-out of the same
    # atoms (before the certificate that relates them to the true pair), at three tilts each
    # (tight at the read-out's own tilt, the slope of one step's profile at e)
    exact = {}
    for one, own, sp in _pairs(q, sigma, 2, h, one_tail, e, 1e-50 if sigma == 2.0 else 1e-202):
        if one.kind not in exact:
            exact[one.kind] = _two_steps_directly(one, e)
        main, err, _ = sp._main(np.array([e]))
        if one.kind == "pessimistic":
            assert main[0] * (1 + sp.rho) + err[0] >= exact[one.kind], (sp.lam, main, err, exact)
            assert not own or main[0] <= exact[one.kind] * (1 + 1e-6), (sp.lam, main, exact)
        else:
            assert main[0] * (1 - sp.rho) - err[0] <= exact[one.kind], (sp.lam, main, err, exact)
            assert not own or main[0] >= exact[one.kind] * (1 - 1e-6), (sp.lam, main, exact)


@pytest.mark.parametrize("q, sigma, steps, e, exact, agree", INDEPENDENT)
def test_far_tails_of_one_large_step_contain_independent_values(q, sigma, steps, e, exact, agree):
    lo, hi = sgm.delta_bracket(q, sigma, steps, e)
    err = max(agree, 1e-9) * exact
    assert lo <= exact + err and exact - err <= hi, (lo, exact, hi)
    assert hi - lo <= 1e-3 * hi, (lo, hi)


@pytest.mark.parametrize("q, sigma, steps, d", [(1e-4, 2.0, 10, 1e-50), (1e-4, 5.0, 1000, 1e-200),
                                                (1e-4, 2.0, 10_000, 1e-50)])
def test_eps_of_one_large_step_within_tol_and_consistent(q, sigma, steps, d):
    # (brackets 0.1 % to 28 % wide before the split read-out)
    lo, hi = sgm.epsilon_bracket(q, sigma, steps, d)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3), (lo, hi)
    # delta(hi) <= d <= delta(lo): delta's certified ends may not say otherwise
    assert sgm.delta_bracket(q, sigma, steps, hi)[0] <= d <= sgm.delta_bracket(q, sigma, steps, lo)[1]


@pytest.mark.parametrize("q, sigma, steps, e, exact, agree", [INDEPENDENT[i] for i in (0, 1, 4, 5)])
def test_eps_of_one_large_step_contains_the_independent_eps(q, sigma, steps, e, exact, agree):
    # eps(delta) at the independent delta(e) must bracket e (the value known to its relative agreement): the split
    # read-out goes first there (few sampled steps), its grids centred away from a first bracket up to 40x wide
    lo, _ = sgm.epsilon_bracket(q, sigma, steps, exact * (1.0 + 1e-6))
    _, hi = sgm.epsilon_bracket(q, sigma, steps, exact * (1.0 - 1e-6))
    assert lo <= e <= hi, (lo, e, hi)
    assert hi <= lo * (1 + 2e-3), (lo, hi)


def test_split_read_without_any_weight_gives_no_nan():
    # where no bulk atom weighs at a point (large sigma), the dominated pair's largest weight is -inf: its error term
    # must stay -inf (it was -inf + inf = NaN), so the read-out runs without an invalid value
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        lo, hi = sgm.epsilon_bracket(1e-4, 20.0, 1000, 1e-50)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3), (lo, hi)
    assert sgm.delta_bracket(1e-4, 20.0, 1000, hi)[0] <= 1e-50 <= sgm.delta_bracket(1e-4, 20.0, 1000, lo)[1]


def test_split_eps_leaves_out_a_tilt_whose_bulk_is_too_long():
    # at (1e-5, 3, 50) and delta = 1e-300 the bulk's saddle tilt needs a composed bulk of 2e6 points, the single
    # step's profile slope 4e4: the read-out keeps the tilt that fits instead of giving up (it was 5.5 % wide)
    lo, hi = sgm.epsilon_bracket(1e-5, 3.0, 50, 1e-300)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3), (lo, hi)
    one = sgm.epsilon_bracket(1e-5, 3.0, 1, 1e-300)[1]
    assert one <= hi          # eps grows with T


def test_split_read_of_the_replace_one_pair_bounds_its_atoms_composed_directly():
    # the symmetric replace-one pair, whose grid reaches as far below 0 as above with almost no mass there: two steps
    # by the double sum over its atoms against the split read-out, its bulk's lowest atoms merged (dominating pair) or
    # dropped (dominated pair) before the transform, at three tilts each
    from dpmia.sgm._chain import _sym_pair
    from dpmia.sgm._tiltsplit import SplitTiltedPair, split_tilts
    from dpmia.sgm._tiltstep import _symmetric_reference
    q, sigma, h, e = 1e-3, 5.0, 1e-3, 0.5
    run = check_run(q, sigma, 2, neighbours="replace-one")
    for kind in ("pessimistic", "optimistic"):
        one = _sym_pair(q, sigma, "poisson", h, kind, 1e-250)
        assert one.losses[0] < -0.5                       # (the mirrored side)
        exact = _two_steps_directly(one, e)
        b, lams = split_tilts(one, 2, e, 1e-200)
        for lam in lams + [0.5 * lams[0], 2.0 * lams[0]]:
            sp = SplitTiltedPair(one, _symmetric_reference(run, one), 2, lam, b, e, 1e-20, 2**21,
                                 cuts=[e * k for k in (1.0, 1.5, 2.0)])
            # (the bulk given to the transform starts near 0, not at the bottom of the grid)
            assert sp.y[0] > -0.2, sp.y[0]
            main, err, _ = sp._main(np.array([e]))
            if kind == "pessimistic":
                assert main[0] * (1 + sp.rho) + err[0] >= exact, (lam, main, err, exact)
            else:
                assert main[0] * (1 - sp.rho) - err[0] <= exact, (lam, main, err, exact)
            if lam == lams[0]:
                assert abs(main[0] - exact) <= 1e-6 * exact, (lam, main, exact)


@pytest.mark.parametrize("kind", ["pessimistic", "optimistic"])
def test_bulk_lowest_atoms_merged_up_or_dropped(kind):
    from dpmia.sgm._tiltsplit import _bulk_from
    m = np.array([1e-40, 3e-35, 2e-31, 1e-3, 0.5, 0.4])
    k0, out = _bulk_from(m, kind)
    assert k0 == 3 and out.size == 3
    if kind == "pessimistic":
        # the merged mass at the first kept atom, rounded up: the bulk only moved up
        assert np.sum(out, dtype=np.longdouble) >= np.sum(m, dtype=np.longdouble)
        assert out[0] == np.nextafter(m[3], np.inf)       # (2.3e-31 moved: below an ulp of 1e-3, one ulp up)
    else:
        assert np.array_equal(out, m[3:])
    # a bulk with its mass at its first atom is left as it is
    assert _bulk_from(np.array([0.5, 0.5]), kind)[0] == 0


#: delta(eps) of the replace-one Poisson SGM at (1e-3, 5, 1000) from an independent computation with its own code (no
#: dpmia): each step split at the output z = 100, the runs with exactly one step beyond in closed form (log_ndtr tails,
#: checked against 50-digit mpmath) against the bulk composed 999 times, by a tilted lattice FFT Richardson-extrapolated
#: over h = 4e-6 ... 1e-6 and, apart, by inverting the bulk's exact tilted characteristic function; the runs with none
#: or two and more such steps bounded below 1e-328. The methods agree to 1e-9 in log10 delta; eps(1e-300) = 0.99462528.
INDEPENDENT_R = [(0.99419, -299.9431999), (0.99456, -299.9914819), (0.99492, -300.0384518)]


def test_eps_of_the_replace_one_far_tail_set_by_one_large_step_within_tol():
    # replace-one at (1e-3, 5, 1000) and delta = 1e-300: the tilted read-out alone left (0.9475, 0.9976), 5 % wide
    # (its tilt puts the mass on rare huge steps); the split read-out of the symmetric pair reads it within tol
    lo, hi = sgm.epsilon_bracket(1e-3, 5.0, 1000, 1e-300, neighbours="replace-one")
    assert lo <= 0.99462528 <= hi <= lo * (1 + 1e-3), (lo, hi)
    # and its delta(eps) read-outs hold the independent values
    for e, log10_delta in INDEPENDENT_R:
        dlo, dhi = sgm.delta_bracket(1e-3, 5.0, 1000, e, neighbours="replace-one")
        exact = 10.0**log10_delta
        assert dlo <= exact * (1 + 1e-7) and exact * (1 - 1e-7) <= dhi, (e, dlo, exact, dhi)


def test_delta_of_the_replace_one_far_tail_sized_from_one_step():
    # replace-one at (1e-4, 2, 10): delta(0.1305) is near 1e-50 and set by one step; the far-tail read-outs were sized
    # from 1e-300 (no one-step value under replace-one), their grids long and their first bracket vacuous, and the
    # bracket stayed (1e-50, 1.5e-49) after 9 s. One step's replace-one profile sizes them (and is a lower end)
    lo, hi = sgm.delta_bracket(1e-4, 2.0, 10, 0.13054886, neighbours="replace-one")
    one = sgm.delta_bracket(1e-4, 2.0, 1, 0.13054886, neighbours="replace-one")
    assert one[0] <= lo <= hi <= lo * (1 + 1e-3), (lo, hi, one)
    # consistent with eps(1e-50)'s bracket: delta(eps_hi) <= 1e-50 <= delta(eps_lo) as the delta brackets read them
    e_lo, e_hi = sgm.epsilon_bracket(1e-4, 2.0, 10, 1e-50, neighbours="replace-one")
    assert sgm.delta_bracket(1e-4, 2.0, 10, e_hi, neighbours="replace-one")[0] <= 1e-50
    assert 1e-50 <= sgm.delta_bracket(1e-4, 2.0, 10, e_lo, neighbours="replace-one")[1]


def _bulk_composed_directly(sp):
    """``(s, log B^{*(T-1)}(s))``: the split pair's bulk atoms composed T - 1 times by direct sums in log space."""
    lb = sp._log_bulk
    acc = lb.copy()
    for _ in range(sp.steps - 2):
        out = np.full(acc.size + lb.size - 1, -np.inf)
        for i in np.flatnonzero(np.isfinite(lb)):
            out[i:i + acc.size] = np.logaddexp(out[i:i + acc.size], acc + lb[i])
        acc = out
    return (sp.steps - 1) * float(sp._x[0]) + np.arange(acc.size) * sp.h, acc


@pytest.mark.parametrize("q, sigma, steps, e, d_est", [(0.01, 5.0, 12, 1.0, 1e-60), (0.01, 5.0, 30, 1.2, 1e-50),
                                                       (0.05, 3.0, 20, 2.5, 1e-40)])
def test_split_bounds_outside_the_array_and_joined_tilts_against_the_bulk_composed_directly(q, sigma, steps, e,
                                                                                             d_est):
    # On a coarse grid (h = 0.004) the bulk's T - 1 steps compose directly: the mass outside each tilt's array with its
    # weight Psi(e - s) lies below the bounds on either side (by blocks, and by layers below), and the split's first
    # term sum_s B*(s) Psi(e - s) lies within every read-out's bounds, the two tilts read together (JoinedPair)
    # included
    from dpmia.sgm._setting import check_run
    from dpmia.sgm._splitread import _joined, _Setup
    st = _Setup(check_run(q, sigma, steps), e, 1e-3, d_est, 2**21)
    got = st.pairs(0.004, e, d_est)
    assert len(got) == (2 if q == 0.01 else 1)              # (two tilts, read together too, at sigma = 5)
    ee = np.array([e])
    for down, up, lam in got + _joined(got):
        for sp in (down, up):
            s, lb = _bulk_composed_directly(sp)           # (a joined pair's bulk: the same atoms)
            lpsi = sp._log_psi(e - s)
            total = special.logsumexp(lb + lpsi)
            # a joined pair: at its own cut (the least float error) and at any other (every cut is certified)
            ov = sp.y[sp.y <= sp._other.y[-1] + 0.5 * sp.h] if lam is None else sp.y[:0]
            cuts = [None] + [float(v) for v in ov[np.linspace(0, ov.size - 1, 7).astype(int)]] if ov.size else [None]
            for c in cuts:
                if c is not None:
                    sp._cut, sp._memo = (lambda v, c=c: c), None
                main, err, _ = sp._main(ee)
                if sp.kind == "pessimistic":
                    assert main[0] * (1 + sp.rho) + err[0] >= math.exp(total), (lam, c, main, err, total)
                else:
                    assert main[0] * (1 - sp.rho) - err[0] <= math.exp(total), (lam, c, main, err, total)
            if lam is None:
                assert ov.size >= 7, ov.size               # (the arrays overlap: the cut has a choice)
                continue
            below, above = s < sp.y[0] - 0.5 * sp.h, s > sp.y[-1] + 0.5 * sp.h
            out, left = sp._log_out_sides(ee)
            kappa, c, _, tb, lpb = sp._sup_tables()[2]
            assert left[0] >= special.logsumexp(lb[below] + lpsi[below]) if below.any() else True
            assert out[0] >= special.logsumexp(lb[above] + lpsi[above]) if above.any() else True
            if below.any():
                layers = sp._layers(ee, float(sp.y[0]), kappa, c, (tb, lpb))[0]
                assert layers >= special.logsumexp(lb[below] + lpsi[below])


def test_delta_where_the_far_tail_has_two_modes_within_tol():
    # q = 0.01, sigma = 5, T = 1000 at the eps read for delta = 1e-200: the first size, T times one step's delta
    # (1.6e-238), is far below the value, and the sum over the bulk has a second mode (the bulk near 0.9 with one large
    # step) that the bulk's saddle-point tilt only bounds; the read-out re-sizes and reads both tilts together. It was
    # vacuous (lower end 1.5e-204 against an upper 3.9e-193). The independent value: an exact contour inversion
    # (Bromwich integral of (1 - e^-u)_+ against the product of one step's moment generating functions, 1-D Gauss-
    # Legendre quadrature), with the output space split at x = 100 (the runs with one step above it at their own saddle
    # points, two or more bounded by 1e-244), checked by a tilted FFT of its own: 8.138076e-201 to about 1e-7
    lo, hi = sgm.delta_bracket(0.01, 5.0, 1000, 2.116396573418406)
    assert 0.0 < lo <= hi and (hi - lo) / hi <= 1e-3, (lo, hi)
    assert lo <= 8.138076e-201 * (1 + 1e-6) and 8.138076e-201 * (1 - 1e-6) <= hi, (lo, hi)


def test_a_dominating_pair_lifted_at_its_top_stays_dominating_and_sheds_its_absolute_excess():
    # far out the dominating pair's atoms lag the values they were built from (replace-one, q = 0.1, sigma = 0.5: by
    # 1e-8 up to 100 % over the last 60 points, profile 1e-284 ... 1e-310), which the read-out charged as an
    # absolute excess T-fold at every eps (4e-288 where delta is 1e-300). Lifted from the top down, the pair only
    # gains mass, meets its reference values to 1e-9 at every point below the top (the lift's trigger: points below
    # the lifted block keep shortfalls of 1e-12), and its absolute excess falls to the
    # top point's value; the read-out takes the lifted pair where that costs less (here) and not where the added
    # mass, tilted, would weigh more (add/remove, q = 1e-3, sigma = 5, at the tilt of delta 1e-300)
    from dpmia.sgm._chain import _single_pair, _sym_pair
    from dpmia.sgm._tilt import _cheaper_top
    from dpmia.sgm._tiltexcess import _excess, _grid_profile
    from dpmia.sgm._tiltstep import _reference, _symmetric_reference, _topped
    run = check_run(0.1, 0.5, 10_000, neighbours="replace-one")
    one = _sym_pair(0.1, 0.5, "poisson", 0.0516, "pessimistic", 1e-309)
    ref = _symmetric_reference(run, one)
    top = _topped(one, ref)
    assert top is not one and np.all(top.pmf >= one.pmf)
    g, rnd = _grid_profile(top, with_inf=False)
    assert np.all(g[:-1] * (1.0 - rnd) >= ref[:-1] * (1.0 - 1e-9))
    before, after = _excess(one, ref), _excess(top, ref)
    # (its products y P(cell) now taken from the P-masses' logs, the pair's absolute excess before the lift is about
    # the top point's value already: it was above 1e-292 when those products lost their digits)
    assert max(s for k, s, _ in before[1:]) <= 1.01 * ref[-1]
    assert max(s for k, s, _ in after[1:]) <= ref[-1] and max(k for k, s, _ in after[1:]) < 1e-11
    assert _cheaper_top(one, ref, 10_000, 0.477, 1e-300) is not one
    ar = check_run(1e-3, 5.0, 10_000)
    one = _single_pair(1e-3, 5.0, 6.63e-05, "pessimistic", "add", 1e-309)
    ref = _reference(ar, one, "pessimistic", "add", 1e-309)
    assert _topped(one, ref) is not one and _cheaper_top(one, ref, 10_000, 675.0, 1e-300) is one


def test_a_far_tail_set_by_a_few_steps_below_eps_reads_from_the_split():
    # T times one step's delta at eps is 1e-30 of the value here: the tilted read-out left (8.5e-201, 6.2e-198) and
    # the split one was not tried; then the split stopped 12 % wide where its single-step grid needed 1.5 M points
    # (now allowed for a delta read-out). Each end of the eps bracket (another read-out: the split's eps scan) lies on
    # its side of 1e-200 in the delta brackets read there, and the first is within tol
    e_lo, e_hi = sgm.epsilon_bracket(1e-4, 5.0, 10_000, 1e-200)
    lo, hi = sgm.delta_bracket(1e-4, 5.0, 10_000, e_lo)
    assert 1e-200 <= hi <= (1 + 1e-3) * lo, (lo, hi)
    assert sgm.delta_bracket(1e-4, 5.0, 10_000, e_hi)[0] <= 1e-200


def test_a_bulk_holding_large_steps_is_split_lower_and_two_large_steps_stay_bounded():
    # q = 1e-3, sigma = 2, T = 1e4 at the eps read for delta = 1e-200 (9.04e-201): one large step sets the tail. Below
    # the split where two steps above it weigh nothing at all (loss 4.09) the bulk, tilted, holds large steps itself:
    # its window needs 30 M points. The split moves down to where the bulk's window is at most 4 times the one below
    # 0, and the bound on two or more large steps there (with tilts near two half-size steps' slope: 1.8e-198 with
    # the read-out's multiples alone) stays below 1e-6 of the value
    from dpmia.sgm._chain import _single_pair
    from dpmia.sgm._splitread import _bulk_length, _fitting_split, _Setup
    from dpmia.sgm._tiltsplit import SplitTiltedPair, split_index
    from dpmia.sgm._tiltstep import _reference
    run, e, lam = check_run(1e-3, 2.0, 10_000), 8.380456830396454, 60.8
    st = _Setup(run, e, 1e-3, 9e-201, 2**21)
    one = _single_pair(1e-3, 2.0, 9.843690642213309e-05, "pessimistic", "add", st.one_tail)
    b0 = split_index(one, 10_000, lam, 9e-201)
    assert _bulk_length(one, 10_000, lam, b0) > 2**21
    b = _fitting_split(one, 10_000, 2**21)(b0, lam)
    zero = int(np.searchsorted(one.losses, 0.0))
    assert zero < b < b0 and _bulk_length(one, 10_000, lam, b) <= 4 * _bulk_length(one, 10_000, lam, zero)
    assert _bulk_length(one, 10_000, lam, b + 1 + b0 // 4096) > 4 * _bulk_length(one, 10_000, lam, zero)
    sp = SplitTiltedPair(one, _reference(run, one, "pessimistic", "add", st.one_tail), 10_000, lam, b, e, 1e-20,
                         2**21, cuts=[e * k for k in (1.0, 1.25, 1.5, 2.0, 3.0)])
    assert sp._log_r(np.array([e]))[0] < math.log(1e-6 * 9e-201)


def test_a_pass_whose_two_tilts_read_together_were_narrowest_keeps_both():
    # at (0.01, 5, 100), eps 0.5791 the two tilts read together gave the narrowest bracket of the split's second pass;
    # the third pass read the lower tilt alone (the larger one's bulk, 8.3 times the first's, was capped out), 3.6e-3
    # wide, and the tilted read-out after it took a second more. With both, the split alone is within tol, and it
    # meets the bracket the tilted read-out gave (9.0957188e-101, 9.0973895e-101)
    from dpmia.sgm._chain import _initial_step
    from dpmia.sgm._splitread import split_delta_bracket
    run = check_run(0.01, 5.0, 100)
    lo, hi = split_delta_bracket(run, 0.5791, 1e-3, _initial_step(run, 1e-5), 1.8e-107)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3), (lo, hi)
    assert lo <= 9.097389495954359e-101 and 9.095718801644077e-101 <= hi, (lo, hi)
    d_lo, d_hi = sgm.delta_bracket(0.01, 5.0, 100, 0.5791)
    assert max(lo, d_lo) <= min(hi, d_hi) and d_hi <= d_lo * (1 + 1e-3), (d_lo, d_hi)


def test_a_far_tail_of_the_bulk_reads_from_the_split_where_its_window_is_short():
    # q = 1e-3, sigma = 5, T = 1e4 at eps(1e-200): one step's delta, T-fold, is 1e-49 of the value (the bulk's tail
    # sets it), but the whole step tilted to about 1200 holds large steps up to its grid's end: the tilted read-out's
    # window spans 4.3 nats and it stopped at its longest FFT 3.8e-3 wide, (8.2032211e-201, 8.2347605e-201). The
    # split's bulk spans 0.43: it goes first and meets tol. A long run's tail (q = 1e-4, sigma = 1, T = 1e7, at
    # eps(1e-10)), also set by the bulk, keeps the tilted read-out: there the split's bulk is the whole step's
    from dpmia.sgm._rdp import _WIDTH, _saddle_log_delta
    from dpmia.sgm._splitread import _tilted_capped
    e = 0.6246207185465522
    run = check_run(1e-3, 5.0, 10_000)
    assert _saddle_log_delta(run, e, with_tilt=True) is None       # (far_delta has no model step to pass here)
    assert _tilted_capped(run, e, 1e-3, None, 2.9e-214)
    long, e_long = check_run(1e-4, 1.0, 10**7), 2.545560329062269
    est = _saddle_log_delta(long, e_long, with_tilt=True)
    h_model = math.sqrt(0.7e-3 / (_WIDTH * 10**7)) / est[1]
    assert not _tilted_capped(long, e_long, 1e-3, h_model, 9.2e-12)
    assert not _tilted_capped(long, e_long, 1e-3, None, 9.2e-12)
    lo, hi = sgm.delta_bracket(1e-3, 5.0, 10_000, e)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3), (lo, hi)
    assert lo <= 8.234760487421457e-201 and 8.203221070743928e-201 <= hi, (lo, hi)


def test_a_replace_one_far_tail_of_the_bulk_reads_from_the_split_first(monkeypatch):
    # replace-one at (1e-3, 5, 1000), eps(1e-300): the tilted read-outs (four grids, to 3.8 M points) left the lower
    # end ten times low and took 4 s before the split read (9.1469125e-301, 9.1526688e-301) in 0.6 s; its bulk's
    # window fits where the tilted one would not, so it now goes first, and alone
    from dpmia.sgm import _splitread
    from dpmia.sgm._splitread import _bulk_width, _tilted_capped
    run, e = check_run(1e-3, 5.0, 1000, neighbours="replace-one"), 0.9949210428296624
    width, lam = _bulk_width(run, e, 1e-3, 1e-300)
    assert width < 1.0 and lam > 1000.0, (width, lam)
    assert _tilted_capped(run, e, 1e-3, None, 1e-300)

    def refuse(*args, **kw):
        raise AssertionError("the tilted read-out ran")
    monkeypatch.setattr(_splitread, "tilted_delta_bracket", refuse)
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(1e-3, 5.0, 1000, e, neighbours="replace-one")
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3), (lo, hi)
    assert lo <= 9.152668825268212e-301 and 9.146912484403387e-301 <= hi, (lo, hi)


#: (a QA sweep's draws) far tails set by one large step and the bulk's fluctuation together, at T in the ten thousands
BULK_AND_STEP = (0.0011667817686652098, 4.005826991857055, 25473)


def test_the_bulk_above_the_array_is_bounded_at_a_tilt_above_the_read_outs():
    # the bulk's composed mass above the transform's array, weighed by the large step's profile, was bounded by
    # Chernoff at 1, 2, 5, ... times the read-out's tilt: 5.8 times the value at twice it, a bracket a factor 7 wide;
    # at 2.25 times it the bound is e^-48 of the value
    lo, hi = sgm.delta_bracket(*BULK_AND_STEP, 2.2806340975776473)
    assert 0.0 < lo <= hi and hi - lo <= 1e-3 * hi, (lo, hi)
    # and eps at the delta: a second tilt that read 0 no longer stops the refinement (it was 4.8e-3 wide)
    d = 1.354991353228503e-264
    elo, ehi = sgm.epsilon_bracket(*BULK_AND_STEP, d)
    assert ehi - elo <= 1e-3 * ehi, (elo, ehi)
    assert sgm.delta_bracket(*BULK_AND_STEP, elo)[1] >= d >= sgm.delta_bracket(*BULK_AND_STEP, ehi)[0]


def test_a_split_pass_takes_the_finest_step_its_grid_allows():
    # a pass 7.3e-2 wide asked a step whose single-step grid exceeds 2^21 points: the read-out stopped there (the
    # tilted one read 4.2e-2); the finest step within the bound reads within tol
    lo, hi = sgm.delta_bracket(0.00014665428167501659, 1.9983736199038167, 45686, 8.69203321928822)
    assert 0.0 < lo <= hi and hi - lo <= 1e-3 * hi, (lo, hi)


def test_eps_of_a_far_tail_set_by_one_sampled_step_at_small_q_within_tol():
    # (2.35e-5, 5.82, 172) at delta 2.3e-173: one sampled step sets it, at a tilt of about 6e4 (it was 5.4e-3 wide)
    lo, hi = sgm.epsilon_bracket(2.3515865384833974e-05, 5.8247576998411255, 172, 2.2578705454751512e-173)
    assert hi - lo <= 1e-3 * hi, (lo, hi)


def test_a_replace_one_far_tail_of_bulk_and_step_within_tol():
    # the same bound under replace-one (0.40e-3, 3.27, 40229): eps 1.1e-2 wide and delta at its upper end a factor
    # 12, before
    run = (0.00040343139445581035, 3.2721044775926407, 40229)
    d = 9.325015330392035e-197
    lo, hi = sgm.epsilon_bracket(*run, d, neighbours="replace-one")
    assert hi - lo <= 1e-3 * hi, (lo, hi)
    dlo, dhi = sgm.delta_bracket(*run, hi, neighbours="replace-one")
    assert 0.0 < dlo <= d and dhi - dlo <= 1e-3 * dhi, (dlo, dhi)
