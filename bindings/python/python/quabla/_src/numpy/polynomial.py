"""Finite differences, polynomials and window functions, as ``jax.numpy``: ``gradient``
(second-order inside, first-order at the edges, uniform or coordinate spacing),
``ediff1d``, ``polyder``, ``polyint``, ``polyadd``, ``polysub``, ``polymul``, ``polyfit``
(least squares on the column-scaled Vandermonde matrix), ``hamming``, ``hanning``,
``blackman``, ``bartlett``, ``heaviside``, ``divmod``."""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array, _axis
from .creation import arange, asarray, zeros
from .elementwise import as_float, cos, where
from .shape import concatenate


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _along(a: Array, axis: int, start, stop) -> Array:
    idx = [slice(None)] * a.ndim
    idx[axis] = slice(start, stop)
    return a[tuple(idx)]


def _gradient_along(a: Array, h, axis: int) -> Array:
    lower = _along(a, axis, 1, 2) - _along(a, axis, 0, 1)
    upper = _along(a, axis, -1, None) - _along(a, axis, -2, -1)
    if np.ndim(h) == 0:
        inner = (_along(a, axis, 2, None) - _along(a, axis, None, -2)) * 0.5 / h
        return concatenate([lower / h, inner, upper / h], axis)
    h = as_float(_arr(h))
    if h.ndim != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if h.shape[0] != a.shape[axis]:
        raise ValueError("Spacing arrays must have the same length as the dimension along "
                         "which the gradient is calculated.")
    shape = [1] * a.ndim
    shape[axis] = h.shape[0]
    h = h.reshape(tuple(shape))
    lower = lower / (_along(h, axis, 1, 2) - _along(h, axis, 0, 1))
    upper = upper / (_along(h, axis, -1, None) - _along(h, axis, -2, -1))
    dx1 = _along(h, axis, 1, -1) - _along(h, axis, 0, -2)
    dx2 = _along(h, axis, 2, None) - _along(h, axis, 1, -1)
    wa = -dx2 / (dx1 * (dx1 + dx2))
    wb = (dx2 - dx1) / (dx1 * dx2)
    wc = dx1 / (dx2 * (dx1 + dx2))
    inner = (wa * _along(a, axis, 0, -2) + wb * _along(a, axis, 1, -1)
             + wc * _along(a, axis, 2, None))
    return concatenate([lower, inner, upper], axis)


def gradient(f, *varargs, axis=None, edge_order: Optional[int] = None):
    """The gradient of sampled ``f`` along each axis (a list for several axes); spacing a
    scalar or the coordinates per axis."""
    if edge_order is not None:
        raise NotImplementedError("gradient: edge_order is not supported (as in JAX); "
                                  "the edges are first-order")
    a = as_float(_arr(f))
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        listed = (axis,) if isinstance(axis, numbers.Integral) else axis
        axes = tuple(_axis(int(i), a.ndim) for i in listed)
    if not axes:
        return []
    if min(a.shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least 2 elements are required.")
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(varargs)} for axis={axis}")
    out = [_gradient_along(a, h, ax) for ax, h in zip(axes, spacing)]
    return out[0] if len(axes) == 1 else out


def ediff1d(ary, to_end=None, to_begin=None) -> Array:
    """Differences of consecutive elements of the flattened array, with optional values
    before and after."""
    a = _arr(ary).reshape(-1)
    out = a[1:] - a[:-1]
    parts = []
    if to_begin is not None:
        parts.append(_arr(to_begin).astype(out.dtype).reshape(-1))
    parts.append(out)
    if to_end is not None:
        parts.append(_arr(to_end).astype(out.dtype).reshape(-1))
    return concatenate(parts) if len(parts) > 1 else out


