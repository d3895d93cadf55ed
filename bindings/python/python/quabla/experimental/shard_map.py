"""``quabla.experimental.shard_map``: the older spelling of :func:`quabla.shard_map`, as
``jax.experimental.shard_map`` (positional mesh and specs, ``check_rep``).

>>> import quabla, quabla.numpy as qnp
>>> from quabla.sharding import PartitionSpec as P
>>> mesh = quabla.make_mesh((1,), ("i",))
>>> shard_map(lambda a: a + quabla.lax.axis_index("i"), mesh, P("i"), P("i"))(qnp.ones(2)).tolist()
[1.0, 1.0]
"""

from typing import Any, Callable

from .._src.shard_map import shard_map as _shard_map
from .._src.sharding import Mesh


def shard_map(f: Callable, mesh: Mesh, in_specs: Any, out_specs: Any, check_rep: bool = True,
              auto: Any = frozenset()) -> Callable:
    """:func:`quabla.shard_map` with ``jax.experimental.shard_map``'s signature
    (``check_rep`` and ``auto`` change nothing on one device)."""
    del check_rep, auto
    return _shard_map(f, out_specs=out_specs, in_specs=in_specs, mesh=mesh)


__all__ = ["shard_map"]
