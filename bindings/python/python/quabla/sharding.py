"""``quabla.sharding``: JAX's sharding names on one device per program, as
``jax.sharding`` (see ``quabla/_src/sharding.py``)."""

from ._src.sharding import (  # noqa: F401
    Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
)

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "Sharding", "SingleDeviceSharding"]
