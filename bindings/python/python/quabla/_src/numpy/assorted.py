"""numpy's small conveniences over the existing functions, as ``jax.numpy`` defines them:
stacking and splitting (``atleast_3d``, ``column_stack``, ``dstack``, ``array_split``,
``hsplit``, ``vsplit``, ``dsplit``), matrices (``tri``, ``diagflat``), elementwise names
(``fmax``, ``fmin``, ``fabs``, ``rint``, ``degrees``, ``radians``, ``float_power``,
``logaddexp2``, ``gcd``, ``lcm``, ``invert``, ``bitwise_not``, ``left_shift``,
``right_shift``), and selection (``choose``, ``compress``, ``extract``, ``fill_diagonal``,
``put_along_axis``, ``indices``, ``array_equiv``, ``trim_zeros``, ``rollaxis``, ``unwrap``,
``resize``)."""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array, _axis
from . import elementwise as el
from .creation import arange, asarray, zeros
from .shape import concatenate, moveaxis


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def atleast_3d(*arys):
    """Each array with at least three axes (1-D ``(N,)`` becomes ``(1, N, 1)``)."""
    out = []
    for a in arys:
        a = _arr(a)
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, a.shape[0], 1)
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def column_stack(tup) -> Array:
    """1-D arrays as columns, 2-D ones as they are, side by side."""
    cols = [_arr(a) for a in tup]
    cols = [a.reshape(-1, 1) if a.ndim < 2 else a for a in cols]
    return concatenate(cols, axis=1)


def dstack(tup) -> Array:
    return concatenate([atleast_3d(a) for a in tup], axis=2)


def array_split(ary, indices_or_sections, axis: int = 0) -> list:
    """Like ``split``, but ``n`` sections need not divide the axis (the first ones get one
    element more)."""
    from .shape import split
    a = _arr(ary)
    if isinstance(indices_or_sections, numbers.Integral):
        n, k = a.shape[_axis(axis, a.ndim)], int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        size, extra = divmod(n, k)
        cuts, at = [], 0
        for i in range(k - 1):
            at += size + (1 if i < extra else 0)
            cuts.append(at)
        return split(a, cuts, axis)
    return split(a, indices_or_sections, axis)


def _split_along(name: str, axis: int, min_ndim: int):
    def splitter(ary, indices_or_sections) -> list:
        from .shape import split
        a = _arr(ary)
        if a.ndim < min_ndim:
            raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions")
        return split(a, indices_or_sections, 1 if (axis == 1 and a.ndim > 1) else
                     (0 if axis == 1 else axis))

    splitter.__name__ = name
    return splitter


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def tri(N: int, M: Optional[int] = None, k: int = 0, dtype=None) -> Array:
    """Ones on and below diagonal ``k`` of an ``N x M`` matrix (float32 by default, also
    with x64, as JAX)."""
    m = int(N) if M is None else int(M)
    d = np.dtype(np.float32) if dtype is None else _dt.canonicalize(dtype, "tri")
    return asarray(np.tri(int(N), m, int(k)).astype(d))


def diagflat(v, k: int = 0) -> Array:
    from .shape import diag
    return diag(_arr(v).reshape(-1), k)


def fmax(x1, x2) -> Array:
    """The larger element, ignoring a NaN when the other is a number."""
    a, b = _arr(x1), _arr(x2)
    return el.where(el.isnan(b) | (a > b), a, el.where(el.isnan(a), b, el.maximum(a, b)))


def fmin(x1, x2) -> Array:
    a, b = _arr(x1), _arr(x2)
    return el.where(el.isnan(b) | (a < b), a, el.where(el.isnan(a), b, el.minimum(a, b)))


def fabs(x) -> Array:
    return el.absolute(el.as_float(x))


def rint(x) -> Array:
    """Round half to even, keeping the float dtype."""
    return el.round(el.as_float(x))


def degrees(x) -> Array:
    return el.rad2deg(x)


def radians(x) -> Array:
    return el.deg2rad(x)


def float_power(x1, x2) -> Array:
    """``x1 ** x2`` in the inexact type of the two (NaN for a negative base and a
    non-integer exponent)."""
    a, b = el.as_float(x1), el.as_float(x2)
    d = _dt.result_type(a.dtype, b.dtype)
    return el.power(a.astype(d), b.astype(d))


