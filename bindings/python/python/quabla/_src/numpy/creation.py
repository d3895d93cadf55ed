"""Array creation: asarray/array, zeros/ones/full (and *_like), arange, linspace, eye."""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from ... import _quabla
from .. import dtypes as _dt
from ..array import Array, RawArray


def _from_numpy(a: np.ndarray, dtype: Optional[np.dtype] = None, device=None) -> Array:
    if a.dtype.kind == "c":
        raise TypeError("complex arrays are not supported")
    if a.dtype.kind not in "fiub":
        raise TypeError(f"cannot make an array from numpy dtype {a.dtype}")
    target = _dt.canonicalize(dtype if dtype is not None else a.dtype)
    if a.dtype.kind in "iu" and target.kind in "iu" and a.size:
        info = np.iinfo(target)
        lo, hi = a.min(), a.max()
        if lo < info.min or hi > info.max:
            raise OverflowError(
                f"integer values in [{lo}, {hi}] do not fit {target}; Quabla's integers are "
                "32-bit: pass dtype=float64 or reduce the range")
    a = np.asarray(a, dtype=target.newbyteorder("<"), order="C")
    platform = device.platform if device is not None else None
    return Array(RawArray.from_bytes(a.tobytes(), _dt.SUPPORTED[target], list(a.shape), platform))


def asarray(a, dtype=None, device=None, *, _name: str = "asarray") -> Array:
    """An array from ``a`` (an Array, numpy array, Python scalar or nested sequence).

    Arrays keep their dtype; numpy arrays too, except float64, which is float32 unless
    ``jax_enable_x64`` is on (as JAX); Python scalars default to float32 / int32 / bool;
    int64 values must fit int32.

    >>> asarray([1.0, 2.0]).dtype
    dtype('float32')
    """
    if dtype is not None:
        dtype = _dt.canonicalize(dtype, _name)
    if isinstance(a, Array):
        return a if dtype is None or _dt.canonicalize(dtype) == a.dtype else a.astype(dtype)
    if isinstance(a, (list, tuple)) and _contains_array(a):
        from .shape import stack
        return stack([asarray(x, dtype) for x in a])
    if isinstance(a, (bool, int, float)) and not isinstance(a, np.generic) and dtype is None:
        dtype = _dt.scalar_dtype(a)
    if isinstance(a, (list, tuple)) and dtype is None:
        probe = np.asarray(a)
        if probe.dtype == np.float64:
            dtype = _dt.default_float()  # Python floats: float32 unless x64 is on
        elif probe.dtype.kind == "i":
            dtype = np.int32
    if isinstance(a, numbers.Number) and not isinstance(a, (bool, int, float, np.generic)):
        raise TypeError(f"cannot make an array from {type(a).__name__}")
    return _from_numpy(np.asarray(a), dtype, device)


def _contains_array(seq) -> bool:
    return any(isinstance(x, Array) or (isinstance(x, (list, tuple)) and _contains_array(x))
               for x in seq)


def array(object, dtype=None, copy: bool = True, device=None) -> Array:
    """Like :func:`asarray` (arrays are immutable, so ``copy`` changes nothing)."""
    return asarray(object, dtype, device, _name="array")


def _shape(shape) -> list:
    if isinstance(shape, numbers.Integral):
        return [int(shape)]
    return [int(d) for d in shape]


def full(shape, fill_value, dtype=None, device=None, *, _name: str = "full") -> Array:
    """An array of ``shape`` filled with ``fill_value``."""
    if dtype is not None:
        dtype = _dt.canonicalize(dtype, _name)
    if isinstance(fill_value, Array):
        return broadcast_to_dtype(fill_value, _shape(shape), dtype)
    d = dtype if dtype is not None else _dt.scalar_dtype(fill_value)
    return _from_numpy(np.full(_shape(shape), fill_value, dtype=d), d, device)


def broadcast_to_dtype(x: Array, shape, dtype) -> Array:
    from .shape import broadcast_to
    y = broadcast_to(x, shape)
    return y if dtype is None else y.astype(dtype)


def zeros(shape, dtype=None, device=None) -> Array:
    """Zeros (float32 unless ``dtype``)."""
    return full(shape, 0, dtype if dtype is not None else _dt.default_float(), device,
                _name="zeros")


def ones(shape, dtype=None, device=None) -> Array:
    """Ones (float32 unless ``dtype``)."""
    return full(shape, 1, dtype if dtype is not None else _dt.default_float(), device,
                _name="ones")


