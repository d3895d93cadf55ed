"""``quabla.tree``: the short names of ``jax.tree`` over :mod:`quabla.tree_util`::

    import quabla.tree as tree
    grads = tree.map(lambda g: g * 0.1, grads)
"""

from ._src.tree_util import (
    tree_all as all,  # noqa: A004 - jax.tree's name
    tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    tree_map as map,  # noqa: A004 - jax.tree's name
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)
from ._src.tree_util_keys import (
    static,
    tree_broadcast as broadcast,
    tree_reduce_associative as reduce_associative,
)

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
