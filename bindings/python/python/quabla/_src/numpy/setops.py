"""Set routines over the ``sort`` primitive, as ``jax.numpy``: ``unique`` (values, indices,
inverse, counts; whole slices with ``axis``), the Array API's ``unique_all`` /
``unique_counts`` / ``unique_inverse`` / ``unique_values``, ``isin``, and the 1-D set
operations (``union1d``, ``setdiff1d``, ``intersect1d``, ``setxor1d``).

The number of unique values depends on the data, so a traced array needs a static ``size``
(the first ``size`` sorted unique values, the rest ``fill_value``), as in JAX; a concrete
array does not.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from ..array import Array, _axis
from .creation import arange, asarray, full, ones, zeros
from .elementwise import isnan, where
from .misc import nonzero
from .reductions import any as any_
from .reductions import cumsum
from .shape import concatenate, moveaxis
from .sorting import lax_sort, lexsort, searchsorted

SIZE_HINT = ("to use unique on a traced array (inside jit, vmap or a loop), give a static "
             "`size` (and optionally `fill_value`), as in JAX")


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _sorted_with_mask(ar: Array, axis: int, equal_nan: bool):
    """Slices along ``axis`` sorted (moved to the front), the permutation, and a mask of
    the first slice of every run of equal ones."""
    aux = moveaxis(ar, axis, 0)
    size = aux.shape[0]
    rest = math.prod(aux.shape[1:])
    if rest == 0:
        return aux, zeros((max(size, 1),), np.bool_), zeros((1,), np.int32)
    if aux.ndim == 1:
        perm = lexsort([aux])
    else:
        flat = aux.reshape(size, rest)
        perm = lexsort([flat[:, j] for j in range(rest - 1, -1, -1)])
    aux = aux[perm]
    if size == 0:
        return aux, zeros((0,), np.bool_), perm
    diff = aux[1:] != aux[:-1]
    if equal_nan and aux.dtype.kind == "f":
        diff = diff & ~(isnan(aux[1:]) & isnan(aux[:-1]))
    if aux.ndim > 1:
        diff = any_(diff, tuple(range(1, aux.ndim)))
    mask = concatenate([ones((1,), np.bool_), diff])
    return aux, mask, perm


def _unique(ar: Array, axis: int, return_index: bool, return_inverse: bool,
            return_counts: bool, equal_nan: bool, size: Optional[int], fill_value):
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("unique: for a zero-sized input with a nonzero size, give fill_value")
    aux, mask, perm = _sorted_with_mask(ar, axis, equal_nan)
    if size is None:
        ind = nonzero(mask)[0]
    else:
        ind = nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        fill = _arr(fill_value).astype(result.dtype)
        if result.shape[0]:
            count = mask.astype(np.int32).sum()
            valid = (arange(size) < count).reshape((size,) + (1,) * (result.ndim - 1))
            result = where(valid, result, fill)
        else:
            result = full((size,) + result.shape[1:], fill, result.dtype)
    out = [moveaxis(result, 0, axis)]
    if return_index:
        out.append(perm[ind] if aux.size else perm)
    if return_inverse:
        if aux.size:
            rank = cumsum(mask.astype(np.int32)) - 1
            out.append(zeros(mask.shape, np.int32).at[perm].set(rank))
        else:
            out.append(zeros((ar.shape[axis],), np.int32))
    if return_counts:
        out.append(_counts(mask, ar, axis, aux.size, size))
    return out[0] if len(out) == 1 else tuple(out)


def _counts(mask: Array, ar: Array, axis: int, aux_size: int, size: Optional[int]) -> Array:
    """Run lengths: the distance from each run's start to the next one's."""
    from .misc import diff
    if not aux_size:
        return full((1,), ar.shape[axis], np.int32) if ar.shape[axis] else zeros((0,), np.int32)
    n = mask.shape[0]
    if size is None:
        starts = concatenate([nonzero(mask)[0], asarray(np.array([n], np.int32))])
    else:
        starts = nonzero(mask, size=size + 1)[0]
        starts = starts.at[1:].set(where(starts[1:] != 0, starts[1:], n))
    return diff(starts)


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Optional[int] = None, *, equal_nan: bool = True,
           size: Optional[int] = None, fill_value=None, sorted: bool = True):  # noqa: A002
    """The sorted unique values of ``ar`` (flattened, or whole slices along ``axis``), and
    optionally the index of each one's first occurrence, the inverse (``values[inverse]``
    rebuilds ``ar``) and the counts. Traced arrays need a static ``size``."""
    del sorted
    a = _arr(ar)
    if size is None and a.is_traced:
        raise ValueError(f"unique: {SIZE_HINT}")
    if size is not None:
        size = int(size)
    shape = a.shape
    if axis is None:
        a, ax = a.reshape(-1), 0
    else:
        ax = _axis(axis, a.ndim)
    result = _unique(a, ax, return_index, return_inverse, return_counts, equal_nan, size,
                     fill_value)
    if return_inverse and axis is None:
        at = 2 if return_index else 1
        result = (*result[:at], result[at].reshape(shape), *result[at + 1:])
    return result


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def unique_all(x, /, *, size: Optional[int] = None, fill_value=None) -> UniqueAllResult:
    """Array API: values, first indices, inverse indices and counts (NaNs all distinct)."""
    v, i, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True,
                          equal_nan=False, size=size, fill_value=fill_value)
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x, /, *, size: Optional[int] = None, fill_value=None) -> UniqueCountsResult:
    """Array API: values and counts (NaNs all distinct)."""
    v, c = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /, *, size: Optional[int] = None,
                   fill_value=None) -> UniqueInverseResult:
    """Array API: values and inverse indices (NaNs all distinct)."""
    v, inv = unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueInverseResult(v, inv)


def unique_values(x, /, *, size: Optional[int] = None, fill_value=None) -> Array:
    """Array API: the sorted unique values (NaNs all distinct)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Array:
    """Whether each element of ``element`` occurs in ``test_elements`` (``element``'s
    shape). ``method``: "compare_all" (every pair; "auto"), "binary_search" (sort
    ``test_elements``, then :func:`searchsorted`) or "sort" (one sort of both)."""
    from .. import dtypes as _dt
    e, t = _arr(element), _arr(test_elements)
    d = _dt.result_type(e.dtype, t.dtype)
    a1, a2 = e.astype(d).reshape(-1), t.astype(d).reshape(-1)
    if a1.size == 0 or a2.size == 0:
        return (ones if invert else zeros)(e.shape, np.bool_)
    if method in ("auto", "compare_all"):
        if invert:
            hit = (a1[:, None] != a2[None, :]).all(-1)
        else:
            hit = (a1[:, None] == a2[None, :]).any(-1)
    elif method == "binary_search":
        a2 = lax_sort(a2)
        found = a2[searchsorted(a2, a1)]
        hit = (a1 != found) if invert else (a1 == found)
    elif method == "sort":
        hit = _isin_by_sort(a1, a2, assume_unique, invert)
    else:
        raise ValueError(f"isin: method={method!r} is not implemented; use 'compare_all', "
                         "'binary_search', 'sort' or 'auto'")
    return hit.reshape(e.shape)


