"""Collectives over a named ``vmap`` axis, as ``jax.lax``'s: ``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather``, ``axis_index``, ``axis_size``, ``ppermute``, ``pshuffle``,
``psum_scatter`` and ``all_to_all`` (the last four composed of ``all_gather``, ``psum`` and
``axis_index``).
``vmap(f, axis_name='i')`` names its batch axis; inside ``f`` these combine the values of all its elements (the core
rewrites them into reductions over the batch axis when it batches ``f``). Outside such a
``vmap`` they raise ``NameError``, as JAX's. Quabla batches before it differentiates, so
``grad`` of a ``vmap`` using ``pmax`` works where JAX refuses; inside the ``vmap``, ``pmax``
and ``pmin`` have no derivative, as in JAX."""

from __future__ import annotations

import contextlib
from typing import List, Sequence, Tuple, Union

import numpy as np

from .. import _quabla
from .array import Array
from .numpy.creation import asarray
from .tree_util import tree_map

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "pbroadcast", "ppermute", "pshuffle", "psum_scatter", "all_to_all", "pswapaxes"]

AxisName = Union[str, Sequence[str]]

#: The named axes of the ``vmap``s tracing now, innermost last: ``(name, size)``.
_BOUND: List[Tuple[str, int]] = []


@contextlib.contextmanager
def binding(name, size: int):
    """Marks ``name`` (of ``size`` elements) as bound while a ``vmap`` traces its function."""
    if name is None:
        yield
        return
    _BOUND.append((name, size))
    try:
        yield
    finally:
        _BOUND.pop()


def _names(axis_name: AxisName) -> Tuple[str, ...]:
    names = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"axis names are strings, got {n!r}")
        if not any(b == n for b, _ in _BOUND):
            raise NameError(f"unbound axis name: {n} (call this inside vmap(..., "
                            f"axis_name={n!r}))")
    return names


def _refuse_groups(axis_index_groups, what: str) -> None:
    """JAX's ``axis_index_groups`` (collectives over subgroups of the axis) are not
    supported: a clear error rather than a reduction over the whole axis."""
    if axis_index_groups is not None:
        raise NotImplementedError(f"{what}: axis_index_groups is not supported")


def axis_size(axis_name: AxisName) -> int:
    """How many elements the named ``vmap`` axis (or axes, multiplied) has.

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.vmap(lambda v: v * axis_size("i"), axis_name="i")(qnp.ones(3)).tolist()
    [3.0, 3.0, 3.0]
    """
    size = 1
    for n in _names(axis_name):
        size *= next(s for b, s in reversed(_BOUND) if b == n)
    return size


def _reduce(x, axis_name: AxisName, kind: str):
    names = _names(axis_name)

    def one(leaf):
        a = asarray(leaf)
        if a.dtype == np.bool_:
            a = a.astype(np.int32)  # JAX counts booleans
        for n in names:
            a = Array(_quabla.named_axis_reduce(a._raw, n, kind))
        return a

    return tree_map(one, x)


def psum(x, axis_name: AxisName, *, axis_index_groups=None):
    """The sum of ``x`` (a pytree) over the named ``vmap`` axis, the same on every element
    (booleans are counted as int32), as ``jax.lax.psum``.

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.vmap(lambda v: v / psum(v, "i"), axis_name="i")(qnp.array([1.0, 3.0])).tolist()
    [0.25, 0.75]
    """
    _refuse_groups(axis_index_groups, "psum")
    return _reduce(x, axis_name, "sum")


def pmean(x, axis_name: AxisName, *, axis_index_groups=None):
    """The mean of ``x`` over the named ``vmap`` axis, as ``jax.lax.pmean``."""
    size = axis_size(axis_name)
    return tree_map(lambda s: s / size, psum(x, axis_name, axis_index_groups=axis_index_groups))


def pmax(x, axis_name: AxisName, *, axis_index_groups=None):
    """The maximum of ``x`` over the named ``vmap`` axis, as ``jax.lax.pmax``."""
    _refuse_groups(axis_index_groups, "pmax")
    return _reduce(x, axis_name, "max")


def pmin(x, axis_name: AxisName, *, axis_index_groups=None):
    """The minimum of ``x`` over the named ``vmap`` axis, as ``jax.lax.pmin``."""
    _refuse_groups(axis_index_groups, "pmin")
    return _reduce(x, axis_name, "min")


