"""Index arrays, as ``jax.numpy``: ``tril_indices``/``triu_indices`` (and ``_from``),
``diag_indices`` (and ``_from``), ``unravel_index`` and ``ravel_multi_index`` (these two
traced too), ``vander``, ``logspace``, ``geomspace`` and ``rot90``."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array
from .creation import asarray, linspace
from .elementwise import where


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _ints(*arrays) -> tuple:
    return tuple(asarray(np.asarray(a, np.int32)) for a in arrays)


def tril_indices(n: int, k: int = 0, m: Optional[int] = None) -> tuple:
    """Row and column indices of the lower triangle (on and below diagonal ``k``)."""
    return _ints(*np.tril_indices(int(n), int(k), None if m is None else int(m)))


def triu_indices(n: int, k: int = 0, m: Optional[int] = None) -> tuple:
    """Row and column indices of the upper triangle (on and above diagonal ``k``)."""
    return _ints(*np.triu_indices(int(n), int(k), None if m is None else int(m)))


def tril_indices_from(arr, k: int = 0) -> tuple:
    s = np.shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(s[0], k, s[1])


def triu_indices_from(arr, k: int = 0) -> tuple:
    s = np.shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(s[0], k, s[1])


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """``ndim`` copies of ``arange(n)``: the main diagonal of an ``(n,) * ndim`` array."""
    if n < 0 or ndim < 0:
        raise ValueError(f"diag_indices: n and ndim must be non-negative, got {n}, {ndim}")
    return _ints(*np.diag_indices(int(n), int(ndim)))


def diag_indices_from(arr) -> tuple:
    s = np.shape(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


def unravel_index(indices, shape) -> tuple:
    """The multi-indices of flat ``indices`` into ``shape`` (row-major); out-of-range
    indices clamp to the first or last position, as JAX."""
    idx = _arr(indices)
    dims = [int(s) for s in (shape if np.ndim(shape) else [shape])]
    out = [None] * len(dims)
    rest = idx
    for i in range(len(dims) - 1, -1, -1):
        out[i] = rest % dims[i]
        rest = rest // dims[i]
    above = rest > 0
    below = rest < -1 if idx.dtype.kind != "u" else rest < 0
    return tuple(where(above, s - 1, where(below, 0, o)) for s, o in zip(dims, out))


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C") -> Array:
    """Flat indices of the multi-indices (``mode`` "raise" (concrete only), "wrap" or
    "clip"; ``order`` "C" or "F")."""
    dims = [int(d) for d in dims]
    idx = [_arr(i) for i in multi_index]
    if len(idx) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(idx)} index arrays for {len(dims)} dims")
    if mode == "raise":
        for i, d in zip(idx, dims):
            if i.is_traced:
                raise ValueError("ravel_multi_index: mode='raise' needs concrete indices; "
                                 "use mode='wrap' or 'clip' under jit")
            v = np.asarray(i)
            if v.size and (v.min() < 0 or v.max() >= d):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [i % d for i, d in zip(idx, dims)]
    elif mode == "clip":
        from .elementwise import clip
        idx = [clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"ravel_multi_index: invalid mode={mode!r}; expected 'raise', "
                         "'wrap' or 'clip'")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    axes = list(range(len(dims)) if order == "F" else range(len(dims) - 1, -1, -1))
    if not axes:
        return asarray(0)
    total, stride = idx[axes[0]], dims[axes[0]]
    for k in axes[1:]:
        total = total + idx[k] * stride
        stride *= dims[k]
    return total


def vander(x, N: Optional[int] = None, increasing: bool = False) -> Array:
    """Columns ``x ** (N - 1), ..., x, 1`` (or increasing powers)."""
    x = _arr(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    from .elementwise import power
    powers = asarray(np.arange(n, dtype=np.int32) if increasing
                     else np.arange(n - 1, -1, -1, dtype=np.int32))
    return power(x[:, None], powers[None, :])


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0) -> Array:
    """``base ** linspace(start, stop, num)``."""
    from .elementwise import power
    d = None if dtype is None else _dt.canonicalize(dtype, "logspace")
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    out = power(asarray(base, lin.dtype), lin)
    return out if d is None else out.astype(d)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None,
              axis: int = 0) -> Array:
    """``num`` values evenly spaced on a log scale from ``start`` to ``stop`` (same sign),
    the ends exact."""
    from .elementwise import log10, sign
    s, e = _arr(start), _arr(stop)
    fd = _dt.result_type(s.dtype, e.dtype, _dt.default_float())
    s, e = s.astype(fd), e.astype(fd)
    sgn = sign(s)
    out = sgn * logspace(log10(s * sgn), log10(e * sgn), num, endpoint=endpoint, axis=axis)
    if num > 0:
        out = out.at[0].set(s)
        if endpoint and num > 1:
            out = out.at[-1].set(e)
    d = None if dtype is None else _dt.canonicalize(dtype, "geomspace")
    return out if d is None else out.astype(d)


def rot90(m, k: int = 1, axes: tuple = (0, 1)) -> Array:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    from .shape import flip
    m = _arr(m)
    a0, a1 = (int(axes[0]) % m.ndim, int(axes[1]) % m.ndim)
    if a0 == a1 or len(axes) != 2:
        raise ValueError("rot90: axes must be two different axes")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return flip(m, a1).transpose(perm) if k == 1 else flip(m.transpose(perm), a1)


def _grid_dtype(built: np.dtype) -> np.dtype:
    """JAX's dtype for a grid numpy built in ``built``: the default int or float."""
    return _dt.default_float() if built.kind == "f" else np.dtype(np.int32)


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: numpy's grids (complex steps count points, as
    ``linspace``), in JAX's default int or float dtype."""

    def __init__(self, sparse: bool):
        self._sparse = sparse

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        if not all(isinstance(k, slice) for k in keys):
            raise TypeError("mgrid and ogrid take slices, e.g. mgrid[0:3, 0:1:5j]")
        grid = (np.ogrid if self._sparse else np.mgrid)[key]
        if self._sparse and isinstance(grid, (list, tuple)):
            kind = _grid_dtype(np.result_type(*grid))
            return [asarray(g.astype(kind)) for g in grid]
        grid = np.asarray(grid)
        return asarray(grid.astype(_grid_dtype(grid.dtype)))


