"""``shard_map``: a function run on each device's block of its arguments, with the mesh's
axes named for the collectives, as ``jax.shard_map``, on the one-device meshes a Quabla
program has."""

from typing import Any, Callable, Optional

from .api import vmap
from .sharding import Mesh, PartitionSpec, check_spec_names, current_mesh
from .tree_util import broadcast_prefix, tree_flatten, tree_map, tree_unflatten


class _Infer:
    """``in_specs`` left out: every argument's spec is inferred (replicated here)."""

    def __repr__(self) -> str:
        return "Infer"


#: ``jax.sharding.Infer``'s counterpart: the default of ``in_specs``.
Infer = _Infer()


def _is_spec(s: Any) -> bool:
    """A PartitionSpec (a tuple) stands for a whole subtree, as None does."""
    return s is None or isinstance(s, PartitionSpec)


def _check_spec(spec: Any, leaf: Any, mesh: Mesh, what: str) -> None:
    if spec is None:
        return
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map: {what} entries must be PartitionSpecs, got "
                        f"{type(spec).__name__}")
    check_spec_names(spec, mesh, f"shard_map: {what}")
    rank = len(getattr(leaf, "shape", ()))
    if len(spec) > rank:
        raise ValueError(f"shard_map: {what} {spec} has {len(spec)} entries for an array of "
                         f"rank {rank}")


def _resolved(mesh) -> Mesh:
    """``mesh``, or when None the mesh in context (``with mesh:``, else ``set_mesh``'s)."""
    if mesh is None:
        mesh = current_mesh()
        if mesh is None:
            raise ValueError("shard_map: no mesh given and none in context; pass mesh=, run "
                             "it inside `with mesh:` or set one with quabla.set_mesh")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map: mesh must be a quabla.sharding.Mesh, got "
                        f"{type(mesh).__name__}")
    return mesh


def shard_map(f: Optional[Callable] = None, /, *, out_specs: Any, in_specs: Any = Infer,
              mesh: Optional[Mesh] = None, axis_names: Any = frozenset(),
              check_vma: bool = True) -> Any:
    """``f`` run on each device's block of its arguments (split as ``in_specs`` say over
    ``mesh``), its results put together as ``out_specs`` say, with the mesh's axes named for
    ``lax.psum``, ``pmean``, ``all_gather``, ``axis_index`` and the other collectives, as
    ``jax.shard_map``. Without ``f``, a decorator.

    A Quabla program runs on one device, so every mesh axis has size 1: the block is the
    whole array, a collective over an axis is over one device (``psum`` is the value itself,
    ``axis_index`` 0, ``all_gather`` adds an axis of 1). The specs are checked against the
    mesh (axes it has, each at most once, no more entries than the array's rank). Not
    checked: that a result ``out_specs`` calls replicated is (JAX's ``check_vma``), so some
    programs JAX refuses run here. ``mesh`` defaults to the one entered with ``with mesh:``;
    ``axis_names`` (the manual axes) changes nothing on one device.

    >>> import quabla, quabla.numpy as qnp
    >>> from quabla.sharding import PartitionSpec as P
    >>> mesh = quabla.make_mesh((1,), ("x",))
    >>> f = shard_map(lambda a: quabla.lax.psum(a, "x") * 2, mesh=mesh, in_specs=P("x"),
    ...               out_specs=P("x"))
    >>> f(qnp.arange(3.0)).tolist()
    [0.0, 2.0, 4.0]
    """
    del axis_names, check_vma
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh)
    if not callable(f):
        raise TypeError(f"shard_map: expected a function, got {type(f).__name__}")
    if mesh is not None:
        _resolved(mesh)

    def mapped(*args):
        from .numpy.creation import asarray
        # Without a mesh, the one in context when the function is called, as JAX's.
        m = _resolved(mesh)
        names = m.axis_names
        leaves, tree = tree_flatten(args)
        specs = ([None] * len(leaves) if in_specs is Infer
                 else broadcast_prefix(in_specs, args, "shard_map in_specs", is_leaf=_is_spec))
        for spec, leaf in zip(specs, leaves):
            _check_spec(spec, asarray(leaf), m, "in_specs")

        def block(*flat):
            return f(*tree_unflatten(tree, list(flat)))

        # One named axis of size 1 per mesh axis, outermost first.
        run = block
        for name in reversed(names):
            run = vmap(run, in_axes=0, out_axes=0, axis_name=name, axis_size=1)
        lead = (None,) * len(names)
        out = run(*[asarray(leaf)[lead] for leaf in leaves])
        out = tree_map(lambda o: o.reshape(o.shape[len(names):]), out)
        out_leaves, _ = tree_flatten(out)
        for spec, leaf in zip(broadcast_prefix(out_specs, out, "shard_map out_specs",
                                               is_leaf=_is_spec), out_leaves):
            _check_spec(spec, leaf, m, "out_specs")
        return out

    return mapped
