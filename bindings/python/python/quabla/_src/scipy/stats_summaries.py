"""``jax.scipy.stats``'s summaries of samples: ``sem``, ``mode`` and ``rankdata``, with
JAX's ``nan_policy`` conventions. Ties are found on the sorted sample: runs of equal values
(NaNs, sorted last, form one run), each run's first and last positions spread over it by
cumulative maxima and minima."""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

from ..array import Array
from ..numpy import elementwise as el
from ..numpy.creation import arange, asarray

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    """The most frequent value and how often it occurs (``jax.scipy.stats.mode``'s)."""
    mode: Array
    count: Array  # type: ignore[assignment]  # JAX's field name (shadows tuple.count)


def _last_axis(a, axis: Optional[int]) -> Array:
    from ..numpy.shape import moveaxis
    a = asarray(a)
    return a.reshape(-1) if axis is None else moveaxis(a, axis, -1)


def _runs(s: Array):
    """For a sample sorted along its last axis: whether each position starts a run of equal
    values (NaN equal to NaN), and the first and last positions of each position's run."""
    from ..lax_more import cummax, cummin
    from ..numpy.shape import broadcast_to, concatenate
    n = s.shape[-1]
    same = (s[..., 1:] == s[..., :-1]) | (el.isnan(s[..., 1:]) & el.isnan(s[..., :-1]))
    edge = broadcast_to(asarray(True), s.shape[:-1] + (1,))
    starts = concatenate([edge, ~same], axis=-1)
    ends = concatenate([~same, edge], axis=-1)
    i = broadcast_to(arange(n).astype("int32"), s.shape)
    first = cummax(el.where(starts, i, 0), axis=s.ndim - 1)
    last = cummin(el.where(ends, i, n), axis=s.ndim - 1, reverse=True)
    return starts, first, last


def sem(a, axis: Optional[int] = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)``; ``nan_policy='omit'``
    leaves NaNs out of both (``'raise'`` is refused, as JAX's).

    >>> float(sem(qnp.asarray([1.0, 2.0, 3.0, 4.0])))  # sqrt(5/3) / 2
    0.6454972243679028
    """
    from ..numpy.nan_reductions import nanstd
    from ..numpy.reductions import count_nonzero, std
    a = asarray(a)
    if nan_policy == "propagate":
        n = a.size if axis is None else a.shape[axis]
        return std(a, axis=axis, ddof=ddof, keepdims=keepdims) / math.sqrt(n)
    if nan_policy == "omit":
        n = count_nonzero(~el.isnan(a), axis=axis, keepdims=keepdims)
        return nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / el.sqrt(
            n.astype(a.dtype if a.dtype.kind == "f" else "float32"))
    raise ValueError(f"{nan_policy} is not supported")


def mode(a, axis: Optional[int] = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (the smallest among equally frequent ones; NaNs
    count as one value) and its count, as ``jax.scipy.stats.mode``. Counts are int32."""
    from ..numpy.reductions import argmax
    from ..numpy.misc import take_along_axis
    from ..numpy.sorting import sort
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy != "propagate":
        raise NotImplementedError(
            f"mode: nan_policy={nan_policy!r} is not supported (JAX's neither): whether a "
            "traced sample holds NaNs is not known; check for them outside of mode")
    x = _last_axis(a, axis)
    s = sort(x, axis=-1)
    _, first, last = _runs(s)
    counts = last - first + 1
    at = argmax(counts, axis=-1, keepdims=True)
    value = take_along_axis(s, at, axis=-1)[..., 0]
    count = take_along_axis(counts, at, axis=-1)[..., 0]
    if keepdims:
        from ..numpy.shape import expand_dims
        nd = asarray(a).ndim
        if axis is None:
            value, count = value.reshape((1,) * nd), count.reshape((1,) * nd)
        else:
            value, count = expand_dims(value, axis % nd), expand_dims(count, axis % nd)
    return ModeResult(value, count)


def rankdata(a, method: str = "average", *, axis: Optional[int] = None,
             nan_policy: str = "propagate") -> Array:
    """Ranks from 1 along ``axis`` (``None``: of the flattened sample), ties by ``method``:
    ``'average'``, ``'min'``, ``'max'``, ``'dense'`` or ``'ordinal'`` (order of appearance),
    as floats; a slice holding a NaN ranks as all NaN (``nan_policy='propagate'``)."""
    from ..numpy.misc import take_along_axis
    from ..numpy.reductions import any as any_, cumsum
    from ..numpy.shape import broadcast_to, moveaxis
    from ..numpy.sorting import argsort
    from .. import dtypes as _dt
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if nan_policy == "omit":
        raise NotImplementedError("rankdata: nan_policy='omit' is not supported (JAX's neither)")
    if nan_policy not in ("propagate", "raise"):
        raise ValueError(f"{nan_policy} is not supported")
    x = _last_axis(a, axis)
    order = argsort(x, axis=-1, stable=True)
    s = take_along_axis(x, order, axis=-1)
    starts, first, last = _runs(s)
    f = _dt.default_float()
    i = arange(x.shape[-1]).astype(f)
    ranked = {
        "ordinal": lambda: i + 1.0,
        "min": lambda: first.astype(f) + 1.0,
        "max": lambda: last.astype(f) + 1.0,
        "dense": lambda: cumsum(starts.astype(f), axis=-1),
        "average": lambda: (first + last).astype(f) * 0.5 + 1.0,
    }[method]()
    ranks = take_along_axis(broadcast_to(ranked, s.shape), argsort(order, axis=-1), axis=-1)
    if x.dtype.kind == "f":
        ranks = el.where(any_(el.isnan(x), axis=-1, keepdims=True), float("nan"), ranks)
    return ranks if axis is None else moveaxis(ranks, -1, axis)
