"""The dilogarithm ``spence``, the generalized exponential integral ``expn`` and Owen's
``owens_t``, as
``jax.scipy.special`` names them, from textbook expansions (DLMF 25.12, 8.19; no fitted
coefficients): a power series where it converges fast, reduced to it by exact identities
or replaced by a continued fraction evaluated backward to a fixed depth elsewhere.
Derivatives are the closed forms (``custom_jvp``)."""

from __future__ import annotations

import math

import numpy as np

from ..api import custom_jvp, jit
from ..array import Array
from ..numpy import elementwise as el
from .special import _float, _promote, digamma, gammaln

_PI2_6 = math.pi ** 2 / 6


def _li2_small(y: Array) -> Array:
    """``Li2(y) = sum_k y^k / k^2`` for ``|y| <= 1/2``: 56 terms reach ``0.5^56 / 56^2 <
    1e-20``."""
    term = y + 0.0
    total = y + 0.0
    for k in range(2, 57):
        term = term * y
        total = total + term / (k * k)
    return total


def _li2_upto_half(y: Array) -> Array:
    """``Li2(y)`` for ``-1 <= y <= 1/2``: the series, or Landen's identity ``Li2(y) =
    -Li2(y / (y - 1)) - ln(1 - y)^2 / 2`` for ``y < -1/2`` (``y / (y - 1)`` lies in
    ``(1/3, 1/2]`` there)."""
    landen = y < -0.5
    z = el.where(landen, y / (y - 1.0), y)
    s = _li2_small(z)
    log1m = el.log1p(-y)
    return el.where(landen, -s - 0.5 * log1m * log1m, s)


def _spence_value(x):
    """``spence(x) = Li2(1 - x)`` for ``x >= 0``. With ``y = 1 - x``:
    ``1/2 < y <= 1`` (``0 <= x < 1/2``): Euler's reflection, ``pi^2/6 - ln(x) ln(1 - x) -
    Li2(x)``; ``-1 <= y <= 1/2``: direct; ``y < -1`` (``x > 2``): the inversion ``-pi^2/6 -
    ln(x - 1)^2 / 2 - Li2(1 / (1 - x))``, ``1 / (1 - x)`` in ``(-1, 0)``."""
    y = 1.0 - x
    near_one = x < 0.5
    beyond = x > 2.0
    w = el.where(near_one, x, el.where(beyond, 1.0 / y, y))
    li = _li2_upto_half(w)
    xs = el.where(near_one & (x > 0), x, 0.5)
    reflected = _PI2_6 - el.log(xs) * el.log1p(-xs) - li
    reflected = el.where(x == 0, _PI2_6, reflected)
    xb = el.where(beyond, x, 3.0)
    lg = el.log(xb - 1.0)
    inverted = -_PI2_6 - 0.5 * lg * lg - li
    out = el.where(near_one, reflected, el.where(beyond, inverted, li))
    out = el.where(el.isinf(x) & (x > 0), -np.inf, out)
    return el.where(x < 0, np.nan, out)


def _spence_derivative(x):
    """``d/dx Li2(1 - x) = ln(x) / (1 - x) = -log1p(u) / u`` with ``u = x - 1``; near
    ``u = 0`` its series ``-(1 - u/2 + u^2/3 - u^3/4 + u^4/5)``, so the derivative of this
    derivative is right there too (1/2 at ``x = 1``)."""
    u = x - 1.0
    near = el.abs(u) < 1e-3
    uf = el.where(near, 1.0, u)
    un = el.where(near, u, 0.0)
    series = -(1.0 - un * (0.5 - un * (1.0 / 3 - un * (0.25 - un * 0.2))))
    return el.where(near, series, -el.log1p(uf) / uf)


# Compiled once a signature: eagerly, the series' many small ops would each be dispatched on
# their own (inside a trace, jit inlines).
_spence = custom_jvp(jit(_spence_value))
_spence.defjvps(lambda t, ans, x: t * _spence_derivative(x))


def spence(x) -> Array:
    """The dilogarithm in scipy's convention, ``spence(x) = int_1^x ln(t) / (1 - t) dt =
    Li2(1 - x)`` for ``x >= 0`` (NaN below; -inf at +inf); derivative ``ln(x) / (1 - x)``.

    >>> float(spence(0.0))  # pi^2 / 6
    1.6449340668482264
    """
    return _spence(_float(x))


# A&S 5.1.22's continued fraction for E_n: 150 levels converge to an ulp at x = 1, n = 1
# (the slowest case; it speeds up with x and n).
_CF_DEPTH = 150
# Series terms for x <= 1: 1 / 26! < 1e-26.
_SERIES_TERMS = 26


