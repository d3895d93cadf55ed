"""More of ``jax.lax``'s user-facing functions, over the same primitives as
``quabla.numpy``: comparisons and bitwise ops by lax's names, the reductions and cumulative
scans with lax's signatures (``reduce_sum(operand, axes)``, ``cumsum(operand, axis,
reverse)``), ``argmax``/``argmin`` with ``index_dtype``, ``pad`` with a padding config,
``rev``, ``full``/``full_like``, ``broadcast``, ``broadcasted_iota``, ``dot``,
``batch_matmul``, the index-in-dim helpers, ``select_n``, ``tile``, ``split``, ``stack``,
``unstack``, ``dtype``, ``broadcast_like``,
``reciprocal``, ``cbrt``, ``exp2``, ``zeta``/``polygamma``/``igamma``/``igammac``/``betainc``
and ``population_count``/``clz``."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import dtypes as _dt
from .array import Array, _axis
from .numpy import elementwise as el
from .numpy import reductions as red
from .numpy.creation import asarray, iota_like

eq, ne, lt, le, gt, ge = el.equal, el.not_equal, el.less, el.less_equal, el.greater, \
    el.greater_equal
bitwise_and, bitwise_or, bitwise_xor = el.bitwise_and, el.bitwise_or, el.bitwise_xor
cbrt, exp2 = el.cbrt, el.exp2


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def bitwise_not(x) -> Array:
    x = _arr(x)
    return ~x


def shift_left(x, y) -> Array:
    from .numpy.array_api import bitwise_left_shift
    return bitwise_left_shift(x, y)


def shift_right_arithmetic(x, y) -> Array:
    x = _arr(x)
    return Array(x._raw.binary("shift_right_arithmetic", _arr(y).astype(x.dtype)._raw))


def shift_right_logical(x, y) -> Array:
    x = _arr(x)
    return Array(x._raw.binary("shift_right_logical", _arr(y).astype(x.dtype)._raw))


def reciprocal(x) -> Array:
    """``1 / x`` (floats)."""
    return 1 / el.as_float(x)


def population_count(x) -> Array:
    """The number of set bits of each 32-bit integer."""
    x = _arr(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"population_count needs integers, got {x.dtype}")
    u = x.astype(np.uint32)
    total = u & 0
    for k in range(32):
        total = total + ((u >> k) & 1)
    return total.astype(x.dtype)


def clz(x) -> Array:
    """The number of leading zero bits of each 32-bit integer."""
    x = _arr(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"clz needs integers, got {x.dtype}")
    u = x.astype(np.uint32)
    # A leading zero for every shift that leaves nothing: u >> k == 0 exactly for the k at
    # or above the highest set bit's position + 1.
    count = u & 0
    for k in range(32):
        count = count + ((u >> k) == 0).astype(np.uint32)
    return count.astype(x.dtype)


def _axes(axes: Sequence[int], ndim: int) -> tuple:
    return tuple(_axis(int(a), ndim) for a in axes)


def _reduction(reduce, name: str):
    def reduction(operand, axes: Sequence[int]) -> Array:
        x = _arr(operand)
        return reduce(x, axis=_axes(axes, x.ndim))

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = f"lax's ``{name}(operand, axes)``."
    return reduction


reduce_sum = _reduction(red.sum, "reduce_sum")
reduce_prod = _reduction(red.prod, "reduce_prod")
reduce_max = _reduction(red.max, "reduce_max")
reduce_min = _reduction(red.min, "reduce_min")
def reduce_and(operand, axes: Sequence[int]) -> Array:
    """lax's ``reduce_and(operand, axes)``: logical for booleans, bitwise for integers.

    >>> import quabla.numpy as qnp
    >>> reduce_and(qnp.array([[7, 3, 5], [12, 10, 6]]), (1,)).tolist()
    [1, 0]
    """
    from .lax_assorted import bitwise_reduce
    return bitwise_reduce(operand, axes, "and")


def reduce_or(operand, axes: Sequence[int]) -> Array:
    """lax's ``reduce_or(operand, axes)``: logical for booleans, bitwise for integers.

    >>> import quabla.numpy as qnp
    >>> reduce_or(qnp.array([[1, 2, 4], [8, 8, 0]]), (1,)).tolist()
    [7, 8]
    """
    from .lax_assorted import bitwise_reduce
    return bitwise_reduce(operand, axes, "or")


def _cumulative(kind: str, operand, axis: int, reverse: bool) -> Array:
    x = _arr(operand)
    if x.dtype == np.bool_:
        raise TypeError(f"cum{kind} does not accept bool operands (as lax)")
    return Array(x._raw.cumulative(kind, _axis(int(axis), x.ndim), bool(reverse)))


def cumsum(operand, axis: int = 0, reverse: bool = False) -> Array:
    return _cumulative("sum", operand, axis, reverse)


def cumprod(operand, axis: int = 0, reverse: bool = False) -> Array:
    return _cumulative("prod", operand, axis, reverse)


def cummax(operand, axis: int = 0, reverse: bool = False) -> Array:
    return _cumulative("max", operand, axis, reverse)


def cummin(operand, axis: int = 0, reverse: bool = False) -> Array:
    return _cumulative("min", operand, axis, reverse)


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False) -> Array:
    """``log(cumsum(exp(x)))`` computed stably (a running max shifts each prefix)."""
    from .lax_scans import associative_scan
    x = el.as_float(operand)

    def combine(a, b):
        hi = el.maximum(a, b)
        lo = el.minimum(a, b)
        return el.where(el.isinf(hi) & (hi < 0), hi, hi + el.log1p(el.exp(lo - hi)))

    return associative_scan(combine, x, reverse=reverse, axis=axis)


def argmax(operand, axis: int, index_dtype) -> Array:
    return red.argmax(operand, axis=int(axis)).astype(index_dtype)


def argmin(operand, axis: int, index_dtype) -> Array:
    return red.argmin(operand, axis=int(axis)).astype(index_dtype)


def pad(operand, padding_value, padding_config: Sequence) -> Array:
    """``operand`` padded by ``(low, high, interior)`` per axis (negative pads crop)."""
    x = _arr(operand)
    cfg = [tuple(int(v) for v in c) for c in padding_config]
    if len(cfg) != x.ndim or any(len(c) != 3 for c in cfg):
        raise ValueError(f"pad: padding_config needs one (low, high, interior) per axis of "
                         f"{x.shape}")
    value = padding_value
    if isinstance(value, Array):
        if value.ndim != 0:
            raise ValueError("pad: padding_value must be a scalar")
        value = value.item()
    return Array(x._raw.pad(value, [c[0] for c in cfg], [c[1] for c in cfg],
                            [c[2] for c in cfg]))


def rev(operand, dimensions: Sequence[int]) -> Array:
    from .numpy.shape import flip
    x = _arr(operand)
    return flip(x, _axes(dimensions, x.ndim)) if len(dimensions) else x


def full(shape, fill_value, dtype=None) -> Array:
    from .numpy.creation import full as np_full
    return np_full(tuple(int(s) for s in shape), fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None) -> Array:
    x = _arr(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype)


def broadcast(operand, sizes: Sequence[int]) -> Array:
    """``operand`` with new leading axes of ``sizes``."""
    from .numpy.shape import broadcast_to
    x = _arr(operand)
    return broadcast_to(x, tuple(int(s) for s in sizes) + tuple(x.shape))


def broadcasted_iota(dtype, shape: Sequence[int], dimension: int) -> Array:
    from .numpy.creation import zeros
    anchor = zeros((), np.int32)
    shape = tuple(int(s) for s in shape)
    return iota_like(anchor, _dt.canonicalize(dtype, "broadcasted_iota"), shape,
                     _axis(int(dimension), len(shape)))


def dot(lhs, rhs, precision=None, preferred_element_type=None) -> Array:
    """Vector/matrix products of rank 1 or 2 operands (lax's ``dot``)."""
    del precision
    a, b = _arr(lhs), _arr(rhs)
    if a.ndim not in (1, 2) or b.ndim not in (1, 2):
        raise TypeError(f"dot: operands must be rank 1 or 2, got {a.shape} and {b.shape}")
    out = a @ b
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def batch_matmul(lhs, rhs, precision=None) -> Array:
    """Matrix products over matching leading batch axes."""
    del precision
    a, b = _arr(lhs), _arr(rhs)
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"batch_matmul: needs operands of one rank >= 2 and equal batch "
                         f"axes, got {a.shape} and {b.shape}")
    return a @ b


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    x = _arr(operand)
    ax = _axis(int(axis), x.ndim)
    i = int(index) % x.shape[ax] if x.shape[ax] else int(index)
    idx: list = [slice(None)] * x.ndim
    idx[ax] = slice(i, i + 1) if keepdims else i
    return x[tuple(idx)]


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True) -> Array:
    from .lax_ops import dynamic_slice_in_dim
    x = _arr(operand)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    if keepdims:
        return out
    from .numpy.shape import squeeze
    return squeeze(out, _axis(int(axis), x.ndim))


