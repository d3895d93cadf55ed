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
    inside = _wholly_inside(idx, _ints(dn.start_index_map), x.shape, sizes,
                            _ints(dn.offset_dims))
    if inside is None:
        return out
    return el.where(inside, out, asarray(fill).astype(x.dtype))


def _wholly_inside(idx: Array, index_map: Sequence[int], shape: Sequence[int],
                   sizes: Sequence[int], window_dims: Sequence[int]):
    """Whether each slice (of ``sizes``, starting at ``idx``) lies wholly inside an operand
    of ``shape``, with size-1 axes at ``window_dims`` so it broadcasts against the gathered
    or scattered values; None when nothing is indexed."""
    inside = None
    for k, d in enumerate(index_map):
        s = idx[..., k]
        ok = (s >= 0) & (s <= shape[d] - sizes[d])
        inside = ok if inside is None else inside & ok
    if inside is None:
        return None
    mask_shape = list(inside.shape)
    for d in sorted(window_dims):
        mask_shape.insert(d, 1)
    return inside.reshape(tuple(mask_shape))


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


def scatter_sub(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers,
                *, indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None) -> Array:
    """``operand`` with ``updates`` subtracted at the windows ``scatter_indices`` pick, as
    ``jax.lax.scatter_sub`` (``scatter_add`` of the negated updates)."""
    x = asarray(operand)
    return scatter_add(x, scatter_indices, -asarray(updates).astype(x.dtype), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def _scatter_positions(x: Array, idx: Array, update_shape: Tuple[int, ...],
                       dn: ScatterDimensionNumbers, mode: GatherScatterMode, what: str) -> Array:
    """The flat operand position each update element lands on, in the updates' shape;
    ``x.size`` for one that is dropped. The positions are a ``gather`` of an iota of flat
    positions with the dual dimension numbers (XLA's gather is the scatter's transpose), so
    the windows are clamped exactly as a ``"clip"`` scatter clamps them."""
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(f"{what}: dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dn).__name__}")
    op_batch = _ints(dn.operand_batching_dims)
    idx_batch = _ints(dn.scatter_indices_batching_dims)
    if len(op_batch) != len(idx_batch):
        raise ValueError(f"{what}: operand_batching_dims and scatter_indices_batching_dims "
                         "must pair up")
    inserted, window_dims = _ints(dn.inserted_window_dims), _ints(dn.update_window_dims)
    to_operand = _ints(dn.scatter_dims_to_operand_dims)
    window_axes = [d for d in range(x.ndim) if d not in inserted and d not in op_batch]
    if len(window_axes) != len(window_dims) or any(
            not 0 <= u < len(update_shape) for u in window_dims):
        raise ValueError(f"{what}: update_window_dims {window_dims} must name one axis of the "
                         f"updates (shape {update_shape}) per operand axis that is neither "
                         f"inserted nor batching ({window_axes})")
    sizes = [1] * x.ndim
    for d, u in zip(window_axes, window_dims):
        sizes[d] = update_shape[u]
    from .. import numpy as qnp
    iota = qnp.arange(x.size, dtype=np.int32).reshape(x.shape)
    pos = gather(iota, idx, GatherDimensionNumbers(window_dims, inserted, to_operand, op_batch,
                                                   idx_batch), sizes)
    if tuple(pos.shape) != tuple(update_shape):
        raise ValueError(f"{what}: updates of shape {tuple(update_shape)} do not match the "
                         f"indices (shape {idx.shape}) and dimension numbers, which need "
                         f"{tuple(pos.shape)}")
    if mode is GatherScatterMode.CLIP:
        return pos
    inside = _wholly_inside(idx, to_operand, x.shape, sizes, window_dims)
    return pos if inside is None else el.where(inside, pos, x.size)


def _scatter_combining(op: str, what: str, operand, scatter_indices, updates,
                       dimension_numbers, mode) -> Array:
    """``operand`` with ``updates`` combined in by ``op`` (``set``, ``mul``, ``min``,
    ``max``), repeated positions in order, as ``x.at[...]`` combines them."""
    from .indexing import combine_at
    from .. import numpy as qnp
    x = asarray(operand)
    if x.dtype == np.bool_:
        if op == "mul":
            raise TypeError(f"{what}: boolean operands are not accepted (as in JAX); use "
                            "scatter_min for a logical and")
        return _scatter_combining(op, what, x.astype(np.int32), scatter_indices,
                                  asarray(updates).astype(np.int32), dimension_numbers,
                                  mode).astype(np.bool_)
    upd = asarray(updates).astype(x.dtype)
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    pos = _scatter_positions(x, _indices(scatter_indices, what), tuple(upd.shape),
                             dimension_numbers, mode, what)
    # Dropped updates land on a slot past the end, cut off afterwards.
    flat = qnp.concatenate([x.reshape(-1), qnp.zeros(1, x.dtype)])
    return combine_at(flat, pos, upd, op)[:x.size].reshape(x.shape)


def scatter(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers, *,
            indices_are_sorted: bool = False, unique_indices: bool = False,
            mode=None) -> Array:
    """``operand`` with its windows at ``scatter_indices`` replaced by ``updates``, as
    ``jax.lax.scatter``: the last of repeated updates wins (JAX on CPU; XLA leaves it
    unspecified). ``mode`` as ``scatter_add``. Differentiable in both arrays: an overwritten
    element's cotangent goes to the update that wins."""
    del indices_are_sorted, unique_indices
    return _scatter_combining("set", "scatter", operand, scatter_indices, updates,
                              dimension_numbers, mode)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers,
                *, indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None) -> Array:
    """``operand`` with its windows at ``scatter_indices`` multiplied by ``updates`` (every
    one of repeated updates), as ``jax.lax.scatter_mul``."""
    del indices_are_sorted, unique_indices
    return _scatter_combining("mul", "scatter_mul", operand, scatter_indices, updates,
                              dimension_numbers, mode)


def scatter_min(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers,
                *, indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None) -> Array:
    """The elementwise minimum of ``operand``'s windows at ``scatter_indices`` and every
    update to them, as ``jax.lax.scatter_min`` (NaN propagates)."""
    del indices_are_sorted, unique_indices
    return _scatter_combining("min", "scatter_min", operand, scatter_indices, updates,
                              dimension_numbers, mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers,
                *, indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None) -> Array:
    """The elementwise maximum of ``operand``'s windows at ``scatter_indices`` and every
    update to them, as ``jax.lax.scatter_max`` (NaN propagates)."""
    del indices_are_sorted, unique_indices
    return _scatter_combining("max", "scatter_max", operand, scatter_indices, updates,
                              dimension_numbers, mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers: ScatterDimensionNumbers,
                  *, update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode=None) -> Array:
    """``operand`` with the elementwise ``func`` applied at the windows ``scatter_indices``
    pick, once per update (a repeated index applies it again), as ``jax.lax.scatter_apply``
    with its ``update_shape``. Unlike JAX's it is differentiable."""
    del indices_are_sorted, unique_indices
    what = "scatter_apply"
    if not callable(func):
        raise TypeError(f"{what}: func must be callable, got {type(func).__name__}")
    x = asarray(operand)
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    pos = _scatter_positions(x, _indices(scatter_indices, what), _ints(update_shape),
                             dimension_numbers, mode, what)
    from .indexing import apply_at
    return apply_at(x, pos, func)


__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather",
           "scatter", "scatter_add", "scatter_apply", "scatter_max", "scatter_min",
           "scatter_mul", "scatter_sub"]
