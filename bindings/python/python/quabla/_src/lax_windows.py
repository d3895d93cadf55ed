"""``lax.reduce_window``, ``lax.reduce`` and ``lax.padtype_to_pads``: windowed and plain
reductions, composed of ``pad``, strided slices, elementwise ops and ``scan``, so
derivatives, ``vmap`` and ``jit`` are theirs. A ``computation`` that is one of the monoids
JAX's own fast paths recognise (add, mul, max, min) on one operand uses the reductions; any
other, and several operands (pytrees: an argmax written as a reduction), fold in order from
the init value, ``acc = computation(acc, x)``, as XLA on CPU folds. As JAX's
``reduce_window`` max/min, the derivative of a window's maximum goes to its first maximum in
row-major window order (not split at ties).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from .array import Array
from .numpy import elementwise as el
from .numpy.creation import asarray
from .tree_util import tree_flatten, tree_unflatten

Padding = Union[str, Sequence[Tuple[int, int]]]

_NAMES = {el.add: "add", el.multiply: "mul", el.maximum: "max", el.minimum: "min",
          operator.add: "add", operator.mul: "mul", np.add: "add", np.multiply: "mul",
          np.maximum: "max", np.minimum: "min"}


def _known_monoid(computation: Callable, what: str) -> Optional[str]:
    """The monoid name of ``computation``, or None when it is none of them."""
    try:
        return _monoid(computation, what)
    except NotImplementedError:
        return None


class _Operands:
    """Operands and init values as matching pytrees of arrays (one shape, a scalar init of
    each operand's dtype), and ``computation`` applied to flat lists of them."""

    def __init__(self, operands, init_values, computation: Callable, what: str):
        leaves, self.tree = tree_flatten(operands)
        inits, init_tree = tree_flatten(init_values)
        if init_tree != self.tree:
            raise TypeError(f"{what}: init_values {init_tree} must have the operands' "
                            f"structure {self.tree}")
        if not leaves:
            raise ValueError(f"{what}: needs at least one operand")
        self.leaves = [asarray(x) for x in leaves]
        shape = self.leaves[0].shape
        if any(x.shape != shape for x in self.leaves):
            raise ValueError(f"{what}: the operands must share one shape, got "
                             f"{[x.shape for x in self.leaves]}")
        self.inits = [asarray(v).astype(x.dtype) for v, x in zip(inits, self.leaves)]
        if any(v.ndim != 0 for v in self.inits):
            raise ValueError(f"{what}: init values must be scalars, got shapes "
                             f"{[v.shape for v in self.inits]}")
        self.computation, self.what = computation, what

    def combine(self, acc: list, x: list) -> list:
        out = self.computation(tree_unflatten(self.tree, acc), tree_unflatten(self.tree, x))
        leaves, tree = tree_flatten(out)
        if tree != self.tree:
            raise TypeError(f"{self.what}: the computation returned {tree}, it must return "
                            f"the operands' structure {self.tree}")
        return [asarray(v).astype(a.dtype) for v, a in zip(leaves, acc)]

    def result(self, leaves: list):
        return tree_unflatten(self.tree, leaves)


def _monoid(computation: Callable, what: str) -> str:
    """The monoid ``computation`` is: by identity for lax's, jnp's and operator's functions,
    else by its values at two probe pairs (a function agreeing with ``x + y`` at both is
    taken to be addition)."""
    # quabla.numpy's ufuncs wrap the functions the table knows.
    name = _NAMES.get(getattr(computation, "__wrapped__", computation))
    if name is not None:
        return name
    probes = {"add": (5.0, 2.5), "mul": (6.0, -6.0), "max": (3.0, 4.0), "min": (2.0, -1.5)}
    try:
        got = (float(computation(asarray(2.0), asarray(3.0))),
               float(computation(asarray(-1.5), asarray(4.0))))
    except Exception as e:  # noqa: BLE001 - any failure means "not recognised"
        raise NotImplementedError(
            f"{what}: the computation {computation!r} is not one Quabla recognises ({e}); "
            "use lax.add, lax.mul, lax.max or lax.min") from e
    for name, want in probes.items():
        if got == want:
            return name
    raise NotImplementedError(
        f"{what}: the computation {computation!r} is not add, mul, max or min (the monoids "
        "Quabla reduces with); write the reduction with those, or with jnp reductions")


def _identity(name: str, dtype) -> Array:
    """The monoid's identity in ``dtype``: what padding holds so that it changes nothing."""
    d = np.dtype(dtype)
    if name in ("add", "mul"):
        return asarray(np.array(0 if name == "add" else 1, d))
    if d.kind == "f":
        return asarray(np.array(-np.inf if name == "max" else np.inf, d))
    if d.kind == "b":
        return asarray(np.array(name == "min", d))
    info = np.iinfo(d)
    return asarray(np.array(info.min if name == "max" else info.max, d))


def _combine(name: str, a: Array, b: Array) -> Array:
    """``a op b``; for max/min the first operand wins ties and NaN propagates, so the
    derivative goes to the first extreme, as JAX's windowed max/min."""
    if name == "add":
        return a + b
    if name == "mul":
        return a * b
    beats = (b > a) if name == "max" else (b < a)
    if np.dtype(a.dtype).kind == "f":
        beats = beats | (el.isnan(b) & ~el.isnan(a))
    return el.where(beats, b, a)


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list:
    """``(low, high)`` padding per axis for ``"VALID"``, ``"SAME"`` (extra padding high) or
    ``"SAME_LOWER"`` (extra padding low), as ``jax.lax.padtype_to_pads``."""
    if not isinstance(padding, str):
        raise TypeError(f"padtype_to_pads: padding must be a string, got {padding!r}")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"unknown padding {padding!r}: use 'VALID', 'SAME' or 'SAME_LOWER'")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max((out - 1) * int(s) + int(w) - int(n), 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _ints(v, n: int, default: int, name: str, what: str) -> Tuple[int, ...]:
    if v is None:
        return (default,) * n
    out = tuple(int(x) for x in v)
    if len(out) != n or any(x < 1 for x in out):
        raise ValueError(f"{what}: {name} needs {n} positive ints, got {tuple(v)}")
    return out


def reduce_window(operand, init_value, computation: Callable, window_dimensions: Sequence[int],
                  window_strides: Optional[Sequence[int]] = None, padding: Padding = "VALID",
                  base_dilation: Optional[Sequence[int]] = None,
                  window_dilation: Optional[Sequence[int]] = None) -> Any:
    """Reduces each window of ``operand`` with ``computation`` starting from ``init_value``,
    as ``jax.lax.reduce_window``: ``base_dilation`` spreads the operand (holes hold
    ``init_value``), ``padding`` (``"VALID"``, ``"SAME"``, ``"SAME_LOWER"`` or ``(low, high)``
    per axis) pads it with ``init_value``, then windows of ``window_dimensions`` dilated by
    ``window_dilation`` are taken every ``window_strides``. Padding and dilation holes are
    skipped (the init enters each window once). add, mul, max and min (lax's, jnp's or an
    equivalent function) on one operand use those ops; any other ``computation``, and
    pytrees of operands and init values, fold each window in row-major order from the init
    (XLA leaves the order of a non-associative fold unspecified; on CPU it may differ from
    this one in padded windows).
    """
    what = "reduce_window"
    ops = _Operands(operand, init_value, computation, what)
    name = _known_monoid(computation, what) if len(ops.leaves) == 1 else None
    x = ops.leaves[0]
    nd = x.ndim
    window = _ints(window_dimensions, nd, 1, "window_dimensions", what)
    strides = _ints(window_strides, nd, 1, "window_strides", what)
    base = _ints(base_dilation, nd, 1, "base_dilation", what)
    wdil = _ints(window_dilation, nd, 1, "window_dilation", what)
    dilated = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, base)]
    span = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    if isinstance(padding, str):
        pads = padtype_to_pads(dilated, span, strides, padding)
    else:
        pads = [tuple(int(v) for v in p) for p in padding]
        if len(pads) != nd or any(len(p) != 2 for p in pads):
            raise ValueError(f"{what}: padding needs one (low, high) pair per axis of "
                             f"{x.shape}, got {padding!r}")
    from .lax_more import pad
    from .numpy.creation import ones, zeros
    # Padding and the holes of base dilation are no elements: XLA's windows skip them, so
    # the init value enters once per window however much of it hangs over the edge. The
    # monoids pad with their identity; other computations skip masked positions.
    spread = [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)]
    if name is None:
        padded = [pad(v, i, spread) for v, i in zip(ops.leaves, ops.inits)]
        inside = pad(ones(x.shape, np.bool_), asarray(False), spread)
    else:
        padded = [pad(x, _identity(name, x.dtype), spread)]
    out_shape = [(p - s) // st + 1 if p >= s else 0
                 for p, s, st in zip(padded[0].shape, span, strides)]
    if any(n <= 0 for n in out_shape):
        return ops.result([zeros(tuple(max(n, 0) for n in out_shape), v.dtype)
                           for v in ops.leaves])

    def windows():
        for offset in itertools.product(*(range(w) for w in window)):
            starts = [o * d for o, d in zip(offset, wdil)]
            limits = [s0 + (n - 1) * st + 1 for s0, n, st in zip(starts, out_shape, strides)]
            yield tuple(slice(a, b, st) for a, b, st in zip(starts, limits, strides))

    if name is None:
        # Any computation: fold each window's elements in row-major order from the init.
        from .numpy.shape import broadcast_to
        folded = [broadcast_to(i, tuple(out_shape)) for i in ops.inits]
        for at in windows():
            stepped = ops.combine(folded, [v[at] for v in padded])
            real = inside[at]
            folded = [el.where(real, new, old) for new, old in zip(stepped, folded)]
        return ops.result(folded)
    init = ops.inits[0]
    acc: Optional[Array] = None
    for at in windows():
        piece = padded[0][at]
        acc = piece if acc is None else _combine(name, acc, piece)
    if acc is None:
        raise ValueError(f"{what}: window_dimensions {window} hold no element")
    # The init value enters once per window, as in a reduction.
    return _combine(name, init, acc) if name in ("add", "mul") else _combine(name, acc, init)