def dynamic_update_index_in_dim(operand, update, index, axis: int) -> Array:
    from .lax_ops import dynamic_update_slice_in_dim
    x, u = _arr(operand), _arr(update)
    ax = _axis(int(axis), x.ndim)
    if u.ndim == x.ndim - 1:
        from .numpy.shape import expand_dims
        u = expand_dims(u, ax)
    return dynamic_update_slice_in_dim(x, u, index, ax)


def select_n(which, *cases) -> Array:
    """``cases[which]`` elementwise (``which`` bool for two cases, else int; an index out
    of range picks the last case)."""
    if not cases:
        raise ValueError("select_n needs at least one case")
    w = _arr(which)
    out = _arr(cases[-1])
    if w.dtype == np.bool_:
        if len(cases) != 2:
            raise ValueError("select_n with a bool selector needs exactly two cases")
        return el.where(w, cases[1], cases[0])
    for k in range(len(cases) - 2, -1, -1):
        out = el.where(w == k, cases[k], out)
    return out


def tile(operand, multiples: Sequence[int]) -> Array:
    from .numpy.shape import tile as np_tile
    return np_tile(operand, tuple(int(m) for m in multiples))


def split(operand, sizes: Sequence[int], axis: int = 0) -> list:
    """Pieces of the given ``sizes`` along ``axis`` (they must add up to its length)."""
    x = _arr(operand)
    ax = _axis(int(axis), x.ndim)
    sizes = [int(s) for s in sizes]
    if sum(sizes) != x.shape[ax] or any(s < 0 for s in sizes):
        raise ValueError(f"split: sizes {sizes} must be non-negative and add up to "
                         f"{x.shape[ax]}")
    out, start = [], 0
    for s in sizes:
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(start, start + s)
        out.append(x[tuple(idx)])
        start += s
    return out


