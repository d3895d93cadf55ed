"""The rest of ``jax.tree_util`` and ``jax.tree``: keyed registration, static types and
fields, one-level flattening, ``tree_broadcast``, ``tree_reduce_associative`` and the
``PyTreeDef`` helpers, against JAX 0.10.2's results recorded by hand (in the comments)."""

import collections
import dataclasses

import pytest

import quabla
import quabla.numpy as qnp
import quabla.tree as tree
import quabla.tree_util as tu
from conftest import assert_close


def test_keyed_registration_names_the_paths():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_pytree_with_keys(
        Pair, lambda p: (((tu.GetAttrKey("left"), p.a), (tu.GetAttrKey("right"), p.b)), None),
        lambda _, c: Pair(*c))
    paths, _ = tu.tree_flatten_with_path({"p": Pair(1.0, [2.0, 3.0])})
    # JAX: ["['p'].left", "['p'].right[0]", "['p'].right[1]"]
    assert [tu.keystr(k) for k, _ in paths] == ["['p'].left", "['p'].right[0]",
                                                "['p'].right[1]"]
    doubled = tu.tree_map(lambda x: 2 * x, Pair(1.0, 2.0))
    assert (doubled.a, doubled.b) == (2.0, 4.0)

    @tu.register_pytree_with_keys_class
    class Box:
        def __init__(self, v):
            self.v = v

        def tree_flatten_with_keys(self):
            return ((tu.DictKey("v"), self.v),), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert tu.keystr(tu.tree_flatten_with_path(Box(5))[0][0][0]) == "['v']"
    assert quabla.grad(lambda b: b.v ** 2)(Box(qnp.asarray(3.0))).v == 6.0


def test_static_types_and_fields_are_structure():
    @tu.register_static
    @dataclasses.dataclass(frozen=True)
    class Config:
        name: str

    leaves, treedef = tu.tree_flatten((1.0, Config("a")))
    assert leaves == [1.0]
    assert tu.tree_unflatten(treedef, [2.0]) == (2.0, Config("a"))
    assert tu.tree_structure(Config("a")) != tu.tree_structure(Config("b"))

    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        op: str = tree.static(default="add")

    leaves, treedef = tu.tree_flatten(Op(qnp.ones(2), "mul"))
    assert len(leaves) == 1 and tu.tree_unflatten(treedef, [3.0]).op == "mul"
    f = quabla.jit(lambda o: o.x * 2 if o.op == "mul" else o.x + 2)
    assert_close(f(Op(qnp.ones(2), "mul")), [2.0, 2.0], rtol=0)


def test_one_level_flattening_and_nodes():
    point = collections.namedtuple("Point", "x y")
    assert tu.flatten_one_level({"a": 1, "b": (2, 3)}) == ([1, (2, 3)], ("a", "b"))
    assert tu.flatten_one_level([1, (2, 3)]) == ([1, (2, 3)], None)
    assert list(tu.flatten_one_level(None)[0]) == []
    assert list(tu.flatten_one_level(point(1, 2))[0]) == [1, 2]
    (k0, c0), (k1, c1) = tu.flatten_one_level_with_keys([1, (2, 3)])[0]
    assert (k0, c0, k1, c1) == (tu.SequenceKey(0), 1, tu.SequenceKey(1), (2, 3))
    for leaf in (1, qnp.ones(2)):
        with pytest.raises(ValueError, match="can't tree-flatten"):
            tu.flatten_one_level(leaf)
    # JAX: False True True False True True.
    assert [tu.is_tree_node(t) for t in (int, tuple, type(None), type(qnp.ones(2)), point,
                                         dict)] == [False, True, True, False, True, True]
    assert tu.default_registry.is_node(list)


def test_broadcast_and_associative_reduction_as_jax():
    # JAX: ((1, 1), 2) and {'a': [1, 1]}.
    assert tu.tree_broadcast((1, 2), ((3, 4), 5)) == ((1, 1), 2)
    assert tree.broadcast({"a": 1}, {"a": [1, 2]}) == {"a": [1, 1]}
    with pytest.raises(ValueError):
        tu.tree_broadcast(((1, 2), 3), (4, 5))
    # JAX: 10, '((ab)(c(de)))', identity 0 for an empty tree, else a TypeError.
    assert tu.tree_reduce_associative(lambda a, b: a + b, [1, 2, (3, 4)]) == 10
    assert tree.reduce_associative(lambda a, b: f"({a}{b})", list("abcde")) == "((ab)(c(de)))"
    assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(lambda a, b: a + b, [])
    big = list(range(100000))
    assert tu.tree_reduce_associative(lambda a, b: a + b, big) == sum(big)


def test_treedef_helpers_as_jax():
    s = tu.tree_structure({"a": 1, "b": (2, 3)})
    # JAX: [PyTreeDef(*), PyTreeDef((*, *))] False True True [].
    assert tu.treedef_children(s) == [tu.tree_structure(1), tu.tree_structure((2, 3))]
    assert not tu.treedef_is_leaf(s)
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert tu.treedef_children(tu.tree_structure(None)) == []
    both = tu.treedef_tuple([s, tu.tree_structure(1)])
    assert both == tu.tree_structure(({"a": 0, "b": (0, 0)}, 0))
