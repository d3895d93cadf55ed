"""numpy indexing (``x[i, a:b:s, None, ..., idx]``) and ``x.at[...]`` updates.

Basic indices become one ``slice`` (plus ``reverse`` for negative steps) and a reshape;
integer-array indices become one XLA ``gather`` (out-of-range indices are clamped, as JAX
does for gathers). Updates index an ``iota`` of flat positions with the same machinery and
``scatter_add`` into the flattened array, so every index form works for every update.
"""

from __future__ import annotations

import numbers
from typing import List

import numpy as np

from .array import Array


def _expand(x: Array, idx) -> list:
    """One entry per dim of ``x`` (plus ``None``s): Ellipsis expanded, sequences and bool
    masks turned into integer index arrays."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    entries: list = [_index_array(i) if isinstance(i, (list, np.ndarray, Array)) else i
                     for i in idx]
    # A boolean mask consumes as many dims as it has.
    consumed = sum(e.ndim if isinstance(e, Array) and e.dtype == np.bool_ else 1
                   for e in entries if e is not None and e is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"too many indices: {consumed} for an array of rank {x.ndim}")
    fill: list = [slice(None)] * (x.ndim - consumed)
    k = next((j for j, e in enumerate(entries) if e is Ellipsis), len(entries))
    entries = entries[:k] + fill + entries[k + 1:]
    out: list = []
    for e in entries:
        if isinstance(e, Array) and e.dtype == np.bool_:
            out.extend(_mask_to_indices(e))
        else:
            out.append(e)
    return out


def _index_array(i) -> Array:
    from .. import numpy as qnp
    a = i if isinstance(i, Array) else qnp.asarray(np.asarray(i))
    if a.dtype == np.bool_:
        return a
    if a.dtype.kind not in "iu":
        raise IndexError(f"arrays used as indices must be integer or bool, got {a.dtype}")
    return a


def _mask_to_indices(m: Array) -> List[Array]:
    if m.is_traced:
        raise IndexError(
            "boolean mask indexing needs a concrete mask (its result's shape depends on the "
            "values); inside jit use quabla.numpy.where(mask, x, other) instead")
    from .. import numpy as qnp
    return [qnp.asarray(ix.astype(np.int32)) for ix in np.nonzero(np.asarray(m))]


def getitem(x: Array, idx) -> Array:
    entries = _expand(x, idx)
    # newaxis: insert size-1 dims first, then treat them as full slices.
    if any(e is None for e in entries):
        shape, k = [], 0
        for e in entries:
            if e is None:
                shape.append(1)
            else:
                shape.append(x.shape[k])
                k += 1
        x = x.reshape(shape)
        entries = [slice(None) if e is None else e for e in entries]
    has_adv = any(isinstance(e, Array) for e in entries)
    from .. import numpy as qnp
    starts, limits, strides, flips, squeeze = [], [], [], [], []
    adv = {}
    for d, e in enumerate(entries):
        n = x.shape[d]
        if isinstance(e, slice):
            start, stop, step = e.indices(n)
            count = len(range(start, stop, step))
            if step < 0:
                flips.append(d)
                start, step = n - 1 - start, -step
            starts.append(start if count else 0)
            limits.append(start + (count - 1) * step + 1 if count else 0)
            strides.append(step)
        elif isinstance(e, Array):
            adv[d] = e
            _full(starts, limits, strides, n)
        elif isinstance(e, (numbers.Integral, np.integer)):
            k = int(e)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            k %= n
            if has_adv:
                adv[d] = qnp.asarray(k, dtype=np.int32)
                _full(starts, limits, strides, n)
            else:
                squeeze.append(d)
                starts.append(k)
                limits.append(k + 1)
                strides.append(1)
        else:
            raise IndexError(
                f"unsupported index {e!r}: use integers, slices, None, ..., or integer/bool arrays")
    y = x
    if flips:
        y = Array(y._raw.flip(flips))
    if (starts, limits, strides) != ([0] * y.ndim, list(y.shape), [1] * y.ndim):
        y = Array(y._raw.slice(starts, limits, strides))
    if not has_adv:
        if squeeze:
            y = y.reshape([s for d, s in enumerate(y.shape) if d not in squeeze])
        return y
    return _gather(y, adv)


def _full(starts: list, limits: list, strides: list, n: int) -> None:
    starts.append(0)
    limits.append(n)
    strides.append(1)


def _gather(y: Array, adv: dict) -> Array:
    from .. import numpy as qnp
    dims = sorted(adv)
    idx = qnp.broadcast_arrays(*[adv[d] for d in dims])
    batch = idx[0].shape
    cols = []
    for d, i in zip(dims, idx):
        i = i.astype(np.int32)
        cols.append(qnp.where(i < 0, i + y.shape[d], i))
    indices = qnp.stack(cols, axis=-1)
    nb, rest = len(batch), y.ndim - len(dims)
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    p = dims[0] if adjacent else 0
    offset = list(range(p)) + list(range(p + nb, nb + rest))
    sizes = [1 if d in adv else y.shape[d] for d in range(y.ndim)]
    return Array(y._raw.gather(indices._raw, offset, dims, dims, sizes))


def scatter(x: Array, idx, values, mode: str) -> Array:
    from .. import numpy as qnp
    if x.dtype == np.bool_:
        return scatter(x.astype(np.int32), idx, qnp.asarray(values).astype(np.int32),
                       mode).astype(np.bool_)
    n = x.size
    positions = Array(x._raw.iota("int32", [n], 0)).reshape(x.shape)
    pos = getitem(positions, idx)
    v = qnp.broadcast_to(qnp.asarray(values).astype(x.dtype), pos.shape).reshape(-1)
    p = pos.reshape(-1, 1)
    flat = x.reshape(-1)

    def add_into(base: Array, upd: Array) -> Array:
        return Array(base._raw.scatter_add(p._raw, upd._raw, [], [0], [0]))

    if mode == "add":
        return add_into(flat, v).reshape(x.shape)
    count = add_into(qnp.zeros(n, np.int32), qnp.ones(v.shape, np.int32))
    hit = count > 0
    total = add_into(qnp.zeros(n, x.dtype), v)
    placed = Array(total._raw.binary("div_promoted", count.astype(x.dtype)._raw))
    if mode == "set":
        out = qnp.where(hit, placed, flat)
    elif mode == "mul":
        out = flat * qnp.where(hit, placed, qnp.ones_like(flat))
    elif mode == "min":
        out = qnp.where(hit, qnp.minimum(flat, placed), flat)
    elif mode == "max":
        out = qnp.where(hit, qnp.maximum(flat, placed), flat)
    else:
        raise ValueError(f"unknown update {mode!r}")
    return out.reshape(x.shape)
