"""Reductions (sum, mean, prod, max, min, var, std, any, all, argmax, argmin) and cumulative
ones (cumsum, cumprod), with numpy's ``axis`` / ``keepdims`` and JAX's dtypes (bools and ints
sum as int32; ``mean`` of integers is float32)."""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from ..array import Array, _axis
from .creation import asarray, iota_like
from .elementwise import isnan, sqrt, where


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _axes(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, numbers.Integral):
        axis = (axis,)
    return [_axis(a, ndim) for a in axis]


def _reduce(kind: str, a, axis, keepdims: bool, dtype=None) -> Array:
    a = _arr(a)
    if dtype is not None:
        a = a.astype(dtype)
    elif kind in ("sum", "prod") and a.dtype == np.bool_:
        a = a.astype(np.int32)
    if kind in ("all", "any") and a.dtype != np.bool_:
        a = a != 0
    if kind == "mean" and a.dtype.kind != "f":
        a = a.astype(_dt.default_float())
    axes = _axes(axis, a.ndim)
    if axes is not None and not axes:
        return a
    return Array(a._raw.reduce(kind, axes, bool(keepdims)))


def sum(a, axis=None, dtype=None, keepdims: bool = False, initial=None, where=None) -> Array:  # noqa: A001
    _unsupported(initial, where, "sum")
    return _reduce("sum", a, axis, keepdims, dtype)


def prod(a, axis=None, dtype=None, keepdims: bool = False, initial=None, where=None) -> Array:
    _unsupported(initial, where, "prod")
    return _reduce("prod", a, axis, keepdims, dtype)


def max(a, axis=None, keepdims: bool = False, initial=None, where=None) -> Array:  # noqa: A001
    _unsupported(initial, where, "max")
    return _reduce("max", a, axis, keepdims)


def min(a, axis=None, keepdims: bool = False, initial=None, where=None) -> Array:  # noqa: A001
    _unsupported(initial, where, "min")
    return _reduce("min", a, axis, keepdims)


amax, amin = max, min


def all(a, axis=None, keepdims: bool = False) -> Array:  # noqa: A001
    return _reduce("all", a, axis, keepdims)


def any(a, axis=None, keepdims: bool = False) -> Array:  # noqa: A001
    return _reduce("any", a, axis, keepdims)


def mean(a, axis=None, dtype=None, keepdims: bool = False) -> Array:
    return _reduce("mean", a, axis, keepdims, dtype)


def var(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False) -> Array:
    """Variance ``mean(|a - mean(a)|^2) * n / (n - ddof)``."""
    a = _arr(a)
    if dtype is not None:
        a = a.astype(dtype)
    elif a.dtype.kind != "f":
        a = a.astype(_dt.default_float())
    centered = a - mean(a, axis, keepdims=True)
    axes = _axes(axis, a.ndim)
    n = a.size if axes is None else int(np.prod([a.shape[d] for d in axes]))
    return sum(centered * centered, axis, keepdims=keepdims) / float(n - ddof)


def std(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False) -> Array:
    """Standard deviation (its gradient at a constant array is NaN, as JAX)."""
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def _arg(kind: str, a, axis, keepdims: bool) -> Array:
    a = _arr(a)
    if axis is None:
        flat = a.reshape(-1)
        out = _arg(kind, flat, 0, False)
        return out.reshape([1] * a.ndim) if keepdims else out
    ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    if n == 0:
        raise ValueError(f"{kind} of an empty axis")
    best = _reduce("max" if kind == "argmax" else "min", a, ax, True)
    hit = (a == best)
    if a.dtype.kind == "f":
        # NaN wins, as in numpy: the first NaN's index.
        hit = where(isnan(best), isnan(a), hit)
    idx = iota_like(a, np.int32, a.shape, ax)
    return _reduce("min", where(hit, idx, n), ax, keepdims)


def argmax(a, axis=None, keepdims: bool = False) -> Array:
    """Index of the first maximum (of the first NaN, if any)."""
    return _arg("argmax", a, axis, keepdims)


def argmin(a, axis=None, keepdims: bool = False) -> Array:
    """Index of the first minimum (of the first NaN, if any)."""
    return _arg("argmin", a, axis, keepdims)


def _cumulative(kind: str, a, axis, dtype) -> Array:
    a = _arr(a)
    if dtype is not None:
        a = a.astype(dtype)
    elif a.dtype == np.bool_:
        a = a.astype(np.int32)
    if axis is None:
        a, axis = a.reshape(-1), 0
    return Array(a._raw.cumulative(kind, _axis(axis, a.ndim), False))


def cumsum(a, axis=None, dtype=None) -> Array:
    return _cumulative("sum", a, axis, dtype)


def cumprod(a, axis=None, dtype=None) -> Array:
    return _cumulative("prod", a, axis, dtype)


def _unsupported(initial, where_, name: str) -> None:
    if initial is not None or where_ is not None:
        raise NotImplementedError(f"{name}: `initial` and `where` are not supported yet")


def count_nonzero(a, axis=None, keepdims: bool = False) -> Array:
    return sum(_arr(a) != 0, axis, keepdims=keepdims)
