"""JAX's ways to assemble an array from its shards (``make_array_from_callback``,
``make_array_from_single_device_arrays``, ``make_array_from_process_local_data``), on
Quabla's shardings, which name one device: the one shard is the whole array, and a process
holds all of it. The checks and messages are JAX's for that case."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from .array import Array
from .runtime import device_put
from .sharding import Sharding


def _sharding(sharding: Any, what: str) -> Sharding:
    if not isinstance(sharding, Sharding):
        raise TypeError(f"{what}: expected a quabla.sharding Sharding, got "
                        f"{type(sharding).__name__}")
    return sharding


def _placed(data: Any, shape: Sequence[int], sharding: Sharding, dtype) -> Array:
    from .numpy.creation import asarray
    x = asarray(data, dtype=dtype)
    if tuple(x.shape) != tuple(shape):
        raise ValueError(f"Expected shard shape {tuple(shape)} doesn't match the single "
                         f"device array shape {tuple(x.shape)}.")
    return device_put(x, sharding)


def make_array_from_callback(shape: Sequence[int], sharding: Any,
                             data_callback: Callable[[Any], Any], dtype=None) -> Array:
    """The array of ``shape`` whose shard ``data_callback(index)`` returns, as
    ``jax.make_array_from_callback``: Quabla's sharding has one shard, so the callback is
    called once, with the index of the whole array (a ``slice(None)`` per axis).

    >>> import quabla
    >>> from quabla.sharding import SingleDeviceSharding
    >>> s = SingleDeviceSharding(quabla.devices()[0])
    >>> make_array_from_callback((2, 2), s, lambda idx: np.eye(2)[idx]).shape
    (2, 2)
    """
    s = _sharding(sharding, "make_array_from_callback")
    index = (slice(None),) * len(shape)
    return _placed(data_callback(index), shape, s, dtype)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any,
                                         arrays: Sequence[Any], *, dtype=None) -> Array:
    """The array of ``shape`` made of one array per device the sharding addresses, as
    ``jax.make_array_from_single_device_arrays``: one here.

    >>> import quabla
    >>> from quabla.sharding import SingleDeviceSharding
    >>> s = SingleDeviceSharding(quabla.devices()[0])
    >>> make_array_from_single_device_arrays((3,), s, [quabla.numpy.ones(3)]).shape
    (3,)
    """
    s = _sharding(sharding, "make_array_from_single_device_arrays")
    arrays = list(arrays)
    if len(arrays) != 1:
        raise ValueError(f"Expected 1 per-device arrays (this is how many devices are "
                         f"addressable by the sharding), but got {len(arrays)}")
    return _placed(arrays[0], shape, s, dtype)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Optional[Sequence[int]] = None) -> Array:
    """The global array of which this process holds ``local_data``, as
    ``jax.make_array_from_process_local_data``: with one process that is all of it, so
    ``global_shape`` must be None or ``local_data``'s shape.

    >>> import quabla
    >>> from quabla.sharding import SingleDeviceSharding
    >>> s = SingleDeviceSharding(quabla.devices()[0])
    >>> make_array_from_process_local_data(s, np.ones((2, 3))).shape
    (2, 3)
    """
    s = _sharding(sharding, "make_array_from_process_local_data")
    local_shape = tuple(np.shape(local_data))
    if global_shape is not None and tuple(global_shape) != local_shape:
        raise ValueError("When calling `make_array_from_process_local_data` on a single "
                         "process, global_shape should be None or equal to "
                         f"local_data.shape.Got global_shape={tuple(global_shape)} and "
                         f"local_data.shape={local_shape}.")
    return _placed(local_data, local_shape, s, None)


__all__ = ["make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data"]
