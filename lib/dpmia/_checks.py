"""Argument validation shared by every public function of :mod:`dpmia`.

Each checker returns a clean value (a Python ``float``/``int`` for scalar input, a
float64 ``ndarray`` for array input) or raises:

* ``TypeError`` for non-numbers, for ``bool`` (``True`` is not a number of steps) and for
  arrays whose dtype is not real-numeric;
* ``ValueError`` naming the parameter, the offending value and the valid range, for NaN and
  for values outside the range. Arrays are checked element-wise and the message quotes the
  first bad element.
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

__all__ = ["real", "integer", "probability", "positive", "nonnegative", "scalar_or_array", "generator"]


def _fmt(x) -> str:
    if isinstance(x, (int, np.integer)):
        return f"{x!r}"
    s = repr(float(x))                      # the shortest form that reads back exactly
    return s[:-2] if s.endswith(".0") else s


def _describe(lo, hi, lo_open, hi_open, allow_inf=False) -> str:
    left = "(" if lo_open or (lo is None and not allow_inf) else "["
    right = ")" if hi_open or (hi is None and not allow_inf) else "]"
    lo_s = "-inf" if lo is None else _fmt(lo)
    hi_s = "inf" if hi is None else _fmt(hi)
    return f"{left}{lo_s}, {hi_s}{right}"


def real(name: str, value, *, lo=None, hi=None, lo_open=False, hi_open=False, allow_inf=False):
    """Validate a real number or an array of real numbers lying in an interval.

    ``lo``/``hi`` are the interval ends (``None`` = unbounded), ``lo_open``/``hi_open`` make
    them exclusive. Infinite values are rejected unless ``allow_inf`` (they must still lie in
    the interval). Returns a ``float`` for scalar input, otherwise a float64 array.
    """
    if type(value) is float or (type(value) is np.ndarray and value.dtype == np.float64):
        # fast path for the common case; any doubt (NaN, inf, out of range) falls through to the full check
        with np.errstate(invalid="ignore"):
            ok = (value == value) if allow_inf else np.isfinite(value)
            if lo is not None:
                ok = ok & ((value > lo) if lo_open else (value >= lo))
            if hi is not None:
                ok = ok & ((value < hi) if hi_open else (value <= hi))
        if np.all(ok):
            if type(value) is float:
                return value
            return float(value) if value.ndim == 0 else value.copy()
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, got a bool ({value!r})")
    if isinstance(value, numbers.Real):
        try:
            arr = np.asarray(float(value))
        except OverflowError:
            raise ValueError(f"{name} must be a number in {_describe(lo, hi, lo_open, hi_open, allow_inf)}, "
                             f"got an integer beyond the float range ({str(value)[:20]}...)") from None
        scalar = True
    elif isinstance(value, (numbers.Complex, str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    else:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # pragma: no cover - exotic objects
            raise TypeError(f"{name} must be a real number or array of real numbers") from exc
        if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer)
                                         or np.issubdtype(arr.dtype, np.floating)):
            raise TypeError(f"{name} must be a real number or an array of real numbers, "
                            f"got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
        scalar = arr.ndim == 0
    rng = _describe(lo, hi, lo_open, hi_open, allow_inf)
    bad = np.isnan(arr)
    if bad.any():
        raise ValueError(f"{name} must be a number in {rng}, got nan")
    if not allow_inf:
        bad = np.isinf(arr)
        if bad.any():
            raise ValueError(f"{name} must be finite and lie in {rng}, got {arr[bad].flat[0]}")
    if lo is not None:
        bad = arr <= lo if lo_open else arr < lo
        if bad.any():
            raise ValueError(f"{name} must lie in {rng}, got {_fmt(arr[bad].flat[0])}")
    if hi is not None:
        bad = arr >= hi if hi_open else arr > hi
        if bad.any():
            raise ValueError(f"{name} must lie in {rng}, got {_fmt(arr[bad].flat[0])}")
    return float(arr) if scalar else arr


#: Largest integer any count may take: every integer up to it is a float exactly (2**53), and the
#: library computes with floats; a larger one would overflow or lose its last digits.
INT_MAX = 2**53


def scalar(name: str, value, **kw) -> float:
    """:func:`real` for a parameter that must be one number: an array or list is a ``TypeError`` naming it."""
    v = real(name, value, **kw)
    if np.ndim(v) != 0:
        raise TypeError(f"{name} must be a single number, got an array of shape {np.shape(v)}")
    return float(v)


def integer(name: str, value, *, lo=None, hi=None):
    """Validate an integer (``int``, numpy integer, or an integral float such as ``1e4``).

    Rejects ``bool`` and non-integral floats (``2.5``) with ``TypeError``/``ValueError``; ``hi`` defaults to
    ``INT_MAX`` (2**53), so a Python integer of any size gets a ``ValueError`` naming the parameter.
    """
    user_hi = hi
    if hi is None:
        hi = INT_MAX
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got a bool ({value!r})")
    if isinstance(value, numbers.Integral):
        v = operator.index(value)
    elif isinstance(value, numbers.Real):
        try:
            f = float(value)
        except OverflowError:
            f = math.inf
        if not np.isfinite(f) or f != int(f):
            raise ValueError(f"{name} must be an integer in {_describe(lo, hi, False, False)}, "
                             f"got {value!r}")
        v = int(f)
    else:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} ({value!r})")
    if (lo is not None and v < lo) or v > hi:
        shown = str(v) if len(str(v)) <= 30 else f"{str(v)[:12]}... ({len(str(v))} digits)"
        extra = "" if user_hi is not None or v < hi else " (at most 2**53: larger integers lose digits as floats)"
        raise ValueError(f"{name} must be an integer in {_describe(lo, user_hi, False, False)}{extra}, got {shown}")
    return int(v)


def probability(name: str, value, *, open_lo=False, open_hi=False):
    """A probability in [0, 1] (ends optionally excluded)."""
    return real(name, value, lo=0.0, hi=1.0, lo_open=open_lo, hi_open=open_hi)


def positive(name: str, value, *, allow_inf=False):
    """A real number in (0, inf)."""
    return real(name, value, lo=0.0, lo_open=True, allow_inf=allow_inf)


def nonnegative(name: str, value, *, allow_inf=False):
    """A real number in [0, inf)."""
    return real(name, value, lo=0.0, allow_inf=allow_inf)


def scalar_or_array(result, *inputs):
    """Return a Python float when every input was a scalar, else the ndarray ``result``."""
    if all(np.ndim(x) == 0 for x in inputs):
        r = np.asarray(result, dtype=np.float64)
        if r.size != 1:
            raise ValueError(f"expected one value for scalar input, got shape {r.shape}")
        return float(r.reshape(-1)[0])
    return np.asarray(result, dtype=np.float64)


def generator(rng=None, seed=None) -> np.random.Generator:
    """The explicit source of randomness: a ``numpy.random.Generator`` or an integer ``seed`` (exactly one)."""
    if rng is not None and seed is not None:
        raise ValueError("give either rng or seed, not both")
    if rng is not None:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        return rng
    if seed is None:
        raise ValueError("randomness must be explicit: pass rng=numpy.random.default_rng(...) or seed=<int>")
    return np.random.default_rng(integer("seed", seed, lo=0))
