"""``quabla.sharding``: JAX's sharding names on one device per program, as
``jax.sharding`` (see ``quabla/_src/sharding.py``)."""

from ._src.sharding import (  # noqa: F401
    Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
)
from ._src.shard_map import Infer  # noqa: F401

__all__ = ["Infer", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding"]
