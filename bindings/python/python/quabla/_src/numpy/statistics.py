"""Statistics and binning over arrays, as ``jax.numpy``: ``average``, ``ptp``, ``cov``,
``corrcoef``, ``bincount``, ``digitize``, ``histogram`` / ``histogram_bin_edges``; the
binning ones through :func:`searchsorted` and a scatter-add, so they run under ``jit``
given static sizes (``bincount(length=)``)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array, _axis
from .creation import asarray, linspace, zeros
from .elementwise import as_float, sqrt, where
from . import reductions as r
from .sorting import searchsorted


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """The (weighted) mean along ``axis``; ``weights`` of ``a``'s shape or, with an
    ``axis``, 1-D along it. ``returned`` adds the sum of the weights."""
    a = as_float(_arr(a))
    if weights is None:
        avg = r.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        count = a.size if axis is None else int(np.prod([a.shape[_axis(x, a.ndim)] for x in
                                                          ((axis,) if np.ndim(axis) == 0
                                                           else axis)]))
        return avg, avg * 0 + count
    w = as_float(_arr(weights))
    d = _dt.result_type(a.dtype, w.dtype)
    a, w = a.astype(d), w.astype(d)
    if w.shape != a.shape:
        if axis is None:
            raise ValueError("average: weights of another shape than a need an axis")
        if w.ndim != 1 or w.shape[0] != a.shape[_axis(axis, a.ndim)]:
            raise ValueError("average: 1-D weights must match a's length along axis")
        shape = [1] * a.ndim
        shape[_axis(axis, a.ndim)] = w.shape[0]
        w = w.reshape(tuple(shape)) + a * 0
    total_w = r.sum(w, axis=axis, keepdims=keepdims)
    avg = r.sum(a * w, axis=axis, keepdims=keepdims) / total_w
    return (avg, total_w) if returned else avg


def ptp(a, axis=None, keepdims: bool = False) -> Array:
    """The range ``max - min`` along ``axis``."""
    a = _arr(a)
    return r.max(a, axis=axis, keepdims=keepdims) - r.min(a, axis=axis, keepdims=keepdims)


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof: Optional[int] = None,
        fweights=None, aweights=None) -> Array:
    """The covariance matrix of the variables in the rows of ``m`` (columns when not
    ``rowvar``), with numpy's ``bias``, ``ddof``, frequency and analytic weights."""
    from .shape import atleast_2d, concatenate
    x = atleast_2d(as_float(_arr(m)))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return asarray(np.zeros((0, 0), x.dtype))
    if y is not None:
        y2 = atleast_2d(as_float(_arr(y)))
        if not rowvar and y2.shape[0] != 1:
            y2 = y2.T
        x = concatenate([x, y2.astype(x.dtype)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = as_float(_arr(fweights)).astype(x.dtype)
    if aweights is not None:
        aw = as_float(_arr(aweights)).astype(x.dtype)
        w = aw if w is None else w * aw
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = w_sum - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * r.sum(w * aw) / w_sum
    centred = x - avg[:, None]
    weighted = centred.T if w is None else (centred * w).T
    c = (centred @ weighted) / fact
    return c.squeeze()


def corrcoef(x, y=None, rowvar: bool = True) -> Array:
    """Pearson correlation coefficients, clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = sqrt(c.diagonal())
    c = c / d[:, None]
    c = c / d[None, :]
    from .elementwise import clip
    return clip(c, -1, 1)


def bincount(x, weights=None, minlength: int = 0, *, length: Optional[int] = None) -> Array:
    """Occurrences of each non-negative int (or the sum of ``weights`` per value); negative
    values count as 0, values at or past ``length`` are dropped. A traced ``x`` needs a
    static ``length``."""
    x = _arr(x)
    if x.dtype.kind not in "iub":
        raise TypeError(f"bincount: x must be integers, got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("bincount: x must be 1-D")
    if minlength < 0:
        raise ValueError("bincount: minlength must be non-negative")
    if length is None:
        if x.is_traced:
            raise ValueError("bincount of a traced array needs a static `length`, as in JAX")
        length = max(int(minlength), int(np.asarray(x).max()) + 1 if x.size else 0)
    w = asarray(np.ones((), np.int32)) if weights is None else _arr(weights)
    if w.ndim == 0:
        w = w + zeros(x.shape, w.dtype)
    from .elementwise import maximum
    return zeros((int(length),), w.dtype).at[maximum(x, 0)].add(w)


def digitize(x, bins, right: bool = False, *, method: str = "scan") -> Array:
    """The bin index of each ``x`` for monotone ``bins`` (increasing or decreasing)."""
    x, b = _arr(x), _arr(bins)
    if b.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got {b.shape}")
    if b.shape[0] == 0:
        return zeros(x.shape, np.int32)
    side = "left" if right else "right"
    up = searchsorted(b, x, side=side, method=method)
    down = b.shape[0] - searchsorted(b[::-1], x, side=side, method=method)
    return where(b[-1] >= b[0], up, down)


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Array:  # noqa: A002
    """The edges :func:`histogram` uses: ``bins`` equal bins over ``range`` (the data's
    range by default, widened by 0.5 each side when it is one point), or ``bins`` itself."""
    del weights
    a = as_float(_arr(a))
    if np.ndim(bins) == 1 or isinstance(bins, Array):
        return as_float(_arr(bins))
    if range is None:
        lo, hi = r.min(a), r.max(a)
    else:
        if np.ndim(range) != 1 or len(range) != 2:
            raise ValueError(f"histogram: range must be a (min, max) pair, got {range!r}")
        lo, hi = asarray(range[0], a.dtype), asarray(range[1], a.dtype)
    same = lo == hi
    lo = where(same, lo - 0.5, lo).astype(a.dtype)
    hi = where(same, hi + 0.5, hi).astype(a.dtype)
    return linspace(lo, hi, int(bins) + 1, dtype=a.dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts (or summed ``weights``, or a density) of ``a`` in ``bins`` and the edges;
    the last bin includes its right edge, values outside the edges are not counted."""
    a = as_float(_arr(a)).reshape(-1)
    edges = histogram_bin_edges(a, bins, range, weights)
    w = (zeros(a.shape, a.dtype) + 1) if weights is None else \
        as_float(_arr(weights)).reshape(-1).astype(a.dtype)
    n = edges.shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = where(a == edges[-1], n - 1, idx)
    counts = zeros((n + 1,), w.dtype).at[idx].add(w)[1:n]
    if density:
        widths = edges[1:] - edges[:-1]
        counts = counts / widths / r.sum(counts)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of ``sample`` (N points of D coordinates: shape ``(N, D)``) in a D-dimensional
    grid of bins, and each axis's edges, as numpy's: ``bins`` one count or edge array for
    every axis or one per axis, ``range`` a ``(min, max)`` pair per axis; each axis's last
    bin includes its right edge and points outside the edges are not counted."""
    s = as_float(_arr(sample))
    if s.ndim == 1:
        s = s.reshape(-1, 1)
    if s.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got shape {s.shape}")
    d = s.shape[1]
    per_axis = bins if isinstance(bins, (list, tuple)) else [bins] * d
    ranges = [None] * d if range is None else list(range)
    if len(per_axis) != d or len(ranges) != d:
        raise ValueError(f"histogramdd: {d} dimensions need {d} bins and ranges, got "
                         f"{len(per_axis)} and {len(ranges)}")
    edges = [histogram_bin_edges(s[:, k], per_axis[k], ranges[k]) for k in np.arange(d)]
    # Each axis's bin, 0 below the first edge and n + 1 past the last (both dropped), the
    # last edge itself in the last bin; then one flat index into the padded grid.
    padded = [e.shape[0] + 1 for e in edges]
    flat = zeros((s.shape[0],), np.int32)
    for k, e in enumerate(edges):
        x = s[:, k]
        idx = searchsorted(e, x, side="right")
        idx = where(x == e[-1], e.shape[0] - 1, idx)
        flat = flat * padded[k] + idx
    w = (zeros((s.shape[0],), s.dtype) + 1) if weights is None else \
        as_float(_arr(weights)).reshape(-1).astype(s.dtype)
    counts = zeros((int(np.prod(padded)),), w.dtype).at[flat].add(w).reshape(padded)
    counts = counts[tuple(slice(1, p - 1) for p in padded)]
    if density:
        volume = asarray(np.ones((), np.int32)).astype(w.dtype)
        for k, e in enumerate(edges):
            shape = [1] * d
            shape[k] = e.shape[0] - 1
            volume = volume * (e[1:] - e[:-1]).reshape(shape)
        counts = counts / volume / r.sum(counts)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """:func:`histogramdd` of the points ``(x[i], y[i])``: ``(counts, x_edges, y_edges)``;
    ``bins`` one count, one edge array for both axes, or one of either per axis (numpy's
    rule: a sequence whose length is not 1 or 2 is one edge array)."""
    from .shape import stack
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [bins, bins]
    counts, (ex, ey) = histogramdd(stack([as_float(_arr(x)), as_float(_arr(y))], axis=1),
                                   bins, range, weights, density)
    return counts, ex, ey
