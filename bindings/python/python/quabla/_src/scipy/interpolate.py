"""``jax.scipy.interpolate.RegularGridInterpolator``: linear and nearest interpolation on a
rectilinear grid (each axis strictly increasing), differentiable in the values and, for
``'linear'``, in the query points."""

from __future__ import annotations

import itertools

import numpy as np

from ..array import Array
from ..numpy.creation import asarray
from ..numpy.elementwise import as_float, where

__all__ = ["RegularGridInterpolator"]



def _query_points(xi, ndim: int) -> Array:
    """The query points as ``(..., ndim)``: a tuple of coordinate arrays is broadcast and
    stacked; a 1-D grid accepts a plain vector of points."""
    from ..numpy.shape import broadcast_arrays, stack
    if isinstance(xi, tuple):
        if len(xi) != ndim:
            raise ValueError(f"RegularGridInterpolator: {len(xi)} coordinate arrays for a "
                             f"{ndim}-dimensional grid")
        return stack(broadcast_arrays(*[asarray(c) for c in xi]), axis=-1)
    xi = asarray(xi)
    if ndim == 1 and (xi.ndim == 0 or xi.shape[-1] != 1):
        xi = xi[..., None]
    return xi


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid, as ``jax.scipy.interpolate.
    RegularGridInterpolator``: ``points`` one strictly increasing array per axis,
    ``values`` of shape ``(len(points[0]), ..., trailing...)``, ``method`` ``'linear'`` or
    ``'nearest'``; points outside the grid give ``fill_value`` (NaN by default; None
    extrapolates linearly from the edge cells). ``bounds_error=True`` is refused, as JAX.

    >>> import quabla.numpy as qnp
    >>> f = RegularGridInterpolator((qnp.array([1.0, 2, 3]), qnp.array([4.0, 5, 6])),
    ...                             qnp.array([[10.0, 20, 30], [40, 50, 60], [70, 80, 90]]))
    >>> f(qnp.array([[1.5, 4.5], [2.2, 5.8]])).tolist()
    [30.0, 64.0]
    """

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False,
                 fill_value=np.nan):
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not "
                                      "supported (as JAX: it cannot be checked under jit)")
        values = as_float(values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        grid = tuple(asarray(p) for p in points)
        for axis, g in enumerate(grid):
            if g.ndim != 1 or g.shape[0] != values.shape[axis] or g.shape[0] < 2:
                raise ValueError(f"RegularGridInterpolator: points[{axis}] must be a vector "
                                 f"of at least 2 entries matching values' axis {axis} "
                                 f"({values.shape[axis]})")
        self.method = method
        self.bounds_error = bounds_error
        self.fill_value = None if fill_value is None else asarray(fill_value).astype(
            values.dtype)
        self.grid = grid
        self.values = values

    def __call__(self, xi, method=None) -> Array:
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        shape = xi.shape
        flat = xi.reshape(-1, ndim).astype(self.values.dtype)
        indices, distances, outside = self._cells(flat)
        if method == "linear":
            result = self._linear(indices, distances)
        else:
            result = self.values[tuple(where(d <= 0.5, i, i + 1)
                                       for i, d in zip(indices, distances))]
        if self.fill_value is not None:
            mask = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = where(mask, self.fill_value, result)
        return result.reshape(shape[:-1] + self.values.shape[ndim:])

    def _cells(self, xi):
        """Per axis: the lower corner of each point's cell, the point's offset in the cell
        (0 to 1 inside), and whether any coordinate is outside the grid."""
        from ..numpy.sorting import searchsorted
        indices, distances = [], []
        outside = None
        for axis, g in enumerate(self.grid):
            x = xi[:, axis]
            i = (searchsorted(g, x) - 1).clip(0, g.shape[0] - 2)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            off = (x < g[0]) | (x > g[-1])
            outside = off if outside is None else outside | off
        return indices, distances, outside

    def _linear(self, indices, distances):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        total = None
        for corner in itertools.product(*[(i, i + 1) for i in indices]):
            weight = None
            for ci, i, d in zip(corner, indices, distances):
                w = where(ci == i, 1 - d, d)
                weight = w if weight is None else weight * w
            term = self.values[corner] * weight[trailing]
            total = term if total is None else total + term
        return total