def stack(operands: Sequence, axis: int = 0) -> Array:
    """Joins arrays of one shape and dtype along a new ``axis`` (``jax.lax.stack``: unlike
    ``numpy.stack``, no promotion).

    >>> stack([asarray([1.0, 2.0]), asarray([3.0, 4.0])], axis=1).shape
    (2, 2)
    """
    xs = [_arr(x) for x in operands]
    if not xs:
        raise IndexError("lax.stack needs at least one operand")
    first = xs[0]
    for x in xs[1:]:
        if x.shape != first.shape:
            raise ValueError("All input arrays must have the same shape. Got "
                             f"{first.shape}, {x.shape}.")
        if x.dtype != first.dtype:
            raise TypeError("lax.stack requires arguments to have the same dtypes, got "
                            f"{_dt.name(first.dtype)}, {_dt.name(x.dtype)}.")
    from .numpy.shape import stack as np_stack
    return np_stack(xs, axis=_axis(int(axis), first.ndim + 1))


def unstack(x, axis: int = 0) -> tuple:
    """The slices of ``x`` along ``axis``, that axis removed (``jax.lax.unstack``).

    >>> [u.shape for u in unstack(asarray([[1, 2, 3], [4, 5, 6]]), axis=1)]
    [(2,), (2,), (2,)]
    """
    x = _arr(x)
    ax = _axis(int(axis), x.ndim)
    return tuple(index_in_dim(x, i, ax, keepdims=False) for i in range(x.shape[ax]))


