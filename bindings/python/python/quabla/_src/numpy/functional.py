"""Applying functions over axes, as ``jax.numpy``: ``apply_along_axis`` (``vmap`` over every
other axis) and ``apply_over_axes``."""

from __future__ import annotations

from typing import Callable

from ..array import Array
from .creation import asarray
from .shape import expand_dims


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs) -> Array:
    """``func1d`` on every 1-D slice of ``arr`` along ``axis``, batched with ``vmap``: its
    result's axes replace ``axis`` (none for a scalar result), as numpy's."""
    from ..api import vmap
    a = arr if isinstance(arr, Array) else asarray(arr)
    nd = a.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"apply_along_axis: axis {axis} is out of range for {nd} dimensions")
    axis %= nd
    f = lambda v: func1d(v, *args, **kwargs)  # noqa: E731 - the batched function
    # Batch over the axes after `axis`, then over those before, so the result's own axes
    # land where `axis` was.
    for _ in range(nd - 1 - axis):
        f = vmap(f, in_axes=-1, out_axes=-1)
    for _ in range(axis):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(a)


def apply_over_axes(func: Callable, a, axes) -> Array:
    """``func(a, axis)`` for each of ``axes`` in turn, each result given back the axis it
    reduced (so the rank never drops), as numpy's."""
    out = a if isinstance(a, Array) else asarray(a)
    for axis in [axes] if isinstance(axes, int) else list(axes):
        res = func(out, axis)
        if res.ndim == out.ndim - 1:
            res = expand_dims(res, axis)
        elif res.ndim != out.ndim:
            raise ValueError(
                "apply_over_axes: the function must keep the rank or drop the axis it was "
                f"given; it turned {out.ndim} dimensions into {res.ndim}")
        out = res
    return out