def logaddexp2(x1, x2) -> Array:
    """``log2(2**x1 + 2**x2)`` without overflow (NaN or same-signed infinities add)."""
    a, b = el.as_float(x1), el.as_float(x2)
    d = _dt.result_type(a.dtype, b.dtype)
    a, b = a.astype(d), b.astype(d)
    hi = el.maximum(a, b)
    delta = a - b
    smooth = hi + (1 / np.log(2)) * el.log1p(el.exp2(-el.absolute(delta)))
    return el.where(el.isnan(delta), a + b, smooth)


def gcd(x1, x2) -> Array:
    """Greatest common divisor of integers, by Euclid's algorithm: 48 rounds, as the slowest
    pair below 2^32 (consecutive Fibonacci numbers) needs 46."""
    a, b = el.absolute(_arr(x1)), el.absolute(_arr(x2))
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        raise TypeError("gcd needs integer arguments")
    for _ in range(48):
        nonzero = b != 0
        safe = el.where(nonzero, b, 1)
        a, b = el.where(nonzero, b, a), el.where(nonzero, a % safe, 0)
    return a


def lcm(x1, x2) -> Array:
    a, b = _arr(x1), _arr(x2)
    g = gcd(a, b)
    safe = el.where(g == 0, 1, g)
    return el.where(g == 0, 0, el.absolute(a // safe * b))


def invert(x) -> Array:
    return ~_arr(x)


bitwise_not = invert


def left_shift(x1, x2) -> Array:
    from .array_api import bitwise_left_shift
    return bitwise_left_shift(x1, x2)


def right_shift(x1, x2) -> Array:
    from .array_api import bitwise_right_shift
    return bitwise_right_shift(x1, x2)


def choose(a, choices, mode: str = "raise") -> Array:
    """``choices[a]`` elementwise (``mode`` "raise" needs concrete indices; "wrap", "clip")."""
    idx = _arr(a)
    arrays = [_arr(c) for c in choices]
    n = len(arrays)
    if mode == "raise":
        if idx.is_traced:
            raise ValueError("choose: mode='raise' needs concrete indices; use 'wrap' or 'clip'")
        v = np.asarray(idx)
        if v.size and (v.min() < 0 or v.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = el.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"choose: invalid mode {mode!r}; expected 'raise', 'wrap' or 'clip'")
    out = arrays[-1] + idx * 0
    for k in range(n - 2, -1, -1):
        out = el.where(idx == k, arrays[k], out)
    return out


def compress(condition, a, axis: Optional[int] = None, *, size: Optional[int] = None,
             fill_value=0) -> Array:
    """The slices of ``a`` along ``axis`` where ``condition`` holds (static ``size``
    under ``jit``)."""
    from .misc import nonzero
    cond = _arr(condition).reshape(-1).astype(np.bool_)
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = _axis(axis, x.ndim)
    n = x.shape[ax]
    if cond.shape[0] > n:
        raise ValueError(f"compress: condition of length {cond.shape[0]} is longer than the "
                         f"axis ({n})")
    cond = concatenate([cond, zeros((n - cond.shape[0],), np.bool_)])
    idx = nonzero(cond, size=size)[0]
    out = moveaxis(moveaxis(x, ax, 0)[idx], 0, ax)
    if size is not None:
        valid = arange(size) < cond.astype(np.int32).sum()
        shape = [1] * x.ndim
        shape[ax] = size
        out = el.where(valid.reshape(tuple(shape)), out, fill_value)
    return out


def extract(condition, arr, *, size: Optional[int] = None, fill_value=0) -> Array:
    """The elements of ``arr`` where ``condition`` holds, flattened."""
    return compress(_arr(condition).reshape(-1), _arr(arr).reshape(-1), size=size,
                    fill_value=fill_value)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True) -> Array:
    """``a`` with ``val`` on its main diagonal (JAX's ``inplace=False`` is required: arrays
    are immutable)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not supported (as in JAX)")
    x = _arr(a)
    if x.ndim < 2 or (x.ndim > 2 and len(set(x.shape)) != 1):
        raise ValueError("array must be at least 2-d and, above 2-d, of equal lengths")
    n = min(x.shape)
    i = arange(n)
    v = _arr(val).astype(x.dtype).reshape(-1)
    v = v[arange(n) % v.shape[0]] if v.shape[0] else v
    return x.at[(i,) * x.ndim].set(v)


def put_along_axis(arr, indices, values, axis: Optional[int], inplace: bool = True,
                   *, mode: Optional[str] = None) -> Array:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (``inplace=False``
    required, as JAX)."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                         "arrays are immutable. Pass inplace=False to instead return an "
                         "updated array.")
    from .creation import iota_like
    from .shape import broadcast_to
    a, idx = _arr(arr), _arr(indices)
    if axis is None:
        a, axis = a.reshape(-1), 0
        idx = idx.reshape(-1)
    ax = _axis(axis, a.ndim)
    shape = idx.shape
    parts = [idx if d == ax else iota_like(idx, np.int32, shape, d) for d in range(a.ndim)]
    vals = broadcast_to(_arr(values).astype(a.dtype), shape)
    return a.at[tuple(parts)].set(vals, mode=mode)


def indices(dimensions, dtype=None, sparse: bool = False):
    """Grids of each axis' index over ``dimensions`` (stacked, or sparse broadcastable)."""
    dims = tuple(int(d) for d in dimensions)
    d = np.dtype(np.int32) if dtype is None else _dt.canonicalize(dtype, "indices")
    if sparse:
        return tuple(asarray(g.astype(d)) for g in np.indices(dims, sparse=True))
    return asarray(np.indices(dims).astype(d))


def array_equiv(a1, a2) -> Array:
    """Whether the arrays are equal after broadcasting (False if they cannot broadcast)."""
    from .shape import broadcast_shapes
    from .reductions import all as all_
    a, b = _arr(a1), _arr(a2)
    try:
        broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return asarray(False)
    return all_(a == b)


def trim_zeros(filt, trim: str = "fb") -> Array:
    """``filt`` (1-D, concrete) without its leading ("f") and trailing ("b") zeros."""
    a = _arr(filt)
    if a.is_traced:
        raise ValueError("trim_zeros needs a concrete array: its result's length depends on "
                         "the values")
    v = np.asarray(a)
    nz = np.flatnonzero(v)
    if nz.size == 0:
        return a[:0]
    lo = int(nz[0]) if "f" in trim.lower() else 0
    hi = int(nz[-1]) + 1 if "b" in trim.lower() else v.shape[0]
    return a[lo:hi]


def rollaxis(a, axis: int, start: int = 0) -> Array:
    x = _arr(a)
    ax = _axis(axis, x.ndim)
    st = start + x.ndim if start < 0 else start
    if not 0 <= st <= x.ndim:
        raise ValueError(f"rollaxis: start {start} out of range for {x.ndim} axes")
    if ax < st:
        st -= 1
    return moveaxis(x, ax, st)


def unwrap(p, discont=None, axis: int = -1, period: float = 2 * np.pi) -> Array:
    """Phases with jumps larger than ``discont`` (``period / 2``) unwrapped by multiples of
    ``period``."""
    from .misc import diff
    from .reductions import cumsum
    x = el.as_float(p)
    ax = _axis(axis, x.ndim)
    d = diff(x, axis=ax)
    half = period / 2
    disc = half if discont is None else max(discont, half)
    dd = ((d + half) % period) - half
    dd = el.where((dd == -half) & (d > 0), half, dd)
    correction = el.where(el.absolute(d) < disc, 0.0, dd - d)
    shape = list(x.shape)
    shape[ax] = 1
    first = zeros(tuple(shape), x.dtype)
    return x + concatenate([first, cumsum(correction, axis=ax)], axis=ax)


def resize(a, new_shape) -> Array:
    """``a``'s elements repeated (or cut) to fill ``new_shape``."""
    x = _arr(a).reshape(-1)
    shape = (int(new_shape),) if isinstance(new_shape, numbers.Integral) else \
        tuple(int(s) for s in new_shape)
    total = int(np.prod(shape))
    if x.shape[0] == 0:
        return zeros(shape, x.dtype)
    reps = -(-total // x.shape[0])
    return concatenate([x] * max(reps, 1))[:total].reshape(shape)


def modf(x, /, out=None):
    """``(x - trunc(x), trunc(x))``, as JAX's (integers become floats). Where numpy gives a
    fractional part of ``0`` for an infinity (with its sign), JAX's subtraction gives NaN,
    and a zero's fractional part is ``+0``; Quabla follows JAX."""
    if out is not None:
        raise NotImplementedError("modf: the out argument is not supported (JAX's arrays are "
                                  "immutable)")
    from .array_api import trunc
    a = el.as_float(x if isinstance(x, Array) else asarray(x))
    whole = trunc(a)
    return a - whole, whole
