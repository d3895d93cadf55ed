"""Parameter initializers, as ``jax.nn.initializers``: each constructor returns
``init(key, shape, dtype=<its default>)``.

Draws use Quabla's threefry, so they are JAX's draws where ``quabla.random`` is bit-equal to
``jax.random`` (uniform in [0, 1)) and within a few ulps otherwise (normal, scaled uniform,
truncated normal).
"""

from __future__ import annotations

import math
from typing import Protocol, Sequence, Union

from ..array import Array
from ..numpy.creation import asarray, full, ones as _ones, zeros as _zeros
from ..numpy import elementwise as el
from ..numpy.shape import moveaxis
from .. import dtypes as _dt


def _dtype(dtype):
    return _dt.default_float() if dtype is None else _dt.canonicalize(dtype, "initializer")


def _shape(shape) -> tuple:
    return tuple(int(s) for s in shape) if isinstance(shape, (tuple, list)) else (int(shape),)


def zeros(key, shape, dtype=None) -> Array:
    """All zeros (``key`` unused), as ``jax.nn.initializers.zeros``."""
    return _zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None) -> Array:
    """All ones (``key`` unused)."""
    return _ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling with ``value``."""
    def init(key, shape, dtype=dtype):
        return full(_shape(shape), value, _dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform in ``[0, scale)``."""
    def init(key, shape, dtype=dtype):
        from ... import random
        return random.uniform(key, _shape(shape), _dtype(dtype)) * scale
    return init


def normal(stddev=1e-2, dtype=None):
    """Normal with standard deviation ``stddev``."""
    def init(key, shape, dtype=dtype):
        from ... import random
        return random.normal(key, _shape(shape), _dtype(dtype)) * stddev
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """A normal truncated to ``[lower, upper]`` standard deviations, scaled by ``stddev``."""
    def init(key, shape, dtype=dtype):
        from ... import random
        return random.truncated_normal(key, lower, upper, _shape(shape), _dtype(dtype)) * stddev
    return init


def _compute_fans(shape: tuple, in_axis, out_axis, batch_axis):
    if len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor. Must be at least 2D.")

    def size(axes):
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        return math.prod(shape[a] for a in axes)

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def variance_scaling(scale, mode: str, distribution: str,
                     in_axis: Union[int, Sequence[int]] = -2,
                     out_axis: Union[int, Sequence[int]] = -1,
                     batch_axis: Sequence[int] = (), dtype=None):
    """Draws with variance ``scale / n``, ``n`` the fan in, fan out or their mean (``mode``),
    from a ``"truncated_normal"``, ``"normal"`` or ``"uniform"`` distribution (JAX's
    formulas, the truncated normal rescaled to keep the variance).

    >>> init = variance_scaling(2.0, "fan_in", "truncated_normal")
    >>> w = init(quabla.random.PRNGKey(0), (64, 32))
    """
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(
            f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype):
        from ... import random
        shape, d = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = asarray(scale / n, d)
        if distribution == "truncated_normal":
            stddev = el.sqrt(variance) / asarray(0.87962566103423978, d)
            return random.truncated_normal(key, -2, 2, shape, d) * stddev
        if distribution == "normal":
            return random.normal(key, shape, d) * el.sqrt(variance)
        return random.uniform(key, shape, d, -1) * el.sqrt(3 * variance)
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1, "fan_avg", "uniform")`` (``xavier_uniform``)."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1, "fan_avg", "truncated_normal")`` (``xavier_normal``)."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1, "fan_in", "uniform")``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1, "fan_in", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(2, "fan_in", "uniform")`` (``kaiming_uniform``)."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(2, "fan_in", "truncated_normal")`` (``kaiming_normal``)."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
    """A matrix (or stack, the other axes flattened) with orthonormal columns, or rows when
    it is wide: the Q of a normal matrix's QR with R's diagonal made positive, times
    ``scale``."""
    def init(key, shape, dtype=dtype):
        from ... import random
        from ..linalg import qr
        shape, d = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        wide = n_rows < n_cols
        a = random.normal(key, (n_cols, n_rows) if wide else (n_rows, n_cols), d)
        q, r = qr(a)
        from ..numpy.shape import diagonal
        q = q * el.sign(diagonal(r))
        if wide:
            q = q.T
        rest = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        return moveaxis(q.reshape(rest + (n_cols,)), -1, column_axis) * scale
    return init


def delta_orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
    """For convolution kernels ``(*spatial, in, out)`` of 1 to 3 spatial axes: zeros except
    an :func:`orthogonal` ``(in, out)`` matrix at the centre tap (Xiao et al. 2018's
    delta-orthogonal; ``in <= out``), so the convolution starts as an orthogonal map."""
    def init(key, shape, dtype=dtype):
        shape, d = _shape(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        matrix = orthogonal(scale, column_axis, d)(key, shape[-2:], d)
        return _zeros(shape, d).at[centre].set(matrix)
    return init


class Initializer(Protocol):
    """What every initializer here is: ``init(key, shape, dtype) -> Array``, as
    ``jax.nn.initializers.Initializer``."""

    def __call__(self, key: Array, shape: Sequence[int], dtype=None) -> Array:
        ...


__all__ = ["Initializer", "delta_orthogonal", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "lecun_uniform",
           "lecun_normal", "he_uniform", "he_normal", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal"]