def _isin_by_sort(a1: Array, a2: Array, assume_unique: bool, invert: bool) -> Array:
    """Sorted together, an element of ``a1`` is in ``a2`` when its successor equals it
    (``a1`` made unique first, so the successor cannot be another copy from ``a1``)."""
    back = None
    if not assume_unique:
        a1, back = unique(a1, size=a1.shape[0], return_inverse=True, fill_value=a2.max())
    n1 = a1.shape[0]
    aux, ind = lax_sort((concatenate([a1, a2]), arange(n1 + a2.shape[0])), 0)
    same = aux[1:] == aux[:-1]
    start = ones if invert else zeros
    hit = start((n1,), np.bool_).at[ind[:-1]].set(~same if invert else same, mode="drop")
    return hit if back is None else hit[back]


def _flat_pair(ar1, ar2):
    from .. import dtypes as _dt
    a, b = _arr(ar1).reshape(-1), _arr(ar2).reshape(-1)
    d = _dt.result_type(a.dtype, b.dtype)
    return a.astype(d), b.astype(d)


def _concrete(name: str, *arrays) -> None:
    if any(a.is_traced for a in arrays):
        raise ValueError(f"{name}: {SIZE_HINT}")


def union1d(ar1, ar2, *, size: Optional[int] = None, fill_value=None) -> Array:
    """The sorted unique values of both arrays."""
    a, b = _flat_pair(ar1, ar2)
    if size is None:
        _concrete("union1d", a, b)
    return unique(concatenate([a, b]), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: Optional[int] = None,
              fill_value=None) -> Array:
    """The unique values of ``ar1`` not in ``ar2``."""
    a, b = _flat_pair(ar1, ar2)
    if size is None:
        _concrete("setdiff1d", a)
    fill = _arr(0 if fill_value is None else fill_value).astype(a.dtype)
    if a.size == 0:
        return full((size or 0,), fill, a.dtype)
    if not assume_unique:
        a = unique(a, size=size and a.size)
    mask = isin(a, b, invert=True)
    if size is None:
        return a[mask]
    if not assume_unique:
        # unique's padding repeats its first value: never part of the difference.
        first_pad = ones(mask.shape, np.bool_).at[1:].set(a[1:] != a[:-1])
        mask = mask & first_pad
    count = mask.astype(np.int32).sum()
    picked = a[nonzero(mask, size=size)[0]]
    return where(arange(size) < count, picked, fill)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False):
    """The sorted values in both arrays (and, with ``return_indices``, where each first
    occurs in either)."""
    a, b = _flat_pair(ar1, ar2)
    _concrete("intersect1d", a, b)
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            a, ind1 = unique(a, return_index=True)
            b, ind2 = unique(b, return_index=True)
        else:
            a, b = unique(a), unique(b)
    joined = concatenate([a, b])
    if return_indices:
        aux, order = lax_sort((joined, arange(joined.shape[0])), 0)
    else:
        aux, order = lax_sort(joined, 0), None
    mask = aux[1:] == aux[:-1]
    both = aux[:-1][mask]
    if not return_indices:
        return both
    assert order is not None
    i1 = order[:-1][mask]
    i2 = order[1:][mask] - a.shape[0]
    if ind1 is not None and ind2 is not None:
        i1, i2 = ind1[i1], ind2[i2]
    return both, i1, i2


def setxor1d(ar1, ar2, assume_unique: bool = False) -> Array:
    """The sorted values in exactly one of the arrays."""
    a, b = _flat_pair(ar1, ar2)
    _concrete("setxor1d", a, b)
    if not assume_unique:
        a, b = unique(a), unique(b)
    aux = concatenate([a, b])
    if aux.size == 0:
        return aux
    aux = lax_sort(aux, 0)
    edge = ones((1,), np.bool_)
    flag = concatenate([edge, aux[1:] != aux[:-1], edge])
    return aux[flag[1:] & flag[:-1]]
