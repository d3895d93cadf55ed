"""Pytrees: nested containers of arrays that every transformation accepts.

Tuples, lists, dicts (keys sorted, as JAX), ``None`` (a node with no children) and
NamedTuples are pytree nodes out of the box; other classes join through
:func:`register_pytree_node` or, for dataclasses, :func:`register_dataclass`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Optional, Sequence, Tuple

__all__ = [
    "PyTreeDef",
    "register_pytree_node",
    "register_dataclass",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "all_leaves",
    "tree_flatten_with_path",
    "tree_leaves_with_path",
    "tree_map_with_path",
    "keystr",
    "register_pytree_node_class",
    "Partial",
    "SequenceKey",
    "DictKey",
    "GetAttrKey",
    "FlattenedIndexKey",
    "tree_reduce",
    "tree_all",
    "tree_transpose",
]


class _NodeType(NamedTuple):
    flatten: Callable[[Any], Tuple[Iterable[Any], Hashable]]
    unflatten: Callable[[Hashable, Iterable[Any]], Any]


_registry: dict = {}
# Names of the children of registered dataclasses (for paths in saved files).
child_names: dict = {}
# Types registered with their own keys: type -> flatten_with_keys.
keyed_nodes: dict = {}


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], Tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], Any],
) -> None:
    """Makes instances of ``nodetype`` pytree nodes.

    ``flatten_func(x) -> (children, aux_data)``; ``unflatten_func(aux_data, children) -> x``.
    ``aux_data`` must be hashable and comparable: it is part of the tree's structure.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    """
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)


