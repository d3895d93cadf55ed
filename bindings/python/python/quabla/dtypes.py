"""``quabla.dtypes``, as ``jax.dtypes``: ``float0`` (an integer value's tangent dtype),
canonicalization under the x64 flag, promotion, and dtype introspection.

JAX's ``bfloat16``, ``extended``, ``prng_key`` and ``TypePromotionError`` have no
counterpart: Quabla has no bfloat16 or typed-key dtypes, and its promotion never refuses a
pair (it has no strict promotion mode).
"""

from __future__ import annotations

import numpy as _np

from ._src.dtypes import canonicalize as _canonicalize, default_float as _default_float, float0
from ._src.dtypes import result_type as _strong_result_type
from .numpy import finfo, iinfo, issubdtype

__all__ = ["float0", "canonicalize_dtype", "finfo", "iinfo", "issubdtype", "result_type",
           "itemsize_bits", "scalar_type_of"]


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False) -> _np.dtype:
    """The dtype arrays of ``dtype`` get: float64 becomes float32 unless x64 is on, int64
    int32, float16 float32, as ``jax.dtypes.canonicalize_dtype``.

    >>> canonicalize_dtype("int64")
    dtype('int32')
    """
    return _canonicalize(dtype)


def result_type(*args, return_weak_type_flag: bool = False):
    """The dtype JAX's promotion gives ``args`` (dtypes, arrays or Python scalars; a Python
    scalar is weakly typed: it never widens a typed argument of its kind, and an int
    argument joined with a Python float gives the default float), as
    ``jax.dtypes.result_type``.

    >>> result_type(_np.int32, 1.0), result_type(_np.float32, 2), result_type(3)
    (dtype('float32'), dtype('float32'), dtype('int32'))
    """
    if not args:
        raise ValueError("result_type needs at least one argument")
    strong, weak = [], []
    for a in args:
        if isinstance(a, (int, float, complex)) and not isinstance(a, (bool, _np.generic)):
            weak.append(type(a))
        elif isinstance(a, (bool, _np.generic)):
            strong.append(_np.asarray(a).dtype)
        elif isinstance(a, (type, str, _np.dtype)) or not hasattr(a, "dtype"):
            strong.append(a)
        else:
            strong.append(a.dtype)
    if complex in weak:
        raise TypeError("result_type: Quabla has no complex dtypes")
    out = _strong_result_type(*strong) if strong else None
    # The result is weak when a Python scalar decided its kind.
    is_weak = True
    if float in weak and (out is None or out.kind != "f"):
        out = _default_float()
    elif int in weak and (out is None or out.kind == "b"):
        out = _np.dtype(_np.int32)
    else:
        is_weak = False
    return (out, is_weak) if return_weak_type_flag else out


def itemsize_bits(dtype) -> int:
    """Bits per element of ``dtype`` (0 for ``float0``).

    >>> itemsize_bits("float32")
    32
    """
    d = _np.dtype(dtype)
    return 0 if d == float0 else 8 * d.itemsize


def scalar_type_of(x) -> type:
    """The Python scalar type (``bool``, ``int``, ``float`` or ``complex``) matching ``x``'s
    dtype.

    >>> scalar_type_of(1.5), scalar_type_of(_np.int32(2))
    (<class 'float'>, <class 'int'>)
    """
    d = _np.dtype(x.dtype) if hasattr(x, "dtype") else _np.asarray(x).dtype
    kind = d.kind
    if kind == "b":
        return bool
    if kind in "iu":
        return int
    if kind == "f":
        return float
    if kind == "c":
        return complex
    raise TypeError(f"scalar_type_of: dtype {d} has no Python scalar type")
