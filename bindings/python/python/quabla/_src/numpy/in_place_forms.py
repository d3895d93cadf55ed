"""numpy's in-place writers in JAX's out-of-place form (``inplace=False`` is required, as
JAX requires it): ``put`` and ``place``; and ``block``, which assembles an array from
nested lists of blocks."""

from __future__ import annotations

import numpy as np

from ..array import Array
from .creation import asarray
from .elementwise import where
from .reductions import cumsum
from .shape import concatenate, ravel


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _immutable(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(
            f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
            f"Pass inplace=False to instead return an updated array.")


def put(a, ind, v, mode=None, *, inplace: bool = True) -> Array:
    """``a`` with the elements at flat indices ``ind`` set to ``v`` (repeated to the length of
    ``ind``, as numpy's). Out-of-range indices are clamped (``mode=None`` or ``"clip"``) or
    wrapped (``"wrap"``), as JAX's; ``"raise"`` cannot be checked in a traced program."""
    _immutable("put", inplace)
    if mode not in (None, "clip", "wrap"):
        raise ValueError(f"put: mode must be 'clip' or 'wrap' (or None: clip), got {mode!r}")
    x = _arr(a)
    flat = ravel(x)
    idx = ravel(_arr(ind)).astype(np.int32)
    vals = ravel(_arr(v)).astype(x.dtype)
    n, k = flat.shape[0], idx.shape[0]
    if k == 0:
        return x
    if vals.shape[0] == 0:
        raise ValueError("put: v must hold at least one value")
    if vals.shape[0] != k:
        vals = vals[np.arange(k) % vals.shape[0]]
    idx = idx % n if mode == "wrap" else idx.clip(-n, n - 1)
    idx = where(idx < 0, idx + n, idx)
    return flat.at[idx].set(vals).reshape(x.shape)


def place(arr, mask, vals, *, inplace: bool = True) -> Array:
    """``arr`` with its elements where ``mask`` is true replaced by ``vals`` in order, cycling
    through ``vals`` (numpy's ``place``; traceable: the k-th true element takes
    ``vals[k % len(vals)]``)."""
    _immutable("place", inplace)
    x = _arr(arr)
    m = _arr(mask).astype(np.bool_)
    if m.shape != x.shape:
        raise ValueError(f"place: mask has shape {m.shape}, arr {x.shape}; they must match")
    vals = ravel(_arr(vals)).astype(x.dtype)
    if vals.shape[0] == 0:
        raise ValueError("place: vals must hold at least one value")
    rank = cumsum(ravel(m).astype(np.int32)) - 1
    picked = vals[rank % vals.shape[0]].reshape(x.shape)
    return where(m, picked, x)


def block(arrays) -> Array:
    """An array assembled from nested lists of blocks, as numpy's ``block``: the innermost
    lists join along the last axis, the next ones out along the one before, and so on. The
    nesting is walked with an explicit stack (no recursion an input controls)."""
    if not isinstance(arrays, list):
        if isinstance(arrays, tuple):
            raise TypeError("block: use lists, not tuples, to nest the blocks")
        return _arr(arrays)
    depth, node = 0, arrays
    while isinstance(node, list):
        if not node:
            raise ValueError("block: lists cannot be empty")
        node, depth = node[0], depth + 1
    # Leaves with their nesting depth, checked equal (numpy's rule).
    leaves = []
    stack = [(arrays, 0)]
    while stack:
        item, d = stack.pop()
        if isinstance(item, tuple):
            raise TypeError("block: use lists, not tuples, to nest the blocks")
        if isinstance(item, list):
            if not item:
                raise ValueError("block: lists cannot be empty")
            stack.extend((x, d + 1) for x in item)
        elif d != depth:
            raise ValueError(f"block: list depths are mismatched ({d} and {depth})")
        else:
            leaves.append(_arr(item))
    ndim = max([depth] + [x.ndim for x in leaves])
    # Post-order over the lists: each list becomes the concatenation of its children along
    # axis `level - depth` (the innermost, level `depth - 1`, joins along the last axis).
    done: dict = {}
    order = [(arrays, 0, False)]
    while order:
        item, level, expanded = order.pop()
        if not isinstance(item, list):
            a = _arr(item)
            done[id(item)] = a.reshape((1,) * (ndim - a.ndim) + tuple(a.shape))
            continue
        if not expanded:
            order.append((item, level, True))
            order.extend((x, level + 1, False) for x in item)
            continue
        done[id(item)] = concatenate([done[id(x)] for x in item], axis=level - depth)
    return done[id(arrays)]
