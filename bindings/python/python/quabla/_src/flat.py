"""Between pytrees of arrays and the flat lists of ``RawArray``s the core's transformations take."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from .array import Array
from .tree_util import _LEAF_DEF, PyTreeDef, tree_flatten, tree_unflatten


def to_raw(x, platform: Optional[str] = None) -> Any:
    """The core array of a leaf (Python scalars and numpy arrays become arrays, on
    `platform`'s device when given, else the default one)."""
    if type(x) is Array:
        return x._raw
    from .numpy.creation import asarray
    try:
        if platform is None:
            return asarray(x)._raw
        from .runtime import Device
        return asarray(x, device=Device(platform))._raw
    except TypeError:
        raise TypeError(
            f"{type(x).__name__} is not a valid argument of a transformed function: leaves "
            "of the argument trees must be arrays or numbers (mark others static)") from None


def flatten_to_raw(tree, platform: Optional[str] = None) -> tuple:
    """The leaves of `tree` as core arrays, and its structure; leaves that are not arrays
    yet are made on `platform`'s device when given (as `jax.jit(f, device=...)` places
    uncommitted arguments)."""
    leaves, treedef = tree_flatten(tree)
    return [x._raw if type(x) is Array else to_raw(x, platform) for x in leaves], treedef


def unflatten_raw(treedef: PyTreeDef, raws) -> Any:
    if treedef is _LEAF_DEF:
        return Array(raws[0])
    return tree_unflatten(treedef, [Array(r) for r in raws])


# Names of the functions being traced, innermost last (for error messages).
tracing: List[str] = []


class OutStore:
    """The output tree (and leaf shapes) of the last trace of a flat function."""

    __slots__ = ("tree", "shapes")

    def __init__(self):
        self.tree = None
        self.shapes: List[tuple] = []


def flat_function(f: Callable, in_tree: PyTreeDef, store: OutStore,
                  call: Optional[Callable[[Callable, Any], Any]] = None) -> Callable:
    """``f`` over the unflattened arguments, as a function of a flat list of raw arrays."""

    def flat(raws):
        args = unflatten_raw(in_tree, raws)
        tracing.append(getattr(f, "__qualname__", None) or repr(f))
        try:
            out = call(f, args) if call is not None else f(*args)
        finally:
            tracing.pop()
        leaves, tree = tree_flatten(out)
        store.tree = tree
        raw_out = [to_raw(x) for x in leaves]
        store.shapes = [tuple(r.shape) for r in raw_out]
        return raw_out

    return flat