def broadcast_like(arr, like_arr) -> Array:
    """``arr`` broadcast (numpy's rules) to ``like_arr``'s shape, keeping its own dtype, as
    ``jax.lax.broadcast_like``.

    >>> broadcast_like(asarray([1, 2, 3]), asarray([[0.0] * 3] * 2)).shape
    (2, 3)
    """
    from .numpy.shape import broadcast_to
    return broadcast_to(_arr(arr), tuple(np.shape(like_arr)))


def dtype(x) -> np.dtype:
    """The dtype a value or a dtype-like has in Quabla (``jax.lax.dtype``): an array's own,
    a Python or numpy scalar's default, a numpy array's or type's canonical one (float64 is
    float32 unless ``jax_enable_x64`` is on, int64 is int32).

    >>> dtype(3), dtype(True), dtype("int64")
    (dtype('int32'), dtype('bool'), dtype('int32'))
    """
    if isinstance(x, Array):
        return np.dtype(x.dtype)
    if isinstance(x, (bool, int, float, np.generic)):
        return _dt.scalar_dtype(x)
    if isinstance(x, np.ndarray):
        return _dt.canonicalize(x.dtype)
    return _dt.canonicalize(x)


def zeta(x, q) -> Array:
    from .scipy.special import zeta as f
    return f(x, q)


def polygamma(m, x) -> Array:
    from .scipy.special import polygamma as f
    return f(m, x)


def igamma(a, x) -> Array:
    from .scipy.special import gammainc
    return gammainc(a, x)


def igammac(a, x) -> Array:
    from .scipy.special import gammaincc
    return gammaincc(a, x)


def betainc(a, b, x) -> Array:
    from .scipy.special import betainc as f
    return f(a, b, x)


def collapse(operand, start_dimension: int, stop_dimension=None) -> Array:
    """``operand`` with axes ``start_dimension`` up to ``stop_dimension`` (default: the
    end; negative counts from the end) merged into one."""
    x = _arr(operand)
    nd = x.ndim
    start = start_dimension + nd if start_dimension < 0 else start_dimension
    stop = nd if stop_dimension is None else (
        stop_dimension + nd if stop_dimension < 0 else stop_dimension)
    if not 0 <= start <= stop <= nd:
        raise ValueError(f"collapse: dimensions [{start_dimension}, {stop_dimension}) do not "
                         f"fit an array of rank {nd}")
    merged = int(np.prod(x.shape[start:stop]))
    return x.reshape(tuple(x.shape[:start]) + (merged,) + tuple(x.shape[stop:]))


def broadcast_to_rank(x, rank: int) -> Array:
    """``x`` with leading axes of length 1 up to ``rank`` (unchanged when it has more)."""
    a = _arr(x)
    return a.reshape((1,) * max(int(rank) - a.ndim, 0) + tuple(a.shape))


def optimization_barrier(operand):
    """``operand`` (a pytree) unchanged. In JAX the barrier only constrains how XLA schedules
    and rematerialises work; values and derivatives are the operand's. Quabla returns the
    operand as it is and does not treat the call as a scheduling fence."""
    return operand


__all__ = ["argmax", "argmin", "batch_matmul", "betainc", "bitwise_and", "bitwise_not",
           "bitwise_or", "bitwise_xor", "broadcast", "broadcast_to_rank", "broadcasted_iota",
           "cbrt", "clz", "collapse", "optimization_barrier",
           "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "dot",
           "dynamic_index_in_dim", "dynamic_update_index_in_dim", "eq", "exp2", "full",
           "full_like", "ge", "gt", "igamma", "igammac", "index_in_dim", "le", "lt", "ne",
           "pad", "polygamma", "population_count", "reciprocal", "reduce_and", "reduce_max",
           "reduce_min", "reduce_or", "reduce_prod", "reduce_sum", "rev", "select_n",
           "shift_left", "shift_right_arithmetic", "shift_right_logical", "split", "stack",
           "tile", "unstack", "dtype", "broadcast_like", "zeta"]