mgrid = _Grid(sparse=False)
"""A dense grid: ``mgrid[0:3, 0:2]`` has shape (2, 3, 2), as ``numpy.mgrid``."""
ogrid = _Grid(sparse=True)
"""An open grid: ``ogrid[0:3, 0:2]`` is arrays of shapes (3, 1) and (1, 2)."""
s_ = np.s_
index_exp = np.index_exp


def ix_(*args) -> tuple:
    """An open mesh from 1-D integer sequences: the ``k``-th of ``n`` has its length on axis
    ``k`` and 1 elsewhere, so ``a[ix_(rows, cols)]`` takes the cross product."""
    out = []
    for k, a in enumerate(args):
        a = _arr(a)
        if a.ndim != 1:
            raise ValueError(f"ix_: argument {k} must be one-dimensional, got shape {a.shape}")
        if a.dtype == np.bool_:
            raise NotImplementedError(
                "Boolean arguments to ix_ are not implemented (as in JAX): pass "
                "nonzero(mask)[0] instead")
        shape = [1] * len(args)
        shape[k] = a.shape[0]
        out.append(a.reshape(shape))
    return tuple(out)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(*indices)`` over a grid of ``shape``: each index array has ``dtype``
    (float by default, as numpy and JAX)."""
    from .assorted import indices
    return function(*indices(shape, dtype=dtype), **kwargs)


def mask_indices(n: int, mask_func, k=0, *, size=None) -> tuple:
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (``triu``, ``tril``)."""
    from .creation import ones
    from .misc import nonzero
    return nonzero(mask_func(ones((int(n), int(n)), np.int32), k), size=size)
