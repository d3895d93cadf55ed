"""``quabla.numpy.fft``: the real-valued helpers of ``jax.numpy.fft`` (sample frequencies
and the zero-frequency shifts), as JAX computes them. The transforms themselves return
complex arrays, which Quabla does not have: asking for one raises an AttributeError that
says so.

>>> fftfreq(4).tolist()
[0.0, 0.25, -0.5, -0.25]
"""

from __future__ import annotations

import operator
from typing import Sequence, Union

from .._src import dtypes as _dt
from .._src.array import Array
from .._src.numpy.creation import arange, asarray
from .._src.numpy.shape import concatenate, roll

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_COMPLEX = {"fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
            "irfft2", "rfftn", "irfftn", "hfft", "ihfft"}


def __getattr__(name: str):
    if name in _COMPLEX:
        raise AttributeError(
            f"quabla.numpy.fft.{name} returns complex numbers, which Quabla does not have; "
            "this module has fftfreq, rfftfreq, fftshift and ifftshift")
    raise AttributeError(f"module 'quabla.numpy.fft' has no attribute {name!r}")


def _frequencies(k: Array, n: int, d, dtype, device) -> Array:
    # JAX writes k / (d n), which XLA turns into k times the reciprocal of the constant, in
    # the result's dtype (numpy multiplies by 1 / (n d) in float64): the same product here
    # gives JAX's bits (a true division differs in the last bit, at n = 7, d = 0.1).
    out = k * (1.0 / asarray(d * n, dtype=dtype))
    return out if device is None else asarray(out, device=device)


def _checked(name: str, n, d) -> int:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d)}.")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"{name}: n must be non-negative, got {n}")
    return n


def fftfreq(n: int, d=1.0, *, dtype=None, device=None) -> Array:
    """The sample frequencies of an ``n``-point transform with spacing ``d``: ``[0, 1, ...,
    -2, -1] / (d n)`` in ``dtype`` (default the default float), as ``jnp.fft.fftfreq``.

    >>> fftfreq(5, d=0.5).tolist()
    [0.0, 0.4000000059604645, 0.800000011920929, -0.800000011920929, -0.4000000059604645]
    """
    n = _checked("fftfreq", n, d)
    dt = _dt.default_float() if dtype is None else _dt.canonicalize(dtype, "fftfreq")
    positive = (n - 1) // 2 + 1
    k = concatenate([arange(0, positive, dtype=dt), arange(positive - n, 0, dtype=dt)])
    return _frequencies(k, n, d, dt, device)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None) -> Array:
    """The non-negative sample frequencies of an ``n``-point real transform: ``[0, 1, ...,
    n // 2] / (d n)``, as ``jnp.fft.rfftfreq``.

    >>> rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    n = _checked("rfftfreq", n, d)
    dt = _dt.default_float() if dtype is None else _dt.canonicalize(dtype, "rfftfreq")
    return _frequencies(arange(0, n // 2 + 1, dtype=dt), n, d, dt, device)


def _shift(x, axes: Union[None, int, Sequence[int]], sign: int) -> Array:
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axes)


def fftshift(x, axes: Union[None, int, Sequence[int]] = None) -> Array:
    """Moves the zero frequency to the middle of ``axes`` (all by default), as
    ``jnp.fft.fftshift``: a roll by half of each axis.

    >>> fftshift(fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shift(x, axes, 1)


def ifftshift(x, axes: Union[None, int, Sequence[int]] = None) -> Array:
    """Undoes :func:`fftshift` (they differ for odd lengths), as ``jnp.fft.ifftshift``.

    >>> ifftshift(fftshift(arange(5))).tolist()
    [0, 1, 2, 3, 4]
    """
    return _shift(x, axes, -1)
