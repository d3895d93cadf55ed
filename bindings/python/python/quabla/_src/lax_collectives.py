"""Collectives over a named ``vmap`` axis, as ``jax.lax``'s: ``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather``, ``axis_index`` and ``axis_size``. ``vmap(f, axis_name='i')``
names its batch axis; inside ``f`` these combine the values of all its elements (the core
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

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size"]

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
    if axis_index_groups is not None:
        raise NotImplementedError("psum: axis_index_groups is not supported")
    return _reduce(x, axis_name, "sum")


def pmean(x, axis_name: AxisName, *, axis_index_groups=None):
    """The mean of ``x`` over the named ``vmap`` axis, as ``jax.lax.pmean``."""
    size = axis_size(axis_name)
    return tree_map(lambda s: s / size, psum(x, axis_name, axis_index_groups=axis_index_groups))


def pmax(x, axis_name: AxisName, *, axis_index_groups=None):
    """The maximum of ``x`` over the named ``vmap`` axis, as ``jax.lax.pmax``."""
    if axis_index_groups is not None:
        raise NotImplementedError("pmax: axis_index_groups is not supported")
    return _reduce(x, axis_name, "max")


def pmin(x, axis_name: AxisName, *, axis_index_groups=None):
    """The minimum of ``x`` over the named ``vmap`` axis, as ``jax.lax.pmin``."""
    if axis_index_groups is not None:
        raise NotImplementedError("pmin: axis_index_groups is not supported")
    return _reduce(x, axis_name, "min")


def axis_index(axis_name: str) -> Array:
    """This element's position along the named ``vmap`` axis (int32), as
    ``jax.lax.axis_index``."""
    (name,) = _names(axis_name) if isinstance(axis_name, str) else (None,)
    if name is None:
        raise TypeError("axis_index takes one axis name")
    return Array(_quabla.axis_index(name))


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
    if axis_index_groups is not None:
        raise NotImplementedError("all_gather: axis_index_groups is not supported")
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
