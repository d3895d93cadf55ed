"""The float representation functions: ``frexp``, ``ldexp``, ``nextafter``, ``spacing``.

Quabla has no 64-bit integers to reinterpret a float64's bits in, so these are written in
float arithmetic that is exact by construction: powers of two are looked up in tables of
exact constants (two lookups, every entry a normal number), scaling by them is exact until
the one final multiplication that may round, and the exponent is read with ``log2`` and
then corrected by exact comparisons. So the results are numpy's, subnormals included (JAX
on CPU flushes subnormal inputs to zero here, so it differs for them).
"""

from __future__ import annotations

import numpy as np

from ..array import Array
from .creation import asarray
from .elementwise import (
    abs as abs_, copysign, floor, isfinite, isinf, isnan, log2, sign, where,
)


class _Format:
    """A float dtype's constants: normal exponent range, precision, tables of 2**n."""

    def __init__(self, dtype):
        info = np.finfo(dtype)
        self.dtype = np.dtype(dtype)
        self.emin = int(info.minexp)        # the least normal exponent (2**emin)
        self.emax = int(info.maxexp) - 1    # the largest exponent (2**emax)
        self.precision = int(info.nmant) + 1
        span = self.emax - self.emin + 1
        self.hi = np.array([2.0 ** (self.emin + 32 * k) for k in range((span + 31) // 32)],
                           dtype=self.dtype)
        self.lo = np.array([2.0 ** j for j in range(32)], dtype=self.dtype)
        self.tiny = np.array(2.0 ** (self.emin - self.precision + 1), dtype=self.dtype)
        self.max = np.array(info.max, dtype=self.dtype)


_FORMATS = {np.dtype(np.float32): _Format(np.float32), np.dtype(np.float64): _Format(np.float64)}


def _float(x) -> Array:
    a = asarray(x)
    if a.dtype.kind != "f":
        from .. import dtypes as _dt
        a = a.astype(_dt.default_float())
    return a


def _c(v, f: _Format) -> Array:
    """A constant of the format's dtype (no promotion by a Python float)."""
    return asarray(np.array(v, f.dtype))


def _pow2(n: Array, f: _Format) -> Array:
    """2**n exactly, for integer ``n`` from ``emin - precision + 1`` (the least subnormal)
    to ``emax``: a normal power from the tables, divided once more below the normal range
    (dividing by a power of two is exact while the result is representable)."""
    normal = n.clip(f.emin, f.emax) - f.emin
    p = asarray(f.hi)[normal // 32] * asarray(f.lo)[normal % 32]
    below = (f.emin - n).clip(0, f.precision - 1)
    lo = asarray(f.lo)
    return p / (lo[below.clip(0, 31)] * lo[(below - 31).clip(0, 31)])


def _scale(x: Array, k: Array, f: _Format) -> Array:
    """``x * 2**k`` exactly, for an ``x`` and ``k`` whose result is a normal number: two
    multiplications by powers within the tables' range."""
    k1 = k // 2
    return x * _pow2(k1, f) * _pow2(k - k1, f)


def frexp(x):
    """The mantissa (in [0.5, 1), with ``x``'s sign) and the int32 exponent of ``x``, as
    ``numpy.frexp``: ``x = m * 2**e``; 0, inf and NaN give ``(x, 0)``."""
    x = _float(x)
    f = _FORMATS[np.dtype(x.dtype)]
    usual = isfinite(x) & (x != 0)
    # Subnormals are scaled into the normal range first, so log2 sees a normal number.
    sub = usual & (abs_(x) < _c(2.0 ** f.emin, f))
    lift = where(sub, _c(2.0 ** f.precision, f), _c(1.0, f))
    y = where(usual, x, _c(1.0, f)) * lift
    e = floor(log2(abs_(y))).astype(np.int32) + 1
    m = _scale(y, -e, f)
    # log2 may be off by one next to a power of two; exact steps correct it.
    big = abs_(m) >= _c(1.0, f)
    m, e = where(big, m * _c(0.5, f), m), where(big, e + 1, e)
    small = abs_(m) < _c(0.5, f)
    m, e = where(small, m * _c(2.0, f), m), where(small, e - 1, e)
    shift = where(sub, f.precision, 0).astype(np.int32)
    return where(usual, m, x), where(usual, e - shift, 0).astype(np.int32)


def ldexp(x, n):
    """``x * 2**n`` rounded once, as ``numpy.ldexp``: overflow gives inf, underflow a
    subnormal or zero (with ``x``'s sign)."""
    x = _float(x)
    n = asarray(n)
    if n.dtype.kind not in "iu":
        raise TypeError(f"ldexp: the exponent must be an integer array, got {n.dtype}")
    f = _FORMATS[np.dtype(x.dtype)]
    m, ex = frexp(x)
    k = ex + n.astype(np.int32).clip(-4 * f.emax, 4 * f.emax)
    usual = isfinite(x) & (x != 0)
    overflow = usual & (k > f.emax + 1)
    normal = k - 1 >= f.emin
    # Normal results: (2m) * 2**(k-1), both exact. Below: m * 2**(emin+1) is normal and
    # exact, and the last factor 2**(k - emin - 1) < 1 rounds once.
    up = (m * _c(2.0, f)) * _pow2((k - 1).clip(f.emin, f.emax), f)
    down = _scale(m, asarray(np.int32(f.emin + 1)), f) * _pow2(
        (k - f.emin - 1).clip(-(f.precision + 1), 0), f)
    out = where(normal, up, down)
    out = where(overflow, copysign(_c(np.inf, f), x), out)
    return where(usual, out, x)


def _step(x: Array, f: _Format, away: Array) -> Array:
    """The gap from finite nonzero ``x`` to its neighbour away from zero (``away``) or
    toward it: 2**(e - precision) in [2**(e-1), 2**e), half that below a power of two."""
    m, e = frexp(x)
    # Subnormals (e <= emin) are spaced as the least normal binade.
    gap = _pow2(e.clip(f.emin + 1, f.emax + 1) - f.precision, f)
    halves = (~away) & (abs_(m) == _c(0.5, f)) & (e - 1 > f.emin)
    return where(halves, gap * _c(0.5, f), gap)


def nextafter(x1, x2):
    """The next representable number after ``x1`` toward ``x2``, as ``numpy.nextafter``."""
    from ..dtypes import result_type
    a, b = _float(x1), _float(x2)
    dt = np.dtype(result_type(a.dtype, b.dtype))
    a, b = a.astype(dt), b.astype(dt)
    f = _FORMATS[dt]
    up = b > a
    away = up == (a > 0)
    finite = isfinite(a) & (a != 0)
    step = _step(where(finite, a, _c(1.0, f)), f, away)
    out = where(up, a + step, a - step)
    # A step to zero keeps the sign of where it came from.
    out = where((out == 0) & (a != 0), copysign(_c(0.0, f), a), out)
    out = where(a == 0, where(up, _c(f.tiny, f), _c(-f.tiny, f)), out)
    out = where(isinf(a), sign(a) * _c(f.max, f), out)
    out = where(a == b, b, out)
    return where(isnan(a) | isnan(b), _c(np.nan, f), out)


def spacing(x):
    """The distance from ``x`` to the next number of larger magnitude, with ``x``'s sign, as
    ``numpy.spacing`` (NaN for inf and NaN; the least subnormal for both zeros)."""
    x = _float(x)
    f = _FORMATS[np.dtype(x.dtype)]
    out = nextafter(x, copysign(_c(np.inf, f), x)) - x
    return where(x == 0, _c(f.tiny, f), out)


__all__ = ["frexp", "ldexp", "nextafter", "spacing"]
