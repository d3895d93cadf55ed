"""numpy's ufunc protocol on Quabla arrays, as ``jax.numpy.ufunc``: the binary functions of
``quabla.numpy`` (``add``, ``multiply``, ``maximum``, ``logical_and``...) are ufuncs with
``reduce``, ``accumulate``, ``outer`` and ``at``, and :func:`frompyfunc` makes one from a
scalar function. Where a ufunc has a reduction, a cumulative op or a scatter of its own
(``add``: ``sum``, ``cumsum``, ``.at[].add``) those run; otherwise the function is folded
along the axis in order, as numpy does, with ``lax.scan`` (so it traces and differentiates).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..array import Array
from .creation import asarray


class ufunc:
    """A function of ``nin`` arrays applied element by element with broadcasting, and
    numpy's ufunc methods, as ``jax.numpy.ufunc``.

    >>> import quabla.numpy as qnp
    >>> qnp.subtract.outer(qnp.arange(3), qnp.arange(2)).tolist()
    [[0, -1], [1, 0], [2, 1]]
    >>> qnp.subtract.reduce(qnp.array([10, 1, 2])).tolist()
    7
    """

    def __init__(self, func: Callable, nin: int, nout: int, *, name: Optional[str] = None,
                 identity: Any = None, elementwise: bool = True,
                 reduce: Optional[Callable] = None, accumulate: Optional[Callable] = None,
                 scatter: Optional[str] = None, reorderable: Optional[bool] = None):
        self.__wrapped__ = func
        self.nin, self.nout, self.nargs = int(nin), int(nout), int(nin) + int(nout)
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.__doc__ = getattr(func, "__doc__", None)
        # Whether `func` broadcasts arrays itself (else it is applied to scalars via vmap).
        self._elementwise = elementwise
        self._reduce, self._accumulate, self._scatter = reduce, accumulate, scatter
        # Whether the fold's order is free (several axes at once); by default, when the
        # function has an identity.
        self._reorderable = identity is not None if reorderable is None else reorderable

    def __repr__(self) -> str:
        return f"<quabla.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args):
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} arguments, got {len(args)}")
        if self._elementwise:
            return self.__wrapped__(*args)
        return _vectorized(self.__wrapped__, self.nout, args)

    def _binary(self, what: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{what} only supported for binary functions with one output "
                             f"({self.__name__} takes {self.nin} and gives {self.nout})")

    def outer(self, A, B):
        """``self(a, b)`` for every pair of elements: shape ``A.shape + B.shape``."""
        self._binary("outer")
        a, b = asarray(A), asarray(B)
        return self(a.reshape(a.shape + (1,) * b.ndim), b)

    def reduce(self, a, axis: Any = 0, dtype=None, out=None, keepdims: bool = False,
               initial=None, where=None):
        """``a`` folded along ``axis`` (an int, a tuple, or None for all), as numpy's:
        ``initial`` starts the fold, ``where`` leaves elements out (it needs an identity or
        ``initial``); several axes need a reorderable function (``add``, ``maximum``...; a
        ``frompyfunc`` one with an identity)."""
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError("reduce: out= is not supported (arrays are immutable)")
        x = asarray(a)
        if dtype is not None:
            x = x.astype(dtype)
        axes = _axes(axis, x.ndim)
        if len(axes) > 1 and not self._reorderable:
            raise ValueError(f"reduction operation '{self.__name__}' is not reorderable, so "
                             "at most one axis may be specified")
        if where is not None:
            # Left-out elements become the identity (or, without one, ``initial``: right
            # for idempotent functions such as maximum, as numpy requires one of the two).
            start = self.identity if self.identity is not None else initial
            if start is None:
                raise ValueError(f"reduction operation '{self.__name__}' does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'")
            from .elementwise import where as select
            x = select(asarray(where), x, asarray(start, dtype=x.dtype))
        if self._reduce is not None:
            r = self._reduce(x, axis=axes, keepdims=keepdims)
        else:
            r = _fold(self, x, axes, keepdims)
        return r if initial is None else self(asarray(initial, dtype=r.dtype), r)

    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running fold along ``axis``: element ``i`` is the fold of ``a[..0]`` to
        ``a[..i]``."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError("accumulate: out= is not supported (arrays are "
                                      "immutable)")
        x = asarray(a)
        if dtype is not None:
            x = x.astype(dtype)
        ax = int(axis) % max(x.ndim, 1)
        if self._accumulate is not None:
            return self._accumulate(x, axis=ax)
        return _running_fold(self, x, ax)

    def at(self, a, indices, b=None, *, inplace: bool = False):
        """``a`` with ``self(a[indices], b)`` written at ``indices``, repeated indices
        applied one after another, as numpy's unbuffered ``at``; a new array (as JAX's,
        ``inplace`` must be False)."""
        if inplace:
            raise NotImplementedError("ufunc.at: inplace=True is not possible (arrays are "
                                      "immutable); use the returned array")
        x = asarray(a)
        if self.nin == 2 and self._scatter is not None:
            return getattr(x.at[indices], self._scatter)(b)
        if self.nin > 2 or self.nout != 1:
            raise ValueError(f"at only supported for functions of one or two arguments and "
                             f"one output ({self.__name__} takes {self.nin})")
        return _sequential_at(self, x, indices, b)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(int(a) % ndim for a in axis)
    else:
        axes = (int(axis) % ndim,) if ndim else ()
    if len(set(axes)) != len(axes):
        raise ValueError(f"reduce: duplicate axes in {axis}")
    return axes


def _fold(f: ufunc, x: Array, axes: tuple, keepdims: bool) -> Array:
    """``f`` folded left to right over ``axes`` (row-major over several), from the first
    element: numpy's order for a ufunc without a reduction of its own."""
    from ..control_flow import scan
    from . import shape as sh
    rest = tuple(d for d in range(x.ndim) if d not in axes)
    count = int(np.prod([x.shape[d] for d in axes])) if axes else 1
    kept = tuple(x.shape[d] for d in rest)
    rows = sh.transpose(x, axes + rest).reshape((count,) + kept)
    if count == 0:
        if f.identity is None:
            raise ValueError(f"zero-size array to reduction operation {f.__name__} which "
                             "has no identity")
        out = asarray(np.full(kept, f.identity), dtype=x.dtype)
    else:
        out, _ = scan(lambda acc, v: (f(acc, v).astype(x.dtype), None), rows[0], rows[1:])
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
    return out


