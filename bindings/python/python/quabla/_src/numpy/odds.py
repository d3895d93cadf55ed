"""numpy names that round out ``jax.numpy``: printing (``array_repr``, ``array_str``, print
options), ``r_``/``c_``, ``angle``, ``bitwise_count``, the Kaiser window, ``einsum_path``,
``frombuffer``/``fromstring``, and the constant ``euler_gamma``."""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array
from .creation import arange, asarray, linspace

__all__ = ["angle", "array_repr", "array_str", "bitwise_count", "c_", "einsum_path",
           "euler_gamma", "frombuffer", "fromstring", "get_printoptions", "kaiser",
           "printoptions", "r_", "set_printoptions"]

euler_gamma = 0.5772156649015329

# Arrays print through numpy's formatter, so numpy's options are the ones that apply.
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions


def array_repr(arr, max_line_width: Optional[int] = None, precision: Optional[int] = None,
               suppress_small: Optional[bool] = None) -> str:
    """``repr`` of the array with numpy's formatting options."""
    body = np.array2string(np.asarray(asarray(arr)), max_line_width, precision, suppress_small,
                           separator=", ", prefix="Array(")
    return f"Array({body}, dtype={asarray(arr).dtype})"


def array_str(a, max_line_width: Optional[int] = None, precision: Optional[int] = None,
              suppress_small: Optional[bool] = None) -> str:
    """``str`` of the array (its values, as numpy prints them)."""
    return np.array_str(np.asarray(asarray(a)), max_line_width, precision, suppress_small)


def angle(z, deg: bool = False) -> Array:
    """The argument of ``z``: for real numbers 0, or pi where the sign bit is set (``-0.0``
    included, as numpy's ``arctan2(0, x)``)."""
    from .creation import zeros_like
    from .elementwise import arctan2, as_float
    x = as_float(z)
    out = arctan2(zeros_like(x), x)
    return out * (180.0 / math.pi) if deg else out


def bitwise_count(x) -> Array:
    """The number of set bits of ``|x|`` (numpy's convention for signed integers), as
    int32 (numpy's and JAX's are uint8, which Quabla does not have)."""
    from .elementwise import where
    a = asarray(x)
    if a.dtype.kind not in "iub":
        raise TypeError(f"bitwise_count takes integers, got {a.dtype}")
    if a.dtype.kind == "b":
        return a.astype("int32")
    # |x| as uint32 (|INT32_MIN| = 2^31 fits), then the classic SWAR popcount.
    u = (where(a < 0, -a, a) if a.dtype.kind == "i" else a).astype("uint32")
    u = u - ((u >> 1) & 0x55555555)
    u = (u & 0x33333333) + ((u >> 2) & 0x33333333)
    u = (u + (u >> 4)) & 0x0F0F0F0F
    return ((u * 0x01010101) >> 24).astype("int32")


def kaiser(M: int, beta: float) -> Array:
    """The Kaiser window ``I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)``."""
    from ..scipy.special_series import i0
    from .elementwise import sqrt
    m = int(M)
    d = _dt.default_float()
    if m <= 1:
        return asarray(np.ones((max(m, 0),), d))
    n = arange(m, dtype=d)
    r = 2.0 * n / (m - 1) - 1.0
    return i0(beta * sqrt(1.0 - r * r)) / i0(asarray(float(beta), d))


def einsum_path(subscripts: str, *operands, optimize: Any = "greedy"):
    """The contraction order ``einsum`` would take, as ``(path, description)``, from
    numpy's planner over the operands' shapes (``optimize``: ``'greedy'``, ``'optimal'``,
    or True)."""
    shapes = [np.empty(asarray(o).shape, np.float32) for o in operands]
    path, text = np.einsum_path(subscripts, *shapes, optimize=optimize)
    return [p for p in path if p != "einsum_path"], text


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0) -> Array:
    """An array of the buffer's bytes read as ``dtype``, as ``numpy.frombuffer``."""
    return asarray(np.frombuffer(buffer, dtype=_np_dtype(dtype), count=count, offset=offset))


def fromstring(string: str, dtype=float, count: int = -1, *, sep: str) -> Array:
    """An array of the numbers in ``string`` separated by ``sep`` (numpy's text mode)."""
    return asarray(np.fromstring(string, dtype=_np_dtype(dtype), count=count, sep=sep))


def fromiter(iterable, dtype=float, count: int = -1) -> Array:
    """An array of the values an iterable yields, as ``numpy.fromiter`` (read on the host,
    then a constant: JAX leaves this out for jit's sake; outside jit it is just a
    constructor)."""
    return asarray(np.fromiter(iterable, dtype=_np_dtype(dtype), count=count))


def fromfile(file, dtype=float, count: int = -1, sep: str = "", offset: int = 0) -> Array:
    """An array read from a file (binary, or text with ``sep``), as ``numpy.fromfile``
    (on the host, as :func:`fromiter`)."""
    return asarray(np.fromfile(file, dtype=_np_dtype(dtype), count=count, sep=sep,
                               offset=offset))


def _np_dtype(dtype):
    return np.float64 if dtype is float else (np.int64 if dtype is int else dtype)


class _Concatenator:
    """``r_`` and ``c_``: slices become ranges (a complex step counts points, as
    ``linspace``), scalars and arrays are concatenated along ``axis``; a leading string
    ``'axis'``, ``'axis,ndmin'`` or ``'axis,ndmin,trans'`` sets the axis, the minimum number
    of dimensions and where an upgraded 1-d array's axis goes, as numpy's."""

    def __init__(self, axis: int, ndmin: int, trans: int):
        self.axis, self.ndmin, self.trans = axis, ndmin, trans

    def __getitem__(self, key) -> Array:
        from .shape import concatenate
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans = self.axis, self.ndmin, self.trans
        if items and isinstance(items[0], str):
            spec, items = items[0], items[1:]
            if spec in ("r", "c"):
                raise ValueError(f"{spec!r}: matrix results are not supported (numpy matrices)")
            parts = [int(p) for p in spec.split(",")]
            axis = parts[0]
            ndmin = parts[1] if len(parts) > 1 else ndmin
            trans = parts[2] if len(parts) > 2 else trans
        arrays = [self._upgrade(self._item(i), ndmin, trans) for i in items]
        if not arrays:
            return asarray(np.zeros((0,)))
        from .. import dtypes
        d = dtypes.result_type(*[a.dtype for a in arrays])
        return concatenate([a.astype(d) for a in arrays], axis=axis)

    @staticmethod
    def _item(i) -> Array:
        if isinstance(i, slice):
            start = 0 if i.start is None else i.start
            step = 1 if i.step is None else i.step
            if isinstance(step, complex):
                return linspace(start, i.stop, int(abs(step)))
            return arange(start, i.stop, step)
        a = asarray(i)
        return a.reshape(1) if a.ndim == 0 else a

    @staticmethod
    def _upgrade(a: Array, ndmin: int, trans: int) -> Array:
        if a.ndim >= ndmin:
            return a
        # numpy: the array's own axes start at position `trans` among the new ones (-1:
        # last).
        extra = ndmin - a.ndim
        start = trans if trans >= 0 else ndmin + trans - a.ndim + 1
        start = min(max(start, 0), extra)
        return a.reshape((1,) * start + a.shape + (1,) * (extra - start))


r_ = _Concatenator(axis=0, ndmin=1, trans=-1)
c_ = _Concatenator(axis=-1, ndmin=2, trans=0)
