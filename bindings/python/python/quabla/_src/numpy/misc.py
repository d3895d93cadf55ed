"""take, diff, trapezoid, interp, polyval, meshgrid, nonzero."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array, _axis
from .creation import asarray
from .elementwise import where
from .reductions import sum as sum_
from .shape import concatenate, moveaxis
from .sorting import searchsorted


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def take(a, indices, axis: Optional[int] = None, mode: Optional[str] = None,
         fill_value=None) -> Array:
    """Elements of ``a`` at integer ``indices`` along ``axis`` (flattened when None), as
    ``jnp.take``: negative indices count from the end; out-of-range ones read ``fill_value``
    (``mode`` None or "fill"; default NaN, the least signed or largest unsigned integer,
    True), are clamped ("clip", "promise_in_bounds") or wrap around ("wrap")."""
    a = _arr(a)
    if mode == "raise":
        raise NotImplementedError("take: mode 'raise' is not supported (as in JAX): the "
                                  "indices are not known on the host under jit")
    if mode not in (None, "fill", "clip", "wrap", "promise_in_bounds"):
        raise ValueError(f"take: unknown mode {mode!r}: use 'fill', 'clip', 'wrap' or "
                         "'promise_in_bounds'")
    if axis is None:
        a, axis = a.reshape(-1), 0
    ax = _axis(axis, a.ndim)
    idx = _arr(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"take needs integer indices, got {idx.dtype}")
    if mode == "wrap":
        n = a.shape[ax]
        idx, mode = ((idx.astype(np.int32) % n) + n) % n, "clip"
    full: list = [slice(None)] * a.ndim
    full[ax] = idx
    return a.at[tuple(full)].get(mode="fill" if mode is None else mode, fill_value=fill_value)


def take_along_axis(arr, indices, axis: int) -> Array:
    a, idx = _arr(arr), _arr(indices)
    ax = _axis(axis, a.ndim)
    from .creation import iota_like
    from .shape import broadcast_shapes, broadcast_to
    shape = list(broadcast_shapes(a.shape[:ax] + (1,) + a.shape[ax + 1:], idx.shape))
    idx = broadcast_to(idx, shape)
    parts = []
    for d in range(a.ndim):
        parts.append(idx if d == ax else iota_like(idx, np.int32, shape, d))
    return a[tuple(parts)]


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None) -> Array:
    """n-th discrete difference along ``axis``."""
    a = _arr(a)
    ax = _axis(axis, a.ndim)
    if prepend is not None or append is not None:
        shape = list(a.shape)
        shape[ax] = 1

        def edge(v):
            from .shape import broadcast_to
            return [broadcast_to(_arr(v), shape) if np.ndim(v) == 0 else _arr(v)]

        pre = [] if prepend is None else edge(prepend)
        post = [] if append is None else edge(append)
        a = concatenate(pre + [a] + post, ax)
    for _ in range(n):
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[ax], lo[ax] = slice(1, None), slice(None, -1)
        a = a[tuple(hi)] - a[tuple(lo)]
    return a


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1) -> Array:
    """Integral of ``y`` by the trapezoidal rule (sample points ``x`` or spacing ``dx``)."""
    y = _arr(y)
    ax = _axis(axis, y.ndim)
    y = moveaxis(y, ax, -1)
    mid = (y[..., 1:] + y[..., :-1]) * 0.5
    if x is None:
        return sum_(mid, -1) * dx
    x = _arr(x)
    if x.ndim == 1:
        d = x[1:] - x[:-1]
    else:
        d = diff(moveaxis(x, ax, -1), axis=-1)
    return sum_(mid * d, -1)


def interp(x, xp, fp, left=None, right=None, period=None) -> Array:
    """Piecewise-linear interpolation of (xp, fp) at x; at a knot the derivative is the
    right-hand segment's (as JAX)."""
    if period is not None:
        raise NotImplementedError("interp: `period` is not supported")
    x, xp, fp = _arr(x), _arr(xp), _arr(fp)
    if x.dtype.kind != "f":
        x = x.astype(fp.dtype if fp.dtype.kind == "f" else _dt.default_float())
    n = xp.shape[0]
    i = searchsorted(xp, x, side="right")
    i = where(i < 1, 1, where(i > n - 1, n - 1, i))
    x0, x1 = take(xp, i - 1), take(xp, i)
    f0, f1 = take(fp, i - 1), take(fp, i)
    dx = x1 - x0
    safe = where(dx == 0, 1.0, dx)
    f = f0 + (x - x0) * ((f1 - f0) / safe)
    f = where(dx == 0, f0, f)
    lo = fp[0] if left is None else left
    hi = fp[-1] if right is None else right
    f = where(x < xp[0], lo, f)
    return where(x > xp[-1], hi, f)


