"""Activation and normalisation functions, as ``jax.nn``: the same formulas, so the same
derivatives at kinks (``relu`` and ``relu6`` have zero slope at their corners, as JAX's
custom rules; ``leaky_relu`` and ``hard_tanh`` take the slope of the side ``where`` picks;
``celu`` gets half of each side of its ``max``/``min``, as ``lax.max``).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..api import custom_jvp, stop_gradient
from ..array import Array
from ..numpy.creation import asarray
from ..numpy import elementwise as el
from ..numpy.elementwise import as_float as _float
from ..numpy import reductions as red
from ..numpy.shape import expand_dims, split
from .. import dtypes as _dt


def _relu_value(x):
    return el.maximum(x, 0.0)


_relu = custom_jvp(_relu_value)
_relu.defjvps(lambda g, ans, x: el.where(x > 0, g, 0.0))


def relu(x) -> Array:
    """``max(x, 0)``, with derivative 0 at 0 (as JAX).

    >>> relu(qnp.array([-1.0, 0.0, 2.0]))  # [0, 0, 2]
    """
    return _relu(_float(x))


def _relu6_value(x):
    return el.minimum(el.maximum(x, 0.0), 6.0)


_relu6 = custom_jvp(_relu6_value)
_relu6.defjvps(lambda g, ans, x: el.where((x > 0) & (x < 6), g, 0.0))


def relu6(x) -> Array:
    """``min(max(x, 0), 6)``, with derivative 0 at 0 and at 6 (as JAX)."""
    return _relu6(_float(x))


def sigmoid(x) -> Array:
    """The logistic function ``1 / (1 + exp(-x))``."""
    return el.sigmoid(_float(x))


def softplus(x) -> Array:
    """``log(1 + exp(x))``, as ``logaddexp(x, 0)``."""
    return el.logaddexp(_float(x), 0.0)


def soft_sign(x) -> Array:
    """``x / (|x| + 1)``."""
    x = _float(x)
    return x / (el.absolute(x) + 1.0)


def log_sigmoid(x) -> Array:
    """``log(sigmoid(x))``, as ``-softplus(-x)``."""
    return -softplus(-_float(x))


def silu(x) -> Array:
    """``x * sigmoid(x)`` (also ``swish``)."""
    x = _float(x)
    return x * el.sigmoid(x)


swish = silu


def elu(x, alpha=1.0) -> Array:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = _float(x)
    positive = x > 0
    safe = el.where(positive, 0.0, x)
    return el.where(positive, x, alpha * el.expm1(safe))


def selu(x) -> Array:
    """The scaled ELU of Klambauer et al. (JAX's constants)."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def celu(x, alpha=1.0) -> Array:
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    x = _float(x)
    return el.maximum(x, 0.0) + alpha * el.expm1(el.minimum(x, 0.0) / alpha)


def leaky_relu(x, negative_slope=1e-2) -> Array:
    """``x`` for ``x >= 0``, else ``negative_slope * x``."""
    x = _float(x)
    return el.where(x >= 0, x, negative_slope * x)


def hard_tanh(x) -> Array:
    """``x`` clipped to [-1, 1] (slope 1 at the corners, as JAX's nested ``where``)."""
    x = _float(x)
    one = el.ones_like_(x)
    return el.where(x > 1, one, el.where(x < -1, -one, x))


def hard_sigmoid(x) -> Array:
    """``relu6(x + 3) / 6``."""
    return relu6(_float(x) + 3.0) / 6.0


def hard_silu(x) -> Array:
    """``x * hard_sigmoid(x)`` (also ``hard_swish``)."""
    x = _float(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def gelu(x, approximate: bool = True) -> Array:
    """The Gaussian error linear unit: ``x * Phi(x)``, by JAX's tanh approximation by default,
    exactly (through ``erfc``) with ``approximate=False``."""
    x = _float(x)
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        cdf = 0.5 * (1.0 + el.tanh(c * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return x * (el.erfc(-x * math.sqrt(0.5)) / 2.0)


def glu(x, axis: int = -1) -> Array:
    """The gated linear unit: ``x`` split in two halves along ``axis``, ``a * sigmoid(b)``."""
    x = _float(x)
    if x.shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} of a {x.shape} array must have even size")
    a, b = split(x, 2, axis)
    return a * el.sigmoid(b)


def _masked(x: Array, where, fill: float) -> Array:
    return x if where is None else el.where(where, x, fill)


def _max_where(x: Array, axis, where, keepdims: bool) -> Array:
    """``max(x, axis, where=where, initial=-inf)``."""
    return red.max(_masked(x, where, -np.inf), axis=axis, keepdims=keepdims)


def _sum_where(x: Array, axis, where, keepdims: bool) -> Array:
    return red.sum(_masked(x, where, 0.0), axis=axis, keepdims=keepdims)


def log_softmax(x, axis: Optional[int] = -1, where=None) -> Array:
    """``x - logsumexp(x, axis)``, shifted by the (undifferentiated) max for range; with
    ``where``, masked entries are ``-inf``."""
    x = _float(x)
    x_max = _max_where(x, axis, where, True)
    shifted = _masked(x, where, -np.inf) - stop_gradient(x_max)
    lse = el.log(_sum_where(el.exp(shifted), axis, where, True))
    out = shifted - lse
    return out if where is None else el.where(where, out, -np.inf)


def _softmax_value(x, axis, where=None):
    unnormalized = el.exp(x - stop_gradient(_max_where(x, axis, where, True)))
    out = unnormalized / _sum_where(unnormalized, axis, where, True)
    return out if where is None else el.where(where, out, 0.0)


def _softmax_rule(axis, primals, tangents):
    (x,), (t,) = primals, tangents
    y = _softmax_value(x, axis)
    return y, y * (t - red.sum(y * t, axis=axis, keepdims=True))


_softmax = custom_jvp(_softmax_value, nondiff_argnums=(1,))
_softmax.defjvp(_softmax_rule)


def softmax(x, axis: Optional[int] = -1, where=None) -> Array:
    """``exp(x) / sum(exp(x), axis)``, computed from ``x - max(x)``, with JAX's derivative
    rule ``y * (t - sum(y * t))``. With ``where``, masked entries are 0 (and the derivative
    is that of the formula).

    >>> softmax(qnp.array([0.0, 0.0]))  # [0.5, 0.5]
    """
    axis = tuple(axis) if isinstance(axis, list) else axis
    if where is None:
        return _softmax(_float(x), axis)
    return _softmax_value(_float(x), axis, where)


def standardize(x, axis: Optional[int] = -1, mean=None, variance=None,
                epsilon: float = 1e-5, where=None) -> Array:
    """``(x - mean) / sqrt(variance + epsilon)``, the moments over ``axis`` unless given."""
    x = _float(x)

    def mean_of(v):
        if where is None:
            return red.mean(v, axis=axis, keepdims=True)
        w = el.where(where, 1.0, 0.0).astype(v.dtype)
        return _sum_where(v, axis, where, True) / red.sum(w, axis=axis, keepdims=True)

    if mean is None:
        mean = mean_of(x)
    if variance is None:
        variance = mean_of(x * x) - mean * mean
    return (x - mean) * (1.0 / el.sqrt(variance + epsilon))


def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1) -> Array:
    """``x == arange(num_classes)`` along a new ``axis``, as ``dtype`` (the default float);
    out-of-range and negative indices give all-zero rows, as JAX."""
    if not isinstance(num_classes, (int, np.integer)) or num_classes < 0:
        raise TypeError(f"one_hot: num_classes must be a non-negative int, got {num_classes!r}")
    x = x if isinstance(x, Array) else asarray(x)
    d = _dt.default_float() if dtype is None else _dt.canonicalize(dtype, "one_hot")
    ndim = x.ndim + 1
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for a {ndim}-d result")
    from ..numpy.creation import arange
    classes = arange(num_classes, dtype=x.dtype).reshape(
        tuple(num_classes if i == ax else 1 for i in range(ndim)))
    return (expand_dims(x, ax) == classes).astype(d)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """``log(sum(b * exp(a), axis))`` without overflow (``jax.scipy.special.logsumexp``).

    The max is shifted out undifferentiated; ``b`` weights the terms (entries with ``b == 0``
    are left out, a negative sum is NaN unless ``return_sign``, which returns
    ``(log|sum|, sign)``); ``where`` masks entries.

    >>> logsumexp(qnp.array([0.0, 0.0]))  # log 2
    """
    a = _float(a)
    if b is not None:
        b = b if isinstance(b, Array) else asarray(b)
        d = _dt.result_type(a.dtype, b.dtype if b.dtype.kind == "f" else a.dtype)
        a, b = a.astype(d), b.astype(d)
        a = el.where(b != 0, a, -np.inf)
    amax = _max_where(a, axis, where, keepdims)
    amax = stop_gradient(el.where(el.isfinite(amax), amax, 0.0))
    amax_b = amax if keepdims else _expand_reduced(amax, a.ndim, axis)
    exp_a = el.exp(a - amax_b)
    if b is not None:
        exp_a = exp_a * b
    sumexp = _sum_where(exp_a, axis, where, keepdims)
    sign = el.sign(sumexp)
    out = el.log(el.absolute(sumexp)) + amax
    if return_sign:
        return out, sign
    if b is not None:
        out = el.where(sign < 0, np.nan, out)
    return out


def _expand_reduced(x: Array, ndim: int, axis) -> Array:
    """``x`` reduced over ``axis`` of an ``ndim``-d array, with those axes back as size 1."""
    if axis is None:
        return x.reshape((1,) * ndim)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return expand_dims(x, tuple(sorted(int(ax) % ndim for ax in axes)))


def identity(x) -> Array:
    """``x`` unchanged (as an array)."""
    return x if isinstance(x, Array) else asarray(x)


def mish(x) -> Array:
    """``x * tanh(softplus(x))``."""
    x = _float(x)
    return x * el.tanh(softplus(x))


def squareplus(x, b=4) -> Array:
    """``(x + sqrt(x^2 + b)) / 2``, a smooth ReLU."""
    x = _float(x)
    return (x + el.sqrt(el.square(x) + b)) / 2


def sparse_plus(x) -> Array:
    """0 below -1, ``x`` above 1, ``(x + 1)^2 / 4`` between."""
    x = _float(x)
    return el.where(x <= -1.0, 0.0, el.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x) -> Array:
    """``clip(x + 1, 0, 2) / 2``, the derivative of :func:`sparse_plus`."""
    return 0.5 * el.clip(_float(x) + 1.0, 0.0, 2.0)


@custom_jvp
def log1mexp(x) -> Array:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate for small and large ``x``."""
    x = _float(x)
    return el.where(x < math.log(2.0), el.log(-el.expm1(-x)), el.log1p(-el.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / el.expm1(x))


def logmeanexp(x, axis=None, where=None, keepdims: bool = False) -> Array:
    """``log(mean(exp(x)))`` along ``axis``, stably."""
    if where is not None:
        raise NotImplementedError("logmeanexp: `where` is not supported; mask with -inf")
    x = _float(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims)
    if axis is None:
        count = x.size
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        count = int(np.prod([x.shape[int(a) % x.ndim] for a in axes]))
    return lse - el.log(asarray(float(count), lse.dtype))
