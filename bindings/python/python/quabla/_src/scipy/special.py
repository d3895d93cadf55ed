"""Special functions, as ``jax.scipy.special``: JAX's formulas (so its values at the edges:
``xlogy(0, 0) = 0``, ``logit(0) = -inf``) and its derivatives (the custom rules of
``xlogy``, ``xlog1py``, ``erfinv``, ``ndtri`` and ``log_ndtr``).
"""

from __future__ import annotations

import math

import numpy as np

from ..api import custom_jvp
from ..array import Array
from ..numpy.creation import asarray
from ..numpy import elementwise as el
from ..numpy.elementwise import as_float as _float
from .. import dtypes as _dt
from ..nn.functions import logsumexp  # noqa: F401  (the same function as jax.nn's)


def _promote(*xs, broadcast: bool = True):
    """The arguments as arrays of their common float dtype (JAX's
    ``promote_args_inexact``), broadcast to one shape unless ``broadcast=False``."""
    arrays = [_float(x) for x in xs]
    d = _dt.result_type(*[a.dtype for a in arrays])
    arrays = [a.astype(d) for a in arrays]
    if not broadcast:
        return arrays
    from ..numpy.shape import broadcast_arrays
    return broadcast_arrays(*arrays)


def expit(x) -> Array:
    """The logistic function ``1 / (1 + exp(-x))``.

    >>> expit(0.0)  # 0.5
    """
    return el.sigmoid(_float(x))


def _logit_value(x):
    return el.log(x / (1.0 - x))


_logit = custom_jvp(_logit_value)
_logit.defjvps(lambda t, ans, x: t / (x * (1.0 - x)))


def logit(x) -> Array:
    """``log(x / (1 - x))``, the inverse of :func:`expit`; derivative ``1 / (x (1 - x))``
    (JAX's rule: inf, not NaN, at 0 and 1)."""
    return _logit(_float(x))


def erf(x) -> Array:
    """The error function."""
    return el.erf(_float(x))


def erfc(x) -> Array:
    """``1 - erf(x)``, accurate in the tail."""
    return el.erfc(_float(x))


def _erfinv_value(x):
    # The core's ``random::erfinv``: ``lax.erf_inv`` refined by Newton steps in float64.
    from ... import _quabla
    return Array(_quabla.random_erfinv(x._raw))


_erfinv = custom_jvp(_erfinv_value)
_erfinv.defjvps(lambda t, ans, x: t * (math.sqrt(math.pi) / 2) * el.exp(ans * ans))


def erfinv(x) -> Array:
    """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside); its derivative is
    ``sqrt(pi) / 2 * exp(erfinv(x)**2)``."""
    return _erfinv(_float(x))


def _xlogy_value(x, y):
    ok = x != 0
    return el.where(ok, x * el.log(el.where(ok, y, 1.0)), 0.0)


def _xlogy_rule(primals, tangents):
    (x, y), (xd, yd) = primals, tangents
    return _xlogy_value(x, y), xd * el.log(y) + yd * x / y


_xlogy = custom_jvp(_xlogy_value)
_xlogy.defjvp(_xlogy_rule)


def xlogy(x, y) -> Array:
    """``x * log(y)``, 0 where ``x == 0`` (JAX's derivative rule, ``log(y)`` and
    ``x / y``)."""
    return _xlogy(*_promote(x, y))


def _xlog1py_value(x, y):
    ok = x != 0
    return el.where(ok, x * el.log1p(el.where(ok, y, 0.0)), 0.0)


def _xlog1py_rule(primals, tangents):
    (x, y), (xd, yd) = primals, tangents
    return _xlog1py_value(x, y), xd * el.log1p(y) + yd * x / (1.0 + y)


_xlog1py = custom_jvp(_xlog1py_value)
_xlog1py.defjvp(_xlog1py_rule)


def xlog1py(x, y) -> Array:
    """``x * log1p(y)``, 0 where ``x == 0``."""
    return _xlog1py(*_promote(x, y))


