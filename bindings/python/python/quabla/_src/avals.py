"""``typeof``: a value's type as JAX's abstract value shows it (``ShapedArray``: shape,
dtype, and whether a Python scalar's weak type)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as _dt
from .array import Array


class Shaped:
    """``ndim`` and ``size`` from a ``shape`` attribute, for the array stand-ins
    (``ShapedArray``, ``ShapeDtypeStruct``).

    >>> ShapedArray((2, 3), np.float32).size
    6
    """

    __slots__ = ()
    shape: tuple

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


class ShapedArray(Shaped):
    """An array's type, as ``jax.core.ShapedArray``: ``shape``, ``dtype``, ``weak_type``
    (True for a Python scalar, whose dtype gives way to an array's).

    >>> ShapedArray((2, 3), np.float32)
    ShapedArray(float32[2,3])
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)

    def str_short(self) -> str:
        return f"{self.dtype.name}[{','.join(str(d) for d in self.shape)}]"

    def __str__(self) -> str:
        return self.str_short()

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


def typeof(x: Any) -> ShapedArray:
    """The type of ``x`` (an array, traced or not, a numpy array or scalar, a Python scalar,
    a ``ShapeDtypeStruct``), as ``jax.typeof``.

    >>> typeof(np.ones((2, 3), np.float32))
    ShapedArray(float32[2,3])
    >>> typeof(3)
    ShapedArray(int32[], weak_type=True)
    """
    from .api import ShapeDtypeStruct
    if isinstance(x, (Array, ShapeDtypeStruct)):
        return ShapedArray(x.shape, x.dtype)
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return ShapedArray((), _dt.scalar_dtype(x), weak_type=True)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), _dt.canonicalize(x.dtype))
    raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type")