def polyval(p, x) -> Array:
    """``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule."""
    p, x = _arr(p), _arr(x)
    acc = x * 0 + p[0] if p.shape[0] else x * 0
    for k in range(1, p.shape[0]):
        acc = acc * x + p[k]
    return acc


def meshgrid(*xi, indexing: str = "xy", sparse: bool = False) -> list:
    arrs = [_arr(x).reshape(-1) for x in xi]
    nd = len(arrs)
    shapes = []
    for k, a in enumerate(arrs):
        s = [1] * nd
        s[k] = a.shape[0]
        shapes.append(s)
    if indexing == "xy" and nd >= 2:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [a.reshape(s) for a, s in zip(arrs, shapes)]
    if sparse:
        return out
    from .shape import broadcast_arrays
    return broadcast_arrays(*out)


def nonzero(a, size: Optional[int] = None, fill_value=0):
    """Indices of non-zero elements (needs a concrete array unless ``size`` is given)."""
    a = _arr(a)
    if a.is_traced and size is None:
        raise IndexError("nonzero of a traced array needs a static `size`")
    if size is None:
        return tuple(asarray(ix.astype(np.int32)) for ix in np.nonzero(np.asarray(a)))
    flat = (a != 0).reshape(-1).astype(np.int32)
    from .creation import full, iota_like
    from .reductions import cumsum
    # The k-th non-zero element goes to slot k; the rest to a spare slot that is dropped.
    slot = where(flat == 1, cumsum(flat) - 1, size)
    positions = iota_like(a, np.int32, (a.size,), 0)
    idx = full((size + 1,), -1, np.int32).at[slot].max(positions)[:size]
    coords = []
    rem = where(idx < 0, 0, idx)
    for d in reversed(a.shape):
        coords.append(rem % d)
        rem = rem // d
    return tuple(where(idx < 0, fill_value, c) for c in reversed(coords))


def flatnonzero(a) -> Array:
    return nonzero(_arr(a).reshape(-1))[0]



def argwhere(a, *, size: Optional[int] = None, fill_value=None) -> Array:
    """The indices of the non-zero elements, one row each (``(count, ndim)``); traced arrays
    need a static ``size`` (rows past the count hold ``fill_value``, 0 by default), as JAX."""
    a = _arr(a)
    if a.ndim == 0:
        raise ValueError("argwhere needs an array of at least one axis (numpy treats a 0-d "
                         "input as 1-d; reshape it first)")
    from .shape import stack
    coords = nonzero(a, size=size, fill_value=0 if fill_value is None else fill_value)
    return stack(coords, axis=-1)


def convolve(a, v, mode: str = "full") -> Array:
    """The discrete linear convolution of two 1-D arrays (numpy's ``mode``: ``"full"``,
    ``"same"`` or ``"valid"``), as a gather of ``v``'s shifted windows and one product with
    ``a``: differentiable in both, and it batches under ``vmap``."""
    v = _arr(v)
    return _correlate_1d(_arr(a), v[::-1] if v.ndim == 1 else v, mode, "convolve")


def correlate(a, v, mode: str = "valid") -> Array:
    """The cross-correlation ``c[k] = sum_n a[n + k] * v[n]`` of two 1-D arrays (numpy's
    ``mode``, ``"valid"`` by default)."""
    return _correlate_1d(_arr(a), _arr(v), mode, "correlate")


def _correlate_1d(a: Array, v: Array, mode: str, name: str) -> Array:
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}: only 1-D arrays are supported, got shapes {a.shape} and "
                         f"{v.shape}")
    n, m = a.shape[0], v.shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"{name}: inputs cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    d = _dt.result_type(a.dtype, v.dtype)
    if d.kind == "b":
        d = np.dtype(np.int32)
    a, v = a.astype(d), v.astype(d)
    # The full correlation c[k] = sum_j a[k - (m - 1) + j] v[j], k < n + m - 1, then
    # numpy's window of it for the mode.
    short = min(n, m)
    # numpy centres "same" from the end when it swaps a shorter `a` for correlate.
    centre = (short - 1) // 2
    if name == "correlate" and n < m:
        centre = (short - 1) - centre
    start = {"full": 0, "same": centre, "valid": short - 1}[mode]
    length = {"full": n + m - 1, "same": max(n, m), "valid": abs(n - m) + 1}[mode]
    k = np.arange(start, start + length)[:, None] - (m - 1) + np.arange(m)[None, :]
    inside = (k >= 0) & (k < n)
    windows = take(a, asarray(np.clip(k, 0, n - 1).astype(np.int32)).reshape(-1)).reshape(
        (length, m))
    return where(asarray(inside), windows, 0) @ v