def reduce(operands, init_values, computation: Callable, dimensions: Sequence[int]) -> Any:
    """Reduces ``operands`` (an array or a pytree of arrays of one shape) over
    ``dimensions`` with ``computation`` starting from ``init_values`` (scalars, the same
    pytree), as ``jax.lax.reduce``. add, mul, max and min on one operand use the reductions;
    any other computation, and several operands (``computation((acc...), (x...))``, such as
    an argmax), fold along the reduced elements in row-major order,
    ``acc = computation(acc, x)``, as XLA on CPU does: a ``scan``, so it is differentiable.
    """
    what = "reduce"
    ops = _Operands(operands, init_values, computation, what)
    x = ops.leaves[0]
    axes = tuple(int(d) for d in dimensions)
    if any(not 0 <= d < x.ndim for d in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{what}: dimensions {tuple(dimensions)} must be distinct axes of an "
                         f"array of rank {x.ndim}")
    name = _known_monoid(computation, what) if len(ops.leaves) == 1 else None
    from .. import numpy as qnp
    if name is not None:
        init = ops.inits[0]
        reducers: dict = {"add": qnp.sum, "mul": qnp.prod, "max": qnp.max, "min": qnp.min}
        # Over no axes, each element is combined with the init alone.
        r = reducers[name](x, axis=axes) if axes else x
        out = _combine(name, init, r) if name in ("add", "mul") else _combine(name, r, init)
        return ops.result([out])
    kept = [d for d in range(x.ndim) if d not in axes]
    kept_shape = tuple(x.shape[d] for d in kept)
    count = int(np.prod([x.shape[d] for d in axes])) if axes else 1
    # The reduced elements in row-major order, on a leading axis the scan walks.
    rows = [qnp.transpose(v, tuple(sorted(axes)) + tuple(kept)).reshape((count,) + kept_shape)
            for v in ops.leaves]
    start = [qnp.broadcast_to(i, kept_shape) for i in ops.inits]
    if count == 0:
        return ops.result(start)
    from .control_flow import scan

    def step(acc, row):
        return ops.combine(list(acc), list(row)), None

    folded, _ = scan(step, start, rows)
    return ops.result(list(folded))


__all__ = ["padtype_to_pads", "reduce", "reduce_window"]
