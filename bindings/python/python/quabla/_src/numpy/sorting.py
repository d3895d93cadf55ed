"""Sorting, as ``jax.numpy`` and ``jax.lax``: ``sort``, ``argsort``, ``lexsort``,
``partition``, ``argpartition``, ``lax.sort``/``sort_key_val``/``top_k``, and
``searchsorted``, all over the core's ``sort`` primitive (stable; numpy's float order: NaN
last, ``-0`` ties ``+0``; differentiable through the permutation, batched by ``vmap``).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from ..array import Array, _axis
from .creation import asarray, iota_like


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _sorted_together(arrays: Sequence[Array], axis: int, num_keys: int,
                     descending: bool = False) -> list:
    raws = type(arrays[0]._raw).sort([a._raw for a in arrays], axis, num_keys, descending)
    return [Array(r) for r in raws]


def lax_sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """``jax.lax.sort``: one array, or a sequence of arrays of one shape sorted together by
    the first ``num_keys`` (always stably: a stable sort is a valid unstable one)."""
    del is_stable
    if isinstance(operand, (tuple, list)):
        arrays = [_arr(a) for a in operand]
        if not arrays:
            raise ValueError("lax.sort needs at least one operand")
        if len({a.shape for a in arrays}) != 1:
            raise ValueError("lax.sort: every operand must have one shape, got "
                             f"{[a.shape for a in arrays]}")
        out = _sorted_together(arrays, _axis(dimension, arrays[0].ndim), num_keys)
        return tuple(out)
    if num_keys != 1:
        raise ValueError(f"lax.sort of a single operand needs num_keys=1, got {num_keys}")
    a = _arr(operand)
    return _sorted_together([a], _axis(dimension, a.ndim), 1)[0]


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """``jax.lax.sort_key_val``: ``values`` permuted as ``keys`` sort (stably)."""
    k, v = lax_sort((keys, values), dimension, is_stable, 1)
    return k, v


def top_k(operand, k: int, *, axis: int = -1):
    """``jax.lax.top_k``: the ``k`` largest entries along ``axis`` and their int32
    indices, largest first, ties by lower index; floats in IEEE total order (``+NaN``
    first, ``+0`` above ``-0``, ``-NaN`` last; an f64 NaN always ranks as ``+NaN``)."""
    a = _arr(operand)
    if a.ndim == 0:
        raise ValueError("top_k needs an operand with at least one dimension")
    ax = _axis(axis, a.ndim)
    k = int(k)
    if k < 0:
        raise ValueError(f"top_k: k must be non-negative, got {k}")
    x = a if ax == a.ndim - 1 else a.swapaxes(ax, -1)
    v, i = x._raw.top_k(k)
    v, i = Array(v), Array(i)
    if ax != a.ndim - 1:
        v, i = v.swapaxes(ax, -1), i.swapaxes(ax, -1)
    return v, i


def _flat_axis(a: Array, axis):
    if axis is None:
        return a.reshape(-1), 0
    if a.ndim == 0:
        raise ValueError("axis must be None to sort a 0-d array (as JAX)")
    return a, _axis(axis, a.ndim)


def sort(a, axis: Optional[int] = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False) -> Array:
    """Sorted copy of ``a`` along ``axis`` (flattened when None). ``descending`` reverses
    the ascending sort, as JAX (so NaNs come first)."""
    del kind, stable
    if order is not None:
        raise ValueError("sort: 'order' is not supported (it needs structured arrays)")
    x, ax = _flat_axis(_arr(a), axis)
    out = _sorted_together([x], ax, 1)[0]
    from .shape import flip
    return flip(out, ax) if descending else out


def argsort(a, axis: Optional[int] = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False) -> Array:
    """int32 indices that sort ``a`` along ``axis``; stable, also when ``descending``
    (equal elements keep their order, as JAX)."""
    del kind, stable
    if order is not None:
        raise ValueError("argsort: 'order' is not supported (it needs structured arrays)")
    x, ax = _flat_axis(_arr(a), axis)
    return Array(x._raw.argsort(ax, descending))


def lexsort(keys, axis: int = -1) -> Array:
    """Indices sorting by several keys, the last one primary (``numpy.lexsort``)."""
    arrays = [_arr(k) for k in keys]
    if not arrays:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    first = arrays[0]
    if first.ndim == 0:
        return asarray(0)
    ax = _axis(axis, first.ndim)
    iota = iota_like(first, np.int32, first.shape, ax)
    return _sorted_together(arrays[::-1] + [iota], ax, len(arrays))[-1]


def _partition_parts(a, kth: int, axis: int):
    arr = _arr(a)
    if arr.dtype == np.bool_:
        raise TypeError("partition of a bool array is not supported (as JAX); cast it first")
    ax = _axis(axis, arr.ndim)
    kth = _axis(kth, arr.shape[ax])
    arr = arr.swapaxes(ax, -1)
    # Negation reverses the order; for unsigned integers `-(x + 1)` keeps 0 in place.
    low = -(arr + 1) if arr.dtype.kind == "u" else -arr
    return arr, low, kth, ax


def partition(a, kth: int, axis: int = -1) -> Array:
    """The ``kth`` smallest element in position ``kth``, smaller ones (ascending) before
    it and larger ones (descending) after, as JAX's two ``top_k`` calls."""
    arr, low, kth, ax = _partition_parts(a, kth, axis)
    bottom = -top_k(low, kth + 1)[0]
    if arr.dtype.kind == "u":
        bottom = bottom - 1
    top = top_k(arr, arr.shape[-1] - kth - 1)[0]
    from .shape import concatenate
    return concatenate([bottom, top], -1).swapaxes(-1, ax)


