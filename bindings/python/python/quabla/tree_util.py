"""``quabla.tree_util``: pytrees, as ``jax.tree_util``."""

from ._src.tree_util import (  # noqa: F401
    DictKey, FlattenedIndexKey, GetAttrKey, Partial, PyTreeDef, SequenceKey, all_leaves,
    keystr, register_dataclass, register_pytree_node, register_pytree_node_class,
    tree_flatten, tree_flatten_with_path, tree_leaves, tree_leaves_with_path, tree_map,
    tree_all, tree_map_with_path, tree_reduce, tree_structure, tree_transpose, tree_unflatten,
)

__all__ = ["PyTreeDef", "register_pytree_node", "register_pytree_node_class",
           "register_dataclass", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_map", "all_leaves", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "keystr", "Partial", "SequenceKey",
           "DictKey", "GetAttrKey", "FlattenedIndexKey", "tree_reduce", "tree_all",
           "tree_transpose"]