def _expn_value(n, x):
    """``E_n(x)`` for integer ``n >= 0``, ``x >= 0``: ``exp(-x) / x`` for ``n = 0``; for
    ``x <= 1`` the series (DLMF 8.19.8) ``(-x)^(n-1) / (n-1)! (psi(n) - ln x) - sum_{k !=
    n-1} (-x)^k / ((k - n + 1) k!)``; beyond, the continued fraction ``exp(-x) / (x + n -
    1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))``. At ``x = 0``: ``1 / (n - 1)``,
    inf for ``n <= 1``; NaN for negative or fractional ``n`` or negative ``x``."""
    small = x <= 1.0
    xs = el.where(small & (x > 0), x, 0.5)
    nn = el.maximum(n, 1.0)
    # The k = n - 1 term: (-x)^(n-1) / (n-1)! (psi(n) - ln x), its sign (-1)^(n-1).
    sign = el.where(el.fmod(nn - 1.0, 2.0) == 0, 1.0, -1.0)
    lead = sign * el.exp((nn - 1.0) * el.log(xs) - gammaln(nn)) * (digamma(nn) - el.log(xs))
    total = lead
    term = xs * 0.0 + 1.0  # (-x)^k / k!
    for k in range(_SERIES_TERMS):
        if k:
            term = term * (-xs) / k
        skip = nn - 1.0 == k
        denom = el.where(skip, 1.0, k - nn + 1.0)
        total = total - el.where(skip, 0.0, term / denom)
    xl = el.where(small, 2.0, x)
    f = xl + nn + 2.0 * _CF_DEPTH
    for i in range(_CF_DEPTH - 1, -1, -1):
        f = xl + nn + 2.0 * i - (i + 1.0) * (nn + i) / f
    fraction = el.exp(-xl) / f
    out = el.where(small, total, fraction)
    out = el.where(n == 0, el.exp(-x) / x, out)
    out = el.where(x == 0, el.where(n <= 1, np.inf, 1.0 / el.maximum(n - 1.0, 1.0)), out)
    bad = (n < 0) | (el.floor(n) != n) | (x < 0) | el.isnan(n) | el.isnan(x)
    return el.where(bad, np.nan, out)


def _expn_dx(n, x):
    """``d/dx E_n(x) = -E_(n-1)(x)`` (``-E_0 = -exp(-x) / x`` for ``n = 1``; for ``n = 0``,
    ``-exp(-x) (x + 1) / x^2``)."""
    e0 = el.exp(-x) / x
    lower = _expn_value(el.maximum(n - 1.0, 0.0), x)
    return el.where(n == 0, -e0 * (x + 1.0) / x, -lower)


_expn_value = jit(_expn_value)
_expn = custom_jvp(_expn_value)
_expn.defjvps(None, lambda t, ans, n, x: t * _expn_dx(n, x))


def expn(n, x) -> Array:
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n dt`` for
    integer ``n >= 0`` and ``x >= 0`` (NaN elsewhere, as JAX's); derivative in ``x``:
    ``-E_(n-1)(x)``; ``n`` has none.

    >>> float(expn(1, 1.0))  # E1(1)
    0.21938393439552029
    """
    n, x = _promote(n, x)
    return _expn(n, x)


# Gauss-Legendre nodes and weights on [-1, 1] (numpy's, computed once): 48 of them integrate
# the smooth integrand below to an ulp over its cut-off range.
_GL_NODES = 48
_GL_X, _GL_W = np.polynomial.legendre.leggauss(_GL_NODES)


def _owens_t_small_a(h, a):
    """``T(h, a)`` for ``h >= 0``, ``0 <= a <= 1``: with ``x = tan(theta)``,
    ``T = 1/(2 pi) int_0^arctan(a) exp(-h^2/2 sec(theta)^2) d theta``. The integrand falls
    below ``exp(-40.5)`` of its peak past ``theta = 9/h``, so the range is cut there and
    every node lands where it matters."""
    from ..numpy.shape import expand_dims
    top = el.minimum(el.arctan(a), 9.0 / el.maximum(h, 1e-300))
    half = expand_dims(0.5 * top, -1)
    theta = half * (asarray_like(_GL_X, h) + 1.0)
    hh = expand_dims(0.5 * h * h, -1)
    sec2 = 1.0 + el.tan(theta) ** 2
    from ..numpy.reductions import sum as sum_
    return sum_(asarray_like(_GL_W, h) * el.exp(-hh * sec2), axis=-1) * (0.5 * top) / (2 * math.pi)


def asarray_like(values, like: Array) -> Array:
    from ..numpy.creation import asarray
    return asarray(np.asarray(values, dtype=like.dtype))


def _owens_t_value(h, a):
    """Owen's T for any ``h``, ``a``: even in ``h``, odd in ``a``; for ``|a| > 1`` Owen's
    identity ``T(h, a) = (p + q)/2 - p q - T(a h, 1/a)`` with the upper tails ``p =
    Phi(-h)``, ``q = Phi(-a h)`` (all small where the answer is, so no cancellation)."""
    from .special import ndtr
    sign = el.where(a < 0, -1.0, 1.0)
    h, a = el.abs(h), el.abs(a)
    wide = a > 1.0
    a_in = el.where(wide, 1.0 / a, a)
    h_in = el.where(wide, a * h, h)
    h_in = el.where(el.isinf(h_in), 0.0, h_in)
    inner = _owens_t_small_a(h_in, a_in)
    p, q = ndtr(-h), ndtr(-a * h)
    out = el.where(wide, 0.5 * (p + q) - p * q - inner, inner)
    out = el.where(el.isinf(h), 0.0, out)
    return sign * out


def _owens_t_dh(h, a):
    """``dT/dh = -phi(h) erf(a h / sqrt 2) / 2``."""
    from .special import erf
    return -el.exp(-0.5 * h * h) / math.sqrt(2 * math.pi) * erf(a * h / math.sqrt(2.0)) * 0.5


def _owens_t_da(h, a):
    """``dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))``."""
    s = 1.0 + a * a
    return el.exp(-0.5 * h * h * s) / (2 * math.pi * s)


_owens_t = custom_jvp(jit(_owens_t_value))
_owens_t.defjvps(lambda t, ans, h, a: t * _owens_t_dh(h, a),
                 lambda t, ans, h, a: t * _owens_t_da(h, a))


def owens_t(h, a) -> Array:
    """Owen's T function ``T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2)
    dx`` (Gauss-Legendre on the angle form; Owen's identity beyond ``|a| = 1``);
    derivatives in both arguments.

    >>> round(float(owens_t(0.0, 1.0)), 12)  # arctan(1) / (2 pi)
    0.125
    """
    h, a = _promote(h, a)
    return _owens_t(h, a)
