"""Order statistics: ``quantile``, ``percentile``, ``median`` and their ``nan`` forms, as
``jax.numpy`` computes them (a sort along the reduced axis, then the two neighbouring order
statistics of each ``q`` blended by ``method``), so results agree with JAX bit for bit and
gradients flow through the sort's permutation.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..array import Array, _axis
from .creation import asarray, iota_like
from .elementwise import as_float, ceil, floor, isnan, maximum, minimum, where
from .reductions import any as any_
from .reductions import sum as sum_
from .sorting import lax_sort

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_array(q, percent: bool) -> Array:
    q = as_float(q if isinstance(q, Array) else asarray(q))
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    return q / 100 if percent else q


def _to_last_axis(a: Array, axis, keepdims: bool):
    """``a`` with the reduced axes merged into its last; the shape ``keepdims`` restores
    (empty when nothing needs restoring) and the reduced axis."""
    if axis is None:
        return a.reshape(-1), ([1] * a.ndim if keepdims else []), 0
    if isinstance(axis, numbers.Integral):
        return a, [], _axis(int(axis), a.ndim)
    axes = [_axis(x, a.ndim) for x in axis]
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    keep = [d for d in range(a.ndim) if d not in axes]
    keepdim = [1 if d in axes else a.shape[d] for d in range(a.ndim)]
    moved = a.transpose(keep + axes)
    merged = moved.reshape(tuple(a.shape[d] for d in keep) + (math.prod(a.shape[d] for d in axes),))
    return merged, keepdim, merged.ndim - 1


def _neighbours_ignoring_nans(a, q, axis, keepdims):
    """Order statistics around ``q * (count - 1)`` among each line's non-NaN values."""
    a = where(isnan(a), np.nan, a)  # one NaN sign, so every NaN sorts last
    a = lax_sort(a, axis)
    counts = sum_(~isnan(a), axis=axis, keepdims=keepdims).astype(q.dtype)
    after = counts.shape
    q = q.reshape(q.shape + (1,) * len(after))
    counts = counts.reshape((1,) * (q.ndim - len(after)) + after)
    q = q * (counts - 1)
    low, high = floor(q), ceil(q)
    high_weight = q - low
    low_weight = 1 - high_weight
    low = maximum(0, minimum(low, counts - 1)).astype(np.int32)
    high = maximum(0, minimum(high, counts - 1)).astype(np.int32)
    q_ndim = q.ndim - len(after)
    out_shape = low.shape
    index = [iota_like(low, np.int32, out_shape, d + q_ndim) for d in range(len(after))]
    if keepdims:
        index[axis] = low
    else:
        index.insert(axis, low)
    low_value = a[tuple(index)]
    index[axis] = high
    return low_value, a[tuple(index)], low_weight, high_weight


def _neighbours(a, q, axis, keepdims):
    """Order statistics around ``q * (n - 1)``; a line with a NaN gives NaN."""
    a = where(any_(isnan(a), axis=axis, keepdims=True), np.nan, a)
    a = lax_sort(a, axis)
    n = a.shape[axis]
    q = q * float(n - 1)
    low, high = floor(q), ceil(q)
    high_weight = q - low
    low_weight = 1 - high_weight
    low = minimum(maximum(low, 0), n - 1).astype(np.int32)
    high = minimum(maximum(high, 0), n - 1).astype(np.int32)

    def gather(idx):
        # q's dims first, then the kept dims of `a` (the reduced one as 1 with keepdims).
        from .misc import take
        from .shape import expand_dims, moveaxis
        v = take(a, idx, axis=axis)
        v = moveaxis(v, tuple(range(axis, axis + idx.ndim)), tuple(range(idx.ndim)))
        return expand_dims(v, idx.ndim + axis) if keepdims else v

    low_value, high_value = gather(low), gather(high)
    if q.ndim == 1:
        from .shape import broadcast_to
        along_q = (q.shape[0],) + (1,) * (low_value.ndim - 1)
        low_weight = broadcast_to(low_weight.reshape(along_q), low_value.shape)
        high_weight = broadcast_to(high_weight.reshape(along_q), high_value.shape)
    return low_value, high_value, low_weight, high_weight


def _quantile(a, q: Array, axis, method: str, keepdims: bool, squash_nans: bool) -> Array:
    if method not in _METHODS:
        raise ValueError(f"method can only be {', '.join(repr(m) for m in _METHODS)}; got "
                         f"{method!r} ('inverted_cdf' and weights are not supported yet)")
    a = as_float(a if isinstance(a, Array) else asarray(a))
    if a.size == 0:
        raise ValueError("quantile of an empty array is undefined")
    a, keepdim, axis = _to_last_axis(a, axis, keepdims)
    neighbours = _neighbours_ignoring_nans if squash_nans else _neighbours
    low_value, high_value, low_weight, high_weight = neighbours(a, q, axis, keepdims)
    if method == "linear":
        result = low_value.astype(q.dtype) * low_weight + high_value.astype(q.dtype) * high_weight
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = where(high_weight <= 0.5, low_value, high_value)
    else:
        result = (low_value + high_value) * 0.5
    if keepdims and keepdim:
        result = result.reshape(tuple(q.shape) + tuple(keepdim))
    return result.astype(a.dtype)


def _check(out, overwrite_input, name):
    if out is not None or overwrite_input:
        raise ValueError(f"{name} does not support overwrite_input=True or out != None "
                         "(arrays are immutable)")


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Array:
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or 1-D) along ``axis``; NaN where
    a line holds a NaN. ``method``: linear, lower, higher, midpoint or nearest."""
    _check(out, overwrite_input, "quantile")
    return _quantile(a, _q_array(q, False), axis, method, keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False) -> Array:
    """:func:`quantile` ignoring NaNs (NaN only where a line is all NaN)."""
    _check(out, overwrite_input, "nanquantile")
    return _quantile(a, _q_array(q, False), axis, method, keepdims, True)


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False) -> Array:
    """:func:`quantile` with ``q`` in percent."""
    _check(out, overwrite_input, "percentile")
    return _quantile(a, _q_array(q, True), axis, method, keepdims, False)


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False) -> Array:
    """:func:`nanquantile` with ``q`` in percent."""
    _check(out, overwrite_input, "nanpercentile")
    return _quantile(a, _q_array(q, True), axis, method, keepdims, True)


def median(a, axis=None, out=None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """The middle value (the mean of the two middle ones for an even count) along ``axis``."""
    _check(out, overwrite_input, "median")
    return _quantile(a, _q_array(0.5, False), axis, "midpoint", keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """:func:`median` ignoring NaNs."""
    _check(out, overwrite_input, "nanmedian")
    return _quantile(a, _q_array(0.5, False), axis, "midpoint", keepdims, True)