def ndtr(x) -> Array:
    """The standard normal CDF, from ``erf`` near 0 and ``erfc`` in the tails (JAX's
    formula)."""
    x = _float(x)
    half_sqrt_2 = 0.5 * math.sqrt(2.0)
    w = x * half_sqrt_2
    z = el.absolute(w)
    y = el.where(z < half_sqrt_2, 1.0 + el.erf(w),
                 el.where(w > 0, 2.0 - el.erfc(z), el.erfc(z)))
    return 0.5 * y


def _norm_logpdf(x):
    return -0.5 * x * x - 0.5 * math.log(2 * math.pi)


def _ndtri_value(p):
    # Solve log_ndtr(x) = log(q) for the smaller tail q (exact: 1 - p is exact for
    # p >= 0.5) by Newton steps from Abramowitz & Stegun 26.2.23 (error < 4.5e-4); the
    # log scale keeps the relative accuracy down to q = 1e-300 and is nearly linear there.
    # (Twelve terms of the tail series: log_ndtr's default three are off by 1e-9 at -21.)
    q = el.where(p < 0.5, p, 1.0 - p)
    ok = (q > 0) & (q <= 0.5)
    log_q = el.log(el.where(ok, q, 0.25))
    t = el.sqrt(-2.0 * log_q)
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    for _ in range(4):
        lx = _log_ndtr_value(x, 12)
        x = x - (lx - log_q) * el.exp(lx - _norm_logpdf(x))
    x = el.where(p < 0.5, x, -x)
    x = el.where(p == 0.5, 0.0, x)
    x = el.where(p == 0, -np.inf, el.where(p == 1, np.inf, x))
    return el.where((p < 0) | (p > 1) | el.isnan(p), np.nan, x)


_ndtri = custom_jvp(_ndtri_value)
# 0 at p = 0 and 1 (an infinite quantile), as JAX's.
_ndtri.defjvps(lambda t, ans, p: t * el.where(el.isinf(ans), 0.0, el.exp(-_norm_logpdf(ans))))


def ndtri(p) -> Array:
    """The inverse of :func:`ndtr` (the normal quantile): -inf at 0, inf at 1, NaN outside
    [0, 1]; derivative ``1 / pdf(ndtri(p))`` (0 at 0 and 1, as JAX)."""
    p = _float(p)
    return _ndtri(p)


def _log_ndtr_series(x, order: int):
    x2 = x * x
    even = odd = asarray(0.0, x.dtype)
    x2n = x2
    for n in range(1, order + 1):
        y = float(np.prod(np.arange(2 * n - 1, 0, -2))) / x2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x2n = x2n * x2
    return (even - odd) + 1.0


def _log_ndtr_value(x, series_order):
    lower, upper = (-20.0, 8.0) if x.dtype == np.float64 else (-10.0, 5.0)
    low = el.minimum(x, lower)
    lower_tail = (-0.5 * low * low - el.log(-low) - 0.5 * math.log(2 * math.pi)
                  + el.log(_log_ndtr_series(low, series_order)))
    return el.where(x > upper, -ndtr(-x),
                    el.where(x > lower, el.log(ndtr(el.maximum(x, lower))), lower_tail))


