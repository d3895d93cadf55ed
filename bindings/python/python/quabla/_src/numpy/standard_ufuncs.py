"""``quabla.numpy``'s ufuncs, JAX's set (``add``, ``subtract``, ``multiply``, ``maximum``,
``minimum``, the logical and bitwise ands/ors/xors, ``logaddexp``, ``logaddexp2``,
``negative``), each with the reduction, running fold and scatter of its own where it has one
(JAX's identities)."""

from __future__ import annotations

from typing import Callable, Dict

from . import reductions as red
from .ufuncs import ufunc


def _cummax(x, axis):
    from ..lax_more import cummax
    return cummax(x, axis)


def _cummin(x, axis):
    from ..lax_more import cummin
    return cummin(x, axis)


# name: (identity, reduce, accumulate, scatter method of `.at[]`).
_OWN: Dict[str, tuple] = {
    "add": (0, red.sum, red.cumsum, "add"),
    "multiply": (1, red.prod, red.cumprod, "mul"),
    "maximum": (None, red.max, _cummax, "max"),
    "minimum": (None, red.min, _cummin, "min"),
    "logical_and": (True, red.all, None, None),
    "logical_or": (False, red.any, None, None),
    "logical_xor": (False, None, None, None),
    "bitwise_and": (-1, None, None, None),
    "bitwise_or": (0, None, None, None),
    "bitwise_xor": (0, None, None, None),
    "logaddexp": (float("-inf"), None, None, None),
    "logaddexp2": (float("-inf"), None, None, None),
}

# Binary functions without a reduction of their own (folded in order, numpy's semantics).
_FOLDED = ["subtract"]


def as_ufuncs(functions: Dict[str, Callable]) -> Dict[str, ufunc]:
    """``functions`` (by their quabla.numpy names: JAX's ufuncs) wrapped as ufuncs; the
    unary ``negative`` has ``at`` only."""
    out = {}
    for name, f in functions.items():
        if name == "negative":
            out[name] = ufunc(f, 1, 1, name=name)
            continue
        if name not in _OWN and name not in _FOLDED:
            raise KeyError(f"{name} is not one of quabla.numpy's binary ufuncs")
        identity, reduce, accumulate, scatter = _OWN.get(name, (None, None, None, None))
        out[name] = ufunc(f, 2, 1, name=name, identity=identity, reduce=reduce,
                          accumulate=accumulate, scatter=scatter, reorderable=name in _OWN)
    return out
