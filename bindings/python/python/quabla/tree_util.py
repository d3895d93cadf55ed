"""``quabla.tree_util``: pytrees, as ``jax.tree_util``."""

from ._src.tree_util import (  # noqa: F401
    PyTreeDef, all_leaves, register_dataclass, register_pytree_node, tree_flatten, tree_leaves,
    tree_map, tree_structure, tree_unflatten,
)

__all__ = ["PyTreeDef", "register_pytree_node", "register_dataclass", "tree_flatten",
           "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "all_leaves"]
