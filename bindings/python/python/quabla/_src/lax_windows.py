"""``lax.reduce_window``, ``lax.reduce`` and ``lax.padtype_to_pads``: windowed and plain
reductions whose ``computation`` is one of the monoids JAX's own fast paths recognise (add,
mul, max, min), composed of ``pad``, strided slices and elementwise ops, so derivatives,
``vmap`` and ``jit`` are theirs. As JAX's ``reduce_window`` max/min, the derivative of a
window's maximum goes to its first maximum in row-major window order (not split at ties).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from .array import Array
from .numpy import elementwise as el
from .numpy.creation import asarray

Padding = Union[str, Sequence[Tuple[int, int]]]

_NAMES = {el.add: "add", el.multiply: "mul", el.maximum: "max", el.minimum: "min",
          operator.add: "add", operator.mul: "mul", np.add: "add", np.multiply: "mul",
          np.maximum: "max", np.minimum: "min"}


def _monoid(computation: Callable, what: str) -> str:
    """The monoid ``computation`` is: by identity for lax's, jnp's and operator's functions,
    else by its values at two probe pairs (a function agreeing with ``x + y`` at both is
    taken to be addition)."""
    name = _NAMES.get(computation)
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
                  window_dilation: Optional[Sequence[int]] = None) -> Array:
    """Reduces each window of ``operand`` with ``computation`` starting from ``init_value``,
    as ``jax.lax.reduce_window``: ``base_dilation`` spreads the operand (holes hold
    ``init_value``), ``padding`` (``"VALID"``, ``"SAME"``, ``"SAME_LOWER"`` or ``(low, high)``
    per axis) pads it with ``init_value``, then windows of ``window_dimensions`` dilated by
    ``window_dilation`` are taken every ``window_strides``. ``computation`` must be add,
    mul, max or min (lax's, jnp's or an equivalent function). Pytree operands are not
    supported.
    """
    what = "reduce_window"
    x = asarray(operand)
    name = _monoid(computation, what)
    nd = x.ndim
    window = _ints(window_dimensions, nd, 1, "window_dimensions", what)
    strides = _ints(window_strides, nd, 1, "window_strides", what)
    base = _ints(base_dilation, nd, 1, "base_dilation", what)
    wdil = _ints(window_dilation, nd, 1, "window_dilation", what)
    init = asarray(init_value).astype(x.dtype)
    if init.ndim != 0:
        raise ValueError(f"{what}: init_value must be a scalar, got shape {init.shape}")
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
    padded = pad(x, init, [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)])
    out_shape = [(p - s) // st + 1 if p >= s else 0
                 for p, s, st in zip(padded.shape, span, strides)]
    if any(n <= 0 for n in out_shape):
        from .numpy.creation import zeros
        return zeros(tuple(max(n, 0) for n in out_shape), x.dtype)
    acc: Optional[Array] = None
    for offset in itertools.product(*(range(w) for w in window)):
        starts = [o * d for o, d in zip(offset, wdil)]
        limits = [s0 + (n - 1) * st + 1 for s0, n, st in zip(starts, out_shape, strides)]
        piece = padded[tuple(slice(a, b, st) for a, b, st in zip(starts, limits, strides))]
        acc = piece if acc is None else _combine(name, acc, piece)
    if acc is None:
        raise ValueError(f"{what}: window_dimensions {window} hold no element")
    # The init value enters once per window, as in a reduction.
    return _combine(name, init, acc) if name in ("add", "mul") else _combine(name, acc, init)


def reduce(operands, init_values, computation: Callable, dimensions: Sequence[int]) -> Any:
    """Reduces ``operands`` over ``dimensions`` with ``computation`` starting from
    ``init_values``, as ``jax.lax.reduce``, for one operand and ``computation`` add, mul,
    max or min (variadic reductions, such as an argmax written as one, are not supported:
    use ``jnp.argmax``)."""
    what = "reduce"
    if isinstance(operands, (tuple, list)):
        if len(operands) != 1 or not isinstance(init_values, (tuple, list)) \
                or len(init_values) != 1:
            raise NotImplementedError(
                f"{what}: variadic reductions ({len(operands)} operands) are not supported; "
                "reduce each operand, or use jnp.argmax/argmin for index reductions")
        return (reduce(operands[0], init_values[0], computation, dimensions),)
    x = asarray(operands)
    name = _monoid(computation, what)
    axes = tuple(int(d) for d in dimensions)
    if any(not 0 <= d < x.ndim for d in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{what}: dimensions {tuple(dimensions)} must be distinct axes of an "
                         f"array of rank {x.ndim}")
    init = asarray(init_values).astype(x.dtype)
    if init.ndim != 0:
        raise ValueError(f"{what}: init_value must be a scalar, got shape {init.shape}")
    from .. import numpy as qnp
    reducers: dict = {"add": qnp.sum, "mul": qnp.prod, "max": qnp.max, "min": qnp.min}
    # Over no axes, each element is combined with the init alone.
    r = reducers[name](x, axis=axes) if axes else x
    return _combine(name, init, r) if name in ("add", "mul") else _combine(name, r, init)


__all__ = ["padtype_to_pads", "reduce", "reduce_window"]
