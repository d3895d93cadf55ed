"""``jax.scipy.signal``'s direct convolutions: ``convolve``, ``correlate``, ``convolve2d``,
``correlate2d``, ``fftconvolve`` in any number of dimensions, as one ``lax.conv_general_dilated`` each (so
they differentiate, batch and run under ``jit``), with scipy's ``mode`` and JAX's choice of
which input slides over the other."""

from __future__ import annotations

import numpy as np

from ..array import Array
from ..lax_conv import conv_general_dilated
from ..numpy.creation import asarray
from ..numpy.elementwise import as_float
from ..numpy.shape import flip

_MODES = ("full", "same", "valid")


def _arrays(in1, in2):
    a = as_float(in1 if isinstance(in1, Array) else asarray(in1))
    b = as_float(in2 if isinstance(in2, Array) else asarray(in2))
    from .. import dtypes as _dt
    d = _dt.result_type(a.dtype, b.dtype)
    return a.astype(d), b.astype(d)


def _convolve_nd(in1: Array, in2: Array, mode: str) -> Array:
    """The convolution of two arrays of one rank; the larger one is the signal (they
    must be ordered the same way on every axis)."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    keep = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (keep or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    first_shape = in2.shape
    if swap:
        in1, in2 = in2, in1
    kernel_shape = in2.shape
    kernel = flip(in2, tuple(range(in2.ndim)))
    if mode == "valid":
        pads = [(0, 0)] * in1.ndim
    elif mode == "same":
        # Centred on the first input (scipy's "same" keeps in1's shape).
        pads = [(k - 1 - (o - 1) // 2, k - o + (o - 1) // 2)
                for k, o in zip(kernel_shape, first_shape)]
    else:
        pads = [(k - 1, k - 1) for k in kernel_shape]
    out = conv_general_dilated(in1[None, None], kernel[None, None], (1,) * in1.ndim, pads)
    return out[0, 0]


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None) -> Array:
    """N-dimensional convolution (``method`` "auto" or "direct"; there is no FFT here)."""
    del precision
    if method == "fft":
        raise NotImplementedError("convolve(method='fft') needs an FFT, which Quabla does not "
                                  "have; use method='direct' (the default 'auto' is direct)")
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    a, b = _arrays(in1, in2)
    return _convolve_nd(a, b, mode)


def fftconvolve(in1, in2, mode: str = "full", axes=None) -> Array:
    """The convolution of ``in1`` and ``in2`` along ``axes`` (all when None), as
    ``jax.scipy.signal.fftconvolve``; along the other axes the shapes must be equal (one
    convolution per position). Computed directly (Quabla has no FFT): the same values up to
    rounding, in time that grows with the kernel's size.

    >>> import quabla.numpy as qnp
    >>> fftconvolve(qnp.array([1.0, 2.0, 3.0]), qnp.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    a, b = _arrays(in1, in2)
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if axes is None:
        return _convolve_nd(a, b, mode)
    conv = sorted({int(x) % a.ndim for x in np.atleast_1d(axes)})
    other = [d for d in range(a.ndim) if d not in conv]
    batch = tuple(a.shape[d] for d in other)
    if batch != tuple(b.shape[d] for d in other):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={a.shape} "
                         f"in2.shape={b.shape} axes={tuple(conv)}")
    from ..api import vmap
    from ..numpy.shape import transpose
    order = tuple(other) + tuple(conv)

    def rows(x: Array) -> Array:
        moved = transpose(x, order)
        return moved.reshape((-1,) + tuple(moved.shape[len(other):]))

    out = vmap(lambda p, q: _convolve_nd(p, q, mode))(rows(a), rows(b))
    out = out.reshape(batch + tuple(out.shape[1:]))
    return transpose(out, tuple(int(i) for i in np.argsort(order)))


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None) -> Array:
    """N-dimensional cross-correlation: :func:`convolve` with ``in2`` reversed."""
    a, b = _arrays(in1, in2)
    return convolve(a, flip(b, tuple(range(b.ndim))), mode, method, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None) -> Array:
    """Two-dimensional convolution (zero fill at the boundary)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    a, b = _arrays(in1, in2)
    return _convolve_nd(a, b, mode)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None) -> Array:
    """Two-dimensional cross-correlation (zero fill), oriented as scipy's when the second
    input is the larger one."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    a, b = _arrays(in1, in2)
    both = (0, 1)
    swap = all(s1 <= s2 for s1, s2 in zip(a.shape, b.shape))
    same = a.shape == b.shape
    if mode == "same":
        return flip(_convolve_nd(flip(a, both), b, mode), both)
    if mode == "valid" and not (swap and not same):
        return flip(_convolve_nd(flip(a, both), b, mode), both)
    if swap:
        return _convolve_nd(flip(b, both), a, mode)
    return flip(_convolve_nd(flip(a, both), b, mode), both)
