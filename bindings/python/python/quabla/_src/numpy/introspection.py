"""Questions about values and dtypes, as ``jax.numpy``: ``isscalar``, ``iterable``,
``promote_types``, ``issubdtype``."""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..array import Array


def isscalar(element) -> bool:
    """Whether ``element`` is a scalar: numpy's scalars, and (unlike numpy, as JAX) arrays of
    zero dimensions."""
    if isinstance(element, (Array, np.ndarray)):
        return element.ndim == 0
    return bool(np.isscalar(element))


def iterable(y) -> bool:
    """Whether ``iter(y)`` works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def promote_types(a, b) -> np.dtype:
    """The dtype JAX's promotion gives two strong dtypes (``int32`` and ``float32`` make
    ``float32``). Quabla has no 64-bit integers: ``int32`` with ``uint32`` is ``int32``
    where JAX gives ``int64``."""
    return _dt.result_type(a, b)


def issubdtype(arg1, arg2) -> bool:
    """numpy's ``issubdtype`` (``issubdtype(float32, floating)``)."""
    return bool(np.issubdtype(arg1, arg2))


# numpy's abstract scalar types, for ``issubdtype(x.dtype, floating)`` (JAX re-exports them).
generic = np.generic
number = np.number
inexact = np.inexact
floating = np.floating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex dtype: never for Quabla arrays (no complex dtypes); numpy
    values and Python complex numbers are asked as numpy asks."""
    if isinstance(x, Array):
        return False
    return bool(np.iscomplexobj(x))


def isrealobj(x) -> bool:
    """``not iscomplexobj(x)``."""
    return not iscomplexobj(x)


def iscomplex(x) -> Array:
    """Elementwise: a nonzero imaginary part. All false for Quabla's real dtypes."""
    from .creation import asarray, zeros
    a = x if isinstance(x, Array) else asarray(x)
    return zeros(a.shape, np.bool_)


def isreal(x) -> Array:
    """Elementwise: a zero imaginary part. All true for Quabla's real dtypes."""
    from .creation import asarray, ones
    a = x if isinstance(x, Array) else asarray(x)
    return ones(a.shape, np.bool_)
