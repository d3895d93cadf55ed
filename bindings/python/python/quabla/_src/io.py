"""``quabla.save`` / ``quabla.load``: pytrees of arrays in safetensors files (no pickle, so
loading a file never runs code). Leaves are stored under their tree paths ("params/w1");
the tree's shape is kept as JSON in the file's metadata."""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from .. import _quabla
from .array import Array
from .flat import to_raw
from .tree_util import _node_of, child_names, tree_flatten, tree_unflatten

_META_KEY = "quabla.tree"


def _describe(x: Any, path: str, names: list, leaves: list) -> dict:
    node = _node_of(x)
    if node is None:
        name = path or "value"
        names.append(name)
        leaves.append(x)
        return {"leaf": name}
    kind, aux, children = node
    sub = lambda i, key: _describe(children[i], f"{path}/{key}" if path else str(key),  # noqa: E731
                                   names, leaves)
    if kind is type(None):
        return {"none": True}
    if kind is dict:
        return {"dict": [[str(k), sub(i, k)] for i, k in enumerate(aux)]}
    if kind in (list, tuple):
        return {kind.__name__: [sub(i, i) for i in range(len(children))]}
    fields = getattr(kind, "_fields", None) or child_names.get(kind) or [
        str(i) for i in range(len(children))]
    return {"node": f"{kind.__module__}.{kind.__qualname__}",
            "fields": [[str(f), sub(i, f)] for i, f in enumerate(fields)]}


def _rebuild(d: dict, arrays: dict):
    if "leaf" in d:
        return arrays[d["leaf"]]
    if "none" in d:
        return None
    if "dict" in d:
        return {k: _rebuild(v, arrays) for k, v in d["dict"]}
    if "list" in d:
        return [_rebuild(v, arrays) for v in d["list"]]
    if "tuple" in d:
        return tuple(_rebuild(v, arrays) for v in d["tuple"])
    # Other node types are not imported by name (that would run code from the file): their
    # fields come back as a dict; pass `like=` to get the original type.
    return {k: _rebuild(v, arrays) for k, v in d["fields"]}


def _leaf_names(d: dict) -> list:
    if "leaf" in d:
        return [d["leaf"]]
    if "none" in d:
        return []
    kids = d.get("list") or d.get("tuple") or [v for _, v in d.get("dict") or d.get("fields")
                                                or []]
    return [n for k in kids for n in _leaf_names(k)]


def save(path, tree: Any) -> None:
    """Writes a pytree of arrays (and numbers) to ``path`` in the safetensors format.

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.save("/tmp/params.safetensors", {"w": qnp.ones((2, 2)), "b": qnp.zeros(2)})
    """
    names: list = []
    leaves: list = []
    desc = _describe(tree, "", names, leaves)
    if len(set(names)) != len(names):
        raise ValueError("save: two leaves have the same path; use distinct keys")
    raws = [to_raw(x) for x in leaves]
    _quabla.save_tensors(os.fspath(path), names, raws, {_META_KEY: json.dumps(desc)})


def load(path, like: Optional[Any] = None, device=None) -> Any:
    """Reads a pytree saved by :func:`save`. With ``like`` (a tree of the same structure, e.g.
    freshly initialised parameters) the result has ``like``'s node types and each leaf is
    checked against ``like``'s shape and dtype; without it, dicts, lists, tuples and None come
    back as such and other nodes as dicts of their fields. Files written by other tools (no
    tree metadata) load as a flat dict of name -> array."""
    platform = getattr(device, "platform", device)
    pairs, meta = _quabla.load_tensors(os.fspath(path), platform)
    arrays = {name: Array(raw) for name, raw in pairs}
    desc = meta.get(_META_KEY)
    tree = _rebuild(json.loads(desc), arrays) if desc else dict(sorted(arrays.items()))
    if like is None:
        return tree
    # Leaves in the saved tree's own flatten order (a dataclass's fields in field order, not
    # sorted as the dict they came back as).
    got = [arrays[n] for n in _leaf_names(json.loads(desc))] if desc else tree_flatten(tree)[0]
    want, treedef = tree_flatten(like)
    if len(got) != len(want):
        raise ValueError(f"load: the file has {len(got)} leaves but `like` has {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        ws = tuple(getattr(w, "shape", ()))
        if tuple(g.shape) != ws:
            raise ValueError(f"load: leaf {i} has shape {g.shape} in the file but {ws} in "
                             "`like`")
    return tree_unflatten(treedef, got)
