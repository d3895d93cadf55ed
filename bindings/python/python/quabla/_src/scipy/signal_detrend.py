"""``jax.scipy.signal.detrend``: the mean (``'constant'``) or the least-squares line of
each segment between breakpoints (``'linear'``) removed along an axis."""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from ..array import Array
from ..numpy.creation import arange
from ..numpy.elementwise import as_float


def detrend(data, axis: int = -1, type: str = "linear",  # noqa: A002 - scipy's name
            bp: Union[int, Sequence[int], np.ndarray] = 0, overwrite_data=None) -> Array:
    """``data`` minus its trend along ``axis``: the mean for ``type='constant'``; for
    ``'linear'``, the least-squares line fitted to each piece between the breakpoints
    ``bp`` (indices along ``axis``), as ``scipy.signal.detrend``.

    >>> detrend(qnp.asarray([1.0, 2.0, 3.0])).tolist()
    [0.0, 0.0, 0.0]
    """
    from ..numpy.reductions import mean, sum as sum_
    from ..numpy.shape import concatenate, moveaxis
    if type in ("c", "constant"):
        x = as_float(data)
        return x - mean(x, axis=axis, keepdims=True)
    if type not in ("l", "linear"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}")
    x = moveaxis(as_float(data), axis, -1)
    n = x.shape[-1]
    cuts = sorted({0, n} | {int(b) for b in np.atleast_1d(np.asarray(bp)).tolist()})
    if cuts[0] < 0 or cuts[-1] > n:
        raise ValueError(f"detrend: breakpoints must lie in [0, {n}], got {bp!r}")
    pieces = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        seg = x[..., lo:hi]
        t = arange(hi - lo).astype(seg.dtype)
        t = t - (hi - lo - 1) / 2.0
        centred = seg - mean(seg, axis=-1, keepdims=True)
        denom = float(np.sum(np.asarray(t) ** 2)) or 1.0
        slope = sum_(centred * t, axis=-1, keepdims=True) / denom
        pieces.append(centred - slope * t)
    return moveaxis(concatenate(pieces, axis=-1), -1, axis)
