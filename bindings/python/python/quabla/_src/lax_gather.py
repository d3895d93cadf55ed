"""``lax.gather`` and ``lax.scatter_add`` with XLA's dimension numbers, as JAX takes them
(``GatherDimensionNumbers``, ``ScatterDimensionNumbers``, ``GatherScatterMode``), over the
``gather`` and ``scatter_add`` primitives. The index vector is the last axis of the
indices, as JAX requires. Batching dimensions become an index component that counts along
them (an iota), so every form runs on the two primitives and keeps their derivatives.
"""

from __future__ import annotations

import enum
from typing import NamedTuple, Sequence, Tuple

import numpy as np

from .array import Array
from .numpy import elementwise as el
from .numpy.creation import asarray


class GatherDimensionNumbers(NamedTuple):
    """How ``lax.gather`` maps indices to slices of the operand (XLA's, as JAX's)."""
    offset_dims: Tuple[int, ...]
    collapsed_slice_dims: Tuple[int, ...]
    start_index_map: Tuple[int, ...]
    operand_batching_dims: Tuple[int, ...] = ()
    start_indices_batching_dims: Tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How ``lax.scatter_add`` maps indices to windows of the operand (XLA's, as JAX's)."""
    update_window_dims: Tuple[int, ...]
    inserted_window_dims: Tuple[int, ...]
    scatter_dims_to_operand_dims: Tuple[int, ...]
    operand_batching_dims: Tuple[int, ...] = ()
    scatter_indices_batching_dims: Tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds handling: ``CLIP`` clamps each slice into the operand; ``FILL_OR_DROP``
    fills a gathered slice that is not wholly inside with ``fill_value`` and drops such a
    scattered window; ``PROMISE_IN_BOUNDS`` promises there are none (Quabla then clamps a
    gather and drops a scatter, as JAX on CPU)."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    @staticmethod
    def from_any(s) -> "GatherScatterMode":
        if isinstance(s, GatherScatterMode):
            return s
        names = {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
                 "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
        if s is None or s not in names:
            raise ValueError(f"unknown gather/scatter mode {s!r}: use 'clip', 'fill', 'drop', "
                             "'promise_in_bounds' or a GatherScatterMode")
        return names[s]


def _ints(v) -> Tuple[int, ...]:
    return tuple(int(x) for x in v)


def _indices(start_indices, what: str) -> Array:
    idx = asarray(start_indices)
    if np.dtype(idx.dtype).kind not in "iu":
        raise TypeError(f"{what}: indices must be integers, got {idx.dtype}")
    if idx.ndim == 0:
        raise ValueError(f"{what}: indices need an index-vector axis (the last)")
    return idx.astype(np.int32)


def _with_batching(idx: Array, index_batching: Sequence[int]) -> Array:
    """``idx`` with one more index component per batching axis of the indices: the position
    along that axis."""
    if not index_batching:
        return idx
    from .lax_more import broadcasted_iota
    from .. import numpy as qnp
    batch_shape = idx.shape[:-1]
    extra = [broadcasted_iota(np.int32, batch_shape, d)[..., None] for d in index_batching]
    return qnp.concatenate([idx] + extra, axis=-1)


def gather(operand, start_indices, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode=None, fill_value=None) -> Array:
    """Slices of ``operand`` of ``slice_sizes`` starting at ``start_indices`` (last axis: the
    index vector), arranged by ``dimension_numbers``, as ``jax.lax.gather``. ``mode``: as
    JAX, ``None`` clamps each slice into the operand; ``"fill"`` returns ``fill_value``
    (default NaN, the least signed or largest unsigned integer, True) for slices not wholly
    inside. ``unique_indices`` and ``indices_are_sorted`` are hints, ignored."""
    del unique_indices, indices_are_sorted
    what = "gather"
    x = asarray(operand)
    dn = dimension_numbers
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(f"{what}: dimension_numbers must be a GatherDimensionNumbers, got "
                        f"{type(dn).__name__}")
    mode = GatherScatterMode.CLIP if mode is None else GatherScatterMode.from_any(mode)
    sizes = _ints(slice_sizes)
    if len(sizes) != x.ndim:
        raise ValueError(f"{what}: slice_sizes needs one size per operand axis ({x.ndim}), "
                         f"got {sizes}")
    op_batch, idx_batch = _ints(dn.operand_batching_dims), _ints(dn.start_indices_batching_dims)
    if len(op_batch) != len(idx_batch):
        raise ValueError(f"{what}: operand_batching_dims and start_indices_batching_dims "
                         "must pair up")
    idx = _indices(start_indices, what)
    if any(not 0 <= d < idx.ndim - 1 for d in idx_batch):
        raise ValueError(f"{what}: start_indices_batching_dims {idx_batch} must be batch axes "
                         f"of the indices (shape {idx.shape}, the last is the index vector)")
    full = _with_batching(idx, idx_batch)
    start_map = _ints(dn.start_index_map) + op_batch
    collapsed = tuple(sorted(_ints(dn.collapsed_slice_dims) + op_batch))
    out = Array(x._raw.gather(full._raw, list(_ints(dn.offset_dims)), list(collapsed),
                              list(start_map), list(sizes)))
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return out
    from .indexing import default_fill
    fill = default_fill(x.dtype) if fill_value is None else fill_value
    inside = None
    for k, d in enumerate(_ints(dn.start_index_map)):
        s = idx[..., k]
        ok = (s >= 0) & (s <= x.shape[d] - sizes[d])
        inside = ok if inside is None else inside & ok
    if inside is None:
        return out
    # The mask has the batch axes; the offset axes of the output are inserted as size 1.
    shape = list(inside.shape)
    for d in sorted(_ints(dn.offset_dims)):
        shape.insert(d, 1)
    return el.where(inside.reshape(tuple(shape)), out, asarray(fill).astype(x.dtype))


def scatter_add(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers,
                *, indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None) -> Array:
    """``operand`` with ``updates`` added into the windows ``scatter_indices`` (last axis:
    the index vector) pick, arranged by ``dimension_numbers``, as ``jax.lax.scatter_add``.
    ``mode``: as JAX, ``None`` drops a window that is not wholly inside the operand;
    ``"clip"`` clamps it inside first. Repeated indices add up. ``unique_indices`` and
    ``indices_are_sorted`` are hints, ignored."""
    del unique_indices, indices_are_sorted
    what = "scatter_add"
    x = asarray(operand)
    upd = asarray(updates).astype(x.dtype)
    dn = dimension_numbers
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(f"{what}: dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dn).__name__}")
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    op_batch = _ints(dn.operand_batching_dims)
    idx_batch = _ints(dn.scatter_indices_batching_dims)
    if len(op_batch) != len(idx_batch):
        raise ValueError(f"{what}: operand_batching_dims and scatter_indices_batching_dims "
                         "must pair up")
    idx = _indices(scatter_indices, what)
    to_operand = _ints(dn.scatter_dims_to_operand_dims)
    inserted = _ints(dn.inserted_window_dims)
    if mode is GatherScatterMode.CLIP:
        window_axes = [d for d in range(x.ndim) if d not in inserted and d not in op_batch]
        window_sizes = {d: upd.shape[u] for d, u in zip(window_axes,
                                                          _ints(dn.update_window_dims))}
        from .. import numpy as qnp
        cols = [el.clip(idx[..., k], 0, x.shape[d] - window_sizes.get(d, 1))
                for k, d in enumerate(to_operand)]
        idx = qnp.stack(cols, axis=-1) if cols else idx
    full = _with_batching(idx, idx_batch)
    return Array(x._raw.scatter_add(full._raw, upd._raw, list(_ints(dn.update_window_dims)),
                                    sorted(inserted + op_batch), list(to_operand + op_batch)))


__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather",
           "scatter_add"]
