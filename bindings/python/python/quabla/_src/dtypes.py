"""Dtypes: the five Quabla supports, as numpy dtypes, and how Python values map to them.

As in JAX, float64 exists only with ``jax_enable_x64`` (see ``config.py``): with it off,
float64 inputs become float32 (numpy arrays and scalars silently; an explicitly requested
``dtype=float64`` with JAX's warning). Python scalars are weakly typed; literals with no
other type default to float32 (float64 with x64 on) / int32.
"""

from __future__ import annotations

import warnings

import numpy as np

from .config import config
from .config import default_float  # noqa: F401  (re-exported: the default float dtype)

float32 = np.float32
float64 = np.float64
int32 = np.int32
uint32 = np.uint32
bool_ = np.bool_
#: The dtype of the tangent of an integer or boolean value (JAX's ``jax.dtypes.float0``): a
#: custom JVP rule gets numpy zeros of it for such arguments.
float0 = np.dtype([("float0", np.void, 0)])

SUPPORTED = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.int32): "int32",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.bool_): "bool",
}

_NARROWED = {
    "f": np.dtype(np.float32),  # float16 widens to the smallest supported float
    "i": np.dtype(np.int32),
    "u": np.dtype(np.uint32),
    "b": np.dtype(np.bool_),
}


def canonicalize(dtype, requested_in=None) -> np.dtype:
    """The supported dtype for ``dtype`` (a numpy dtype, type, name or Python type).

    int64/int16/int8 map to int32, uint64/... to uint32, float16 to float32, and float64 to
    float32 unless ``jax_enable_x64`` is on; complex types and strings are refused. With
    ``requested_in`` (the function's name, or ``""``) the dtype was asked for explicitly,
    and truncating float64 warns as JAX does.

    >>> canonicalize("float64")  # x64 off, the default
    dtype('float32')
    """
    if dtype is float:
        return default_float()
    if dtype is int:
        return np.dtype(np.int32)
    if dtype is bool:
        return np.dtype(np.bool_)
    d = np.dtype(dtype)
    if d == np.float64 and not config.read("jax_enable_x64"):
        if requested_in is not None:
            _warn_truncated(d, requested_in)
        return np.dtype(np.float32)
    if d in SUPPORTED:
        return d
    if d.kind == "f" and d.itemsize < 4:
        return _NARROWED["f"]
    if d.kind in "iub":
        return _NARROWED[d.kind]
    raise TypeError(
        f"dtype {d} is not supported; Quabla arrays are float32, float64, int32, uint32 or bool")


def _warn_truncated(d: np.dtype, requested_in: str) -> None:
    where = f" requested in {requested_in}" if requested_in else ""
    warnings.warn(
        f"Explicitly requested dtype {d}{where} is not available, and will be truncated to "
        "dtype float32. To enable more dtypes, set the jax_enable_x64 configuration option "
        "or the JAX_ENABLE_X64 shell environment variable.", UserWarning, stacklevel=4)


def name(dtype) -> str:
    """The core's name of a (canonical) dtype."""
    return SUPPORTED[canonicalize(dtype)]


def is_float(dtype) -> bool:
    return canonicalize(dtype).kind == "f"


def scalar_dtype(x) -> np.dtype:
    """Default dtype of a Python scalar on its own."""
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int32)
    if isinstance(x, float):
        return default_float()
    return canonicalize(np.asarray(x).dtype)


def result_type(*dtypes) -> np.dtype:
    """JAX's promotion for two or more strong dtypes (int32 + float32 -> float32, not float64)."""
    ds = [canonicalize(d) for d in dtypes]
    floats = [d for d in ds if d.kind == "f"]
    if floats:
        return max(floats, key=lambda d: d.itemsize)
    ints = [d for d in ds if d.kind in "iu"]
    if ints:
        kinds = {d.kind for d in ints}
        return np.dtype(np.int32) if "i" in kinds else np.dtype(np.uint32)
    return np.dtype(np.bool_)


def is_python_float(x) -> bool:
    """A Python float (weakly typed), not a numpy scalar."""
    return isinstance(x, float) and not isinstance(x, np.generic)
