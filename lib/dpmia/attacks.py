r"""Monte Carlo membership-inference games: the empirical side of every bound.

The balanced membership game (Yeom et al. 2018; Mahloujifar et al., Sec. 3.1): a fair coin
:math:`b` decides whether the target is in the training set, the mechanism's output is
released, and the attacker guesses :math:`b`. With :math:`n_1` member and :math:`n_0`
non-member rounds the estimates are

* TPR = (member rounds guessed "member") / :math:`n_1`,
* FPR = (non-member rounds guessed "member") / :math:`n_0`,
* advantage = TPR - FPR, accuracy = (correct guesses) / :math:`n`.

Each comes with an exact (Clopper-Pearson) confidence interval; the advantage interval
combines the TPR and FPR intervals at level :math:`(1+\text{level})/2` each (Bonferroni), so
it has coverage at least ``level``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from . import _checks

__all__ = ["GameResult", "clopper_pearson", "play_game", "gaussian_game",
           "gaussian_llr_scores", "empirical_roc", "heldout_threshold_game", "gaussian_lr_attack_at_fpr",
           "dpsgd_toy_weights",
           "sgm_lr_game", "hamming_ball_game", "glrt_energies", "threshold_roc", "glrt_delta_mc"]



def _sgm_args(q, sigma, steps):
    """(q, sigma, steps) of a DP-SGD run: q in [0, 1], sigma > 0, steps an integer >= 0."""
    return (_checks.scalar("q", q, lo=0.0, hi=1.0), _checks.scalar("sigma", sigma, lo=0.0, lo_open=True),
            _checks.integer("steps", steps, lo=0))

def _rng(rng=None, seed=None) -> np.random.Generator:
    return _checks.generator(rng, seed)


def clopper_pearson(k, n, level=0.95):
    r"""Exact two-sided Clopper-Pearson interval for a binomial proportion :math:`k/n`.

    Lower end :math:`B^{-1}(\tfrac{1-\ell}{2}; k, n-k+1)`, upper end
    :math:`B^{-1}(\tfrac{1+\ell}{2}; k+1, n-k)` (0 and 1 at the extremes), where
    :math:`B^{-1}` is the inverse regularised incomplete beta function.
    ``k`` in [0, n], ``n`` >= 1, ``level`` in (0, 1). Returns ``(low, high)``.
    """
    n = _checks.integer("n", n, lo=1)
    k = _checks.integer("k", k, lo=0, hi=n)
    lv = _checks.real("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    a = (1.0 - lv) / 2.0
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, a))
    hi = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1.0 - a))
    return lo, hi


@dataclass(frozen=True)
class GameResult:
    """Outcome of a simulated membership game, with confidence intervals at ``level``."""

    n_in: int
    n_out: int
    true_positives: int
    false_positives: int
    level: float

    def __post_init__(self):
        for name in ("n_in", "n_out"):
            _checks.integer(name, getattr(self, name), lo=1)
        _checks.integer("true_positives", self.true_positives, lo=0, hi=self.n_in)
        _checks.integer("false_positives", self.false_positives, lo=0, hi=self.n_out)
        _checks.real("level", self.level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)

    @property
    def tpr(self) -> float:
        return self.true_positives / self.n_in

    @property
    def fpr(self) -> float:
        return self.false_positives / self.n_out

    @property
    def advantage(self) -> float:
        return self.tpr - self.fpr

    @property
    def accuracy(self) -> float:
        correct = self.true_positives + (self.n_out - self.false_positives)
        return correct / (self.n_in + self.n_out)

    @property
    def tpr_ci(self):
        return clopper_pearson(self.true_positives, self.n_in, self.level)

    @property
    def fpr_ci(self):
        return clopper_pearson(self.false_positives, self.n_out, self.level)

    @property
    def advantage_ci(self):
        lv = (1.0 + self.level) / 2.0
        t = clopper_pearson(self.true_positives, self.n_in, lv)
        f = clopper_pearson(self.false_positives, self.n_out, lv)
        return t[0] - f[1], t[1] - f[0]

    @property
    def accuracy_ci(self):
        correct = self.true_positives + (self.n_out - self.false_positives)
        return clopper_pearson(correct, self.n_in + self.n_out, self.level)

    @property
    def advantage_se(self) -> float:
        """Standard error of TPR - FPR (normal approximation)."""
        t, f = self.tpr, self.fpr
        return float(np.sqrt(t * (1 - t) / self.n_in + f * (1 - f) / self.n_out))

    def __str__(self) -> str:
        lo, hi = self.advantage_ci
        return (f"TPR {self.tpr:.4f}, FPR {self.fpr:.4f}, advantage {self.advantage:.4f} "
                f"[{lo:.4f}, {hi:.4f}] ({self.level:.0%} CI), accuracy {self.accuracy:.4f}, "
                f"n = {self.n_in} members + {self.n_out} non-members")


def play_game(sample_out: Callable, sample_in: Callable, attack: Callable, n_trials,
              *, level=0.95, rng=None, seed=None) -> GameResult:
    """Play ``n_trials`` rounds of the balanced membership game.

    ``sample_out(rng, size)`` / ``sample_in(rng, size)`` draw the mechanism's output without /
    with the target (arrays whose first axis has length ``size``); ``attack(outputs)`` returns a
    boolean array, True meaning "member". The coin :math:`b` is fair and drawn per round.
    """
    n = _checks.integer("n_trials", n_trials, lo=2)
    lv = _checks.real("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    g = _rng(rng, seed)
    n_in = int(g.binomial(n, 0.5))
    n_in = min(max(n_in, 1), n - 1)
    n_out = n - n_in
    guess_in = np.asarray(attack(sample_in(g, n_in)), dtype=bool)
    guess_out = np.asarray(attack(sample_out(g, n_out)), dtype=bool)
    if guess_in.shape != (n_in,) or guess_out.shape != (n_out,):
        raise ValueError("attack must return one boolean guess per round")
    return GameResult(n_in, n_out, int(guess_in.sum()), int(guess_out.sum()), lv)


def gaussian_game(mu, n_trials, *, threshold=None, level=0.95, rng=None, seed=None) -> GameResult:
    r"""Membership game against the Gaussian mechanism with the likelihood-ratio attacker.

    Projected onto the direction :math:`q(D\cup\{x^*\}) - q(D)` and divided by the noise std,
    the output is :math:`y \sim \mathcal N(0,1)` without the target and
    :math:`\mathcal N(\mu,1)` with it. The log-likelihood ratio is :math:`\mu y - \mu^2/2`,
    increasing in :math:`y`, so every likelihood-ratio test is "member iff :math:`y > \tau`".
    The default :math:`\tau = \mu/2` (LR = 1) maximises TPR - FPR, whose expectation is then
    :func:`dpmia.gaussian.tv` :math:`(\mu)`.

    ``mu`` in [0, inf), ``n_trials`` >= 2, ``threshold`` a real number (default ``mu/2``).
    """
    m = _checks.nonnegative("mu", mu)
    tau = m / 2.0 if threshold is None else _checks.real("threshold", threshold, allow_inf=True)
    return play_game(lambda g, k: g.standard_normal(k),
                     lambda g, k: m + g.standard_normal(k),
                     lambda y: y > tau, n_trials, level=level, rng=rng, seed=seed)


def gaussian_llr_scores(mu, n_in, n_out, *, rng=None, seed=None):
    r"""Log-likelihood-ratio scores :math:`\mu y - \mu^2/2` of members and non-members.

    Returns ``(scores_in, scores_out)`` for :math:`y \sim \mathcal N(\mu,1)` (members) and
    :math:`y \sim \mathcal N(0,1)` (non-members). Feed them to :func:`empirical_roc`.
    """
    m = _checks.nonnegative("mu", mu)
    ni = _checks.integer("n_in", n_in, lo=1)
    no = _checks.integer("n_out", n_out, lo=1)
    g = _rng(rng, seed)
    y_in = m + g.standard_normal(ni)
    y_out = g.standard_normal(no)
    return m * y_in - m * m / 2.0, m * y_out - m * m / 2.0


def empirical_roc(scores_in, scores_out):
    """Empirical ROC of the attack "member iff score > t" over all thresholds t.

    Returns ``(fpr, tpr)``, increasing, from (0, 0) to (1, 1). Ties are handled by moving
    through tied scores together.
    """
    si = _checks.real("scores_in", scores_in, allow_inf=True)
    so = _checks.real("scores_out", scores_out, allow_inf=True)
    si, so = np.atleast_1d(si).ravel(), np.atleast_1d(so).ravel()
    if si.size == 0 or so.size == 0:
        raise ValueError("scores_in and scores_out must be non-empty")
    scores = np.concatenate([si, so])
    labels = np.concatenate([np.ones(si.size), np.zeros(so.size)])
    order = np.argsort(-scores, kind="mergesort")
    s, lab = scores[order], labels[order]
    tp = np.cumsum(lab)
    fp = np.cumsum(1.0 - lab)
    last = np.r_[s[1:] != s[:-1], True]  # end of each group of tied scores
    tpr = np.r_[0.0, tp[last] / si.size]
    fpr = np.r_[0.0, fp[last] / so.size]
    return fpr, tpr


def heldout_threshold_game(scores, member, calibrate, *, level=0.95) -> GameResult:
    r"""Threshold attack "member iff score :math:`\ge\tau`" with :math:`\tau` chosen on held-out examples.

    :math:`\tau` maximises TPR - FPR on the examples where ``calibrate`` is true; the attack is then
    scored on the others only, so its estimate is unbiased for that fixed rule (a threshold chosen on
    the scored examples themselves overstates the advantage by about :math:`1/\sqrt n` even for pure
    noise). ``scores``: real array; ``member``, ``calibrate``: boolean arrays of the same length; each
    half needs at least one member and one non-member. Returns the evaluation half as a :class:`GameResult`.
    """
    sc = np.atleast_1d(_checks.real("scores", scores, allow_inf=True)).ravel()
    masks = []
    for name, arr in (("member", member), ("calibrate", calibrate)):
        a = np.asarray(arr)
        if a.dtype != np.bool_:
            raise TypeError(f"{name} must be a boolean array, got dtype {a.dtype}")
        if a.shape != sc.shape:
            raise ValueError(f"{name} must have the shape of scores {sc.shape}, got {a.shape}")
        masks.append(a)
    mem, cal = masks
    for name, part in (("calibration", cal), ("evaluation", ~cal)):
        if not (np.any(part & mem) and np.any(part & ~mem)):
            raise ValueError(f"the {name} half needs at least one member and one non-member")
    ci, co = sc[cal & mem], sc[cal & ~mem]
    cand = np.r_[np.unique(sc[cal]), np.inf]
    adv = (ci.size - np.searchsorted(np.sort(ci), cand, side="left")) / ci.size \
        - (co.size - np.searchsorted(np.sort(co), cand, side="left")) / co.size
    tau = cand[int(np.argmax(adv))]
    ei, eo = sc[~cal & mem], sc[~cal & ~mem]
    return GameResult(int(ei.size), int(eo.size), int(np.sum(ei >= tau)), int(np.sum(eo >= tau)), level)


def gaussian_lr_attack_at_fpr(mu, fpr, n_trials, *, level=0.95, rng=None, seed=None) -> GameResult:
    r"""The likelihood-ratio attack run at a target false-positive rate.

    The threshold :math:`\tau = \Phi^{-1}(1-\mathrm{fpr})` is set from the known null
    distribution :math:`\mathcal N(0,1)`, so the attack's true FPR is ``fpr`` and its true TPR is
    :func:`dpmia.gaussian.tpr_at_fpr` :math:`(\mathrm{fpr}, \mu)`. ``fpr`` in (0, 1).
    """
    f = _checks.real("fpr", fpr, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    tau = float(-special.ndtri(f))
    return gaussian_game(mu, n_trials, threshold=tau, level=level, rng=rng, seed=seed)


def dpsgd_toy_weights(n_trials, sigma, *, prior=0.5, w0=1e6, x=1e6, clip=1.0, lr=1.0, rng=None, seed=None):
    r"""Thudi et al.'s (Sec. 5.2) one-step DP-SGD toy, simulated: returns ``(offset, member)``.

    Pool :math:`x_1 = (x, y{=}1)` (always in :math:`D`) and :math:`x_2 = (x, y{=}0)` (in :math:`D`
    with probability ``prior``). Model :math:`\sigma(w\,x)` without bias, binary cross-entropy,
    starting at :math:`w_0`. One DP-SGD step with sampling rate 1: per-example gradients
    :math:`(\sigma(w_0 x) - y)\,x` clipped to norm ``clip``, **summed**, plus
    :math:`\mathcal N(0, (\sigma\,\mathrm{clip})^2)`; then :math:`w = w_0 - \mathrm{lr}\cdot(\cdot)`.
    With the defaults, :math:`x_1`'s gradient is 0 and :math:`x_2`'s is :math:`+10^6`, clipped to
    :math:`+1`, so :math:`W_{D_1}\sim\mathcal N(w_0, \sigma^2)` and
    :math:`W_{D_2}\sim\mathcal N(w_0 - 1, \sigma^2)` (the paper's "less than -1" has the sign wrong).
    ``offset`` is :math:`W - w_0`, computed without forming :math:`W` (no cancellation).
    """
    n = _checks.integer("n_trials", n_trials, lo=1)
    s = _checks.positive("sigma", sigma)
    p = _checks.probability("prior", prior)
    c = _checks.positive("clip", clip)
    eta = _checks.positive("lr", lr)
    w0 = _checks.real("w0", w0)
    x = _checks.real("x", x)
    g = _rng(rng, seed)
    member = g.random(n) < p

    def clipped_grad(label):
        grad = (special.expit(w0 * x) - label) * x
        return grad * min(1.0, c / abs(grad)) if grad != 0 else 0.0

    total = clipped_grad(1.0) + member * clipped_grad(0.0)
    offset = -eta * (total + s * c * g.standard_normal(n))
    return offset, member


def sgm_lr_game(q, sigma, steps, n_trials, *, level=0.95, rng=None, seed=None) -> GameResult:
    r"""Mahloujifar et al.'s optimal attack on :math:`T` subsampled Gaussian steps (App. F.1), simulated.

    :math:`D = \{0,\dots,0\}`, :math:`D' = D\cup\{1\}`: each step reveals :math:`\mathcal N(0,\sigma^2)`
    without the target and :math:`(1-q)\mathcal N(0,\sigma^2) + q\mathcal N(1,\sigma^2)` with it. The
    attacker sums the per-step log-likelihood ratios :math:`\ell(t)` and says "member" iff the sum is
    positive; its expected advantage is Theorem 6's bound.
    """
    from .sgm import privacy_loss

    qq, ss, tt = _sgm_args(q, sigma, steps)
    if tt < 1:
        raise ValueError(f"steps must be >= 1 for a game, got {tt}")

    def draws(g, k, member):
        out = np.empty(k)
        per = max(1, int(2e6 // tt))
        for a in range(0, k, per):
            b = min(k, a + per)
            t = ss * g.standard_normal((b - a, tt))
            if member:
                t += g.random((b - a, tt)) < qq
            out[a:b] = np.asarray(privacy_loss(t, qq, ss)).reshape(t.shape).sum(axis=1)
        return out

    return play_game(lambda g, k: draws(g, k, False), lambda g, k: draws(g, k, True),
                     lambda L: L > 0, n_trials, level=level, rng=rng, seed=seed)


def hamming_ball_game(d, n, q, sigma, steps, n_trials, *, level=0.95, rng=None, seed=None):
    r"""Mahloujifar et al.'s App. I tightness experiment, simulated exactly on the target's coordinate.

    Data are one-hot vectors :math:`e_j` (:math:`j` uniform in :math:`[d]`) with random labels; the
    model is logistic regression without bias, trained by DP-SGD with summed clipped gradients. Every
    per-example gradient :math:`(\sigma(\theta_j) - y)e_j` has norm about 1/2 > clip, so it is clipped
    to :math:`\pm\mathrm{clip}` and coordinates evolve independently. In units of the clipped
    gradient and with the label's sign, step :math:`t` moves the target's coordinate by
    :math:`z_t = B_t + M b_t + \sigma N_t`: :math:`B_t\sim\mathrm{Bin}(k,q)` from the :math:`k\sim\mathrm{Bin}(n, 1/d)`
    other copies of the target in :math:`D`, :math:`b_t\sim\mathrm{Bern}(q)` from the target if it is a
    member (:math:`M=1`), :math:`N_t` standard normal noise. Attacks:

    * ``"fma"`` (final model): member iff :math:`\sum_t z_t > Tq/2 + (n/d)Tq` (App. I's threshold, with
      the undefined :math:`m` read as :math:`n`);
    * ``"ima_lr"`` (all intermediate models): the likelihood-ratio test on the per-step updates,
      knowing :math:`k` (App. I's "IMA" is ambiguous; this is the Bayes-optimal reading).

    Returns ``{"fma": GameResult, "ima_lr": GameResult}``. With :math:`d \gg n` (no duplicates)
    ``ima_lr`` attains Theorem 6's bound and ``fma`` :func:`dpmia.sgm.final_model_tv`.
    """
    from scipy import stats


    dd = _checks.integer("d", d, lo=1)
    nn = _checks.integer("n", n, lo=0)
    qq, ss, tt = _sgm_args(q, sigma, steps)
    if tt < 1:
        raise ValueError(f"steps must be >= 1, got {tt}")
    m = _checks.integer("n_trials", n_trials, lo=2)
    lv = _checks.real("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    g = _rng(rng, seed)
    member = g.random(m) < 0.5
    member[0], member[1] = True, False          # both classes present
    k = g.binomial(nn, 1.0 / dd, size=m)
    tau = tt * qq / 2 + (nn / dd) * tt * qq
    fma = np.empty(m, bool)
    ima = np.empty(m, bool)
    per = max(1, int(2e6 // tt))
    for kk in np.unique(k):
        idx = np.flatnonzero(k == kk)
        j = np.arange(kk + 1)
        w = stats.binom.pmf(j, kk, qq)           # law of B_t
        for a in range(0, idx.size, per):
            sel = idx[a:a + per]
            b = g.binomial(kk, qq, size=(sel.size, tt)).astype(float)
            b += (g.random((sel.size, tt)) < qq) * member[sel, None]
            z = b + ss * g.standard_normal((sel.size, tt))
            fma[sel] = z.sum(axis=1) > tau
            # per-step likelihoods: non-member sum_j w_j phi(z - j); member mixes in a shift by 1
            dens0 = np.zeros_like(z)
            dens1 = np.zeros_like(z)
            for jj, wj in zip(j, w):
                f0 = stats.norm.pdf(z, loc=jj, scale=ss)
                f1 = stats.norm.pdf(z, loc=jj + 1, scale=ss)
                dens0 += wj * f0
                dens1 += wj * ((1 - qq) * f0 + qq * f1)
            with np.errstate(divide="ignore"):
                llr = np.sum(np.log(dens1) - np.log(dens0), axis=1)
            ima[sel] = llr > 0
    out = {}
    for name, guess in (("fma", fma), ("ima_lr", ima)):
        n_in = int(member.sum())
        out[name] = GameResult(n_in, m - n_in, int(guess[member].sum()), int(guess[~member].sum()), lv)
    return out


# --------------------------------------------------------------------------------------
# the GLRT adversary of Kaissis et al. (Sec. 5)
# --------------------------------------------------------------------------------------
def glrt_energies(n, d, sensitivity, sigma, rounds=1, *, member, explicit_rounds=False, rng=None, seed=None):
    r"""The GLRT adversary's statistic in ``n`` independent games: :math:`T = \|\bar y\|^2/(\sigma^2/N)`.

    Kaissis et al., Sec. 5: the curator releases :math:`y_i = \nu + \sigma Z_i` (with the target,
    ``member=True``; :math:`\|\nu\| = \Delta` = ``sensitivity``, its direction uniform on the sphere and
    the same in all :math:`N` = ``rounds`` releases) or :math:`y_i = \sigma Z_i` (without), in
    :math:`d` dimensions. The adversary averages and takes the energy, so :math:`T\sim\chi^2_d` without and
    :math:`\chi^2_d(N\Delta^2/\sigma^2)` with the target (Theorems 1-2). ``explicit_rounds=True``
    draws all :math:`N` releases and averages them (as the paper's protocol does); otherwise
    :math:`\bar y` is drawn directly from its law. Returns an array of ``n`` values of :math:`T`.
    """
    nn = _checks.integer("n", n, lo=1)
    dd = _checks.integer("d", d, lo=1)
    s = _checks.nonnegative("sensitivity", sensitivity)
    sg = _checks.positive("sigma", sigma)
    N = _checks.integer("rounds", rounds, lo=1)
    if not isinstance(member, (bool, np.bool_)):
        raise TypeError(f"member must be a bool, got {type(member).__name__}")
    g = _rng(rng, seed)
    out = np.empty(nn)
    per = max(1, int(2_000_000 // (dd * (N if explicit_rounds else 1))))
    for a in range(0, nn, per):
        b = min(nn, a + per)
        k = b - a
        nu = np.zeros((k, dd))
        if member:
            u = g.standard_normal((k, dd))
            nu = s * u / np.linalg.norm(u, axis=1, keepdims=True)
        if explicit_rounds:
            ybar = (nu[:, None, :] + sg * g.standard_normal((k, N, dd))).mean(axis=1)
        else:
            ybar = nu + sg / np.sqrt(N) * g.standard_normal((k, dd))
        out[a:b] = np.sum(ybar * ybar, axis=1) * N / (sg * sg)
    return out


def threshold_roc(scores_in, scores_out, thresholds, *, reverse=False, level=0.95):
    r"""Empirical ROC of "member iff score > c" at given thresholds ``c``, with Clopper-Pearson intervals.

    ``reverse=True`` is the swapped test of Kaissis et al.'s :math:`R'`: the world *without* the shift is
    the positive one and is declared when score < c (so "TPR" counts ``scores_out`` below c and "FPR"
    ``scores_in`` below c). Returns a dict of arrays ``fpr``, ``tpr``, ``fpr_lo``, ``fpr_hi``, ``tpr_lo``, ``tpr_hi``.
    """
    si = np.atleast_1d(_checks.real("scores_in", scores_in, allow_inf=True)).ravel()
    so = np.atleast_1d(_checks.real("scores_out", scores_out, allow_inf=True)).ravel()
    c = np.atleast_1d(_checks.real("thresholds", thresholds, allow_inf=True)).ravel()
    if si.size == 0 or so.size == 0:
        raise ValueError("scores_in and scores_out must be non-empty")
    lv = _checks.real("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    pos, neg = (so, si) if reverse else (si, so)
    sp, sn = np.sort(pos), np.sort(neg)
    if reverse:
        k_tp = np.searchsorted(sp, c, side="left")
        k_fp = np.searchsorted(sn, c, side="left")
    else:
        k_tp = sp.size - np.searchsorted(sp, c, side="right")
        k_fp = sn.size - np.searchsorted(sn, c, side="right")
    tci = np.array([clopper_pearson(int(k), sp.size, lv) for k in k_tp])
    fci = np.array([clopper_pearson(int(k), sn.size, lv) for k in k_fp])
    return {"fpr": k_fp / sn.size, "tpr": k_tp / sp.size, "fpr_lo": fci[:, 0], "fpr_hi": fci[:, 1],
            "tpr_lo": tci[:, 0], "tpr_hi": tci[:, 1]}


def glrt_delta_mc(scores_in, scores_out, eps, d, lam):
    r"""Monte Carlo estimates of the GLRT profile from simulated energies, with standard errors.

    :math:`\delta_{\rm fwd}(\varepsilon) = \mathbb E_{T\sim\chi^2_d(\lambda)}[(1 - e^{\varepsilon - L(T)})_+]` from
    ``scores_in`` and :math:`\delta_{\rm rev}(\varepsilon) = \mathbb E_{T\sim\chi^2_d}[(1 - e^{\varepsilon + L(T)})_+]`
    from ``scores_out`` (:math:`L` the log-likelihood ratio, :func:`dpmia.chisq.log_likelihood_ratio`).
    Returns ``(fwd, fwd_se, rev, rev_se)`` for scalar ``eps`` >= 0.
    """
    from . import chisq

    si = np.atleast_1d(_checks.nonnegative("scores_in", scores_in)).ravel()
    so = np.atleast_1d(_checks.nonnegative("scores_out", scores_out)).ravel()
    if si.size < 2 or so.size < 2:
        raise ValueError("scores_in and scores_out need at least 2 values each")
    e = _checks.nonnegative("eps", eps)
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.scalar("lam", lam, lo=0.0, lo_open=True)
    f = np.maximum(-np.expm1(e - np.asarray(chisq.log_likelihood_ratio(si, dd, ll))), 0.0)
    r = np.maximum(-np.expm1(e + np.asarray(chisq.log_likelihood_ratio(so, dd, ll))), 0.0)
    return (float(f.mean()), float(f.std(ddof=1) / np.sqrt(f.size)),
            float(r.mean()), float(r.std(ddof=1) / np.sqrt(r.size)))
