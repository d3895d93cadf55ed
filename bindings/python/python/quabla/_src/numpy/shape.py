"""Shape functions: reshape, transpose and friends, joining, tiling, padding, diagonals."""

from __future__ import annotations

import numbers
from typing import Sequence

import numpy as np

from ..array import Array, _axis
from .creation import asarray, iota_like
from .elementwise import where


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _axes(axis, ndim: int) -> list:
    if isinstance(axis, numbers.Integral):
        axis = (axis,)
    out = [_axis(a, ndim) for a in axis]
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {tuple(axis)}")
    return out


def reshape(a, newshape=None, order: str = "C", *, shape=None) -> Array:
    s = shape if shape is not None else newshape
    return _arr(a).reshape(s, order=order)


def ravel(a, order: str = "C") -> Array:
    return _arr(a).reshape(-1, order=order)


def transpose(a, axes=None) -> Array:
    a = _arr(a)
    return a.transpose() if axes is None else a.transpose(axes)


def permute_dims(a, axes=None) -> Array:
    return transpose(a, axes)


def swapaxes(a, axis1: int, axis2: int) -> Array:
    a = _arr(a)
    perm = list(range(a.ndim))
    i, j = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return a.transpose(perm)


def moveaxis(a, source, destination) -> Array:
    a = _arr(a)
    src = _axes(source, a.ndim)
    dst = _axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def expand_dims(a, axis) -> Array:
    a = _arr(a)
    n = a.ndim + (1 if isinstance(axis, numbers.Integral) else len(axis))
    where_ = _axes(axis, n)
    shape, it = [], iter(a.shape)
    for d in range(n):
        shape.append(1 if d in where_ else next(it))
    return a.reshape(shape)


def squeeze(a, axis=None) -> Array:
    a = _arr(a)
    if axis is None:
        drop = [d for d, s in enumerate(a.shape) if s == 1]
    else:
        drop = _axes(axis, a.ndim)
        for d in drop:
            if a.shape[d] != 1:
                raise ValueError(f"cannot squeeze axis {d} of size {a.shape[d]}")
    return a.reshape([s for d, s in enumerate(a.shape) if d not in drop])


