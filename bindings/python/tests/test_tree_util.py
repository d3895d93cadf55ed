"""quabla.tree_util: the pytree rules of jax.tree_util (dict keys sorted, None a node without
children, NamedTuples and registered classes as nodes)."""

import dataclasses
from typing import NamedTuple

import pytest

from quabla import tree_util as tu


class P(NamedTuple):
    a: object
    b: object


def test_flatten_orders_and_round_trips():
    tree = {"b": [1, (2, None)], "a": P(3, {"z": 4, "y": 5})}
    leaves, d = tu.tree_flatten(tree)
    assert leaves == [3, 5, 4, 1, 2]
    assert tu.tree_unflatten(d, leaves) == tree
    assert d.num_leaves == 5
    assert tu.tree_structure(tree) == d
    assert tu.tree_structure({"a": 1, "b": 2}) != tu.tree_structure({"a": 1, "c": 2})
    assert tu.tree_structure((1, 2)) != tu.tree_structure([1, 2])
    assert tu.tree_leaves(None) == []


def test_tree_map_and_errors():
    assert tu.tree_map(lambda x, y: x * y, [1, {"k": 2}], [3, {"k": 4}]) == [3, {"k": 8}]
    with pytest.raises(ValueError, match="first tree has a list at the root, another tree has "
                                         "a tuple"):
        tu.tree_map(lambda x, y: x, [1, 2], (1, 2))
    with pytest.raises(ValueError, match="too few"):
        tu.tree_unflatten(tu.tree_structure((1, 2)), [1])
    assert tu.tree_map(lambda x: x, [1, [2]], is_leaf=lambda x: isinstance(x, list) and
                       len(x) == 1) == [1, [2]]


def test_registration():
    class Box:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

    tu.register_pytree_node(Box, lambda b: ((b.v,), b.tag), lambda tag, c: Box(c[0], tag))
    leaves, d = tu.tree_flatten(Box([1, 2], "t"))
    assert leaves == [1, 2]
    out = tu.tree_unflatten(d, [5, 6])
    assert isinstance(out, Box) and out.v == [5, 6] and out.tag == "t"
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node(Box, None, None)

    @tu.register_dataclass
    @dataclasses.dataclass
    class D:
        x: object
        y: object

    assert tu.tree_leaves(D(1, [2, 3])) == [1, 2, 3]
    with pytest.raises(TypeError, match="dataclass"):
        tu.register_dataclass(int)
    assert repr(tu.tree_structure({"a": (1, None)})) == "PyTreeDef({'a': (*, None)})"
