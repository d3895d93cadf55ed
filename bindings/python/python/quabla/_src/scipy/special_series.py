"""The modified Bessel functions of orders 0 and 1 (``i0``, ``i0e``, ``i1``, ``i1e``), the
Bessel functions of the first kind (``bessel_jn``), the scaled complementary error function
``erfcx``, Dawson's integral ``dawsn``, the exponential integrals ``exp1`` and ``expi``,
and ``bernoulli``, as ``jax.scipy.special`` names them.

Each is computed from its textbook expansions (Abramowitz & Stegun, DLMF), not from fitted
coefficients: a power series where its terms do not cancel, an asymptotic series or a
continued fraction (evaluated backward to a fixed depth) where the argument is large, and
the switch points and term counts chosen so both sides are accurate to a few float64 ulps
(checked against scipy). Derivatives are the closed forms (``custom_jvp``), not the
derivative of the series.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..api import custom_jvp
from ..array import Array
from ..numpy import elementwise as el
from ..numpy.creation import asarray
from .special import _float

_EULER = 0.57721566490153286061


def _c(v, like: Array) -> Array:
    return asarray(np.array(v, like.dtype))


def _bessel_series(x: Array, order: int) -> Array:
    """``I_order(x) / (x/2)**order`` for |x| up to 20 (DLMF 10.25.2): the sum of
    ``q**k / (k! (k + order)!)``, ``q = x**2 / 4``, every term positive. 70 terms reach
    ``q**70 / (70!)**2 < 1e-17`` of the sum at |x| = 20."""
    q = x * x * 0.25
    term = _c(1.0 / math.factorial(order), x) + 0.0 * q
    total = term
    for k in range(1, 70):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _bessel_asymptotic(a: Array, order: int) -> Array:
    """``I_order(a) exp(-a) sqrt(2 pi a)`` for a >= 20 (DLMF 10.40.1): the sum over k of
    ``(-1)**k prod_{j<=k}(4 order**2 - (2j - 1)**2) / (k! (8a)**k)``, to 30 terms (the least
    term at a = 20 is below 1e-17)."""
    mu = 4.0 * order * order
    term = _c(1.0, a) + 0.0 * a
    total = term
    for k in range(1, 30):
        term = term * (-(mu - (2 * k - 1) ** 2)) / (k * 8.0 * a)
        total = total + term
    return total


def _scaled_bessel(x: Array, order: int) -> Array:
    """``exp(-|x|) I_order(x)``."""
    a = el.abs(x)
    near = a <= 20.0
    small = el.where(near, x, _c(1.0, x))
    series = _bessel_series(small, order) * el.exp(-el.abs(small))
    if order == 1:
        series = series * small * 0.5
    big = el.where(near, _c(20.0, x), a)
    tail = _bessel_asymptotic(big, order) / el.sqrt(2.0 * math.pi * big)
    if order == 1:
        tail = el.where(x < 0, -tail, tail)
    out = el.where(near, series, tail)
    # The limits at infinity: exp(-|x|) I(x) -> 0 (signed for the odd order).
    return el.where(el.isinf(x), _c(0.0, x) * el.sign(x) if order == 1 else _c(0.0, x), out)


def _i0e_value(x):
    return _scaled_bessel(x, 0)


def _i1e_value(x):
    return _scaled_bessel(x, 1)


_i0e = custom_jvp(_i0e_value)
_i1e = custom_jvp(_i1e_value)


@_i0e.defjvp
def _i0e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _i0e(x)
    return y, t * (_i1e(x) - el.sign(x) * y)


@_i1e.defjvp
def _i1e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _i1e(x)
    # (I1 e^-|x|)' = I0 e^-|x| - (sign(x) + 1/x) I1 e^-|x|; at 0 the limit is 1/2.
    safe = el.where(x == 0, _c(1.0, x), x)
    d = _i0e(x) - (el.sign(x) + 1.0 / safe) * y
    return y, t * el.where(x == 0, _c(0.5, x), d)


def i0e(x) -> Array:
    """``exp(-|x|) I0(x)``, the exponentially scaled modified Bessel function of order 0."""
    return _i0e(_float(x))


def i1e(x) -> Array:
    """``exp(-|x|) I1(x)``, the exponentially scaled modified Bessel function of order 1."""
    return _i1e(_float(x))


def i0(x) -> Array:
    """The modified Bessel function of the first kind of order 0 (inf beyond overflow)."""
    x = _float(x)
    return el.where(el.isinf(x), el.abs(x), el.exp(el.abs(x)) * _i0e(x))


def i1(x) -> Array:
    """The modified Bessel function of the first kind of order 1 (odd; +-inf beyond
    overflow)."""
    x = _float(x)
    return el.where(el.isinf(x), x, el.exp(el.abs(x)) * _i1e(x))


def _erfcx_fraction(x: Array) -> Array:
    """``exp(x**2) erfc(x)`` for x >= 2 by Laplace's continued fraction (A&S 7.1.14),
    ``1 / (sqrt(pi) (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))))``, 80 levels deep."""
    t = x + 0.0
    for k in range(80, 0, -1):
        t = x + (0.5 * k) / t
    return 1.0 / (math.sqrt(math.pi) * t)


def _exp_square(x: Array) -> Array:
    """``exp(x**2)`` without the error of rounding ``x**2`` first (which grows with it:
    hundreds of ulps at x = -26): x split in two halves of the significand (Veltkamp), so
    ``x**2 = hi + lo`` with ``hi`` exact, and ``exp(hi) * exp(lo)``."""
    split = 134217729.0 if x.dtype == np.float64 else 4097.0
    c = x * split
    xh = c - (c - x)
    xl = x - xh
    hi = xh * xh
    lo = 2.0 * xh * xl + xl * xl
    return el.exp(hi) * el.exp(lo)


def _erfcx_value(x):
    far = x >= 2.0
    fraction = _erfcx_fraction(el.where(far, x, _c(2.0, x)))
    near = el.where(far, _c(0.0, x), x)
    # Below 2 erfc is accurate (about 2 for negative x); far below 0 the product overflows
    # to inf, as erfcx itself does (~2 exp(x**2)).
    direct = _exp_square(near) * el.erfc(near)
    return el.where(far, fraction, direct)


_erfcx = custom_jvp(_erfcx_value)
_erfcx.defjvps(lambda t, ans, x: t * (2.0 * x * ans - 2.0 / math.sqrt(math.pi)))


def erfcx(x) -> Array:
    """The scaled complementary error function ``exp(x**2) erfc(x)`` (no overflow or
    cancellation for large ``x``; inf below about -26.6); derivative
    ``2 x erfcx(x) - 2 / sqrt(pi)``."""
    return _erfcx(_float(x))


def _exp1_value(x):
    """E1 for x > 0: the convergent series (A&S 5.1.11) up to 1, the even continued fraction
    (A&S 5.1.22) beyond, 120 levels deep (converged to an ulp at 1); inf at 0, NaN below
    (scipy's)."""
    low = x <= 1.0
    s = el.where(low & (x > 0), x, _c(0.5, x))
    term = -s + 0.0
    total = s + 0.0
    for k in range(2, 30):
        term = -term * s / k
        total = total - term / k
    series = -_EULER - el.log(s) + total
    b = el.where(low, _c(2.0, x), x)
    t = b + (2 * 120 + 1)
    for k in range(120, 0, -1):
        t = b + (2 * k - 1) - (k * k) / t
    fraction = el.exp(-b) / t
    out = el.where(low, series, fraction)
    out = el.where(x == 0, _c(np.inf, x), out)
    return el.where((x < 0) | el.isnan(x), _c(np.nan, x), out)


_exp1 = custom_jvp(_exp1_value)
_exp1.defjvps(lambda t, ans, x: t * (-el.exp(-x) / x))


def exp1(x) -> Array:
    """The exponential integral ``E1(x) = int_x^inf exp(-t) / t dt`` for ``x >= 0`` (inf at
    0, NaN for negative ``x``, as scipy's real ``exp1``); derivative ``-exp(-x) / x``."""
    return _exp1(_float(x))


def _expi_value(x):
    """Ei: the series (A&S 5.1.10, all terms positive) up to 45, the asymptotic series
    (A&S 5.1.51, 40 terms) beyond; ``-E1(-x)`` for negative x."""
    pos = x > 0
    mid = pos & (x <= 45.0)
    s = el.where(mid, x, _c(1.0, x))
    term = s + 0.0
    total = s + 0.0
    for k in range(2, 120):
        term = term * s / k
        total = total + term / k
    series = _EULER + el.log(s) + total
    big = el.where(x > 45.0, x, _c(46.0, x))
    term = _c(1.0, x) + 0.0 * big
    tail = term
    for k in range(1, 40):
        term = term * k / big
        tail = tail + term
    # In float32 exp(x) overflows before Ei(x) does (x > 88.7): divide by x in the exponent.
    if x.dtype == np.float32:
        asymptotic = el.exp(big - el.log(big)) * tail
    else:
        asymptotic = el.exp(big) / big * tail
    out = el.where(mid, series, asymptotic)
    neg = el.where(pos, _c(1.0, x), -x)
    out = el.where(pos, out, -_exp1_value(neg))
    out = el.where(x == np.inf, _c(np.inf, x), out)
    return el.where(x == 0, _c(-np.inf, x), out)


_expi = custom_jvp(_expi_value)
_expi.defjvps(lambda t, ans, x: t * (el.exp(x) / x))


def expi(x) -> Array:
    """The exponential integral ``Ei(x)`` (principal value; ``-E1(-x)`` for negative ``x``,
    -inf at 0); derivative ``exp(x) / x``."""
    return _expi(_float(x))


def _dawsn_value(x):
    """Dawson's integral: ``x exp(-x**2) sum_k x**(2k) / ((2k + 1) k!)`` up to |x| = 7 (the
    series of Kummer's M(1/2, 3/2, x**2), every term positive; ``exp(-x**2)`` without the
    rounding of ``x**2``), the asymptotic series ``1/(2x) sum_k (2k - 1)!! / (2 x**2)**k``
    (DLMF 7.12.1, 40 terms) beyond."""
    a = el.abs(x)
    near = a <= 7.0
    s = el.where(near, x, _c(0.0, x))
    y = s * s
    term = _c(1.0, x) + 0.0 * y
    total = term
    for k in range(1, 170):
        term = term * y / k
        total = total + term / (2 * k + 1)
    series = s * total / _exp_square(s)
    b = el.where(near, _c(8.0, x), x)
    q = 0.5 / (b * b)
    term = _c(1.0, x) + 0.0 * q
    tail = term
    for k in range(1, 40):
        term = term * (2 * k - 1) * q
        tail = tail + term
    asymptotic = tail * 0.5 / b
    return el.where(near, series, asymptotic)


_dawsn = custom_jvp(_dawsn_value)
_dawsn.defjvps(lambda t, ans, x: t * (1.0 - 2.0 * x * ans))


def dawsn(x) -> Array:
    """Dawson's integral ``exp(-x**2) int_0^x exp(t**2) dt`` (odd; ~ 1 / (2x) for large
    ``x``); derivative ``1 - 2 x dawsn(x)``."""
    return _dawsn(_float(x))


def bessel_jn(z, *, v: int, n_iter: int = 50) -> Array:
    """The Bessel functions of the first kind of orders ``0 .. v`` at ``z``, stacked on a new
    leading axis (shape ``(v + 1, *z.shape)``), as ``jax.scipy.special.bessel_jn``: Miller's
    backward recurrence ``J_{k-1} = (2k / z) J_k - J_{k+1}`` from order
    ``max(n_iter, v + 1)`` down, normalized by ``J_0 + 2 sum_k J_{2k} = 1`` (DLMF 10.12.4),
    rescaled as it grows so it never overflows. Accurate while the starting order exceeds
    ``|z|`` comfortably (JAX's rule of thumb for ``n_iter`` applies). Unlike JAX's it gives
    ``J_0(0) = 1`` and ``J_k(0) = 0`` (JAX's is NaN at 0). Differentiable in ``z``."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise ValueError(f"bessel_jn: v must be a non-negative integer, got {v!r}")
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 1:
        raise ValueError(f"bessel_jn: n_iter must be a positive integer, got {n_iter!r}")
    from ..numpy.shape import stack
    z = _float(z)
    a = el.abs(z)
    zero = a == 0
    inv = 2.0 / el.where(zero, _c(1.0, z), a)
    start = max(int(n_iter), int(v) + 1)
    ahead = _c(0.0, z) + 0.0 * a
    here = _c(1e-30, z) + 0.0 * a
    norm = _c(0.0, z) + 0.0 * a
    kept = {}
    for k in range(start, 0, -1):
        if k <= v:
            kept[k] = here
        if k % 2 == 0:
            norm = norm + 2.0 * here
        below = k * inv * here - ahead
        ahead, here = here, below
        # Keep the magnitudes in range: rescale everything carried when they grow large.
        big = el.abs(here) > 1e20
        shrink = el.where(big, _c(1e-20, z), _c(1.0, z))
        ahead, here, norm = ahead * shrink, here * shrink, norm * shrink
        kept = {j: value * shrink for j, value in kept.items()}
    kept[0] = here
    norm = norm + here
    odd_sign = el.where(z < 0, _c(-1.0, z), _c(1.0, z))
    rows = []
    for j in range(v + 1):
        value = kept[j] / norm
        if j % 2 == 1:
            value = value * odd_sign
        rows.append(el.where(zero, _c(1.0 if j == 0 else 0.0, z), value))
    return stack(rows)


def bernoulli(n: int) -> Array:
    """The Bernoulli numbers ``B_0 .. B_n`` (``B_1 = -1/2``), as ``scipy.special.bernoulli``;
    ``n`` must be a concrete non-negative integer. Computed exactly (rationals) before the
    one rounding to floats."""
    if isinstance(n, Array):
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"bernoulli: n must be a non-negative integer, got {n!r}")
    n = int(n)
    b = [Fraction(1)]
    for m in range(1, n + 1):
        total = Fraction(0)
        for k in range(m):
            total += math.comb(m + 1, k) * b[k]
        b.append(-total / (m + 1))
    from ..dtypes import default_float
    return asarray(np.array([float(v) for v in b], dtype=default_float()))


__all__ = ["bernoulli", "bessel_jn", "dawsn", "erfcx", "exp1", "expi", "i0", "i0e", "i1",
           "i1e"]
