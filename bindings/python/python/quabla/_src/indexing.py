"""numpy indexing (``x[i, a:b:s, None, ..., idx]``) and ``x.at[...]`` updates.

Basic indices become one ``slice`` (plus ``reverse`` for negative steps) and a reshape;
integer-array indices become one XLA ``gather``. Out-of-range reads are clamped, as JAX's.
Updates index an ``iota`` of flat positions with the same machinery and ``scatter_add``
into the flattened array, so every index form works for every update; out-of-range
updates are dropped (JAX's default) by indexing a copy of the positions padded with -1, so
that such an index reads the padding, and sending those updates past the end.
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
            # Out of range reads clamp, as JAX's (negative indices count from the end first).
            k = int(e)
            k = min(max(k + n if k < 0 else k, 0), n - 1)
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


MODES = ("clip", "fill", "drop", "promise_in_bounds")


def check_mode(mode, default: str, what: str) -> str:
    """``mode`` (None: ``default``) checked against JAX's index modes."""
    if mode is None:
        return default
    if mode not in MODES:
        raise ValueError(f"unknown {what} mode {mode!r}: use one of {', '.join(MODES)}")
    return mode


def default_fill(dtype) -> object:
    """JAX's fill for out-of-range reads: NaN, the least signed or the largest unsigned
    integer, True."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return float("nan")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min if dtype.kind == "i" else info.max)
    return True


def _positions(x: Array) -> Array:
    return Array(x._raw.iota("int32", [x.size], 0)).reshape(x.shape)


def positions_or_minus_one(x: Array, idx) -> Array:
    """For each element of ``x[idx]``, its flat position in ``x``, or -1 where an integer
    index is out of range (after negative indices count from the end). The integer indices
    are shifted by one into a positions array padded with -1 on both sides, and clamped
    there, so an out-of-range index reads the padding."""
    from .. import numpy as qnp
    positions = _positions(x)
    entries = _expand(positions, idx)
    shifted: list = []
    pad = [(0, 0)] * x.ndim
    d = 0
    for e in entries:
        if e is None:
            shifted.append(None)
            continue
        if isinstance(e, Array) or isinstance(e, (numbers.Integral, np.integer)):
            size = x.shape[d]
            i = qnp.asarray(e).astype(np.int32)
            i = qnp.where(i < 0, i + size, i)
            shifted.append(qnp.clip(i + 1, 0, size + 1))
            pad[d] = (1, 1)
        else:
            shifted.append(e)
        d += 1
    padded = qnp.pad(positions, pad, constant_values=-1)
    return getitem(padded, tuple(shifted))


def gather(x: Array, idx, mode, fill_value) -> Array:
    """``x[idx]`` under JAX's index ``mode``: clamped (``clip``, ``promise_in_bounds``, the
    default) or ``fill_value`` at out-of-range indices (``fill``, ``drop``)."""
    mode = check_mode(mode, "clip", "gather")
    if mode in ("clip", "promise_in_bounds"):
        return getitem(x, idx)
    from .. import numpy as qnp
    fill = default_fill(x.dtype) if fill_value is None else fill_value
    pos = positions_or_minus_one(x, idx)
    flat = qnp.concatenate([x.reshape(-1), qnp.asarray(np.asarray([fill]).astype(x.dtype))])
    return getitem(flat, qnp.where(pos >= 0, pos, x.size))


def scatter(x: Array, idx, values, op: str, mode=None) -> Array:
    """``x.at[idx].<op>(values)``. Out-of-range updates are dropped (JAX's default, and
    ``drop``/``fill``/``promise_in_bounds``) or clamped onto the edge (``clip``)."""
    from .. import numpy as qnp
    mode = check_mode(mode, "drop", "scatter")
    if x.dtype == np.bool_:
        return scatter(x.astype(np.int32), idx, qnp.asarray(values).astype(np.int32),
                       op, mode).astype(np.bool_)
    n = x.size
    flat = qnp.concatenate([x.reshape(-1), qnp.zeros(1, x.dtype)])
    out = combine_at(flat, _update_positions(x, idx, mode), values, op)
    return out[:n].reshape(x.shape)


def _update_positions(x: Array, idx, mode: str) -> Array:
    """The flat position of each element ``x.at[idx]`` updates; ``x.size`` (a slot past the
    end, cut off afterwards) for one that ``mode`` drops."""
    from .. import numpy as qnp
    if mode == "clip":
        return getitem(_positions(x), idx)
    pos = positions_or_minus_one(x, idx)
    return qnp.where(pos >= 0, pos, x.size)


def apply(x: Array, idx, func, mode=None) -> Array:
    """``x.at[idx].apply(func)``: ``func`` applied once per occurrence of an index."""
    return apply_at(x, _update_positions(x, idx, check_mode(mode, "drop", "scatter")), func)


def apply_at(x: Array, pos: Array, func) -> Array:
    """``x`` with the elementwise ``func`` applied once per entry of ``pos`` (flat positions;
    ``x.size`` for a dropped update), as XLA applies a scatter's computation once per
    update. ``func`` maps one element to one element, as in JAX (it is vmapped over the
    elements). A loop of as many trips as the most repeated position, bounded by the number
    of updates so that reverse mode works (JAX's has no derivative)."""
    from .api import vmap
    from .control_flow import while_loop
    from .. import numpy as qnp
    flat = x.reshape(-1)
    if flat.shape[0] == 0:
        return x
    counts = combine_at(qnp.zeros(x.size + 1, np.int32), pos, 1, "add")[:x.size]
    most = qnp.max(counts)
    step = vmap(func)

    def body(carry):
        j, y = carry
        return j + 1, qnp.where(counts > j, qnp.asarray(step(y)).astype(y.dtype), y)

    _, out = while_loop(lambda c: c[0] < most, body, (qnp.int32(0), flat),
                        max_steps=max(int(pos.size), 1))
    return out.reshape(x.shape)


def _add_into(base: Array, at: Array, upd: Array) -> Array:
    return Array(base._raw.scatter_add(at.reshape(-1, 1)._raw, upd._raw, [], [0], [0]))


def combine_at(flat: Array, pos: Array, values, op: str) -> Array:
    """``flat`` with ``values`` combined in at ``pos`` by ``op``. Updates to one position
    combine in their order, as JAX's on CPU: they add up, multiply, take their min or max,
    and for ``set`` the last one wins."""
    from .. import numpy as qnp
    v = qnp.broadcast_to(qnp.asarray(values).astype(flat.dtype), pos.shape).reshape(-1)
    p = pos.reshape(-1)
    if op == "add":
        return _add_into(flat, p, v)
    if op not in ("set", "mul", "min", "max"):
        raise ValueError(f"unknown update {op!r}")
    if p.shape[0] == 0:
        return flat
    if op in ("min", "max") and np.dtype(flat.dtype).kind == "f":
        return _extremal_at(flat, p, v, op)
    return _combine_ordered(flat, p, v, op)


def _combine_ordered(flat: Array, p: Array, v: Array, op: str) -> Array:
    """``combine_at`` for ``set``, ``mul``, ``min`` and ``max`` with at least one update."""
    from .. import numpy as qnp
    from .lax_scans import associative_scan
    size, m = flat.shape[0], p.shape[0]
    # Group the updates by position, keeping their order (a stable sort), and reduce each
    # group along it; the group's last entry then holds the result.
    order = qnp.argsort(p, stable=True)
    ps, vs = p[order], v[order]
    differs = ps[1:] != ps[:-1]
    if op != "set":
        join = {"mul": qnp.multiply, "min": qnp.minimum, "max": qnp.maximum}[op]

        def segmented(a, b):
            return a[0] | b[0], qnp.where(b[0], b[1], join(a[1], b[1]))

        starts = qnp.concatenate([qnp.ones(1, bool), differs])
        vs = associative_scan(segmented, (starts, vs))[1]
    last = qnp.concatenate([differs, qnp.ones(1, bool)])
    # Each position gets the index of its group's last entry (one at most: exact ints); the
    # value is then gathered, so -0.0 and NaN payloads arrive unchanged.
    rank = Array(qnp.arange(m, dtype=np.int32)._raw) + 1
    slot = _add_into(qnp.zeros(size + 1, np.int32), qnp.where(last, ps, size), rank)[:size] - 1
    hit = slot >= 0
    placed = vs[qnp.clip(slot, 0, m - 1)]
    if op == "set":
        return qnp.where(hit, placed, flat)
    if op == "mul":
        return qnp.where(hit, flat * placed, flat)
    return qnp.where(hit, (qnp.minimum if op == "min" else qnp.maximum)(flat, placed), flat)


def _extremal_at(flat: Array, p: Array, v: Array, op: str) -> Array:
    """``combine_at`` for a floating ``min``/``max``, with JAX's derivative: the output
    tangent at a position is the mean of the tangents of the values there (the operand's
    and the updates') that equal the result, so ties split evenly; where the result is NaN
    none does, and the tangent is zero."""
    from .api import custom_jvp
    from .. import numpy as qnp

    # The positions are an argument, not a closure: a traced value must not be captured.
    @custom_jvp
    def extremal(base, p, upd):
        return _combine_ordered(base, p, upd, op)

    @extremal.defjvp
    def extremal_jvp(primals, tangents):
        (base, p, upd), (t_base, _, t_upd) = primals, tangents
        out = extremal(base, p, upd)
        base_wins, upd_wins = base == out, upd == out[p]
        winners = base_wins.astype(np.int32) + _add_into(
            qnp.zeros(base.shape, np.int32), p, upd_wins.astype(np.int32))
        share = 1.0 / qnp.maximum(winners, 1).astype(base.dtype)
        t_out = qnp.where(base_wins, t_base * share, qnp.zeros_like(t_base))
        return out, _add_into(t_out, p, qnp.where(upd_wins, t_upd * share[p],
                                                  qnp.zeros_like(t_upd)))

    return extremal(flat, p, v)
