"""numpy's selection and editing functions: ``select``, ``piecewise``, ``append``,
``insert``, ``delete``, ``cumulative_sum``/``cumulative_prod``, as ``jax.numpy``."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .. import dtypes as _dt
from ..array import Array
from .creation import asarray, zeros_like
from .elementwise import where
from .shape import broadcast_arrays, concatenate, moveaxis


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def select(condlist: Sequence, choicelist: Sequence, default=0) -> Array:
    """The choice of the first true condition, element by element (``default`` where none
    is): numpy's ``select``.

    >>> select([x < 0, x > 1], [-x, x * 2], default=x)
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist has {len(condlist)} entries, choicelist "
                         f"{len(choicelist)}; they must match")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    conds = [_arr(c) for c in condlist]
    if any(c.dtype != np.bool_ for c in conds):
        raise TypeError("select: every condition must be a boolean array, got "
                        f"{[str(c.dtype) for c in conds]}")
    choices = [_arr(c) for c in choicelist]
    d = _dt.result_type(*[c.dtype for c in choices], _arr(default).dtype)
    out = _arr(default).astype(d)
    # Last to first, so the first true condition is applied last and wins.
    for c, x in reversed(list(zip(conds, choices))):
        c, x, out = broadcast_arrays(c, x.astype(d), out)
        out = where(c, x, out)
    return out


def piecewise(x, condlist, funclist: Sequence, *args, **kw) -> Array:
    """``funclist[i](x)`` where ``condlist[i]`` holds (the last true condition wins, as
    numpy); one extra function (or value) is the default for elements no condition holds,
    else 0. Entries of ``funclist`` may be constants."""
    x = _arr(x)
    conds = [_arr(c) for c in (condlist if isinstance(condlist, (list, tuple))
                               else [condlist])]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"piecewise: funclist must have {n} or {n + 1} entries, got "
                         f"{len(funclist)}")

    def value(f) -> Array:
        v = f(x, *args, **kw) if callable(f) else asarray(f, x.dtype)
        return _arr(v).astype(x.dtype)

    out = value(funclist[n]) if len(funclist) == n + 1 else zeros_like(x)
    out = broadcast_arrays(out, x)[0]
    for c, f in zip(conds, funclist[:n]):
        out = where(c, value(f), out)
    return out


def append(arr, values, axis: Optional[int] = None) -> Array:
    """``values`` after ``arr`` (both flattened when ``axis`` is None)."""
    arr, values = _arr(arr), _arr(values)
    if axis is None:
        return concatenate([arr.reshape(-1), values.reshape(-1)])
    return concatenate([arr, values], axis=axis)


def _concrete_indices(obj, n: int, name: str) -> np.ndarray:
    if isinstance(obj, Array) and obj.is_traced:
        raise TypeError(f"{name}: the indices must be concrete (numpy's result shape depends "
                        "on them)")
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    return np.asarray(obj)


def delete(arr, obj, axis: Optional[int] = None) -> Array:
    """``arr`` without the entries ``obj`` (an int, a slice, or concrete indices; negative
    ones count from the end) along ``axis`` (of the flattened array when None)."""
    a = _arr(arr)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = axis % a.ndim
    n = a.shape[axis]
    idx = _concrete_indices(obj, n, "delete")
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise ValueError(f"delete: a boolean mask must have length {n}")
        keep = ~idx
    else:
        idx = idx.astype(np.int64).reshape(-1)
        if np.any((idx < -n) | (idx >= n)):
            raise IndexError(f"delete: an index in {idx.tolist()} is out of range for "
                             f"length {n}")
        keep = np.ones(n, bool)
        keep[idx % n] = False
    from .misc import take
    return take(a, asarray(np.flatnonzero(keep).astype(np.int32)), axis=axis)


def insert(arr, obj, values, axis: Optional[int] = None) -> Array:
    """``values`` inserted before the positions ``obj`` (an int or concrete indices into the
    original ``arr``) along ``axis`` (of the flattened array when None), as numpy."""
    a = _arr(arr)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = axis % a.ndim
    n = a.shape[axis]
    idx = _concrete_indices(obj, n + 1, "insert")
    scalar = idx.ndim == 0
    idx = idx.astype(np.int64).reshape(-1)
    if np.any((idx < -n) | (idx > n)):
        raise IndexError(f"insert: an index in {idx.tolist()} is out of range for length {n}")
    idx = np.where(idx < 0, idx + n, idx)
    v = _arr(values).astype(a.dtype)
    # The new entries, moved to the front axis, one slice per index.
    shape = list(a.shape)
    if scalar:
        vshape = list(shape)
        vshape[axis] = 1 if v.ndim < a.ndim else v.shape[axis]
        v = moveaxis(_broadcast_values(v, vshape, axis, scalar), axis, 0)
        idx = np.repeat(idx, v.shape[0])
    else:
        vshape = list(shape)
        vshape[axis] = len(idx)
        v = moveaxis(_broadcast_values(v, vshape, axis, scalar), axis, 0)
    # Stable order: each original entry after the new ones inserted before it.
    order = np.argsort(np.concatenate([idx, np.arange(n)]), kind="stable")
    combined = concatenate([v, moveaxis(a, axis, 0)], axis=0)
    from .misc import take
    return moveaxis(take(combined, asarray(order.astype(np.int32)), axis=0), 0, axis)


def _broadcast_values(v: Array, vshape, axis: int, scalar: bool) -> Array:
    from .shape import broadcast_to
    if scalar and v.ndim < len(vshape):
        v = v.reshape(v.shape[:axis] + (1,) + v.shape[axis:]) if v.ndim == len(vshape) - 1 \
            else v
    return broadcast_to(v, tuple(vshape))


def cumulative_sum(x, /, *, axis: Optional[int] = None, dtype=None,
                   include_initial: bool = False) -> Array:
    """The array API's ``cumulative_sum``: ``cumsum`` along ``axis`` (required unless ``x``
    is 1-D), with a leading 0 when ``include_initial``."""
    return _cumulative(x, axis, dtype, include_initial, "sum")


def cumulative_prod(x, /, *, axis: Optional[int] = None, dtype=None,
                    include_initial: bool = False) -> Array:
    """The array API's ``cumulative_prod``, with a leading 1 when ``include_initial``."""
    return _cumulative(x, axis, dtype, include_initial, "prod")


def _cumulative(x, axis, dtype, include_initial: bool, kind: str) -> Array:
    from .reductions import cumprod, cumsum
    x = _arr(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"cumulative_{kind}: axis is required for a {x.ndim}-d array")
        axis = 0
    out = (cumsum if kind == "sum" else cumprod)(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis % out.ndim] = 1
        first = np.zeros(shape) if kind == "sum" else np.ones(shape)
        out = concatenate([asarray(first, out.dtype), out], axis=axis)
    return out


__all__ = ["append", "cumulative_prod", "cumulative_sum", "delete", "insert", "piecewise",
           "select"]