def axis_index(axis_name: str) -> Array:
    """This element's position along the named ``vmap`` axis (int32), as
    ``jax.lax.axis_index`` (one name; JAX's tuple of names is not supported)."""
    if not isinstance(axis_name, str):
        raise TypeError(f"axis_index takes one axis name (a string), got {axis_name!r}")
    _names(axis_name)
    return Array(_quabla.axis_index(axis_name))


def all_gather(x, axis_name: str, *, axis_index_groups=None, axis: int = 0,
               tiled: bool = False):
    """Every element's ``x`` (a pytree), stacked along a new axis ``axis`` (concatenated
    along it with ``tiled``), on every element, as ``jax.lax.all_gather``: each element
    places its value in its own slot of zeros and the slots are summed.

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.vmap(lambda v: all_gather(v, "i"), axis_name="i")(qnp.array([1.0, 2.0]))[0].tolist()
    [1.0, 2.0]
    """
    from .numpy.creation import arange
    from .numpy.elementwise import where
    from .numpy.shape import concatenate, moveaxis
    _refuse_groups(axis_index_groups, "all_gather")
    n = axis_size(axis_name)
    me = axis_index(axis_name)

    def one(leaf):
        a = asarray(leaf)
        slots = (arange(n, dtype=np.int32) == me).reshape((n,) + (1,) * a.ndim)
        # A select, not a product: another element's inf or NaN never reaches this slot.
        stacked = _reduce(where(slots, a[None], 0), axis_name, "sum").astype(a.dtype)
        if not tiled:
            return moveaxis(stacked, 0, axis % (a.ndim + 1))
        if a.ndim == 0:
            raise ValueError("all_gather: tiled=True needs an operand with an axis")
        return concatenate([stacked[i] for i in range(n)], axis=axis % a.ndim)

    return tree_map(one, x)


def ppermute(x, axis_name: str, perm):
    """Each element's ``x`` (a pytree) sent along the ``(source, destination)`` pairs of
    ``perm``: element ``d`` gets the ``x`` of the ``s`` with ``(s, d)`` in ``perm``, zeros
    when no pair ends at it, as ``jax.lax.ppermute`` (JAX's ``vmap`` also refuses pairs that
    are not a full permutation; Quabla allows them, as ``pmap`` does).

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.vmap(lambda v: ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]),
    ...             axis_name="i")(qnp.array([0.0, 1.0, 2.0])).tolist()
    [2.0, 0.0, 1.0]
    """
    from .numpy.elementwise import where
    n = axis_size(axis_name)
    source = np.full(n, -1, np.int32)
    for pair in perm:
        src, dst = (int(v) for v in pair)
        if not (0 <= src < n and 0 <= dst < n):
            raise ValueError(f"ppermute: pair {tuple(pair)} is outside the axis of size {n}")
        if source[dst] >= 0 or src in source:
            raise ValueError(f"ppermute: perm {list(perm)} sends from or to an element twice")
        source[dst] = src
    mine = asarray(source)[axis_index(axis_name)]

    def one(leaf):
        gathered = all_gather(leaf, axis_name)
        picked = gathered[mine.clip(0, None)]
        return where(mine >= 0, picked, 0).astype(picked.dtype)

    return tree_map(one, x)


def pbroadcast(x, axis_name: str, source: int):
    """Every element gets element ``source``'s ``x`` (a pytree), as ``jax.lax.pbroadcast``
    defines it: ``psum(where(axis_index == source, x, 0))`` (so a ``-0.0`` arrives as
    ``0.0``, and other elements' inf or NaN never reach it).

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.vmap(lambda v: pbroadcast(v, "i", 2), axis_name="i")(
    ...     qnp.array([0.0, 1.0, 2.0])).tolist()
    [2.0, 2.0, 2.0]
    """
    n = axis_size(axis_name)
    if isinstance(source, bool) or not isinstance(source, (int, np.integer)) or \
            not 0 <= int(source) < n:
        raise ValueError(f"pbroadcast: source must be an index of the axis of size {n}, "
                         f"got {source!r}")
    return tree_map(lambda leaf: all_gather(leaf, axis_name)[int(source)], x)


