"""``closure_convert``: a function's captured traced values made explicit arguments."""

from typing import Any, Callable, List, Tuple

from .. import _quabla
from .array import Array
from .flat import OutStore, flat_function, flatten_to_raw, to_raw, unflatten_raw


def closure_convert(fun: Callable, *example_args) -> Tuple[Callable, List[Array]]:
    """``fun`` traced at arguments like ``example_args``, with the traced values it closes
    over (a ``grad``'s or ``jit``'s) hoisted out, as ``jax.closure_convert``: returns
    ``(converted, consts)`` where ``converted(*args, *consts)`` equals ``fun(*args)``.
    Concrete arrays it closes over stay constants (JAX hoists only tracers). A
    ``custom_vjp`` whose function closes over traced values takes the consts as ordinary
    arguments, so its rules see them and gradients reach them.

    >>> import quabla
    >>> def loss(theta):
    ...     f = lambda x: x * theta
    ...     g, consts = closure_convert(f, 1.0)
    ...     return g(3.0, *consts)
    >>> float(quabla.grad(loss)(2.0))
    3.0
    """
    raws, in_tree = flatten_to_raw(example_args)
    store = OutStore()
    program, const_raws = _quabla.closure_convert(flat_function(fun, in_tree, store), raws)
    out_tree = store.tree
    n = len(example_args)
    count = len(const_raws)

    def converted(*args_and_consts: Any) -> Any:
        if len(args_and_consts) != n + count:
            raise TypeError(f"closure_convert: the converted function takes {n} argument(s) "
                            f"and {count} const(s), got {len(args_and_consts)} values")
        a_raws, tree = flatten_to_raw(args_and_consts[:n])
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function's arguments must be "
                            f"shaped like the example arguments ({in_tree}), got {tree}")
        c_raws = [to_raw(c) for c in args_and_consts[n:]]
        return unflatten_raw(out_tree, program(a_raws + c_raws))

    return converted, [Array(r) for r in const_raws]
