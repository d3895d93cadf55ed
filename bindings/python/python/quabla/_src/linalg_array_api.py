"""The Array API standard's ``linalg`` extension names that ``numpy.linalg`` (numpy 2) and
``jax.numpy.linalg`` add beside the classic ones: functions over the last two axes
(``diagonal``, ``trace``, ``matrix_norm``, ``matrix_transpose``), vector forms (``vector_norm``,
``vecdot``, ``cross``, ``outer``), and ``multi_dot``, ``tensordot``, ``tensorinv``,
``tensorsolve``."""

from __future__ import annotations

import math
import numbers
from typing import Sequence, Union

from .array import Array
from .numpy.array_api import matrix_transpose, vecdot
from .numpy.creation import asarray
from .numpy.products import matmul, tensordot

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "matrix_transpose", "multi_dot",
           "outer", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]


def _at_least(x, n: int, what: str) -> Array:
    x = asarray(x)
    if x.ndim < n:
        raise ValueError(f"{what} needs an array of at least {n} dimensions, got {x.ndim}")
    return x


def diagonal(x, /, *, offset: int = 0) -> Array:
    """The ``offset`` diagonal of each matrix in the last two axes (a stack of them).

    >>> import quabla.numpy as qnp
    >>> qnp.linalg.diagonal(qnp.arange(6.0).reshape(2, 3), offset=1).tolist()
    [1.0, 5.0]
    """
    from .numpy.shape import diagonal as diagonal_
    return diagonal_(_at_least(x, 2, "linalg.diagonal"), offset, -2, -1)


def trace(x, /, *, offset: int = 0, dtype=None) -> Array:
    """The sum of each matrix's ``offset`` diagonal over the last two axes."""
    from .numpy.shape import trace as trace_
    return trace_(_at_least(x, 2, "linalg.trace"), offset, -2, -1, dtype)


def cross(x1, x2, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along ``axis`` (the standard's: 3 components only)."""
    from .numpy.products import cross as cross_
    a, b = asarray(x1), asarray(x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"linalg.cross: both arrays need 3 components along axis {axis}, "
                         f"got {a.shape[axis]} and {b.shape[axis]}")
    return cross_(a, b, axis=axis)


def outer(x1, x2, /) -> Array:
    """The outer product of two vectors (1-D only, as the standard)."""
    from .numpy.products import outer as outer_
    a, b = asarray(x1), asarray(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"linalg.outer takes vectors, got {a.ndim} and {b.ndim} dimensions")
    return outer_(a, b)


def matrix_norm(x, /, *, keepdims: bool = False, ord: Union[int, float, str] = "fro") -> Array:
    """The norm of each matrix in the last two axes: ``'fro'`` (default), ``'nuc'``, ±1,
    ±2, ±inf as ``numpy.linalg.matrix_norm``."""
    from .linalg import norm
    return norm(_at_least(x, 2, "linalg.matrix_norm"), ord, (-2, -1), keepdims)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord: Union[int, float] = 2) -> Array:
    """The ``ord`` norm of the vectors along ``axis`` (``None``: all of ``x`` as one vector;
    a tuple: those axes as one vector), as ``numpy.linalg.vector_norm``.

    >>> import quabla.numpy as qnp
    >>> float(qnp.linalg.vector_norm(qnp.asarray([[3.0], [4.0]])))
    5.0
    """
    from .linalg import norm
    from .numpy.shape import moveaxis
    if isinstance(ord, str):
        raise ValueError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if isinstance(axis, numbers.Integral) else tuple(axis))
    axes = tuple(int(a) % max(x.ndim, 1) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"linalg.vector_norm: repeated axis in {axis!r}")
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim))) if axes else x
    flat = moved.reshape(tuple(x.shape[d] for d in rest) + (-1,))
    out = norm(flat, ord, -1, False)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
    return out


def _chain_order(dims: Sequence[int]):
    """The cheapest parenthesization of a matrix chain (matrix ``i`` is ``dims[i] x
    dims[i + 1]``), by the textbook dynamic program over chain lengths: ``split[i][j]`` is
    where the product of matrices ``i..j`` splits."""
    n = len(dims) - 1
    cost: list = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays: Sequence, *, precision=None) -> Array:
    """The product of a chain of matrices in the order with the fewest multiplications, as
    ``numpy.linalg.multi_dot``: the first array may be a vector (a row), the last one too (a
    column). ``precision`` is accepted as JAX's and changes nothing."""
    mats = [asarray(a) for a in arrays]
    if len(mats) < 2:
        raise ValueError(f"multi_dot needs at least two arrays, got {len(mats)}")
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = mats[0].reshape(1, -1)
    if last_vec:
        mats[-1] = mats[-1].reshape(-1, 1)
    for i, m in enumerate(mats):
        if m.ndim != 2:
            raise ValueError(f"multi_dot: array {i} has {m.ndim} dimensions; only the first "
                             "and last may be vectors, the others must be matrices")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ValueError(f"multi_dot: array {i} is {mats[i].shape} and array {i + 1} is "
                             f"{mats[i + 1].shape}; the inner dimensions must agree")
    split = _chain_order(dims)
    # The products bottom up (no recursion): every sub-chain by increasing length.
    done = {(i, i): m for i, m in enumerate(mats)}
    for length in range(1, len(mats)):
        for i in range(len(mats) - length):
            j = i + length
            k = split[i][j]
            done[(i, j)] = matmul(done[(i, k)], done[(k + 1, j)])
    out = done[(0, len(mats) - 1)]
    if first_vec and last_vec:
        return out.reshape(())
    if first_vec:
        return out.reshape(-1)
    return out.reshape(-1) if last_vec else out


def tensorinv(a, ind: int = 2) -> Array:
    """The inverse of ``a`` read as a linear map from its first ``ind`` axes to the rest:
    ``tensordot(tensorinv(a, ind), a, ind)`` is the identity of ``a.shape[ind:]``."""
    from .linalg import inv
    a = asarray(a)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be positive, got {ind}")
    rows, cols = math.prod(a.shape[:ind]), math.prod(a.shape[ind:])
    if rows != cols:
        raise ValueError(f"tensorinv: the first {ind} axes of {a.shape} hold {rows} elements "
                         f"and the others {cols}; they must be equal")
    return inv(a.reshape(rows, cols)).reshape(a.shape[ind:] + a.shape[:ind])


def tensorsolve(a, b, axes=None) -> Array:
    """``x`` with ``tensordot(a, x, x.ndim) == b``, as ``numpy.linalg.tensorsolve``;
    ``axes`` of ``a`` are moved to the end first."""
    from .linalg import solve
    from .numpy.shape import moveaxis
    a, b = asarray(a), asarray(b)
    if axes is not None:
        axes = (axes,) if isinstance(axes, numbers.Integral) else tuple(axes)
        a = moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    x_shape = a.shape[b.ndim:]
    rows, cols = math.prod(a.shape[:b.ndim]), math.prod(x_shape)
    if a.shape[:b.ndim] != b.shape or rows != cols:
        raise ValueError(f"tensorsolve: a's leading axes {a.shape[:b.ndim]} must be b's shape "
                         f"{b.shape} and hold as many elements as the rest {x_shape}")
    return solve(a.reshape(rows, cols), b.reshape(rows)).reshape(x_shape)
