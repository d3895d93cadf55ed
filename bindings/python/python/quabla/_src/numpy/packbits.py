"""``numpy.packbits`` / ``unpackbits``: booleans packed eight to an element and back.
Quabla has no uint8: packed bytes are uint32 (what ``uint8`` maps to everywhere here), and
``unpackbits`` reads the low eight bits of each unsigned element."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..array import Array
from .creation import asarray

__all__ = ["packbits", "unpackbits"]

_WEIGHTS = {"big": [128, 64, 32, 16, 8, 4, 2, 1], "little": [1, 2, 4, 8, 16, 32, 64, 128]}


def _order(bitorder: str):
    if bitorder not in _WEIGHTS:
        raise ValueError(f"bitorder must be 'big' or 'little', got {bitorder!r}")
    return _WEIGHTS[bitorder]


def packbits(a, axis: Optional[int] = None, bitorder: str = "big") -> Array:
    """The nonzero pattern of ``a`` along ``axis`` (all of it, flattened, when None) packed
    eight to a byte, the last byte padded with zeros, as ``numpy.packbits``.

    >>> import quabla.numpy as qnp
    >>> packbits(qnp.array([1, 0, 1, 1, 0, 0, 0, 1, 1]), bitorder="little").tolist()
    [141, 1]
    """
    from .shape import moveaxis, pad
    weights = _order(bitorder)
    x = asarray(a)
    if x.dtype.kind not in "iub":
        raise TypeError(f"packbits needs an integer or boolean array, got {x.dtype}")
    if axis is None:
        x, axis = x.reshape(-1), 0
    x = moveaxis(x != 0, axis, -1).astype(np.uint32)
    n = x.shape[-1]
    x = pad(x, [(0, 0)] * (x.ndim - 1) + [(0, -n % 8)])
    groups = x.reshape(x.shape[:-1] + (x.shape[-1] // 8, 8))
    packed = (groups * asarray(np.array(weights, np.uint32))).sum(axis=-1).astype(np.uint32)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis: Optional[int] = None, count: Optional[int] = None,
               bitorder: str = "big") -> Array:
    """Each byte of ``a`` (unsigned) as eight 0/1 values along ``axis`` (flattened when
    None); ``count`` keeps that many (negative: drops that many from the end; more than
    there are: pads with zeros), as ``numpy.unpackbits``.

    >>> import quabla.numpy as qnp
    >>> unpackbits(qnp.array([5], dtype=qnp.uint8)).tolist()
    [0, 0, 0, 0, 0, 1, 0, 1]
    """
    from .assorted import right_shift
    from .shape import moveaxis, pad
    shifts = np.array([7, 6, 5, 4, 3, 2, 1, 0] if _order(bitorder)[0] == 128
                      else list(range(8)), np.uint32)
    x = asarray(a)
    if x.dtype.kind != "u":
        raise TypeError(f"unpackbits needs an unsigned (byte) array, got {x.dtype}")
    if axis is None:
        x, axis = x.reshape(-1), 0
    x = moveaxis(x, axis, -1)
    bits = right_shift(x[..., None], asarray(shifts)) & 1
    bits = bits.reshape(x.shape[:-1] + (x.shape[-1] * 8,)).astype(np.uint32)
    total = bits.shape[-1]
    if count is not None:
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - total)])
    return moveaxis(bits, -1, axis)
