"""Host callbacks, as JAX's: ``pure_callback``, ``debug.callback`` and ``debug.print``.

On concrete arrays the Python function runs at once. In a traced function (``jit``, a
transformation, a loop body) the call becomes a ``host_callback`` op and the function runs
each time the program does, on numpy copies of the values, on the thread running the
program. The CPU and MLX backends can call back; the others refuse such a program when it is
compiled, naming the op.

``pure_callback`` has no derivative (as in JAX: wrap it in ``custom_jvp``/``custom_vjp``),
and under ``vmap`` needs a ``vmap_method``. The debug callbacks are effects: they run even
though nothing uses them, in program order, see the primal values under differentiation,
and run once per element under ``vmap`` (in order).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from .. import _quabla
from .array import Array
from .dtypes import SUPPORTED, canonicalize
from .numpy.creation import asarray
from .tree_util import tree_flatten, tree_unflatten


def _declared(result_shape_dtypes) -> Tuple[List[Tuple[Tuple[int, ...], np.dtype]], Any]:
    leaves, tree = tree_flatten(result_shape_dtypes)
    types = []
    for i, leaf in enumerate(leaves):
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"pure_callback: result_shape_dtypes leaf {i} is a "
                            f"{type(leaf).__name__}; give ShapeDtypeStructs (or arrays) with "
                            "a shape and a dtype")
        types.append((tuple(int(d) for d in leaf.shape), canonicalize(leaf.dtype)))
    return types, tree


def _checked(name: str, out, tree, types) -> List[np.ndarray]:
    """The callback's results as numpy arrays of the declared shapes and dtypes (a dtype of
    the same kind is cast, as JAX's do without x64)."""
    leaves, got_tree = tree_flatten(out)
    if got_tree != tree:
        raise TypeError(f"{name}: the callback returned {got_tree}, the call declared {tree}")
    arrays = []
    for i, (leaf, (shape, dtype)) in enumerate(zip(leaves, types)):
        a = np.asarray(leaf)
        if a.shape != shape:
            raise ValueError(f"{name}: result {i} has shape {a.shape}, the call declared "
                             f"{shape}")
        if a.dtype != dtype:
            if not np.can_cast(a.dtype, dtype, "same_kind"):
                raise TypeError(f"{name}: result {i} has dtype {a.dtype}, the call declared "
                                f"{dtype}")
            a = a.astype(dtype)
        arrays.append(np.ascontiguousarray(a))
    return arrays


def _host_value(a: np.ndarray):
    """What a callback sees: a numpy array, or a numpy scalar for a 0-d value (so
    ``format(x, '.3f')`` works)."""
    return a[()] if a.ndim == 0 else a


def _call(name: str, callback: Callable, args: tuple, kwargs: dict, result_shape_dtypes,
          effectful: bool, vmap_method: Optional[str]):
    # Keyword arguments are values too (staged with the others), as in JAX.
    leaves, in_tree = tree_flatten((args, kwargs))
    arrays = [leaf if isinstance(leaf, Array) else asarray(leaf) for leaf in leaves]
    types, out_tree = _declared(result_shape_dtypes)

    def run(values, declared):
        a, k = tree_unflatten(in_tree, [_host_value(v) for v in values])
        return _checked(name, callback(*a, **k), out_tree, declared)

    # Without arrays only the core knows whether a function is being traced (an effect
    # then joins its program), so such a call goes there.
    if not any(a._raw.is_traced for a in arrays) and (arrays or not effectful):
        host = [np.asarray(a) for a in arrays]
        return tree_unflatten(out_tree, [asarray(r) for r in run(host, types)])

    def flat(items, declared):
        values = [np.frombuffer(b, dtype=d).reshape(s) for b, d, s in items]
        # Under vmap's expand_dims and broadcast_all the results carry the batch axis.
        results = [(tuple(s), np.dtype(d)) for s, d in declared]
        return [r.tobytes() for r in run(values, results)]

    raws = _quabla.host_callback(flat, [a._raw for a in arrays],
                                 [(list(s), SUPPORTED[d]) for s, d in types], effectful,
                                 "none" if vmap_method is None else vmap_method, name)
    return tree_unflatten(out_tree, [Array(r) for r in raws])


