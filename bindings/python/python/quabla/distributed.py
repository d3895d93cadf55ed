"""Data parallelism across processes (``mpirun -np N python train.py``): collectives on arrays
and pytrees through a collectives plugin (``quabla-mpi``), and gradients averaged across ranks.

Every rank runs the same program on its shard of the batch (axis 0) with a replica of the
parameters. Reductions add in rank order, so results are identical on every rank and from run
to run. A peer that dies or never arrives raises :class:`CollectiveError` (after
``QUABLA_COLLECTIVE_TIMEOUT`` seconds at most, 300 by default), never hangs.

>>> from quabla import distributed  # doctest: +SKIP
>>> distributed.initialize()  # doctest: +SKIP
>>> total = distributed.all_reduce(qnp.ones(3), "sum")  # world_size() on every element
"""

from typing import Any, Callable, Optional, Sequence, Union

from . import _quabla
from ._quabla import CollectiveError
from ._src.array import Array
from ._src.flat import to_raw
from .tree_util import tree_flatten, tree_unflatten

_world: Optional[Any] = None


def initialize(platform: Optional[str] = None, world_size: int = 0, rank: int = 0,
               unique_id: bytes = b"", timeout: Optional[float] = None) -> "_quabla.Communicator":
    """Joins the process's communicator (as ``jax.distributed.initialize``, once per process).
    With no arguments, the size and rank come from the launcher (``mpirun``) and the plugin is
    ``QUABLA_COLLECTIVES`` or ``mpi``; ``timeout`` (seconds) bounds every collective."""
    global _world
    if _world is None:
        _world = _quabla.distributed_initialize(platform, world_size, rank, list(unique_id),
                                                timeout)
    return _world


def unique_id(platform: str = "nccl") -> bytes:
    """A new communicator id from ``platform``'s plugin: NCCL ranks meet through one, made on
    rank 0 and sent to the others by the launcher's own means, then passed to
    :func:`initialize` with the world size and each rank (a world of one makes its own)."""
    return bytes(_quabla.distributed_unique_id(platform))


def is_initialized() -> bool:
    return _world is not None


def _comm():
    return _world if _world is not None else initialize()


def process_index() -> int:
    """This process's rank (1 process, rank 0, before :func:`initialize` when not launched by
    MPI)."""
    if _world is None and not _quabla.launched_by_mpi():
        return 0
    return _comm().rank


def process_count() -> int:
    """The number of processes (1 before :func:`initialize` when not launched by MPI)."""
    if _world is None and not _quabla.launched_by_mpi():
        return 1
    return _comm().world_size


def _on_leaves(tree: Any, fn: Callable[[Any], Any]) -> Any:
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [Array(fn(to_raw(x))) for x in leaves])


def all_reduce(tree: Any, op: str = "sum") -> Any:
    """Every rank gets the reduction (``sum``, ``mean``, ``max``, ``min``) of every rank's
    leaves; ``mean`` needs floats."""
    leaves, treedef = tree_flatten(tree)
    out = _comm().all_reduce_many([to_raw(x) for x in leaves], op)
    return tree_unflatten(treedef, [Array(r) for r in out])


def all_gather(tree: Any) -> Any:
    """Every rank gets every rank's leaves stacked on a new leading axis, in rank order."""
    c = _comm()
    return _on_leaves(tree, c.all_gather)


def broadcast(tree: Any, root: int = 0) -> Any:
    """Every rank gets rank ``root``'s leaves."""
    c = _comm()
    return _on_leaves(tree, lambda r: c.broadcast(r, root))


def reduce_scatter(tree: Any, op: str = "sum") -> Any:
    """The reduction of every rank's leaves split on axis 0: rank ``r`` keeps the ``r``-th of
    ``process_count()`` equal parts."""
    c = _comm()
    return _on_leaves(tree, lambda r: c.reduce_scatter(r, op))


def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0,
                   has_aux: bool = False) -> Callable:
    """``quabla.value_and_grad`` (jitted) on this rank's shard, then the value (and aux) and
    gradients averaged across ranks: with a loss that is a mean over equal shards, every rank
    gets the full batch's value and gradient."""
    from ._src.api import jit
    from ._src.api import value_and_grad as local_value_and_grad

    local = jit(local_value_and_grad(fun, argnums=argnums, has_aux=has_aux))

    def averaged(*args, **kwargs):
        return all_reduce(local(*args, **kwargs), "mean")

    return averaged


__all__ = [
    "CollectiveError", "initialize", "is_initialized", "unique_id", "process_index", "process_count",
    "all_reduce", "all_gather", "broadcast", "reduce_scatter", "value_and_grad",
]