def _log_ndtr_rule(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr_value(x, series_order)
    return ans, t * el.exp(_norm_logpdf(x) - ans)


_log_ndtr = custom_jvp(_log_ndtr_value, nondiff_argnums=(1,))
_log_ndtr.defjvp(_log_ndtr_rule)


def log_ndtr(x, series_order: int = 3) -> Array:
    """``log(ndtr(x))`` accurate in both tails (an asymptotic series below -20 in float64,
    -10 in float32, as JAX)."""
    if not isinstance(series_order, int) or not 0 <= series_order <= 30:
        raise ValueError(f"log_ndtr: series_order must be an int in [0, 30], got "
                         f"{series_order!r}")
    return _log_ndtr(_float(x), series_order)


# Lanczos' approximation with g = 7 and these coefficients, as XLA's Lgamma and Digamma (so
# JAX's values to a few ulps): Gamma(z + 1) ~ sqrt(2 pi) t^(z + 1/2) e^-t A(z), t = z + g + 1/2.
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _lanczos_z_and_log_t(x):
    """The reflected-or-shifted argument ``z`` and ``log(z + g + 1/2)`` (by ``log1p``)."""
    reflect = x < 0.5
    z = el.where(reflect, -x, x - 1.0)
    half_g = _LANCZOS_G + 0.5
    log_t = math.log(half_g) + el.log1p(z / half_g)
    return reflect, z, z + half_g, log_t


def _gammaln_value(x):
    reflect, z, t, log_t = _lanczos_z_and_log_t(x)
    a = asarray(_LANCZOS_BASE, x.dtype)
    for i, c in enumerate(_LANCZOS):
        a = a + c / (z + float(i + 1))
    log_y = 0.5 * math.log(2 * math.pi) + (z + 0.5 - t / log_t) * log_t + el.log(a)
    # Reflection, lgamma(x) = log(pi) - lgamma(1 - x) - log|sin(pi x)|, with sin taken of
    # the fractional part folded into [0, 1/2] (exact zeros at the poles).
    ax = el.absolute(x)
    frac = ax - el.floor(ax)
    frac = el.where(frac > 0.5, 1.0 - frac, frac)
    denom = el.log(el.sin(math.pi * frac))
    reflection = el.where(el.isfinite(denom), math.log(math.pi) - denom - log_y, -denom)
    out = el.where(reflect, reflection, log_y)
    return el.where(el.isinf(x), np.inf, out)


def _digamma_value(x):
    reflect, z, t, log_t = _lanczos_z_and_log_t(x)
    num = asarray(0.0, x.dtype)
    den = asarray(_LANCZOS_BASE, x.dtype)
    for i, c in enumerate(_LANCZOS):
        zi = z + float(i + 1)
        num = num - c / (zi * zi)
        den = den + c / zi
    y = log_t + num / den - _LANCZOS_G / t
    # digamma(x) = digamma(1 - x) - pi cot(pi x), x first shifted into [-1/2, 1/2].
    reduced = x + el.absolute(el.floor(x + 0.5))
    reflection = y - math.pi * el.cos(math.pi * reduced) / el.sin(math.pi * reduced)
    out = el.where(reflect, reflection, y)
    return el.where((x <= 0) & (x == el.floor(x)), np.nan, out)


def _trigamma(x):
    # The recurrence psi1(x) = psi1(x + 1) + 1/x^2 up to x >= 20, then the asymptotic series
    # (its next term is below 1e-19 there); reflection psi1(1 - x) + psi1(x) =
    # pi^2 / sin^2(pi x) below 1/2. Infinite at the poles, as JAX's polygamma(1, x).
    reflect = x < 0.5
    y = el.where(reflect, 1.0 - x, x)
    acc = asarray(0.0, x.dtype)
    for _ in range(20):
        small = y < 20.0
        acc = acc + el.where(small, 1.0 / (y * y), 0.0)
        y = el.where(small, y + 1.0, y)
    inv = 1.0 / y
    inv2 = inv * inv
    tail = inv2 * (1.0 / 42 + inv2 * (-1.0 / 30 + inv2 * (5.0 / 66 + inv2 * (
        -691.0 / 2730 + inv2 * (7.0 / 6)))))
    series = inv + inv2 / 2 + inv * inv2 * (1.0 / 6 + inv2 * (-1.0 / 30 + tail))
    value = acc + series
    s = el.sin(math.pi * x)
    out = el.where(reflect, math.pi ** 2 / (s * s) - value, value)
    return el.where((x <= 0) & (x == el.floor(x)), np.inf, out)


_digamma = custom_jvp(_digamma_value)
_digamma.defjvps(lambda t, ans, x: t * _trigamma(x))
_gammaln = custom_jvp(_gammaln_value)
_gammaln.defjvps(lambda t, ans, x: t * _digamma(x))


def gammaln(x) -> Array:
    """``log|Gamma(x)|`` (Lanczos, as XLA's); inf at the poles and at +-inf; its derivative
    is :func:`digamma`.

    >>> gammaln(5.0)  # log(24)
    """
    return _gammaln(_float(x))


def digamma(x) -> Array:
    """``d/dx log Gamma(x)`` (NaN at 0 and the negative integers); its derivative is the
    trigamma function."""
    return _digamma(_float(x))


def gammasgn(x) -> Array:
    """The sign of ``Gamma(x)``: -1 on (-1, 0), (-3, -2), ... and at -0.0; NaN at the
    negative integers and NaN (JAX's and scipy's conventions)."""
    from ..numpy.selection import select
    x = _float(x)
    fl = el.floor(x)
    neg = x < 0
    return select([(neg & (x == fl)) | el.isnan(x),
                   (neg & (el.fmod(fl, 2.0) != 0)) | ((x == 0) & el.signbit(x))],
                  [asarray(np.nan, x.dtype), asarray(-1.0, x.dtype)], asarray(1.0, x.dtype))


def gamma(x) -> Array:
    """``Gamma(x)``, as ``gammasgn(x) * exp(gammaln(x))``."""
    x = _float(x)
    return gammasgn(x) * el.exp(gammaln(x))


# The coefficients of Stirling's series remainder, as cdflib's algdiv and bcorr use them.
_STIRLING = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
             -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _stirling_difference(a, b):
    """``del(b) - del(a + b)`` for ``a <= b``, ``del`` the remainder of Stirling's series,
    summed as cdflib does (the factors ``s_n = (1 - x^n) / (1 - x)``)."""
    c = _STIRLING
    h = a / b
    # (JAX's port has h / (1 + h) for this x, cdflib 1 / (1 + h): off by up to 2e-7.)
    x = 1.0 / (1.0 + h)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c[5] * s11 * t + c[4] * s9) * t + c[3] * s7) * t + c[2] * s5) * t
         + c[1] * s3) * t + c[0]
    return w * ((h / (1.0 + h)) / b)