def full_like(a, fill_value, dtype=None, shape=None, *, _name: str = "full_like") -> Array:
    """``full`` with ``a``'s shape and dtype (traced along with ``a`` when it is traced)."""
    a = asarray(a)
    d = _dt.canonicalize(dtype, _name) if dtype is not None else a.dtype
    s = _shape(shape) if shape is not None else list(a.shape)
    if isinstance(fill_value, Array):
        return broadcast_to_dtype(fill_value, s, d)
    value = bool(fill_value) if d == np.bool_ else (
        float(fill_value) if d.kind == "f" else int(fill_value))
    return Array(a._raw.filled(s, value, _dt.name(d)))


def zeros_like(a, dtype=None, shape=None) -> Array:
    return full_like(a, 0, dtype, shape, _name="zeros_like")


def ones_like(a, dtype=None, shape=None) -> Array:
    return full_like(a, 1, dtype, shape, _name="ones_like")


def empty(shape, dtype=None, device=None) -> Array:
    """Zeros: arrays are immutable, so there is nothing to leave uninitialised."""
    return zeros(shape, dtype, device)


def empty_like(a, dtype=None, shape=None) -> Array:
    return zeros_like(a, dtype, shape)


def arange(start, stop=None, step=None, dtype=None) -> Array:
    """Evenly spaced values in ``[start, stop)`` (int32 for int arguments, else float32)."""
    for v in (start, stop, step):
        if isinstance(v, Array):
            raise TypeError("arange needs concrete Python numbers (its length sets a shape)")
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
        d = np.dtype(np.int32) if ints else _dt.default_float()
    else:
        d = _dt.canonicalize(dtype, "arange")
    return _from_numpy(np.arange(start, stop, step, dtype=np.float64 if d.kind == "f" else None)
                       .astype(d), d)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (computed in float64)."""
    if isinstance(start, Array) or isinstance(stop, Array):
        s, e = asarray(start), asarray(stop)
        d = (_dt.canonicalize(dtype, "linspace") if dtype is not None
             else _dt.result_type(s.dtype, e.dtype))
        if d.kind != "f":
            d = _dt.default_float()
        div = (num - 1) if endpoint else num
        steps = arange(num, dtype=d)
        from .shape import expand_dims, moveaxis
        s, e = s.astype(d), e.astype(d)
        delta = (e - s) / max(div, 1)
        t = expand_dims(steps, tuple(range(1, 1 + s.ndim))) if s.ndim else steps
        out = expand_dims(s, 0) + t * expand_dims(delta, 0)
        if endpoint and num > 1:
            out = out.at[-1].set(e)
        out = moveaxis(out, 0, axis)
        return (out, delta) if retstep else out
    d = _dt.canonicalize(dtype, "linspace") if dtype is not None else _dt.default_float()
    vals, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=np.float64)
    out = _from_numpy(vals.astype(d), d)
    if axis != 0:
        from .shape import moveaxis
        out = moveaxis(out, 0, axis)
    return (out, step) if retstep else out


def eye(N: int, M: Optional[int] = None, k: int = 0, dtype=None) -> Array:
    """The identity (ones on the ``k``-th diagonal)."""
    d = _dt.canonicalize(dtype, "eye") if dtype is not None else _dt.default_float()
    return _from_numpy(np.eye(N, M, k, dtype=d), d)


def identity(n: int, dtype=None) -> Array:
    return eye(n, dtype=dtype)


def iota_like(like: Array, dtype, shape, dim: int) -> Array:
    """``lax.iota`` beside ``like`` (inside its trace when it is traced)."""
    return Array(like._raw.iota(_dt.name(dtype), list(shape), dim))


def iota(dtype, size: int) -> Array:
    """``lax.iota``: 0, 1, ..., size - 1."""
    return Array(_quabla.iota(_dt.name(dtype), [int(size)], 0))


def from_dlpack(x, device=None) -> Array:
    """An array from any object with ``__dlpack__`` (a copy, through numpy)."""
    return _from_numpy(np.from_dlpack(x), None, device)


def copy(a, order=None) -> Array:
    """A new array with ``a``'s values. Arrays are immutable, so it shares ``a``'s buffer
    until one of them is donated (a donation takes a buffer only when nothing else holds
    it). ``order`` other than ``None``/``"K"`` is refused, as JAX refuses it."""
    if order not in (None, "K"):
        raise NotImplementedError(f"copy: only order=None or 'K' is supported, got {order!r}")
    return Array(a._raw) if isinstance(a, Array) else asarray(a)
