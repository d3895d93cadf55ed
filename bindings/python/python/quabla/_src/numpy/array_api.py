"""The Array API standard's names (version 2024.12) that numpy spells differently or lacks:
``astype``, ``isdtype``, ``can_cast``, ``concat``, ``unstack``, ``matrix_transpose``,
``vecdot``, the bitwise shifts and ``bitwise_invert``, ``positive``, ``trunc``, ``imag``;
and ``__array_namespace_info__``. (``sort``, ``argsort`` and the ``unique_*`` family live
in ``sorting.py`` and ``setops.py``; ``nextafter`` in ``floating.py``.)
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import dtypes as _dt
from ..array import Array
from .creation import asarray
from .elementwise import binary, where

__array_api_version__ = "2024.12"


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Array:
    """``x`` converted to ``dtype`` (``copy`` is accepted: arrays are immutable)."""
    x = _arr(x)
    if device is not None:
        from ..runtime import device_put
        x = device_put(x, device)
    return x.astype(dtype)


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iuf",
}


def isdtype(dtype, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of the standard's kind names
    (``"bool"``, ``"signed integer"``, ``"unsigned integer"``, ``"integral"``,
    ``"real floating"``, ``"complex floating"``, ``"numeric"``), or a tuple of those."""
    d = np.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; use one of {sorted(_KINDS)}")
        return _KINDS[kind](d)
    return d == np.dtype(kind)


def can_cast(from_, to, /) -> bool:
    """Whether the standard's promotion of ``from_`` (a dtype or an array) with ``to`` is
    ``to`` (no cross-kind casts, bool only to bool)."""
    f = from_.dtype if isinstance(from_, (Array, np.ndarray)) else np.dtype(from_)
    t = np.dtype(to)
    if f.kind == "b" or t.kind == "b":
        return f.kind == t.kind
    if (f.kind == "f") != (t.kind == "f"):
        return False
    try:
        return np.dtype(_dt.result_type(f, t)) == t
    except TypeError:
        return False


def concat(arrays: Sequence, /, *, axis: Optional[int] = 0) -> Array:
    """The arrays joined along ``axis`` (flattened first when ``axis`` is None)."""
    from .shape import concatenate
    if axis is None:
        return concatenate([_arr(a).reshape(-1) for a in arrays])
    return concatenate(arrays, axis=axis)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of ``x`` along ``axis``, as a tuple."""
    from .shape import moveaxis
    x = _arr(x)
    moved = moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


def matrix_transpose(x, /) -> Array:
    """The last two axes of ``x`` swapped."""
    from .shape import swapaxes
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 axes, got {x.ndim}")
    return swapaxes(x, -1, -2)


def vecdot(x1, x2, /, *, axis: int = -1) -> Array:
    """``sum(x1 * x2, axis)`` with broadcasting (real dtypes: no conjugation needed)."""
    from .reductions import sum as sum_
    from .shape import broadcast_arrays
    a, b = broadcast_arrays(_arr(x1), _arr(x2))
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has sizes {a.shape[axis]} and {b.shape[axis]}")
    return sum_(a * b, axis=axis)


def bitwise_left_shift(x1, x2, /) -> Array:
    """``x1 << x2`` for integers."""
    return binary("shift_left", x1, x2)


def bitwise_right_shift(x1, x2, /) -> Array:
    """``x1 >> x2``: arithmetic for signed integers, logical for unsigned."""
    x1 = _arr(x1)
    op = "shift_right_logical" if x1.dtype.kind == "u" else "shift_right_arithmetic"
    return binary(op, x1, x2)


def bitwise_invert(x, /) -> Array:
    """``~x`` (logical not for bool)."""
    return Array(_arr(x)._raw.unary("not"))


def positive(x, /) -> Array:
    """``+x``."""
    return _arr(x)


def trunc(x, /) -> Array:
    """Rounds toward zero (integers unchanged)."""
    from .elementwise import ceil, floor
    x = _arr(x)
    if x.dtype.kind != "f":
        return x
    return where(x < 0, ceil(x), floor(x))


def imag(x, /) -> Array:
    """The imaginary part: zeros, as Quabla has no complex dtypes."""
    from .creation import zeros_like
    return zeros_like(_arr(x))


class _Info:
    """What ``__array_namespace_info__()`` returns: the namespace's capabilities, devices and
    dtypes, as the standard describes."""

    def capabilities(self) -> dict:
        # Boolean masks and data-dependent shapes need concrete arrays (not under jit).
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self):
        from ..runtime import devices
        return devices()[0]

    def devices(self) -> list:
        from ..runtime import devices
        return list(devices())

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": np.dtype(_dt.default_float()), "complex floating": None,
                "integral": np.dtype(np.int32), "indexing": np.dtype(np.int32)}

    def dtypes(self, *, device=None, kind=None) -> dict:
        all_ = {"bool": np.dtype(np.bool_), "int32": np.dtype(np.int32),
                "uint32": np.dtype(np.uint32), "float32": np.dtype(np.float32)}
        if _dt.default_float() == np.float64:
            all_["float64"] = np.dtype(np.float64)
        if kind is None:
            return all_
        return {n: d for n, d in all_.items() if isdtype(d, kind)}


def __array_namespace_info__() -> _Info:
    """The namespace's inspection object (capabilities, devices, default and available
    dtypes), as the Array API standard."""
    return _Info()