def polyder(p, m: int = 1) -> Array:
    """The ``m``-th derivative of the polynomial with coefficients ``p`` (highest first)."""
    p = as_float(_arr(p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    # Falling factorials k (k - 1) ... (k - m + 1) for the surviving powers k.
    coeff = np.prod(np.arange(m, n)[None, :] - np.arange(m)[:, None], axis=0)
    return p[:-m] * asarray(coeff[::-1].astype(np.float64)).astype(p.dtype)


def polyint(p, m: int = 1, k=None) -> Array:
    """The ``m``-th antiderivative, integration constants ``k`` (zeros by default)."""
    p = as_float(_arr(p))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if m == 0:
        return p
    k_arr = zeros((m,), p.dtype) if k is None else _arr(k).astype(p.dtype).reshape(-1)
    if k_arr.shape[0] == 1 and m > 1:
        k_arr = k_arr + zeros((m,), p.dtype)
    if k_arr.shape[0] != m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m")
    n = p.shape[0]
    grid = np.arange(n + m)[None, :] - np.arange(m)[:, None]
    coeff = np.maximum(1, grid).prod(0)[::-1].astype(np.float64)
    return concatenate([p, k_arr]) / asarray(coeff).astype(p.dtype)


def _pad_front(a: Array, n: int) -> Array:
    return concatenate([zeros((n - a.shape[0],), a.dtype), a]) if a.shape[0] < n else a


def polyadd(a1, a2) -> Array:
    a, b = _arr(a1), _arr(a2)
    d = _dt.result_type(a.dtype, b.dtype)
    n = max(a.shape[0], b.shape[0])
    return _pad_front(a.astype(d), n) + _pad_front(b.astype(d), n)


def polysub(a1, a2) -> Array:
    a, b = _arr(a1), _arr(a2)
    d = _dt.result_type(a.dtype, b.dtype)
    n = max(a.shape[0], b.shape[0])
    return _pad_front(a.astype(d), n) - _pad_front(b.astype(d), n)


def polymul(a1, a2) -> Array:
    """The product's coefficients (a full convolution)."""
    from .misc import convolve
    return convolve(_arr(a1), _arr(a2), mode="full")


def polyfit(x, y, deg: int, rcond: Optional[float] = None, w=None):
    """Least-squares polynomial coefficients (highest first) of degree ``deg``."""
    from ..linalg import lstsq
    from .elementwise import sqrt
    from .index_tricks import vander
    x, y = as_float(_arr(x)), as_float(_arr(y))
    deg = int(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError("expected a non-empty 1D vector for x")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError("expected 1D or 2D y with as many rows as x")
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x.dtype).eps)
    lhs, rhs = vander(x, deg + 1), y
    if w is not None:
        wa = as_float(_arr(w))
        if wa.ndim != 1 or wa.shape[0] != y.shape[0]:
            raise TypeError("expected a 1-d array of weights, one per point")
        lhs = lhs * wa[:, None]
        rhs = rhs * (wa[:, None] if rhs.ndim == 2 else wa)
    scale = sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c = lstsq(lhs, rhs, rcond)[0]
    return (c.T / scale[None, :]).T if c.ndim > 1 else c / scale


def _window(m: int, f) -> Array:
    m = int(m)
    d = _dt.default_float()
    if m <= 1:
        return asarray(np.ones((max(m, 0),), d))
    return f(arange(m, dtype=d), m)


def hamming(M: int) -> Array:
    return _window(M, lambda n, m: 0.54 - 0.46 * cos(2 * np.pi * n / (m - 1)))


def hanning(M: int) -> Array:
    return _window(M, lambda n, m: 0.5 - 0.5 * cos(2 * np.pi * n / (m - 1)))


def blackman(M: int) -> Array:
    return _window(M, lambda n, m: 0.42 - 0.5 * cos(2 * np.pi * n / (m - 1))
                   + 0.08 * cos(4 * np.pi * n / (m - 1)))


def bartlett(M: int) -> Array:
    from .elementwise import absolute
    return _window(M, lambda n, m: 1 - absolute(2 * n + 1 - m) / (m - 1))


def heaviside(x1, x2) -> Array:
    """0 below zero, ``x2`` at zero, 1 above (NaN stays NaN)."""
    a = as_float(_arr(x1))
    b = _arr(x2).astype(a.dtype)
    return where(a < 0, 0.0, where(a > 0, 1.0, b + a * 0)).astype(a.dtype)


def divmod(x1, x2):  # noqa: A001 - numpy's name
    """``(x1 // x2, x1 % x2)`` with Python's signs."""
    a, b = _arr(x1), _arr(x2)
    return a // b, a % b


def poly(seq_of_zeros) -> Array:
    """The monic polynomial's coefficients (highest power first) with the given 1-D roots,
    as numpy's; float even for integer roots. A matrix's characteristic polynomial (numpy's
    2-D case) needs its eigenvalues, which Quabla computes only for symmetric matrices:
    refused with that advice."""
    z = _arr(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        raise NotImplementedError(
            "poly of a matrix needs a general eigensolver; pass its eigenvalues "
            "(linalg.eigvalsh for a symmetric matrix)")
    if z.ndim != 1:
        raise ValueError(f"poly: the roots must be a 1-D sequence, got shape {z.shape}")
    z = as_float(z)
    coeffs = asarray(np.ones(1), dtype=z.dtype)
    for k in range(z.shape[0]):
        coeffs = polymul(coeffs, concatenate([asarray(np.ones(1), dtype=z.dtype), -z[k:k + 1]]))
    return coeffs


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """``(quotient, remainder)`` of polynomial division (coefficients highest power first),
    as JAX's: the remainder keeps ``u``'s length (leading zeros), where numpy trims it;
    ``trim_leading_zeros=True`` trims concretely, as JAX's keyword does."""
    u, v = as_float(_arr(u)), as_float(_arr(v))
    dtype = _dt.result_type(u.dtype, v.dtype)
    u, v = u.astype(dtype), v.astype(dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    if n < 0:
        raise ValueError("polydiv: the divisor has no coefficients")
    scale = 1.0 / v[0]
    q = zeros(max(m - n + 1, 1), dtype)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        nz = np.flatnonzero(np.asarray(r) != 0)
        r = r[nz[0]:] if nz.size else r[-1:]
    return q, r
