"""``jax.scipy.ndimage.map_coordinates``: an array sampled at arbitrary coordinates by
nearest-neighbour (order 0) or multilinear (order 1) interpolation, with JAX's boundary
modes (JAX's ``'constant'`` and ``'wrap'`` are scipy's ``'grid-constant'`` and
``'grid-wrap'``). Each output gathers its ``2**ndim`` (order 1) neighbours, so it is
differentiable in the input values and, for order 1, in the coordinates."""

from __future__ import annotations

import functools
import itertools
from typing import Sequence

import numpy as np

from ..array import Array
from ..numpy.creation import asarray
from ..numpy.array_api import trunc
from ..numpy.elementwise import abs as abs_, floor, sign, where

__all__ = ["map_coordinates"]


def _mirror(index, size: int):
    s = size - 1
    if s == 0:
        return index * 0
    return abs_((index + s) % (2 * s) - s)


def _reflect(index, size: int):
    return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2


_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: index.clip(0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x):
    whole = trunc(x)
    return whole + where(abs_(x - whole) >= 0.5, sign(x), 0)


def _nodes(coordinate, order: int):
    """(integer index, weight) pairs of one axis's interpolation."""
    if order == 0:
        index = coordinate if coordinate.dtype.kind in "iu" else _round_half_away(coordinate)
        return [(index.astype(np.int32), 1)]
    lower = floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates: Sequence, order: int, mode: str = "constant",
                    cval=0.0) -> Array:
    """``input`` interpolated at ``coordinates`` (one array per axis of ``input``, all of
    one shape, the output's), as ``jax.scipy.ndimage.map_coordinates``: ``order`` 0
    (nearest, halves rounded away from zero) or 1 (linear); ``mode`` ``'constant'`` (``cval``
    outside), ``'nearest'``, ``'wrap'``, ``'mirror'`` or ``'reflect'``. Integer inputs are
    rounded back to their dtype.

    >>> import quabla.numpy as qnp
    >>> map_coordinates(qnp.arange(12.0).reshape(3, 4), [qnp.array([0.5, 2.0]),
    ...                 qnp.array([0.5, 3.5])], order=1).tolist()
    [2.5, 5.5]
    """
    x = asarray(input)
    coords = [asarray(c) for c in coordinates]
    if len(coords) != x.ndim:
        raise ValueError(f"map_coordinates: coordinates must be a sequence of length "
                         f"input.ndim, but {len(coords)} != {x.ndim}")
    if mode not in _FIXERS:
        raise NotImplementedError(f"map_coordinates: mode {mode!r} is not supported; use one "
                                  f"of {sorted(_FIXERS)}")
    if order not in (0, 1):
        raise NotImplementedError("map_coordinates: order must be 0 or 1 (as JAX's)")
    fix = _FIXERS[mode]
    per_axis = []
    for c, size in zip(coords, x.shape):
        per_axis.append([(fix(i, size), (i >= 0) & (i < size) if mode == "constant" else None,
                          w) for i, w in _nodes(c, order)])
    fill = asarray(cval).astype(x.dtype)
    total = None
    for combo in itertools.product(*per_axis):
        indices = tuple(i for i, _, _ in combo)
        values = x[indices]
        valid = [v for _, v, _ in combo if v is not None]
        if valid:
            values = where(functools.reduce(lambda a, b: a & b, valid), values, fill)
        weight = functools.reduce(lambda a, b: a * b, [w for _, _, w in combo])
        term = values * weight
        total = term if total is None else total + term
    if total is None:  # a 0-d input: no axes to interpolate over.
        total = x
    if x.dtype.kind in "iu":
        total = _round_half_away(total)
    return total.astype(x.dtype)
