"""A few more of ``jax.lax``'s functions, each a composition of others: ``broadcast_shapes``,
``nextafter``, ``bessel_i0e`` / ``bessel_i1e``, ``reduce_xor``, ``index_take``, ``empty``,
``platform_dependent``, ``composite``, ``approx_max_k`` / ``approx_min_k``."""

from __future__ import annotations

import enum
import functools
from typing import Callable, Optional, Sequence

import numpy as np

from .array import Array
from .numpy.creation import asarray
from .numpy.floating import nextafter  # noqa: F401  (lax's name for numpy's function)
from .numpy.shape import broadcast_shapes  # noqa: F401
from .scipy.special_series import i0e as bessel_i0e, i1e as bessel_i1e  # noqa: F401

__all__ = ["broadcast_shapes", "nextafter", "bessel_i0e", "bessel_i1e", "reduce_xor",
           "reduce_precision", "Precision", "bitcast_convert_type", "mulhi",
           "index_take", "empty", "platform_dependent", "composite", "approx_max_k",
           "approx_min_k"]


class Precision(enum.Enum):
    """The ``precision=`` of matrix products and convolutions, as ``jax.lax.Precision``:
    accepted everywhere JAX takes it and ignored, since Quabla's backends compute products
    in the operands' dtype (no reduced-precision passes). Its names and aliases as JAX's:
    ``Precision("highest")``, ``Precision("float32")``.

    >>> Precision("highest") is Precision.HIGHEST
    True
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        aliases = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                   "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                   "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in aliases:
            return aliases[value.lower()]
        return None

    def __str__(self) -> str:
        return self.name


def bitcast_convert_type(operand, new_dtype) -> Array:
    """The bits of ``operand`` read as ``new_dtype``, as ``jax.lax.bitcast_convert_type``,
    between the 32-bit dtypes (float32, int32, uint32), shape unchanged. JAX's conversions
    between widths (adding or dropping a trailing axis) need 8-, 16- or 64-bit integers
    Quabla does not have, and are refused.

    >>> import quabla.numpy as qnp
    >>> bitcast_convert_type(qnp.array([1.0, -0.0], dtype=qnp.float32), qnp.uint32).tolist()
    [1065353216, 2147483648]
    """
    x = asarray(operand)
    to = np.dtype(new_dtype)
    if to == x.dtype:
        return x
    bits32 = {np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32)}
    if x.dtype not in bits32 or to not in bits32:
        raise TypeError(f"bitcast_convert_type: {x.dtype} to {to} is not supported: Quabla "
                        "reinterprets bits between float32, int32 and uint32 only (it has "
                        "no 8-, 16- or 64-bit integer dtype for other widths)")
    return Array(x._raw.bitcast(to.name))


def mulhi(x, y) -> Array:
    """The high 32 bits of each 64-bit product ``x * y`` (signed for int32, unsigned for
    uint32), as ``jax.lax.mulhi``: from 16-bit halves, since Quabla has no 64-bit integer.

    >>> import quabla.numpy as qnp
    >>> x = qnp.array([2**31 - 1, -7], dtype=qnp.int32)
    >>> mulhi(x, qnp.array([2**31 - 1, 9], dtype=qnp.int32)).tolist()
    [1073741823, -1]
    """
    from .. import numpy as qnp
    a, b = asarray(x), asarray(y)
    if a.dtype != b.dtype or a.dtype not in (np.dtype(np.int32), np.dtype(np.uint32)):
        raise TypeError(f"mulhi needs two int32 or two uint32 arrays, got {a.dtype} and "
                        f"{b.dtype}")
    u = qnp.uint32
    au, bu = a.astype(u), b.astype(u)
    low, shift = u(0xFFFF), u(16)
    a0, a1, b0, b1 = au & low, au >> shift, bu & low, bu >> shift
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    carry = ((p00 >> shift) + (p01 & low) + (p10 & low)) >> shift
    high = p11 + (p01 >> shift) + (p10 >> shift) + carry
    if a.dtype == np.dtype(np.int32):
        # Two's complement: each negative factor subtracts the other, modulo 2**32.
        high = (high - qnp.where(a < 0, bu, u(0)) - qnp.where(b < 0, au, u(0)))
    return high.astype(a.dtype)


def reduce_xor(operand, axes: Sequence[int]) -> Array:
    """The bitwise exclusive or of the elements along ``axes`` (parity for booleans), as
    ``jax.lax.reduce_xor``.

    >>> import quabla.numpy as qnp
    >>> reduce_xor(qnp.array([[1, 2, 4], [3, 3, 3]]), (1,)).tolist()
    [7, 3]
    """
    return bitwise_reduce(operand, axes, "xor")


def bitwise_reduce(operand, axes: Sequence[int], kind: str) -> Array:
    """``kind`` (``"and"``, ``"or"``, ``"xor"``) of the elements along ``axes``, bit by bit:
    each of the 32 bits reduced as booleans (all, any, parity) and the bits put back, so one
    vectorised reduction, not a fold along the elements. Booleans reduce as themselves; an
    empty reduction gives the identity (all ones, zero, zero)."""
    from .. import numpy as qnp
    x = asarray(operand)
    if x.dtype.kind not in "iub":
        raise TypeError(f"reduce_{kind} needs integer or boolean operands, got {x.dtype}")
    axes = tuple(int(a) % x.ndim for a in axes) if x.ndim else tuple(axes)
    if x.dtype.kind == "b":
        return _bool_reduce(x, axes, kind)
    shifts = qnp.arange(32, dtype=qnp.uint32)
    bits = ((x.astype(qnp.uint32)[..., None] >> shifts) & qnp.uint32(1)) != 0
    kept = _bool_reduce(bits, axes, kind)
    # Distinct powers of two: their sum is their or, and fits in 32 bits.
    word = qnp.sum(qnp.where(kept, qnp.uint32(1) << shifts, qnp.uint32(0)), axis=-1,
                   dtype=qnp.uint32)
    return word.astype(x.dtype)


def _bool_reduce(b: Array, axes: tuple, kind: str) -> Array:
    from .. import numpy as qnp
    if kind == "and":
        return qnp.all(b, axis=axes)
    if kind == "or":
        return qnp.any(b, axis=axes)
    return (qnp.sum(b.astype(qnp.int32), axis=axes) & 1) != 0


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int) -> Array:
    """``operand`` rounded to a float format of ``exponent_bits`` and ``mantissa_bits``
    (round to nearest, ties to even), kept in its dtype, as ``jax.lax.reduce_precision``
    (XLA's rule: values past the format's range become infinities, values below its
    smallest normal number signed zeros, NaN stays NaN). ``(8, 7)`` rounds to bfloat16's
    values, ``(5, 10)`` to float16's.

    Written with frexp/ldexp and rint rather than on the bits (there is no 64-bit integer
    for f64's): on a normal input, the mantissa kept is rounded at its ``mantissa_bits``-th
    bit; on a subnormal one, at the same absolute position as the smallest normal's.

    >>> import quabla.numpy as qnp
    >>> reduce_precision(qnp.array([1.00390625, 65520.0, 1e-5]), 5, 10).tolist()
    [1.00390625, inf, 0.0]
    """
    from .. import numpy as qnp
    from .numpy.floating import _FORMATS
    x = asarray(operand)
    if x.dtype.kind != "f":
        raise TypeError(f"reduce_precision needs a float operand, got {x.dtype}")
    if int(exponent_bits) < 1 or int(mantissa_bits) < 0:
        raise ValueError(f"reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, "
                         f"got {exponent_bits} and {mantissa_bits}")
    f = _FORMATS[np.dtype(x.dtype)]
    out = x
    if mantissa_bits < f.precision - 1:
        _, e = qnp.frexp(x)
        # frexp's exponent of the smallest normal is emin + 1; below, the spacing is fixed.
        step = qnp.maximum(e, np.int32(f.emin + 1)) - np.int32(mantissa_bits + 1)
        rounded = qnp.ldexp(qnp.rint(qnp.ldexp(x, -step)), step)
        out = qnp.where(qnp.isfinite(x) & (x != 0), rounded, x)
    exponent_field = int(np.log2(f.emax + 1)) + 1
    if exponent_bits < exponent_field:
        bias = 2 ** (int(exponent_bits) - 1) - 1
        size = qnp.abs(out)
        out = qnp.where(size >= 2.0 ** (bias + 1), qnp.copysign(np.inf, out),
                        qnp.where(size < 2.0 ** (1 - bias), qnp.copysign(0.0, out), out))
    return qnp.where(qnp.isnan(x), x, out).astype(x.dtype)


def index_take(src, idxs: Sequence, axes: Sequence[int]) -> Array:
    """``src`` indexed by the integer arrays ``idxs`` along ``axes`` (one per axis): the
    index dimensions first, then ``src``'s other axes in order, as ``jax.lax.index_take``.

    >>> import quabla.numpy as qnp
    >>> index_take(qnp.arange(6.0).reshape(2, 3), (qnp.array([2, 0]),), (1,)).tolist()
    [[2.0, 5.0], [0.0, 3.0]]
    """
    x = asarray(src)
    axes = tuple(int(a) % x.ndim for a in axes)
    if len(idxs) != len(axes) or len(set(axes)) != len(axes):
        raise ValueError(f"index_take needs one index array per distinct axis, got "
                         f"{len(idxs)} index arrays for axes {axes}")
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    moved = x.transpose(axes + rest)
    return moved[tuple(asarray(i) for i in idxs)]


def empty(shape, dtype) -> Array:
    """An array of ``shape`` and ``dtype`` whose values are unspecified (zeros here), as
    ``jax.lax.empty``."""
    from .numpy.creation import zeros
    return zeros(shape, dtype)


def platform_dependent(*args, default: Optional[Callable] = None, **per_platform: Callable):
    """``per_platform[p](*args)`` for the default backend's platform ``p`` (``cpu``,
    ``cuda``, ``mlx``, ``wgpu``...), else ``default(*args)``, as
    ``jax.lax.platform_dependent`` (which picks at lowering time; Quabla picks when called).
    """
    from .runtime import default_backend
    platform = default_backend()
    if platform in per_platform:
        return per_platform[platform](*args)
    if default is None:
        raise NotImplementedError(f"platform_dependent: no branch for platform {platform!r} "
                                  f"and no default (branches: {sorted(per_platform)})")
    return default(*args)


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """``decomposition`` marked as one named operation, as ``jax.lax.composite``: Quabla has
    no composite op to lower it to, so calling it runs ``decomposition`` (what XLA does for
    a composite no backend recognizes)."""
    if not isinstance(name, str) or not name:
        raise ValueError("composite needs a non-empty name")

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        return decomposition(*args, **kwargs)

    return call


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """``(values, indices)`` of the ``k`` largest entries along ``reduction_dimension``, as
    ``jax.lax.approx_max_k``: exact here (as JAX's on CPU), so ``recall_target`` and the
    other tuning arguments change nothing; ties keep the lower index first."""
    from .numpy.shape import moveaxis
    from .numpy.sorting import top_k
    x = asarray(operand)
    dim = reduction_dimension % x.ndim
    values, indices = top_k(moveaxis(x, dim, -1), int(k))
    return moveaxis(values, -1, dim), moveaxis(indices, -1, dim)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """``(values, indices)`` of the ``k`` smallest entries, as ``jax.lax.approx_min_k``
    (exact, see :func:`approx_max_k`)."""
    values, indices = approx_max_k(-asarray(operand), k, reduction_dimension)
    return -values, indices