def _log_gamma_ratio_large_b(a, b):
    """``log Gamma(b) - log Gamma(a + b)`` for ``b >= 8`` (``a <= b``), from Stirling's
    series (cdflib's ``algdiv``): accurate where the difference of two large lgammas
    cancels."""
    w = _stirling_difference(a, b)
    u = (b + (a - 0.5)) * el.log1p(a / b)
    v = a * (el.log(b) - 1.0)
    return el.where(u <= v, (w - v) - u, (w - u) - v)


def _stirling_corrections(a, b):
    """``del(a) + del(b) - del(a + b)`` for ``8 <= a <= b`` (cdflib's ``bcorr``)."""
    c = _STIRLING
    t = (1.0 / a) ** 2
    return ((((((c[5] * t + c[4]) * t + c[3]) * t + c[2]) * t + c[1]) * t + c[0]) / a
            + _stirling_difference(a, b))


def betaln(a, b) -> Array:
    """``log|B(a, b)|``: by lgamma for ``max(a, b) < 8``; through Stirling's corrections
    where the difference of large lgammas would cancel (cdflib's ``betaln``: ``algdiv`` for
    ``a < 8 <= b``, ``bcorr`` when both are at least 8; JAX's version is off by up to 2e-7
    relative on both, see ``_log_gamma_ratio_large_b``)."""
    a, b = _promote(a, b)
    a, b = el.minimum(a, b), el.maximum(a, b)
    small = gammaln(a) + (gammaln(b) - gammaln(a + b))
    mixed = gammaln(a) + _log_gamma_ratio_large_b(a, b)
    sa = el.where(a >= 8, a, 8.0)
    sb = el.where(a >= 8, b, 8.0)
    h = sa / sb
    u = -(sa - 0.5) * el.log(h / (1.0 + h))
    v = sb * el.log1p(h)
    base = (-0.5 * el.log(sb) + 0.5 * math.log(2 * math.pi)) + _stirling_corrections(sa, sb)
    large = el.where(u > v, (base - v) - u, (base - u) - v)
    return el.where(b < 8, small, el.where(a < 8, mixed, large))


_IGAMMA_MAX_ITERS = 2000