def register_dataclass(cls: type, data_fields: Optional[Sequence[str]] = None,
                       meta_fields: Optional[Sequence[str]] = None) -> type:
    """Registers a dataclass as a pytree node; usable as a decorator.

    ``data_fields`` are children (arrays or subtrees), ``meta_fields`` are static parts of the
    structure; by default every field is a data field.

    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: Any
    ...     b: Any
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"register_dataclass needs a dataclass, got {cls!r}")
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    # Without explicit lists, fields marked static (``tree.static()``, JAX's
    # ``field(metadata=dict(static=True))``) are meta fields.
    marked = [f.name for f in fields if f.metadata.get("static", False)]
    if meta_fields is None and data_fields is None:
        meta_fields = marked
    data = list(data_fields) if data_fields is not None else [
        n for n in names if meta_fields is None or n not in meta_fields]
    meta = list(meta_fields) if meta_fields is not None else []
    missing = set(names) - set(data) - set(meta)
    if missing:
        raise ValueError(f"fields {sorted(missing)} are neither data nor meta fields")

    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        kw = dict(zip(data, children))
        kw.update(zip(meta, aux))
        return cls(**kw)

    register_pytree_node(cls, flatten, unflatten)
    child_names[cls] = list(data)
    return cls


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_of(x: Any):
    """``(kind, aux, children)`` of a node, or None for a leaf."""
    t = type(x)
    if x is None:
        return (type(None), None, [])
    if t is tuple:
        return (tuple, None, list(x))
    if t is list:
        return (list, None, list(x))
    if t is dict:
        keys = sorted(x.keys())
        return (dict, tuple(keys), [x[k] for k in keys])
    if t in _registry:
        children, aux = _registry[t].flatten(x)
        return (t, aux, list(children))
    if _is_namedtuple(x):
        return (t, None, list(x))
    return None


class PyTreeDef:
    """The structure of a pytree: node kinds and static data, with the leaves left out.

    Two trees have equal ``PyTreeDef``s exactly when they differ only in their leaves.
    """

    __slots__ = ("kind", "aux", "children", "num_leaves", "_key")

    def __init__(self, kind, aux, children: Tuple["PyTreeDef", ...]):
        self.kind = kind
        self.aux = aux
        self.children = children
        n = 0
        for c in children:
            n += c.num_leaves
        self.num_leaves: int = 1 if kind is _LEAF else n
        # Nested tuples: hashing and comparing them runs in C (a jit call hashes the
        # argument tree on every call).
        self._key: tuple = (kind, aux, tuple([c._key for c in children]))

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def __eq__(self, other) -> bool:
        return isinstance(other, PyTreeDef) and self._key == other._key

    def __hash__(self) -> int:
        try:
            return hash(self._key)
        except TypeError:  # a registered node with unhashable static data
            return hash((self.kind, self.num_leaves))

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        return tree_unflatten(self, leaves)

    def __repr__(self) -> str:
        return f"PyTreeDef({self._show()})"

    def _show(self) -> str:
        if self.kind is _LEAF:
            return "*"
        inner = ", ".join(c._show() for c in self.children)
        if self.kind is type(None):
            return "None"
        if self.kind is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.kind is list:
            return f"[{inner}]"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c._show()}" for k, c in zip(self.aux, self.children)) + "}"
        return f"{self.kind.__name__}({inner})"


_LEAF = object()
_LEAF_DEF = PyTreeDef(_LEAF, None, ())
_NONE_DEF = PyTreeDef(type(None), None, ())


# Types that are always leaves (quabla.Array registers itself), checked before anything else
# because flattening runs on every call of a transformed function.
leaf_types: set = {float, int, bool, complex, str}


def _walk(x: Any, leaves: list, is_leaf) -> "PyTreeDef":
    t = type(x)
    if t in leaf_types or (is_leaf is not None and is_leaf(x)):
        leaves.append(x)
        return _LEAF_DEF
    if t is tuple:
        return PyTreeDef(tuple, None, tuple([_walk(c, leaves, is_leaf) for c in x]))
    if t is list:
        return PyTreeDef(list, None, tuple([_walk(c, leaves, is_leaf) for c in x]))
    if t is dict:
        keys = sorted(x)
        return PyTreeDef(dict, tuple(keys), tuple([_walk(x[k], leaves, is_leaf) for k in keys]))
    if x is None:
        return _NONE_DEF
    node = _node_of(x)
    if node is None:
        leaves.append(x)
        return _LEAF_DEF
    kind, aux, children = node
    return PyTreeDef(kind, aux, tuple([_walk(c, leaves, is_leaf) for c in children]))


def tree_flatten(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None):
    """``(leaves, treedef)`` of ``tree``, leaves in a fixed order (dict keys sorted).

    >>> tree_flatten({"b": 1, "a": (2, None)})
    ([2, 1], PyTreeDef({'a': (*, None), 'b': *}))
    """
    leaves: list = []
    return leaves, _walk(tree, leaves, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of structure ``treedef`` with ``leaves`` in flatten order."""
    it = iter(leaves)

    def build(d: PyTreeDef):
        if d.kind is _LEAF:
            try:
                return next(it)
            except StopIteration:
                raise ValueError(f"too few leaves for {treedef}") from None
        children = [build(c) for c in d.children]
        if d.kind is type(None):
            return None
        if d.kind is tuple:
            return tuple(children)
        if d.kind is list:
            return children
        if d.kind is dict:
            return dict(zip(d.aux, children))
        if d.kind in _registry:
            return _registry[d.kind].unflatten(d.aux, children)
        return d.kind(*children)  # NamedTuple

    out = build(treedef)
    if next(it, _LEAF) is not _LEAF:
        raise ValueError(f"too many leaves for {treedef}")
    return out