def pure_callback(callback: Callable, result_shape_dtypes, *args, sharding=None,
                  vmap_method: Optional[str] = None, **kwargs):
    """``callback(*args, **kwargs)`` computed by Python on the host, as
    ``jax.pure_callback``: its results must match ``result_shape_dtypes`` (a pytree of
    ``ShapeDtypeStruct``s). The callback gets numpy values and must be free of side
    effects: a call whose results are unused may be dropped. Under ``vmap`` it needs
    ``vmap_method``: ``"sequential"`` (one call per element), ``"expand_dims"`` (one call,
    unbatched arguments with a size-1 leading axis) or ``"broadcast_all"`` (one call, every
    argument with the batch axis). ``sharding`` is accepted and ignored.

    >>> import quabla, numpy as np
    >>> f = lambda x: quabla.pure_callback(np.sin, quabla.ShapeDtypeStruct(x.shape, x.dtype), x)
    >>> quabla.jit(f)(quabla.numpy.zeros(2))
    Array([0., 0.], dtype=float32)
    """
    del sharding
    return _call("pure_callback", callback, args, kwargs, result_shape_dtypes, False,
                 vmap_method)


def io_callback(callback: Callable, result_shape_dtypes, *args, sharding=None,
                ordered: bool = False, **kwargs):
    """``callback(*args, **kwargs)`` on the host for its effect and its results, as
    ``jax.experimental.io_callback``: it runs each time the program does, even if its
    results are unused, in program order (so ``ordered`` is always so), and its results
    must match ``result_shape_dtypes``. Under ``vmap`` it runs once per element, in order.
    Its results carry no derivative (JAX refuses to differentiate it; Quabla gives zero
    tangents, as for the debug callbacks). ``sharding`` is accepted and ignored.

    >>> import quabla, numpy as np
    >>> seen = []
    >>> def log(x):
    ...     seen.append(float(x))
    ...     return np.float32(len(seen))
    >>> f = quabla.jit(lambda x: io_callback(log, quabla.ShapeDtypeStruct((), np.float32), x))
    >>> [float(f(np.float32(v))) for v in (0.5, 1.5)], seen
    ([1.0, 2.0], [0.5, 1.5])
    """
    del sharding, ordered
    return _call("io_callback", callback, args, kwargs, result_shape_dtypes, True,
                 "sequential")


def debug_callback(callback: Callable, *args, ordered: bool = False, partitioned: bool = False,
                   **kwargs) -> None:
    """Calls ``callback(*args, **kwargs)`` on the host for its effect, as
    ``jax.debug.callback``: each time the program runs, in program order (so ``ordered`` is
    always met), on primal values under differentiation, once per element under ``vmap``.
    ``partitioned`` is accepted and ignored."""
    del ordered, partitioned

    def effect(*a, **k):
        callback(*a, **k)
        return ()

    _call("debug.callback", effect, args, kwargs, (), True, None)


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """Prints ``fmt.format(*args, **kwargs)`` with the arrays' values, as
    ``jax.debug.print``: when the program runs, not when it is traced.

    >>> import quabla
    >>> quabla.jit(lambda x: quabla.debug.print("x = {}", x) or x)(1.0)
    x = 1.0
    Array(1., dtype=float32)
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    debug_callback(lambda *a, **k: print(fmt.format(*a, **k)), *args, ordered=ordered,
                   **kwargs)


__all__ = ["debug_callback", "debug_print", "pure_callback"]


def debug_log(fmt: str, *args, ordered: bool = False, partitioned: bool = False, **kwargs) -> None:
    """``fmt.format(*args, **kwargs)`` logged at INFO level on the ``quabla.debug`` logger
    each time the program runs, as ``jax.debug.log`` (``debug.print`` through ``logging``:
    the same ordering and values, the logging configuration deciding where it goes).

    >>> import logging, quabla
    >>> logging.basicConfig(level=logging.INFO, format="%(message)s", force=True)
    >>> quabla.jit(lambda x: debug_log("x = {}", x) or x)(2.0)  # doctest: +SKIP
    """
    import logging
    logger = logging.getLogger("quabla.debug")
    debug_callback(lambda *a, **k: logger.info(fmt.format(*a, **k)), *args, ordered=ordered,
                   partitioned=partitioned, **kwargs)