def argpartition(a, kth: int, axis: int = -1) -> Array:
    """Indices that :func:`partition` would place (JAX's construction)."""
    arr, low, kth, ax = _partition_parts(a, kth, axis)
    bottom = top_k(low, kth + 1)[1]
    # The rest by a proxy that is 0 at the bottom indices, so duplicates are not picked twice.
    from .creation import ones
    from .shape import concatenate
    proxy = _scatter_last_axis(ones(arr.shape, np.float32), bottom, 0.0)
    top = top_k(proxy, arr.shape[-1] - kth - 1)[1]
    return concatenate([bottom, top], -1).swapaxes(-1, ax)


def _scatter_last_axis(x: Array, index: Array, value) -> Array:
    """``x`` with ``value`` written at ``index`` along the last axis, row by row."""
    parts = [index if d == index.ndim - 1 else iota_like(index, np.int32, index.shape, d)
             for d in range(index.ndim)]
    return x.at[tuple(parts)].set(value)


def _less(x: Array, y: Array) -> Array:
    """The sort order's ``x < y`` (NaN after every number)."""
    from .elementwise import isnan
    if x.dtype.kind != "f":
        return x < y
    return (x < y) | (isnan(y) & ~isnan(x))


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan") -> Array:
    """Insertion points of ``v`` into the sorted 1-D ``a`` (int32), in the sort order (NaN
    last). ``method``: "scan" (a binary search, log2(len(a)) + 1 gathers per query,
    the default), "scan_unrolled" (the same), "compare_all" (every pair compared:
    O(len(a)) per query) or "sort" (one sort of ``a`` and ``v`` together), as JAX."""
    a, v = _arr(a), _arr(v)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "compare_all", "sort"):
        raise ValueError(f"searchsorted: unknown method {method!r}; use 'scan', "
                         "'scan_unrolled', 'compare_all' or 'sort'")
    if a.ndim != 1:
        raise ValueError("searchsorted needs a 1-D sorted array")
    if sorter is not None:
        a = a[_arr(sorter)]
    from .. import dtypes as _dt
    dt = _dt.result_type(a.dtype, v.dtype)
    a, v = a.astype(dt), v.astype(dt)
    n = a.shape[0]
    # `left`: the first i with not a[i] < v; `right`: the first i with v < a[i].
    goes_before = (lambda q, e: ~_less(e, q)) if side == "left" else _less
    if method == "compare_all":
        from .reductions import sum as sum_
        hits = ~goes_before(v.reshape(v.shape + (1,)), a)
        return sum_(hits.astype(np.int32), -1)
    if method == "sort":
        return _searchsorted_by_sort(a, v, side)
    from .creation import full
    from .elementwise import where
    low = full(v.shape, 0, np.int32)
    high = low + n
    for _ in range(int(math.ceil(math.log2(n + 1)))):
        mid = (low + high) // 2
        left = goes_before(v, a.at[mid].get(mode="clip"))
        low, high = where(left, low, mid), where(left, mid, high)
    return high


def _searchsorted_by_sort(a: Array, v: Array, side: str) -> Array:
    """Positions from ranks: a query's rank among ``a`` and the queries, minus its rank
    among the queries alone (JAX's "sort" method)."""
    from .shape import concatenate
    q = v.reshape(-1)

    def rank(x: Array) -> Array:
        return argsort(argsort(x))

    if side == "left":
        index = rank(concatenate([q, a]))[: q.shape[0]]
    else:
        index = rank(concatenate([a, q]))[a.shape[0]:]
    return (index - rank(q)).reshape(v.shape)