def tree_leaves(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> list:
    """The leaves of ``tree`` in flatten order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> PyTreeDef:
    """The ``PyTreeDef`` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """``f`` applied leaf by leaf. Each of ``rest`` has ``tree``'s structure or has ``tree``
    as a prefix: where ``tree`` has a leaf, ``f`` gets the whole subtree of each other tree
    at that place, as ``jax.tree_util.tree_map``.

    >>> tree_map(lambda a, b: a + b, (1, [2]), (10, [20]))
    (11, [22])
    >>> tree_map(lambda a, b: (a, b), {"x": 1}, {"x": [2, 3]})
    {'x': (1, [2, 3])}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [_subtrees_up_to(treedef, r, is_leaf) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def _kind_name(kind) -> str:
    return "None" if kind is type(None) else f"a {kind.__name__}"


def _subtrees_up_to(treedef: PyTreeDef, tree: Any, is_leaf) -> list:
    """The subtrees of ``tree`` at the leaves of ``treedef`` (a prefix of its structure), in
    flatten order; a ValueError naming the key path where the structures part."""
    out: list = []
    # An explicit stack: the depth of a tree is the user's, not bounded by Python's stack.
    stack: list = [(treedef, tree, ())]
    while stack:
        d, t, path = stack.pop()
        if d.kind is _LEAF:
            out.append(t)
            continue
        node = None if is_leaf is not None and is_leaf(t) else _node_of(t)
        where = keystr(path) or "the root"
        if node is None or node[0] is not d.kind:
            got = "a leaf" if node is None else _kind_name(node[0])
            raise ValueError(f"tree_map: the first tree has {_kind_name(d.kind)} at {where}, "
                             f"another tree has {got} there: every tree must have the first "
                             "one's structure, or extend it at its leaves")
        kind, aux, children = node
        if len(children) != len(d.children) or aux != d.aux:
            raise ValueError(f"tree_map: the trees' {kind.__name__} nodes at {where} differ "
                             f"in their keys or lengths ({d.aux or len(d.children)} vs "
                             f"{aux or len(children)})")
        keys = _child_keys(t, kind, aux, len(children))
        for c_def, c, k in reversed(list(zip(d.children, children, keys))):
            stack.append((c_def, c, path + (k,)))
    return out


def all_leaves(iterable: Iterable[Any]) -> bool:
    """True when every item of ``iterable`` is a leaf."""
    return all(_node_of(x) is None for x in iterable)


def broadcast_prefix(prefix: Any, tree: Any, what: str, is_leaf=None) -> list:
    """One entry of ``prefix`` per leaf of ``tree``: each leaf of ``prefix`` stands for the whole
    subtree at its position (how ``in_axes`` and ``out_axes`` are matched to arguments)."""
    out: list = []

    def walk(p, t, path):
        if _node_of(p) is None or p is None or (is_leaf is not None and is_leaf(p)):
            out.extend([p] * len(tree_leaves(t, is_leaf)))
            return
        pn, tn = _node_of(p), _node_of(t)
        if tn is None or pn[0] is not tn[0] or pn[1] != tn[1] or len(pn[2]) != len(tn[2]):
            raise ValueError(
                f"{what}: the specification's structure {tree_structure(p)} does not match "
                f"the value's structure {tree_structure(t)} at {path or 'the root'}")
        for i, (pc, tc) in enumerate(zip(pn[2], tn[2])):
            walk(pc, tc, f"{path}[{i}]")

    walk(prefix, tree, "")
    return out


# ---- key paths ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a tuple or list."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """The key of a child in a dict."""
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute name of a child of a NamedTuple or a registered dataclass."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The position of a child among a registered node's flattened children."""
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _child_keys(x: Any, kind, aux, count: int) -> list:
    if kind is tuple or kind is list:
        return [SequenceKey(i) for i in range(count)]
    if kind is dict:
        return [DictKey(k) for k in aux]
    if kind in keyed_nodes:
        return [k for k, _ in keyed_nodes[kind](x)[0]]
    if kind in child_names:
        return [GetAttrKey(n) for n in child_names[kind]]
    if kind not in _registry and _is_namedtuple(x):
        return [GetAttrKey(n) for n in type(x)._fields]
    return [FlattenedIndexKey(i) for i in range(count)]


def tree_flatten_with_path(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None):
    """``([(key path, leaf), ...], treedef)``: each leaf with the keys that lead to it
    (:class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey`,
    :class:`FlattenedIndexKey`), as ``jax.tree_util.tree_flatten_with_path``.

    >>> paths, _ = tree_flatten_with_path({"a": [1, 2]})
    >>> [keystr(p) for p, _ in paths]
    ["['a'][0]", "['a'][1]"]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    paths: list = []
    stack: list = [(tree, ())]
    while stack:
        t, path = stack.pop()
        node = None if is_leaf is not None and is_leaf(t) else _node_of(t)
        if node is None or type(t) in leaf_types:
            paths.append(path)
            continue
        kind, aux, children = node
        keys = _child_keys(t, kind, aux, len(children))
        for c, k in reversed(list(zip(children, keys))):
            stack.append((c, path + (k,)))
    return list(zip(paths, leaves)), treedef


def tree_leaves_with_path(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> list:
    """``[(key path, leaf), ...]`` in flatten order."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """:func:`tree_map` whose ``f`` also gets each leaf's key path first.

    >>> tree_map_with_path(lambda p, x: keystr(p), {"a": [1]})
    {'a': ["['a'][0]"]}
    """
    with_path, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [_subtrees_up_to(treedef, r, is_leaf) for r in rest]
    return tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in
                                    zip(with_path, *others)])


def keystr(keys: Sequence[Any], *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``"['a'][0].w"``; with ``simple=True`` the bare keys joined by
    ``separator`` (``"a/0/w"`` with ``separator="/"``), as ``jax.tree_util.keystr``."""
    if not simple:
        return separator.join(str(k) for k in keys)

    def bare(k) -> str:
        for field in ("idx", "key", "name"):
            if hasattr(k, field):
                return str(getattr(k, field))
        return str(k)

    return separator.join(bare(k) for k in keys)


def register_pytree_node_class(cls: type) -> type:
    """Registers ``cls`` through its own ``tree_flatten(self) -> (children, aux)`` and
    ``tree_unflatten(cls, aux, children)`` classmethod; usable as a decorator, as
    ``jax.tree_util.register_pytree_node_class``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), getattr(cls, "tree_unflatten"))
    return cls


class Partial(functools.partial):
    """``functools.partial`` as a pytree: the bound arguments are children (arrays stay
    traceable), the function is static structure, as ``jax.tree_util.Partial``. A Partial
    can be passed into and returned from transformed functions.

    >>> add = Partial(lambda a, b: a + b, 1)
    >>> tree_leaves(add), add(2)
    ([1], 3)
    """

    def __new__(cls, func, *args, **kw):
        # Partial(Partial(f, a), b) keeps one level, as functools.partial does for itself.
        if isinstance(func, functools.partial):
            base = func
            func = base.func
            args = base.args + args
            kw = {**base.keywords, **kw}
        return super().__new__(cls, func, *args, **kw)


def _rebuild_partial(func, args, keywords) -> Partial:
    return Partial(func, *args, **keywords)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: _rebuild_partial(func, *children),
)


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, *initializer: Any,
                is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """``functools.reduce(function, leaves, *initializer)`` over ``tree``'s leaves."""
    if len(initializer) > 1:
        raise TypeError("tree_reduce takes at most one initializer")
    return functools.reduce(function, tree_leaves(tree, is_leaf), *initializer)


def tree_all(tree: Any, *, is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    """Whether every leaf is truthy (``all`` of the leaves)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef,
                   pytree_to_transpose: Any) -> Any:
    """An outer tree of inner trees turned into an inner tree of outer trees.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    inner, outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner * outer:
        raise TypeError(f"tree_transpose: the tree has {treedef.num_leaves} leaves, not the "
                        f"{outer} x {inner} of the outer and inner structures")
    rows = [flat[i * inner:(i + 1) * inner] for i in range(outer)]
    subtrees = [tree_unflatten(outer_treedef, column) for column in zip(*rows)]
    return tree_unflatten(inner_treedef, subtrees)
