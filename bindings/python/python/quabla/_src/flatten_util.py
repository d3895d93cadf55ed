"""A pytree of arrays as one flat vector and back (optimizers and solvers over pytrees)."""

from __future__ import annotations

from typing import Any, Callable, Tuple

import numpy as np

from .array import Array
from .numpy.creation import asarray
from .numpy.shape import concatenate
from .tree_util import tree_flatten, tree_unflatten
from . import dtypes as _dt


def ravel_pytree(pytree: Any) -> Tuple[Array, Callable[[Array], Any]]:
    """``(flat, unravel)``: every leaf raveled and concatenated in leaf order, promoted to
    their common dtype, and the function that rebuilds the tree (each leaf in its own
    shape and dtype) from such a vector. Differentiable both ways.

    >>> flat, unravel = ravel_pytree({"w": qnp.ones((2, 2)), "b": qnp.zeros(3)})
    >>> flat.shape  # (7,): b's 3 then w's 4 (dict keys sorted)
    """
    leaves, tree = tree_flatten(pytree)
    arrays = [x if isinstance(x, Array) else asarray(x) for x in leaves]
    shapes = [tuple(x.shape) for x in arrays]
    dtypes = [x.dtype for x in arrays]
    sizes = [int(np.prod(s)) for s in shapes]
    d = _dt.result_type(*dtypes) if arrays else _dt.default_float()
    flat = (concatenate([x.reshape(-1).astype(d) for x in arrays]) if arrays
            else asarray(np.zeros(0, d)))
    offsets = np.cumsum([0] + sizes)
    total = int(offsets[-1])

    def unravel(vector: Array) -> Any:
        v = vector if isinstance(vector, Array) else asarray(vector)
        if tuple(v.shape) != (total,):
            raise ValueError(f"unravel: the vector must have shape ({total},) as the raveled "
                             f"tree, got {tuple(v.shape)}")
        if v.dtype != d:
            raise TypeError(f"unravel: the vector must have the raveled dtype {d}, got "
                            f"{v.dtype}")
        parts = [v[int(offsets[i]):int(offsets[i + 1])].reshape(shapes[i]).astype(dtypes[i])
                 for i in range(len(arrays))]
        return tree_unflatten(tree, parts)

    return flat, unravel
