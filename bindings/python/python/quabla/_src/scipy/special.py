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
from .. import dtypes as _dt
from ..nn.functions import logsumexp  # noqa: F401  (the same function as jax.nn's)


def _float(x) -> Array:
    x = x if isinstance(x, Array) else asarray(x)
    return x if x.dtype.kind == "f" else x.astype(_dt.default_float())


def _promote(x, y):
    x, y = _float(x), _float(y)
    if x.dtype != y.dtype:
        d = _dt.result_type(x.dtype, y.dtype)
        x, y = x.astype(d), y.astype(d)
    from ..numpy.shape import broadcast_arrays
    return broadcast_arrays(x, y)


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
    from ...random import _erfinv
    return _erfinv(x)


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


__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "logsumexp", "log_ndtr", "ndtr",
           "ndtri", "xlog1py", "xlogy"]
