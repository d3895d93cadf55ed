"""``quabla.tree_util``: pytrees, as ``jax.tree_util``."""

from ._src.tree_util import (  # noqa: F401
    DictKey, FlattenedIndexKey, GetAttrKey, Partial, PyTreeDef, SequenceKey, all_leaves,
    keystr, register_dataclass, register_pytree_node, register_pytree_node_class,
    tree_flatten, tree_flatten_with_path, tree_leaves, tree_leaves_with_path, tree_map,
    tree_all, tree_map_with_path, tree_reduce, tree_structure, tree_transpose, tree_unflatten,
)
from ._src.tree_util_keys import (  # noqa: F401
    KeyEntry, KeyPath, default_registry, flatten_one_level, flatten_one_level_with_keys,
    is_tree_node, register_pytree_with_keys, register_pytree_with_keys_class, register_static,
    tree_broadcast, tree_reduce_associative, treedef_children, treedef_is_leaf, treedef_tuple,
)

__all__ = ["PyTreeDef", "register_pytree_node", "register_pytree_node_class",
           "register_dataclass", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_map", "all_leaves", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "keystr", "Partial", "SequenceKey",
           "DictKey", "GetAttrKey", "FlattenedIndexKey", "tree_reduce", "tree_all",
           "tree_transpose", "KeyEntry", "KeyPath", "default_registry", "flatten_one_level",
           "flatten_one_level_with_keys", "is_tree_node", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static", "tree_broadcast",
           "tree_reduce_associative", "treedef_children", "treedef_is_leaf", "treedef_tuple"]
