"""``jax.lax``'s array functions that JAX programs call directly: the elementwise ones
(``lax.rsqrt``, ``lax.logistic``, ``lax.erf_inv``, ``lax.lgamma``...), ``clamp``, ``select``,
``dynamic_slice`` and ``dynamic_update_slice`` (start indices clamped into range, as JAX),
the static slices, and the shape functions, over the same primitives as ``quabla.numpy``.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .array import Array
from .numpy import elementwise as el
from .numpy.creation import asarray
from .numpy.elementwise import as_float

# Elementwise ones with numpy twins.
add, sub, mul, div, neg = el.add, el.subtract, el.multiply, el.divide, el.negative
max, min = el.maximum, el.minimum  # noqa: A001 - lax's names
exp, log, log1p, expm1, sqrt, tanh = el.exp, el.log, el.log1p, el.expm1, el.sqrt, el.tanh
sin, cos, tan, abs, sign = el.sin, el.cos, el.tan, el.absolute, el.sign  # noqa: A001
floor, ceil, square, pow, atan2 = el.floor, el.ceil, el.square, el.power, el.arctan2  # noqa: A001
asin, acos, atan, sinh, cosh = el.arcsin, el.arccos, el.arctan, el.sinh, el.cosh
asinh, acosh, atanh, erf, erfc = el.arcsinh, el.arccosh, el.arctanh, el.erf, el.erfc
logistic, is_finite, rem = el.sigmoid, el.isfinite, el.fmod


def rsqrt(x) -> Array:
    """``1 / sqrt(x)``."""
    return 1.0 / el.sqrt(as_float(x))


def integer_pow(x, y: int) -> Array:
    """``x ** y`` for a Python int ``y`` (repeated multiplication)."""
    if not isinstance(y, (int, np.integer)):
        raise TypeError(f"integer_pow: y must be an int, got {y!r}")
    return el.power(x, int(y))


def round(x, rounding_method: int = 0) -> Array:  # noqa: A001 - lax's name
    """Rounds half away from zero (``rounding_method=0``, lax's default) or to even (1)."""
    x = as_float(x)
    if rounding_method in (1, "TO_NEAREST_EVEN"):
        return el.round(x)
    return el.sign(x) * el.floor(el.absolute(x) + 0.5)


def erf_inv(x) -> Array:
    """The inverse error function, the ``erf_inv`` primitive: Giles' polynomials as XLA's, so
    on the CPU backend JAX's bits (``±1`` give ``±inf``, NaN outside ``[-1, 1]``). In
    float64 it is off by up to 1.1e-10 relative next to ``±1``, as JAX's;
    ``scipy.special.erfinv`` refines it to an ulp or two.

    >>> erf_inv(0.5)  # 0.47693628
    """
    return Array(as_float(x)._raw.unary("erf_inv"))


def lgamma(x) -> Array:
    """``log|Gamma(x)|``."""
    from .scipy.special import gammaln
    return gammaln(x)


def digamma(x) -> Array:
    """The digamma function."""
    from .scipy.special import digamma as psi
    return psi(x)


def clamp(min, x, max) -> Array:  # noqa: A002 - lax's argument names
    """``x`` clipped to ``[min, max]`` (lax's argument order)."""
    return el.minimum(el.maximum(x, min), max)


def select(pred, on_true, on_false) -> Array:
    """``on_true`` where ``pred`` else ``on_false`` (same shapes, as lax)."""
    p, t, f = (v if isinstance(v, Array) else asarray(v) for v in (pred, on_true, on_false))
    if p.dtype != np.bool_:
        raise TypeError(f"select: pred must be boolean, got {p.dtype}")
    if not (p.shape == t.shape == f.shape or p.ndim == 0) or t.shape != f.shape:
        raise TypeError(f"select: shapes must match, got {p.shape}, {t.shape}, {f.shape}")
    return el.where(p, t, f)


def _starts(x: Array, start_indices: Sequence) -> list:
    if len(start_indices) != x.ndim:
        raise TypeError(f"expected {x.ndim} start indices for a {x.ndim}-d array, got "
                        f"{len(start_indices)}")
    out = []
    for s, dim in zip(start_indices, x.shape):
        s = (s if isinstance(s, Array) else asarray(s)).astype(np.int32)
        # A negative start counts from the end first (as JAX), then the block is clamped.
        out.append(el.where(s < 0, s + dim, s)._raw)
    return out


def dynamic_slice(operand, start_indices: Sequence, slice_sizes: Sequence[int]) -> Array:
    """The block of ``slice_sizes`` at (traced) ``start_indices``: a negative start counts
    from the end, then the starts are clamped so the block stays inside, as JAX."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    return Array(x._raw.dynamic_slice(_starts(x, start_indices), [int(s) for s in slice_sizes]))


def dynamic_update_slice(operand, update, start_indices: Sequence) -> Array:
    """``operand`` with ``update`` written at (traced, clamped) ``start_indices``."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    u = (update if isinstance(update, Array) else asarray(update)).astype(x.dtype)
    return Array(x._raw.dynamic_update_slice(u._raw, _starts(x, start_indices)))


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0) -> Array:
    """``dynamic_slice`` along one axis."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    starts = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int) -> Array:
    """``dynamic_update_slice`` along one axis."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    starts = [0] * x.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def slice(operand, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Optional[Sequence[int]] = None) -> Array:
    """The static block ``[start, limit)`` with ``strides``."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    strides = [1] * x.ndim if strides is None else list(strides)
    return Array(x._raw.slice(list(start_indices), list(limit_indices), strides))


def slice_in_dim(operand, start_index: Optional[int], limit_index: Optional[int],
                 stride: int = 1, axis: int = 0) -> Array:
    """``slice`` along one axis (None: the axis's start or end)."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    n = x.shape[axis]
    start = 0 if start_index is None else start_index % n if start_index < 0 else start_index
    limit = n if limit_index is None else limit_index % n if limit_index < 0 else limit_index
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(x, starts, limits, strides)


def convert_element_type(operand, new_dtype) -> Array:
    """``operand`` as ``new_dtype``."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    return x.astype(new_dtype)


def broadcast_in_dim(operand, shape: Sequence[int], broadcast_dimensions: Sequence[int]):
    """``operand``'s axes placed at ``broadcast_dimensions`` of ``shape``, the rest
    broadcast."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    return Array(x._raw.broadcast_in_dim([int(s) for s in shape],
                                         [int(d) for d in broadcast_dimensions]))