def broadcast_shapes(*shapes) -> tuple:
    """The numpy broadcast of ``shapes``; ValueError when they do not broadcast (as JAX)."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"shapes {', '.join(map(str, shapes))} do not broadcast") from None


def broadcast_to(a, shape) -> Array:
    """``a`` broadcast to ``shape``; ValueError when it does not fit (as JAX)."""
    a = _arr(a)
    shape = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(s) for s in shape)
    if a.shape == shape:
        return a
    fits = len(a.shape) <= len(shape) and all(
        d in (1, s) for d, s in zip(reversed(a.shape), reversed(shape)))
    if not fits:
        raise ValueError(f"cannot broadcast an array of shape {a.shape} to shape {shape}")
    return Array(a._raw.broadcast_to(list(shape)))


def broadcast_arrays(*args) -> list:
    arrs = [_arr(a) for a in args]
    shape = broadcast_shapes(*[a.shape for a in arrs])
    return [broadcast_to(a, shape) for a in arrs]


def concatenate(arrays: Sequence, axis=0, dtype=None) -> Array:
    arrs = [_arr(a) for a in arrays]
    if not arrs:
        raise ValueError("concatenate needs at least one array")
    if axis is None:
        arrs, axis = [a.reshape(-1) for a in arrs], 0
    from .. import dtypes as _dt
    d = (_dt.canonicalize(dtype, "concatenate") if dtype is not None
         else _dt.result_type(*[a.dtype for a in arrs]))
    arrs = [a.astype(d) for a in arrs]
    if len(arrs) == 1:
        return arrs[0]
    return Array(type(arrs[0]._raw).concatenate([a._raw for a in arrs], int(axis)))


def stack(arrays: Sequence, axis: int = 0) -> Array:
    arrs = [_arr(a) for a in arrays]
    if not arrs:
        raise ValueError("stack needs at least one array")
    shapes = {a.shape for a in arrs}
    if len(shapes) != 1:
        raise ValueError(f"stack needs arrays of one shape, got {sorted(shapes)}")
    ax = _axis(axis, arrs[0].ndim + 1)
    return concatenate([expand_dims(a, ax) for a in arrs], ax)


def hstack(arrays) -> Array:
    arrs = [atleast_1d(a) for a in arrays]
    return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1)


def vstack(arrays) -> Array:
    return concatenate([atleast_2d(a) for a in arrays], 0)


def atleast_1d(a) -> Array:
    a = _arr(a)
    return a.reshape(1) if a.ndim == 0 else a


def atleast_2d(a) -> Array:
    a = _arr(a)
    return a.reshape(1, -1) if a.ndim < 2 else a


def split(a, indices_or_sections, axis: int = 0) -> list:
    a = _arr(a)
    ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(indices_or_sections, numbers.Integral):
        k = int(indices_or_sections)
        if n % k:
            raise ValueError(f"array of size {n} along axis {ax} does not split into {k} parts")
        cuts = [n // k * i for i in range(1, k)]
    else:
        cuts = list(indices_or_sections)
    bounds = [0] + cuts + [n]
    idx = [slice(None)] * a.ndim
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        idx[ax] = slice(lo, hi)
        out.append(a[tuple(idx)])
    return out


def flip(m, axis=None) -> Array:
    m = _arr(m)
    axes = list(range(m.ndim)) if axis is None else _axes(axis, m.ndim)
    return Array(m._raw.flip(axes)) if axes else m


def fliplr(m) -> Array:
    return flip(m, 1)


def flipud(m) -> Array:
    return flip(m, 0)


def roll(a, shift, axis=None) -> Array:
    """Elements shifted by ``shift`` (static ints) along ``axis`` (flattened when None)."""
    a = _arr(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    shifts = [shift] if isinstance(shift, numbers.Integral) else list(shift)
    axes = [axis] if isinstance(axis, numbers.Integral) else list(axis)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    for s, ax in zip(shifts, axes):
        if isinstance(s, Array):
            raise TypeError("roll needs a static shift (a Python int)")
        ax = _axis(int(ax), a.ndim)
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            idx_a = [slice(None)] * a.ndim
            idx_b = [slice(None)] * a.ndim
            idx_a[ax], idx_b[ax] = slice(n - s, None), slice(0, n - s)
            a = concatenate([a[tuple(idx_a)], a[tuple(idx_b)]], ax)
    return a


def _pad_width(pad_width, ndim: int) -> list:
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    return [(int(lo), int(hi)) for lo, hi in pw]


def pad(array, pad_width, mode: str = "constant", constant_values=0) -> Array:
    """Pads with ``mode`` ``constant`` (a scalar value), ``edge``, ``reflect`` or ``wrap``."""
    a = _arr(array)
    pw = _pad_width(pad_width, a.ndim)
    if mode == "constant":
        if isinstance(constant_values, Array) or np.ndim(constant_values) != 0:
            raise NotImplementedError("pad: constant_values must be one scalar")
        v = constant_values
        v = bool(v) if a.dtype == np.bool_ else (float(v) if a.dtype.kind == "f" else int(v))
        return Array(a._raw.pad(v, [p[0] for p in pw], [p[1] for p in pw], [0] * a.ndim))
    out = a
    for ax, (lo, hi) in enumerate(pw):
        n = out.shape[ax]
        if lo == 0 and hi == 0:
            continue
        if mode == "edge":
            src_lo, src_hi = [0] * lo, [n - 1] * hi
        elif mode == "reflect":
            src_lo = [(_reflect(i, n)) for i in range(lo, 0, -1)]
            src_hi = [_reflect(n - 1 + i, n) for i in range(1, hi + 1)]
        elif mode == "wrap":
            src_lo = [(-i) % n for i in range(lo, 0, -1)]
            src_hi = [i % n for i in range(hi)]
        else:
            raise NotImplementedError(f"pad mode {mode!r}")
        from .misc import take
        idx = asarray(np.array(src_lo + list(range(n)) + src_hi, dtype=np.int32))
        out = take(out, idx, axis=ax)
    return out


def _reflect(i: int, n: int) -> int:
    if n == 1:
        return 0
    period = 2 * (n - 1)
    i = i % period
    return i if i < n else period - i


def tile(A, reps) -> Array:
    a = _arr(A)
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    nd = max(a.ndim, len(reps))
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    reps = (1,) * (nd - len(reps)) + reps
    # [r0, s0, r1, s1, ...] broadcast then merged pairwise.
    expanded = a.reshape([d for s in a.shape for d in (1, s)])
    target = [d for r, s in zip(reps, a.shape) for d in (r, s)]
    return broadcast_to(expanded, target).reshape([r * s for r, s in zip(reps, a.shape)])


def repeat(a, repeats, axis=None, total_repeat_length=None) -> Array:
    a = _arr(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    ax = _axis(axis, a.ndim)
    if isinstance(repeats, numbers.Integral):
        r = int(repeats)
        shape = list(a.shape)
        b = expand_dims(a, ax + 1)
        tgt = list(b.shape)
        tgt[ax + 1] = r
        shape[ax] *= r
        return broadcast_to(b, tgt).reshape(shape)
    reps = np.asarray(repeats)
    if reps.shape != (a.shape[ax],):
        raise ValueError("repeat: repeats must be an int or one count per element")
    from .misc import take
    return take(a, asarray(np.repeat(np.arange(a.shape[ax]), reps).astype(np.int32)), axis=ax)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    a = _arr(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.shape[-2], a.shape[-1]
    rows = np.arange(max(0, -offset), min(n, m - offset))
    if rows.size == 0:
        return a[..., :0, 0]
    r = asarray(rows.astype(np.int32))
    return a[..., r, r + offset]


def diag(v, k: int = 0) -> Array:
    v = _arr(v)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        rows = iota_like(v, np.int32, (n, n), 0)
        cols = iota_like(v, np.int32, (n, n), 1)
        on = cols - rows == k
        src = where(on, iota_like(v, np.int32, (n, n), 0 if k >= 0 else 1), 0)
        from .misc import take
        return where(on, take(v, src.reshape(-1), mode="clip").reshape(n, n), 0)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("diag needs a 1-D or 2-D array")


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Array:
    from .reductions import sum as sum_
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _tri_mask(a: Array, k: int, lower: bool) -> Array:
    n, m = a.shape[-2], a.shape[-1]
    rows = iota_like(a, np.int32, (n, m), 0)
    cols = iota_like(a, np.int32, (n, m), 1)
    return (cols - rows <= k) if lower else (cols - rows >= k)


def tril(m, k: int = 0) -> Array:
    m = _arr(m)
    return where(_tri_mask(m, k, True), m, 0)


def triu(m, k: int = 0) -> Array:
    m = _arr(m)
    return where(_tri_mask(m, k, False), m, 0)
