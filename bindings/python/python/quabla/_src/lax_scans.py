"""``lax.associative_scan`` and ``lax.map``, composed of slicing, ``scan`` and ``vmap``."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from .array import Array
from .numpy.creation import asarray
from .numpy.shape import concatenate, flip, stack
from .tree_util import tree_flatten, tree_unflatten


def _along(x: Array, axis: int, sl: slice) -> Array:
    index = [slice(None)] * x.ndim
    index[axis] = sl
    return x[tuple(index)]


def _interleave(a: Array, b: Array, axis: int) -> Array:
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` as long as ``b`` or one
    longer)."""
    n = b.shape[axis]
    pairs = stack([_along(a, axis, slice(0, n)), b], axis=axis + 1)
    shape = list(a.shape)
    shape[axis] = 2 * n
    out = pairs.reshape(tuple(shape))
    if a.shape[axis] > n:
        out = concatenate([out, _along(a, axis, slice(n, None))], axis=axis)
    return out


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """All prefix combinations ``fn(...fn(fn(x0, x1), x2)..., xi)`` of an associative ``fn``
    over ``axis`` of every leaf of ``elems``, by JAX's (Blelloch-style) algorithm: combine
    neighbouring pairs, scan the half-length result, then fill in the even positions; so
    ``O(log n)`` levels of vectorised ``fn`` calls, each on whole slices.

    >>> associative_scan(qnp.add, qnp.arange(5.0))  # [0, 1, 3, 6, 10]

    (Interleaving by stack and reshape keeps a ``-0.0`` that JAX's add of zero padding
    turns into ``+0.0``.)
    """
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    leaves = [x if isinstance(x, Array) else asarray(x) for x in leaves]
    ndim = leaves[0].ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of range for {ndim}-d elems")
    axis = axis % ndim
    n = leaves[0].shape[axis]
    if any(x.ndim <= axis or x.shape[axis] != n for x in leaves[1:]):
        raise ValueError("associative_scan: every leaf needs the same length along axis "
                         f"{axis}, got {[x.shape for x in leaves]}")
    if reverse:
        leaves = [flip(x, axis) for x in leaves]

    def combine(a: List[Array], b: List[Array]) -> List[Array]:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure {tree}, got "
                            f"{out_tree}")
        return out

    # Down: each level combines the pairs of the one above; kept for the way up.
    levels = [leaves]
    while levels[-1][0].shape[axis] >= 2:
        top = levels[-1]
        levels.append(combine([_along(x, axis, slice(0, -1, 2)) for x in top],
                              [_along(x, axis, slice(1, None, 2)) for x in top]))
    # Up: a level's prefixes at odd positions are the scanned level below; the even ones
    # (past the first) combine those with the level's own even elements.
    scanned = levels.pop()
    while levels:
        top = levels.pop()
        m = top[0].shape[axis]
        odd = scanned
        tail = [_along(x, axis, slice(2, None, 2)) for x in top]
        head = odd if m % 2 else [_along(x, axis, slice(0, -1)) for x in odd]
        even = combine(head, tail) if tail[0].shape[axis] else tail
        even = [concatenate([_along(x, axis, slice(0, 1)), e], axis=axis)
                for x, e in zip(top, even)]
        scanned = [_interleave(e, o, axis) for e, o in zip(even, odd)]
    if reverse:
        scanned = [flip(x, axis) for x in scanned]
    return tree_unflatten(tree, scanned)


def map(f: Callable, xs, *, batch_size: Optional[int] = None):  # noqa: A001 - lax's name
    """``f`` over the leading axis of every leaf of ``xs``, stacked: a ``scan`` (one call of
    ``f`` traced), or with ``batch_size`` a ``scan`` over batches of a ``vmap``-ed ``f`` (the
    remainder batched separately), as ``jax.lax.map``.

    >>> map(lambda x: x * 2, qnp.arange(3.0))  # [0, 2, 4]
    """
    from .control_flow import scan
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    from .api import vmap
    from .tree_util import tree_map
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive int, got {batch_size!r}")
    leaves, _ = tree_flatten(xs)
    n = leaves[0].shape[0]
    full, rest = divmod(n, batch_size)
    out: Any = None
    if full:
        batched = tree_map(lambda x: x[:full * batch_size].reshape(
            (full, batch_size) + tuple(x.shape[1:])), xs)
        ys = scan(lambda _, x: ((), vmap(f)(x)), (), batched)[1]
        out = tree_map(lambda y: y.reshape((full * batch_size,) + tuple(y.shape[2:])), ys)
    if rest:
        tail = vmap(f)(tree_map(lambda x: x[full * batch_size:], xs))
        out = tail if out is None else tree_map(
            lambda a, b: concatenate([a, b], axis=0), out, tail)
    return out
