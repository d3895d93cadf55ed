"""Applying functions over axes, as ``jax.numpy``: ``apply_along_axis`` (``vmap`` over every
other axis), ``apply_over_axes`` and ``vectorize`` (``vmap`` over the broadcast loop axes,
with gufunc signatures)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..array import Array
from .creation import asarray
from .shape import expand_dims


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs) -> Array:
    """``func1d`` on every 1-D slice of ``arr`` along ``axis``, batched with ``vmap``: its
    result's axes replace ``axis`` (none for a scalar result), as numpy's."""
    from ..api import vmap
    a = arr if isinstance(arr, Array) else asarray(arr)
    nd = a.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"apply_along_axis: axis {axis} is out of range for {nd} dimensions")
    axis %= nd
    f = lambda v: func1d(v, *args, **kwargs)  # noqa: E731 - the batched function
    # Batch over the axes after `axis`, then over those before, so the result's own axes
    # land where `axis` was.
    for _ in range(nd - 1 - axis):
        f = vmap(f, in_axes=-1, out_axes=-1)
    for _ in range(axis):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(a)


def apply_over_axes(func: Callable, a, axes) -> Array:
    """``func(a, axis)`` for each of ``axes`` in turn, each result given back the axis it
    reduced (so the rank never drops), as numpy's."""
    out = a if isinstance(a, Array) else asarray(a)
    for axis in [axes] if isinstance(axes, int) else list(axes):
        res = func(out, axis)
        if res.ndim == out.ndim - 1:
            res = expand_dims(res, axis)
        elif res.ndim != out.ndim:
            raise ValueError(
                "apply_over_axes: the function must keep the rank or drop the axis it was "
                f"given; it turned {out.ndim} dimensions into {res.ndim}")
        out = res
    return out





def _parse_signature(signature: str):
    """``"(n,m),(m)->(n)"`` as the core dimension names of each input and output."""
    import re
    sig = signature.replace(" ", "")
    part = r"\((?:\w+(?:,\w+)*)?\)"
    if not re.fullmatch(rf"{part}(?:,{part})*->{part}(?:,{part})*", sig):
        raise ValueError(f"vectorize: {signature!r} is not a gufunc signature like "
                         "'(n,m),(m)->(n)'")
    ins, outs = sig.split("->")
    dims = lambda s: [tuple(d for d in g.split(",") if d)  # noqa: E731
                      for g in re.findall(r"\(([\w,]*)\)", s)]
    return dims(ins), dims(outs)


class vectorize:
    """``pyfunc`` over the leading (loop) axes of its arguments, broadcast together, as
    numpy's ``vectorize`` and JAX's (built on ``vmap``, so it traces once, not per element).
    ``signature`` names core dimensions (``'(n,m),(m)->(n)'``); ``excluded`` holds the
    positions or keyword names passed through unvectorized.

    >>> import quabla.numpy as qnp
    >>> qnp.vectorize(lambda x, y: x * y + 1)(qnp.arange(3.0), 2.0).tolist()
    [1.0, 3.0, 5.0]
    """

    def __init__(self, pyfunc: Callable, *, excluded=frozenset(), signature=None):
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        self._core = None if signature is None else _parse_signature(signature)

    def __call__(self, *args, **kwargs):
        from ..api import vmap
        from .shape import broadcast_shapes, broadcast_to
        fixed = {i: a for i, a in enumerate(args) if i in self.excluded}
        fixed_kw = {k: v for k, v in kwargs.items() if k in self.excluded}
        mapped = [asarray(a) if not isinstance(a, Array) else a
                  for i, a in enumerate(args) if i not in self.excluded]
        mapped_kw = {k: v for k, v in kwargs.items() if k not in self.excluded}
        if mapped_kw:
            raise TypeError("vectorize: pass the vectorized arguments by position (keywords "
                            f"{sorted(mapped_kw)} must be listed in excluded)")
        in_core = self._core[0] if self._core else [()] * len(mapped)
        if len(in_core) != len(mapped):
            raise TypeError(f"vectorize: the signature has {len(in_core)} inputs, the call "
                            f"{len(mapped)}")
        sizes: dict = {}
        for a, names in zip(mapped, in_core):
            if a.ndim < len(names):
                raise ValueError(f"vectorize: an input of shape {a.shape} has fewer dimensions "
                                 f"than its core {names}")
            for name, n in zip(names, a.shape[a.ndim - len(names):]):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"vectorize: core dimension {name!r} is {sizes[name]} and "
                                     f"{n}")
        loop = broadcast_shapes(*[a.shape[:a.ndim - len(c)] for a, c in zip(mapped, in_core)])
        total = int(np.prod(loop)) if loop else 1
        flat = [broadcast_to(a, loop + a.shape[a.ndim - len(c):])
                .reshape((total,) + a.shape[a.ndim - len(c):])
                for a, c in zip(mapped, in_core)]

        def one(*xs):
            it = iter(xs)
            full = [fixed[i] if i in fixed else next(it)
                    for i in range(len(args))]
            return self.pyfunc(*full, **fixed_kw)

        out = vmap(one)(*flat)
        if self._core is not None:
            outs = out if isinstance(out, tuple) else (out,)
            want = self._core[1]
            if len(outs) != len(want) or any(o.ndim - 1 != len(c) for o, c in zip(outs, want)):
                raise ValueError(
                    f"vectorize: the function's outputs {[o.shape[1:] for o in outs]} do not "
                    f"match the signature's {want}")
        from ..tree_util import tree_map
        return tree_map(lambda o: o.reshape(loop + o.shape[1:]), out)
