"""``quabla.typing``: the annotations JAX code uses, as ``jax.typing``'s: ``ArrayLike``
(what array functions accept: arrays, numpy arrays and scalars, Python numbers) and
``DTypeLike`` (what a ``dtype=`` accepts).

>>> from quabla.typing import ArrayLike
>>> def scale(x: ArrayLike) -> ArrayLike:
...     return x
"""

from typing import Union

import numpy as np

from ._src.array import Array

ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type, np.dtype]

__all__ = ["ArrayLike", "DTypeLike"]