def _igamma_pair(a, x):
    """``(P, Q)``, the regularized lower and upper incomplete gamma functions, each computed
    where it is accurate: P by its power series below ``x = a + 1`` (Q = 1 - P there), Q by
    its continued fraction (modified Lentz) above; each loop runs until every element has
    converged to the dtype's precision."""
    from ..control_flow import while_loop
    from ..numpy import reductions as red
    eps = float(np.finfo(np.dtype(x.dtype)).eps)
    tiny = float(np.finfo(np.dtype(x.dtype)).tiny)
    ok = (a > 0) & (x > 0) & el.isfinite(x)
    series = x < a + 1.0
    # Safe arguments where an element takes the other method (or none).
    sa = el.where(ok, a, 1.0)
    xs = el.where(ok & series, x, 0.5)
    xc = el.where(ok & ~series, x, sa + 2.0)
    log_pref = lambda aa, xx: aa * el.log(xx) - xx - gammaln(aa)  # noqa: E731

    def series_step(state):
        n, term, total, _ = state
        term = term * xs / (sa + n)
        total = total + term
        return n + 1.0, term, total, el.absolute(term) <= el.absolute(total) * eps

    one = el.ones_like_(xs)
    start = (asarray(1.0, x.dtype), one / sa, one / sa, one < 0)
    _, _, total, _ = while_loop(
        lambda st: red.any(~st[3]) & (st[0] < _IGAMMA_MAX_ITERS), series_step, start)
    p_series = el.exp(log_pref(sa, xs)) * total

    def cf_step(state):
        i, b, c, d, h, _ = state
        an = -i * (i - sa)
        b = b + 2.0
        d = an * d + b
        d = el.where(el.absolute(d) < tiny, tiny, d)
        c = b + an / c
        c = el.where(el.absolute(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        return i + 1.0, b, c, d, h * delta, el.absolute(delta - 1.0) <= eps

    b0 = xc + 1.0 - sa
    start = (asarray(1.0, x.dtype), b0, one / tiny, 1.0 / b0, 1.0 / b0, one < 0)
    h = while_loop(lambda st: red.any(~st[5]) & (st[0] < _IGAMMA_MAX_ITERS), cf_step,
                   start)[4]
    q_cf = el.exp(log_pref(sa, xc)) * h
    p = el.where(series, p_series, 1.0 - q_cf)
    q = el.where(series, 1.0 - p_series, q_cf)
    # JAX's edges: P(0, x) = 1; P(a, 0) = 0; P(a, inf) = 1; NaN for a < 0, x < 0 or NaN.
    bad = (a < 0) | (x < 0) | el.isnan(a) | el.isnan(x)
    p = el.where(x == 0, 0.0, el.where(el.isinf(x) | (a == 0), 1.0, p))
    q = el.where(x == 0, 1.0, el.where(el.isinf(x) | (a == 0), 0.0, q))
    return el.where(bad, np.nan, p), el.where(bad, np.nan, q)


def _gammainc_value(a, x):
    return _igamma_pair(a, x)[0]


def _gammainc_rule(primals, tangents):
    """dP/dx = x^(a-1) e^-x / Gamma(a); dP/da by forward mode through the loops."""
    from ..api import jvp
    (a, x), (ta, tx) = primals, tangents
    value = _gammainc_value(a, x)
    dx = el.exp((a - 1.0) * el.log(x) - x - gammaln(a))
    dx = el.where((x > 0) & el.isfinite(x), dx, 0.0)
    _, da = jvp(lambda aa: _gammainc_value(aa, x), (a,), (el.ones_like_(a),))
    return value, tx * dx + ta * da


_gammainc = custom_jvp(_gammainc_value)
_gammainc.defjvp(_gammainc_rule)


def gammainc(a, x) -> Array:
    """The regularized lower incomplete gamma function ``P(a, x)``; derivatives in both
    arguments (``a``'s by forward mode through the series or continued fraction).

    >>> gammainc(1.0, 1.0)  # 1 - 1/e
    """
    return _gammainc(*_promote(a, x))


def gammaincc(a, x) -> Array:
    """``Q(a, x) = 1 - P(a, x)``, computed directly where it is small (accurate in the upper
    tail)."""
    a, x = _promote(a, x)
    return _gammaincc(a, x)


def _gammaincc_value(a, x):
    return _igamma_pair(a, x)[1]


def _gammaincc_rule(primals, tangents):
    value = _gammaincc_value(*primals)
    _, dp = _gammainc_rule(primals, tangents)
    return value, -dp


_gammaincc = custom_jvp(_gammaincc_value)
_gammaincc.defjvp(_gammaincc_rule)


def _betainc_cf(a, b, x):
    """``I_x(a, b)`` by its continued fraction (modified Lentz), for ``x`` below the mean
    ``(a + 1) / (a + b + 2)`` where it converges fast; every element until converged."""
    from ..control_flow import while_loop
    from ..numpy import reductions as red
    eps = float(np.finfo(np.dtype(x.dtype)).eps)
    tiny = float(np.finfo(np.dtype(x.dtype)).tiny)
    fix = lambda v: el.where(el.absolute(v) < tiny, tiny, v)  # noqa: E731
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    one = el.ones_like_(x)
    d0 = 1.0 / fix(1.0 - qab * x / qap)

    def step(state):
        m, c, d, h, _ = state
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 / fix(1.0 + aa * d)
        c = fix(1.0 + aa / c)
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 / fix(1.0 + aa * d)
        c = fix(1.0 + aa / c)
        delta = d * c
        return m + 1.0, c, d, h * delta, el.absolute(delta - 1.0) <= eps

    start = (asarray(1.0, x.dtype), one, d0, d0, one < 0)
    h = while_loop(lambda st: red.any(~st[4]) & (st[0] < _IGAMMA_MAX_ITERS), step, start)[3]
    front = el.exp(a * el.log(x) + b * el.log1p(-x) - betaln(a, b))
    return front * h / a


def _betainc_value(a, b, x):
    ok = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    flip = x > (a + 1.0) / (a + b + 2.0)
    # Evaluate each element on the side where the fraction converges; safe values elsewhere.
    sa, sb = el.where(ok, a, 1.0), el.where(ok, b, 1.0)
    sx = el.where(ok, x, 0.5)
    lo = _betainc_cf(el.where(flip, sb, sa), el.where(flip, sa, sb),
                     el.where(flip, 1.0 - sx, sx))
    out = el.where(flip, 1.0 - lo, lo)
    out = el.where(x == 0, 0.0, el.where(x == 1, 1.0, out))
    bad = (a <= 0) | (b <= 0) | (x < 0) | (x > 1) | el.isnan(a) | el.isnan(b) | el.isnan(x)
    return el.where(bad, np.nan, out)


def _betainc_rule(primals, tangents):
    """dI/dx is the beta density; dI/da and dI/db by forward mode through the fraction."""
    from ..api import jvp
    (a, b, x), (ta, tb, tx) = primals, tangents
    value = _betainc_value(a, b, x)
    inside = (x > 0) & (x < 1)
    sx = el.where(inside, x, 0.5)
    dx = el.where(inside, el.exp((a - 1.0) * el.log(sx) + (b - 1.0) * el.log1p(-sx)
                                 - betaln(a, b)), 0.0)
    ones = el.ones_like_(a)
    _, da = jvp(lambda aa: _betainc_value(aa, b, x), (a,), (ones,))
    _, db = jvp(lambda bb: _betainc_value(a, bb, x), (b,), (ones,))
    return value, tx * dx + ta * da + tb * db


_betainc = custom_jvp(_betainc_value)
_betainc.defjvp(_betainc_rule)


def betainc(a, b, x) -> Array:
    """The regularized incomplete beta function ``I_x(a, b)`` (NaN outside ``0 <= x <= 1``
    or for non-positive ``a``, ``b``); derivatives in all three arguments.

    >>> betainc(2.0, 3.0, 0.4)
    """
    return _betainc(*_promote(a, b, x))


def _xlogx_value(x):
    return _xlogy_value(x, x)


_xlogx = custom_jvp(_xlogx_value)
_xlogx.defjvps(lambda t, ans, x: t * (el.log(x) + 1.0))


def entr(x) -> Array:
    """``-x log x`` (0 at 0, -inf below), as ``scipy.special.entr``."""
    x = _float(x)
    return el.where(x < 0, -np.inf, -_xlogx(x))


def rel_entr(p, q) -> Array:
    """``p log(p / q)``: 0 where ``p == 0 <= q``, inf where only one is positive."""
    p, q = _promote(p, q)
    both = (p > 0) & (q > 0)
    zero_p = (p == 0) & (q >= 0)
    sp, sq = el.where(both, p, 1.0), el.where(both, q, 1.0)
    return el.where(both, _xlogx(sp) - _xlogy(sp, sq), el.where(zero_p, 0.0, np.inf))


def kl_div(p, q) -> Array:
    """``rel_entr(p, q) - p + q``."""
    p, q = _promote(p, q)
    return rel_entr(p, q) - p + q


def factorial(n, exact: bool = False) -> Array:
    """``n! = Gamma(n + 1)`` (0 for negative ``n``); ``exact=True`` is refused, as in
    JAX."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n = _float(n)
    return el.where(n < 0, 0.0, el.exp(gammaln(n + 1.0)))


def multigammaln(a, d: int) -> Array:
    """The log of the multivariate gamma function of dimension ``d`` (a Python int)."""
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
        raise TypeError(f"multigammaln: d must be a positive int, got {d!r}")
    a = _float(a)
    b = asarray(np.arange(d, dtype=np.dtype(a.dtype)) / 2.0)
    from ..numpy import reductions as red
    total = red.sum(gammaln(a[..., None] - b), axis=-1)
    return total + 0.25 * d * (d - 1) * math.log(math.pi)


def beta(a, b) -> Array:
    """``B(a, b)`` with its sign, ``gammasgn(a) gammasgn(b) gammasgn(a + b) exp(betaln)``."""
    a, b = _promote(a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * el.exp(betaln(a, b))


from ..nn.functions import log_softmax, softmax  # noqa: E402,F401  (jax.scipy.special's too)


# B_{2j} / (2j)! for the Euler-Maclaurin tail of the Hurwitz zeta function.
_ZETA_TAIL = tuple(b / math.factorial(2 * j) for j, b in enumerate(
    [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
     43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730], start=1))


def zeta(x, q=None) -> Array:
    """The Hurwitz zeta function ``sum_k (q + k)^-x`` (``q`` is required, as in JAX): the
    first 12 terms, then the Euler-Maclaurin tail; inf at ``x = 1`` and at the poles
    ``q = 0, -1, ...``, NaN for ``x < 1``. Differentiable in both arguments (through the
    formula).

    >>> zeta(2.0, 1.0)  # pi^2 / 6
    """
    if q is None:
        raise NotImplementedError("zeta(x) without q (the Riemann zeta) is not supported, as "
                                  "in JAX; pass q=1.0")
    from ..numpy.elementwise import power
    x, q = _promote(x, q)
    n = 12
    total = sum(power(q + float(k), -x) for k in range(n))
    a = q + float(n)
    total = total + power(a, 1.0 - x) / (x - 1.0) + 0.5 * power(a, -x)
    factor = x * power(a, -x - 1.0)
    for j, coef in enumerate(_ZETA_TAIL, start=1):
        total = total + coef * factor
        factor = factor * (x + (2 * j - 1)) * (x + 2 * j) / (a * a)
    return el.where(x < 1, np.nan, total)


def polygamma(n, x) -> Array:
    """The ``n``-th derivative of :func:`digamma` (``n`` a non-negative integer, or an array
    of them): ``(-1)^(n+1) n! zeta(n + 1, x)``, and digamma itself at ``n = 0``."""
    n_arr = _float(n)
    x = _float(x)
    d = _dt.result_type(n_arr.dtype, x.dtype)
    n_arr, x = n_arr.astype(d), x.astype(d)
    if not n_arr.is_traced and np.any(np.asarray(n_arr) % 1 != 0):
        raise ValueError("polygamma: n must be a non-negative integer")
    # The zeta form evaluated at n >= 1 only (zeta(1, x) is infinite: its gradient would
    # leak through the select at n = 0).
    m = el.where(n_arr >= 1, n_arr, 1.0)
    sign = el.where(el.fmod(m, 2.0) == 0, -1.0, 1.0)
    higher = sign * el.exp(gammaln(m + 1.0)) * zeta(m + 1.0, x)
    return el.where(n_arr == 0, digamma(x), el.where(n_arr < 0, np.nan, higher))


__all__ = ["polygamma", "zeta", "beta", "entr", "factorial", "kl_div", "log_softmax", "multigammaln", "rel_entr",
           "softmax", "betainc", "gammainc", "gammaincc", "betaln", "digamma", "gamma", "gammaln", "gammasgn", "erf", "erfc", "erfinv", "expit", "logit", "logsumexp", "log_ndtr", "ndtr",
           "ndtri", "xlog1py", "xlogy"]