def concatenate(operands: Sequence, dimension: int) -> Array:
    """The operands joined along ``dimension``."""
    from .numpy.shape import concatenate as cat
    return cat(operands, axis=dimension)


def reshape(operand, new_sizes: Sequence[int], dimensions: Optional[Sequence[int]] = None):
    """``operand`` (transposed by ``dimensions`` first, if given) in ``new_sizes``."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    if dimensions is not None:
        x = x.transpose(list(dimensions))
    return x.reshape(tuple(int(s) for s in new_sizes))


def transpose(operand, permutation: Sequence[int]) -> Array:
    """The axes in ``permutation`` order."""
    x = operand if isinstance(operand, Array) else asarray(operand)
    return x.transpose(list(permutation))


def squeeze(array, dimensions: Sequence[int]) -> Array:
    """``array`` without the size-1 axes ``dimensions``."""
    from .numpy.shape import squeeze as sq
    return sq(array, axis=tuple(dimensions))


def expand_dims(array, dimensions: Sequence[int]) -> Array:
    """``array`` with size-1 axes inserted at ``dimensions``."""
    from .numpy.shape import expand_dims as ed
    return ed(array, tuple(dimensions))


__all__ = ["abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
           "broadcast_in_dim", "ceil", "clamp", "concatenate", "convert_element_type", "cos",
           "cosh", "digamma", "div", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_update_slice", "dynamic_update_slice_in_dim", "erf", "erf_inv", "erfc",
           "exp", "expand_dims", "expm1", "floor", "integer_pow", "is_finite", "lgamma",
           "log", "log1p", "logistic", "max", "min", "mul", "neg", "pow", "rem", "reshape",
           "round", "rsqrt", "select", "sign", "sin", "sinh", "slice", "slice_in_dim", "sqrt",
           "square", "squeeze", "sub", "tan", "tanh", "transpose"]