def _running_fold(f: ufunc, x: Array, axis: int) -> Array:
    from ..control_flow import scan
    from .shape import moveaxis
    if x.ndim == 0:
        raise ValueError("accumulate needs an array of at least one dimension")
    rows = moveaxis(x, axis, 0)
    if rows.shape[0] == 0:
        return x

    def step(acc, v):
        nxt = f(acc, v).astype(x.dtype)
        return nxt, nxt

    _, ys = scan(step, rows[0], rows[1:])
    from .shape import concatenate
    return moveaxis(concatenate([rows[:1], ys], axis=0), 0, axis)


def _sequential_at(f: ufunc, x: Array, indices, b) -> Array:
    """``x[i] = f(x[i], b_i)`` (``f(x[i])`` for a unary ``f``) for each position ``i`` the
    (integer-array) ``indices`` name, in order, so that repeated positions compound."""
    from ..control_flow import scan
    from .shape import broadcast_arrays, broadcast_to
    parts = indices if isinstance(indices, tuple) else (indices,)
    arrays = [asarray(p) for p in parts]
    unary = f.nin == 1
    if any(p.dtype.kind not in "iu" for p in arrays):
        # Slices and masks name each position once: one gather, one scatter.
        return x.at[indices].set(f(x[indices]) if unary else f(x[indices], b))
    flat = [i.reshape(-1) for i in broadcast_arrays(*arrays)]
    values = broadcast_to(asarray(0 if unary else b, dtype=x.dtype), x[tuple(flat)].shape)

    def step(acc, item):
        pos, v = item
        here = tuple(pos)
        new = f(acc[here]) if unary else f(acc[here], v)
        return acc.at[here].set(new.astype(x.dtype)), None

    out, _ = scan(step, x, (flat, values))
    return out


def _vectorized(func: Callable, nout: int, args) -> Any:
    """``func`` (of scalars) over broadcast arrays: one vmap over the flattened elements."""
    from ..api import vmap
    from .shape import broadcast_arrays
    arrays = broadcast_arrays(*[asarray(a) for a in args])
    shape = arrays[0].shape if arrays else ()
    flat = [a.reshape(-1) for a in arrays]
    out = vmap(func)(*flat)
    if nout == 1:
        return asarray(out).reshape(shape)
    return tuple(asarray(o).reshape(shape) for o in out)


def frompyfunc(func: Callable, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A :class:`ufunc` from ``func`` of ``nin`` scalars returning ``nout`` values, as
    ``jax.numpy.frompyfunc``: applied to broadcast arrays by ``vmap``, its ``reduce`` /
    ``accumulate`` / ``at`` folding in order (``identity`` makes reductions of several axes
    and of empty arrays possible).

    >>> import quabla.numpy as qnp
    >>> f = frompyfunc(lambda x, y: x * y + 1, 2, 1)
    >>> f.reduce(qnp.array([1.0, 2.0, 3.0])).tolist()
    10.0
    """
    return ufunc(func, nin, nout, name=getattr(func, "__name__", "frompyfunc"),
                 identity=identity, elementwise=False)