def pshuffle(x, axis_name: str, perm: Sequence[int]):
    """Element ``i`` gets the ``x`` of element ``perm[i]``, as ``jax.lax.pshuffle``."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(axis_size(axis_name))):
        raise ValueError(f"pshuffle: perm {perm} is not a permutation of the axis")
    return ppermute(x, axis_name, [(p, i) for i, p in enumerate(perm)])


def psum_scatter(x, axis_name: str, *, scatter_dimension: int = 0, axis_index_groups=None,
                 tiled: bool = False):
    """The sum over the named axis, of which element ``i`` keeps the ``i``-th slice along
    ``scatter_dimension`` (that axis must have the axis' size, and is removed), or with
    ``tiled`` the ``i``-th of as many equal chunks, as ``jax.lax.psum_scatter``."""
    from .lax_ops import dynamic_slice_in_dim
    from .numpy.misc import take
    _refuse_groups(axis_index_groups, "psum_scatter")
    n = axis_size(axis_name)
    me = axis_index(axis_name)

    def one(leaf):
        total = psum(leaf, axis_name)
        dim = scatter_dimension % max(total.ndim, 1)
        size = total.shape[dim] if total.ndim else 0
        if not tiled:
            if size != n:
                raise ValueError(f"psum_scatter: scatter_dimension {scatter_dimension} has size "
                                 f"{size}, it must equal the axis size {n} (or use tiled=True)")
            return take(total, me, axis=dim)
        if size % n:
            raise ValueError(f"psum_scatter: scatter_dimension size {size} is not divisible by "
                             f"the axis size {n}")
        return dynamic_slice_in_dim(total, me * (size // n), size // n, axis=dim)

    return tree_map(one, x)


def all_to_all(x, axis_name: str, split_axis: int, concat_axis: int, *,
               axis_index_groups=None, tiled: bool = False):
    """Each element splits ``x`` (a pytree) along ``split_axis`` into one piece per element
    and sends piece ``j`` to element ``j``, which stacks what it receives, in the senders'
    order, as a new axis at ``concat_axis`` (the split axis, of the axis' size, goes), or
    with ``tiled`` concatenates it along ``concat_axis`` (the split axis keeps ``1/n`` of
    its size), as ``jax.lax.all_to_all``."""
    from .lax_ops import dynamic_slice_in_dim
    from .numpy.misc import take
    from .numpy.shape import concatenate, moveaxis
    _refuse_groups(axis_index_groups, "all_to_all")
    n = axis_size(axis_name)
    me = axis_index(axis_name)

    def one(leaf):
        a = asarray(leaf)
        if a.ndim == 0:
            raise ValueError("all_to_all needs an operand with at least one axis")
        split, concat = split_axis % a.ndim, concat_axis % a.ndim
        size = a.shape[split]
        # Every element's x, the senders on a leading axis.
        sent = all_gather(a, axis_name)
        if not tiled:
            if size != n:
                raise ValueError(f"all_to_all: split_axis {split_axis} has size {size}; it "
                                 f"must equal the axis size {n} (or use tiled=True)")
            return moveaxis(take(sent, me, axis=split + 1), 0, concat)
        if size % n:
            raise ValueError(f"all_to_all: split_axis size {size} is not divisible by the "
                             f"axis size {n}")
        mine = dynamic_slice_in_dim(sent, me * (size // n), size // n, axis=split + 1)
        return concatenate([mine[i] for i in range(n)], axis=concat)

    return tree_map(one, x)


def pswapaxes(x, axis_name: str, axis: int, *, axis_index_groups=None):
    """Swaps the named axis with positional ``axis`` of each element, as
    ``jax.lax.pswapaxes``: an ``all_to_all`` splitting and concatenating along ``axis``
    (whose size must be the named axis' size). Under ``vmap(axis_name=...)`` the result is
    the batch's ``swapaxes`` with that axis.

    >>> import quabla, quabla.numpy as qnp
    >>> x = qnp.arange(4.0).reshape(2, 2)
    >>> quabla.vmap(lambda v: pswapaxes(v, "i", 0), axis_name="i")(x).tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    _refuse_groups(axis_index_groups, "pswapaxes")
    return all_to_all(x, axis_name, axis, axis, tiled=True)
