"""dpmia.sgm's far-tail floor (white box): certified lower ends from sub-mixtures of heavily sampled patterns."""
import numpy as np

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
