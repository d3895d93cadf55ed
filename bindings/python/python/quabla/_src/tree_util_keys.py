"""The rest of ``jax.tree_util``: nodes registered with their own key paths
(``register_pytree_with_keys``, ``register_pytree_with_keys_class``), static types
(``register_static``), one-level flattening, ``tree_broadcast``,
``tree_reduce_associative`` and the ``PyTreeDef`` helpers (``treedef_children``,
``treedef_is_leaf``, ``treedef_tuple``)."""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable, Optional, Tuple

from . import tree_util as _tu
from .tree_util import PyTreeDef, tree_flatten, tree_structure, tree_unflatten

__all__ = ["KeyEntry", "KeyPath", "default_registry", "flatten_one_level",
           "flatten_one_level_with_keys", "is_tree_node", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static", "static", "tree_broadcast",
           "tree_reduce_associative", "treedef_children", "treedef_is_leaf", "treedef_tuple"]

# A key of one step down a tree (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey, or a
# registered node's own key), and a path of them, as JAX's aliases.
KeyEntry = Any
KeyPath = Tuple[Any, ...]


class _Registry:
    """The registry of pytree node types, as ``jax.tree_util.default_registry``: which types
    are nodes (``is_node``) and how one node flattens (``flatten_one_level``)."""

    def is_node(self, typ: type) -> bool:
        return is_tree_node(typ)

    def flatten_one_level(self, tree: Any):
        return flatten_one_level(tree)


default_registry = _Registry()


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], Tuple[Iterable[Tuple[Any, Any]], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], Any],
    flatten_func: Optional[Callable[[Any], Tuple[Iterable[Any], Hashable]]] = None,
) -> None:
    """Makes ``nodetype`` a pytree node whose children carry keys of its own choosing:
    ``flatten_with_keys(x) -> (((key, child), ...), aux)``; the keys appear in
    ``tree_flatten_with_path`` and ``keystr``. ``flatten_func`` (children only) is derived
    when not given.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_with_keys(
    ...     Pair, lambda p: (((GetAttrKey("a"), p.a), (GetAttrKey("b"), p.b)), None),
    ...     lambda _, c: Pair(*c))
    """
    def children_only(x):
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux

    _tu.register_pytree_node(nodetype, flatten_func or children_only, unflatten_func)
    _tu.keyed_nodes[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls: type) -> type:
    """Registers ``cls`` through its ``tree_flatten_with_keys(self)``, its
    ``tree_unflatten(cls, aux, children)`` classmethod and, when defined, its
    ``tree_flatten(self)``; usable as a decorator."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(),
                              getattr(cls, "tree_unflatten"),
                              (lambda x: x.tree_flatten()) if flatten is not None else None)
    return cls


def register_static(cls: type) -> type:
    """Makes instances of ``cls`` static: a node with no children whose value is its
    structure (so it must be hashable), not a leaf that transformations would trace."""
    _tu.register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def is_tree_node(typ: type) -> bool:
    """Whether values of type ``typ`` are pytree nodes (containers, ``None``, namedtuples,
    registered types) rather than leaves."""
    if typ in (tuple, list, dict, type(None)):
        return True
    if typ in _tu._registry:
        return True
    return issubclass(typ, tuple) and hasattr(typ, "_fields")


def flatten_one_level(tree: Any):
    """``(children, aux)`` of a node, one level down; a ValueError for a leaf, as JAX."""
    node = _tu._node_of(tree)
    if node is None or type(tree) in _tu.leaf_types:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    kind, aux, children = node
    return (tuple(children) if kind is tuple else children), aux


def flatten_one_level_with_keys(tree: Any):
    """``(((key, child), ...), aux)`` of a node, one level down."""
    children, aux = flatten_one_level(tree)
    kind = _tu._node_of(tree)[0]
    keys = _tu._child_keys(tree, kind, aux, len(children))
    return tuple(zip(keys, children)), aux


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """``prefix_tree`` with each of its leaves repeated over the subtree of ``full_tree`` at
    the same position, giving ``full_tree``'s structure.

    >>> tree_broadcast((1, 2), ((3, 4), 5))
    ((1, 1), 2)
    """
    values = _tu.broadcast_prefix(prefix_tree, full_tree, "tree_broadcast", is_leaf)
    return tree_unflatten(tree_structure(full_tree, is_leaf), values)


_NO_IDENTITY = object()


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _NO_IDENTITY,
                            is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """The leaves combined by an associative ``operation`` as a balanced tree (halves split
    at ``n // 2``, as JAX's), so a deep chain of ``operation`` is not built; ``identity``
    for an empty tree.

    >>> tree_reduce_associative(lambda a, b: f"({a}{b})", list("abcde"))
    '((ab)(c(de)))'
    """
    leaves = tree_flatten(tree, is_leaf)[0]
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    # Post-order over the halves with an explicit stack: ("split", lo, hi) pushes its two
    # halves and a ("join",) that combines their results.
    results: list = []
    stack: list = [("split", 0, len(leaves))]
    while stack:
        item = stack.pop()
        if item[0] == "join":
            right, left = results.pop(), results.pop()
            results.append(operation(left, right))
            continue
        _, lo, hi = item
        if hi - lo == 1:
            results.append(leaves[lo])
            continue
        mid = lo + (hi - lo) // 2
        stack += [("join",), ("split", mid, hi), ("split", lo, mid)]
    return results[0]


def static(**kwargs):
    """A ``dataclasses.field`` marked static: :func:`register_dataclass` makes it part of the
    structure, not a child (``jax.tree.static``)."""
    import dataclasses
    metadata = dict(kwargs.pop("metadata", None) or {}, static=True)
    return dataclasses.field(metadata=metadata, **kwargs)


def treedef_children(treedef: PyTreeDef) -> list:
    """The structures of a node's children (empty for a leaf or ``None``)."""
    return list(treedef.children)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether the structure has one node: a leaf, or ``None`` (as JAX counts it)."""
    return treedef.num_nodes == 1


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the structures ``treedefs``."""
    return PyTreeDef(tuple, None, tuple(treedefs))
