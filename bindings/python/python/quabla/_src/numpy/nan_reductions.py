"""Reductions that skip NaN (``nansum``, ``nanprod``, ``nanmax``, ``nanmin``, ``nanmean``,
``nanvar``, ``nanstd``, ``nanargmax``, ``nanargmin``, ``nancumsum``, ``nancumprod``), as
``jax.numpy`` builds them: NaN replaced by the operation's identity, all-NaN slices giving
NaN (or -1 for the arg forms)."""

from __future__ import annotations

import numpy as np

from ..array import Array
from .creation import asarray
from .elementwise import as_float, isnan, sqrt, where
from . import reductions as r


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _filled(a, value):
    a = _arr(a)
    return where(isnan(a), value, a) if a.dtype.kind == "f" else a


def nansum(a, axis=None, dtype=None, keepdims: bool = False) -> Array:
    return r.sum(_filled(a, 0), axis=axis, dtype=dtype, keepdims=keepdims)


def nanprod(a, axis=None, dtype=None, keepdims: bool = False) -> Array:
    return r.prod(_filled(a, 1), axis=axis, dtype=dtype, keepdims=keepdims)


def _nan_extreme(reduce, fill, a, axis, keepdims):
    a = _arr(a)
    if a.dtype.kind != "f":
        return reduce(a, axis=axis, keepdims=keepdims)
    out = reduce(where(isnan(a), fill, a), axis=axis, keepdims=keepdims)
    return where(r.all(isnan(a), axis=axis, keepdims=keepdims), np.nan, out)


def nanmax(a, axis=None, keepdims: bool = False) -> Array:
    return _nan_extreme(r.max, -np.inf, a, axis, keepdims)


def nanmin(a, axis=None, keepdims: bool = False) -> Array:
    return _nan_extreme(r.min, np.inf, a, axis, keepdims)


def _count(a, axis, keepdims, dtype):
    return r.sum(~isnan(a), axis=axis, keepdims=keepdims).astype(dtype)


def nanmean(a, axis=None, dtype=None, keepdims: bool = False) -> Array:
    """The mean of the non-NaN elements (NaN where there are none)."""
    a = as_float(_arr(a))
    if dtype is not None:
        a = a.astype(dtype)
    total = r.sum(where(isnan(a), 0, a), axis=axis, keepdims=keepdims)
    return total / _count(a, axis, keepdims, a.dtype)


def nanvar(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False) -> Array:
    """The variance of the non-NaN elements (NaN where fewer than ``ddof + 1``)."""
    a = as_float(_arr(a))
    if dtype is not None:
        a = a.astype(dtype)
    centred = where(isnan(a), 0, a - nanmean(a, axis=axis, keepdims=True))
    normalizer = _count(a, axis, keepdims, a.dtype) - ddof
    out = r.sum(centred * centred, axis=axis, keepdims=keepdims) / normalizer
    return where(normalizer <= 0, np.nan, out)


def nanstd(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False) -> Array:
    return sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _nan_arg(arg, fill, a, axis, keepdims):
    a = _arr(a)
    if a.dtype.kind != "f":
        return arg(a, axis=axis, keepdims=keepdims)
    mask = isnan(a)
    res = arg(where(mask, fill, a), axis=axis, keepdims=keepdims)
    return where(r.all(mask, axis=axis, keepdims=keepdims), -1, res)


def nanargmax(a, axis=None, keepdims: bool = False) -> Array:
    """The index of the largest non-NaN element; -1 for an all-NaN slice."""
    return _nan_arg(r.argmax, -np.inf, a, axis, keepdims)


def nanargmin(a, axis=None, keepdims: bool = False) -> Array:
    """The index of the smallest non-NaN element; -1 for an all-NaN slice."""
    return _nan_arg(r.argmin, np.inf, a, axis, keepdims)


def nancumsum(a, axis=None, dtype=None) -> Array:
    return r.cumsum(_filled(a, 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None) -> Array:
    return r.cumprod(_filled(a, 1), axis=axis, dtype=dtype)
