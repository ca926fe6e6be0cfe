"""dpmia.sgm's schedules of (q, sigma, T) stages: certified brackets on one common grid."""

import pytest

from dpmia import sgm


def inside(bracket, ref, tol):
    lo, hi = bracket
    return lo - tol <= ref <= hi + tol


def test_schedule():
    lo, hi = sgm.advantage_bracket_schedule([(0.02, 1, 1000), (0.02, 2, 1000)])
    assert sgm.advantage_bound_schedule([(0.02, 1, 1000), (0.02, 2, 1000)]) == hi
    assert inside((lo, hi), 0.335757, 5e-7)


@pytest.mark.parametrize("q, s, T", [(0.02, 1.0, 1000), (0.01, 2.0, 3000)])
def test_one_stage_and_split_stages_agree_with_the_plain_run(q, s, T):
    # the same quantity certified three ways: the brackets must overlap
    lo, hi = sgm.advantage_bracket(q, s, T)
    for sched in ([(q, s, T)], [(q, s, T // 3), (q, s, T - T // 3)]):
        a, b = sgm.advantage_bracket_schedule(sched)
        assert a <= hi + 1e-12 and lo <= b + 1e-12
        assert b - a <= 2e-5
    e_lo, e_hi = sgm.epsilon_bracket(q, s, T, 1e-5)
    a, b = sgm.epsilon_bracket_schedule([(q, s, T // 2), (q, s, T - T // 2)], 1e-5)
    assert a <= e_hi and e_lo <= b


def test_a_noisier_stage_lowers_the_bound():
    hard = sgm.advantage_bound_schedule([(0.02, 1.0, 2000)])
    mixed = sgm.advantage_bound_schedule([(0.02, 1.0, 1000), (0.02, 2.0, 1000)])
    assert mixed < hard


@pytest.mark.parametrize("sched, exc, match", [
    ([(0.1, 1.0)], ValueError, r"schedule\[0\] must be a \(q, sigma, steps\) triple"),
    ([(0.1, 1.0, 10), (0.1, 0.001, 10)], ValueError, r"schedule\[1\].*sigma"),
    ([(0.1, 1.0, 2.5)], ValueError, r"schedule\[0\].*steps"),
    (5, TypeError, "schedule must be a sequence"),
])
def test_malformed_schedules_are_refused(sched, exc, match):
    for fn in (sgm.advantage_bracket_schedule, lambda s: sgm.epsilon_rdp_certified(s, 1e-5)):
        with pytest.raises(exc, match=match):
            fn(sched)


def test_a_schedule_that_releases_nothing():
    assert sgm.advantage_bracket_schedule([]) == (0.0, 0.0)
    assert sgm.advantage_bracket_schedule([(0.0, 1.0, 100), (0.1, 1.0, 0)]) == (0.0, 0.0)
    assert sgm.epsilon_bracket_schedule([], 1e-5) == (0.0, 0.0)
    assert sgm.epsilon_rdp_certified([], 1e-5)[0] == 0.0
