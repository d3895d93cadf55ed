"""custom_jvp and custom_vjp: functions with hand-written derivative rules, JAX's decorator
protocol, and the symbolic-zero objects their rules see with ``symbolic_zeros=True``.

The core traces a rule once, when the decorated function is called, before any
differentiation has happened: it cannot yet know which inputs will be perturbed. So with
``symbolic_zeros=True`` Quabla tells a rule what it does know (an integer or boolean input
is never perturbed: its tangent is a ``SymbolicZero``, its ``CustomVJPPrimal`` has
``perturbed=False``) and treats every float input as perturbed. A rule written for JAX's
protocol stays correct: it only computes some zero terms JAX would have skipped.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple, Optional, Sequence

import numpy as np

from .. import _quabla
from .array import Array
from .flat import OutStore, flat_function, flatten_to_raw, to_raw, unflatten_raw
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_jvp", "custom_vjp", "SymbolicZero", "CustomVJPPrimal", "zero_from_primal"]


def _zeros_raw(r):
    return r.filled(list(r.shape), 0, r.dtype)


def _all_concrete(raws) -> bool:
    """No argument is traced: the call is outside every transformation, so nothing can
    differentiate it later and a custom rule's function runs alone (JAX runs rules only
    under differentiation)."""
    return not any(r.is_traced for r in raws)


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


class SymbolicZero:
    """A tangent or cotangent known to be zero, with the shape and dtype it stands for
    (``aval``, a :class:`~quabla.ShapeDtypeStruct`), as ``jax.custom_derivatives.SymbolicZero``.

    Rules defined with ``symbolic_zeros=True`` get one for an input that is never perturbed
    (an integer or boolean argument) and may return one for an output tangent or a
    cotangent: it counts as zeros. It is not an array: ``to_zero()`` makes one.

    >>> import quabla.numpy as qnp
    >>> z = SymbolicZero.from_primal_value(qnp.ones(3))
    >>> z.shape, z.to_zero().tolist()
    ((3,), [0.0, 0.0, 0.0])
    """

    __slots__ = ("aval",)

    def __init__(self, aval) -> None:
        self.aval = aval

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    def to_zero(self):
        """Zeros of this shape and dtype (float0 zeros, a numpy array, for the tangent of
        an integer value, as JAX)."""
        from .dtypes import float0
        if self.aval.dtype == float0:
            return np.zeros(self.aval.shape, float0)
        from .numpy.creation import zeros
        return zeros(self.aval.shape, self.aval.dtype)

    @staticmethod
    def from_primal_value(val) -> "SymbolicZero":
        """The symbolic zero tangent of ``val``: same shape; float0 for integers."""
        from .api import ShapeDtypeStruct
        from .dtypes import float0
        # The shape and dtype only: a traced value must not be read.
        shape = tuple(val.shape) if hasattr(val, "shape") else np.shape(val)
        dtype = np.dtype(val.dtype) if hasattr(val, "dtype") else np.result_type(val)
        return SymbolicZero(ShapeDtypeStruct(shape, dtype if _is_float(dtype) else float0))

    def __repr__(self) -> str:
        return "SymbolicZero"


def zero_from_primal(val, symbolic_zeros: bool = False):
    """Zero tangents for a pytree of primal values, as ``jax.custom_derivatives.
    zero_from_primal``: :class:`SymbolicZero` leaves with ``symbolic_zeros=True``, zero arrays
    (float0 zeros for integers) otherwise.

    >>> import quabla.numpy as qnp
    >>> zero_from_primal({"w": qnp.ones(2)})["w"].tolist()
    [0.0, 0.0]
    """
    def one(x):
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else z.to_zero()
    return tree_map(one, val)


class CustomVJPPrimal(NamedTuple):
    """A primal input as a ``custom_vjp``'s ``fwd`` sees it with ``symbolic_zeros=True``:
    the value and whether it may be perturbed (False for an integer or boolean input; True
    for every float input, see the module's note), as ``jax.custom_derivatives``."""

    value: Any
    perturbed: bool


def _materialize(t, like):
    """A rule's output tangent or cotangent with SymbolicZero leaves made zeros like
    ``like`` (a raw array of the primal)."""
    if isinstance(t, SymbolicZero):
        return _zeros_raw(like)
    return to_raw(t)


class custom_jvp:
    """A function with a hand-written JVP rule (JAX's decorator protocol)::

        @custom_jvp
        def f(x): ...

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), rule(x) * t
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Optional[Callable] = None
        self.symbolic_zeros = False
        self._in_rule = 0

    def defjvp(self, jvp_rule: Callable, symbolic_zeros: bool = False) -> Callable:
        """Sets the rule, ``rule(primals, tangents) -> (primal_out, tangent_out)``; with
        ``nondiff_argnums``, ``rule(*nondiff_args, primals, tangents)`` where ``primals``
        and ``tangents`` hold only the other arguments, as JAX. With
        ``symbolic_zeros=True`` an integer or boolean input's tangent is a
        :class:`SymbolicZero` (not float0 zeros), every float input's is an array, and the
        rule may return SymbolicZero output tangents."""
        self.jvp = jvp_rule
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp_rule

    def defjvps(self, *rules: Optional[Callable]) -> None:
        """One rule per argument, ``rule(tangent, primal_out, *primals) -> tangent_out``
        (None for an argument with no contribution); the output tangent is their sum, as
        ``jax.custom_jvp.defjvps``."""
        if self.nondiff_argnums:
            raise TypeError("custom_jvp.defjvps cannot be used with nondiff_argnums (as in "
                            "JAX); use defjvp")

        def jvp(primals, tangents):
            out = self.fun(*primals)
            total = None
            for rule, t in zip(rules, tangents):
                if rule is None:
                    continue
                term = rule(t, out, *primals)
                total = term if total is None else tree_map(lambda a, b: a + b, total, term)
            if total is None:
                # No rule contributes: zeros (o * 0 would be NaN where o is inf or NaN).
                from .numpy.creation import zeros_like
                total = tree_map(zeros_like, out)
            return out, total

        if len(rules) == 0:
            raise TypeError("custom_jvp.defjvps needs one rule (or None) per argument")
        self.jvp = jvp
        self.symbolic_zeros = False

    def __call__(self, *args):
        if self.jvp is None:
            raise TypeError(f"custom_jvp function {self.fun.__name__} has no rule: call defjvp")
        if self._in_rule:
            # The rule computing its own primal output (`return f(x), ...`): the core traces
            # rules when the function is called, so this must not recurse into the rule.
            return self.fun(*args)
        nd = set(a % len(args) for a in self.nondiff_argnums)
        # Nondiff arguments holding traced arrays travel as inputs of the op (a closure over
        # a traced array would escape its trace under jit); their tangents are dropped, so
        # perturbing them contributes nothing, as with JAX's nondiff_argnums. Concrete ones
        # stay Python values the rule can branch on.
        carried = [i for i in sorted(nd) if _holds_traced(args[i])]
        static = {i: args[i] for i in nd if i not in carried}
        dyn = tuple(a for i, a in enumerate(args) if i not in nd)
        raws, in_tree = flatten_to_raw((dyn, tuple(args[i] for i in carried)))
        if _all_concrete(raws):
            return self.fun(*args)
        n = len(args)

        def full(d, extra):
            it, by_position = iter(d), dict(zip(carried, extra))
            return [static[i] if i in static else by_position[i] if i in by_position
                    else next(it) for i in range(n)]

        store = OutStore()
        flat = flat_function(lambda d, extra: self.fun(*full(d, extra)), in_tree, store)

        def rule(p_raws, t_raws):
            p, extra = unflatten_raw(in_tree, p_raws)
            t, _ = _rule_tangents(in_tree, p_raws, t_raws, self.symbolic_zeros)
            self._in_rule += 1
            try:
                assert self.jvp is not None
                if nd:
                    # JAX's order: the nondiff arguments, then the other primals and their
                    # tangents as tuples.
                    nondiff = dict(zip(carried, extra))
                    statics = [static[i] if i in static else nondiff[i] for i in sorted(nd)]
                    out, tout = self.jvp(*statics, tuple(p), tuple(t))
                else:
                    out, tout = self.jvp(p, t)
            finally:
                self._in_rule -= 1
            o_leaves, o_tree = tree_flatten(out)
            t_leaves, t_tree = tree_flatten(tout)
            if o_tree != t_tree:
                raise TypeError(f"custom_jvp rule: primal output structure {o_tree} differs "
                                f"from tangent output structure {t_tree}")
            o_raws = [to_raw(x) for x in o_leaves]
            # Integer and boolean outputs have no tangent (JAX's float0): whatever the rule
            # returned for them is dropped.
            return o_raws, [_materialize(x, o) for x, o in zip(t_leaves, o_raws)
                            if o.dtype in ("float32", "float64")]

        outs = _quabla.custom_jvp(flat, rule, raws)
        return unflatten_raw(store.tree, outs)


def _holds_traced(x) -> bool:
    """Whether a pytree has a traced array leaf (a nondiff argument that must be an input)."""
    return any(isinstance(leaf, Array) and leaf._raw.is_traced for leaf in tree_flatten(x)[0])


def _rule_tangents(in_tree, p_raws, t_raws, symbolic_zeros: bool):
    """The rule's tangents as a pytree like its primals: the core passes one per float
    argument; an integer or boolean argument gets JAX's ``float0`` zeros (a numpy array),
    or a :class:`SymbolicZero` when the rule asked for symbolic zeros."""
    from .dtypes import float0
    floats = iter(t_raws)
    leaves: list = []
    for r in p_raws:
        if r.dtype in ("float32", "float64"):
            leaves.append(Array(next(floats)))
            continue
        zero = np.zeros(tuple(r.shape), float0)
        leaves.append(SymbolicZero.from_primal_value(zero) if symbolic_zeros else zero)
    return tree_unflatten(in_tree, leaves)


class custom_vjp:
    """A function with a hand-written VJP (JAX's decorator protocol)::

        @custom_vjp
        def f(x, y): ...
        def f_fwd(x, y): return f(x, y), residuals
        def f_bwd(residuals, g): return (gx, gy)   # None for a zero cotangent
        f.defvjp(f_fwd, f_bwd)

    Arguments and outputs may be pytrees. With ``nondiff_argnums`` those arguments (any
    Python value, a function say) are passed to ``bwd`` first, ``bwd(*nondiff, residuals,
    g)``, which returns cotangents for the other arguments only. A call on concrete arrays
    runs ``f`` alone; the rules may call ``f`` itself (they get its primal). Under ``jit``
    the rules are traced with ``f`` (once per compilation) though only ``f`` runs.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Optional[Callable] = None
        self.bwd: Optional[Callable] = None
        self.symbolic_zeros = False
        self._in_rule = 0

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """Sets the rules. With ``symbolic_zeros=True``, ``fwd`` gets each leaf of its
        arguments as a :class:`CustomVJPPrimal` ``(value, perturbed)`` and ``bwd`` may
        return :class:`SymbolicZero` (or None) cotangents; ``bwd``'s incoming cotangents
        are always arrays. ``optimize_remat`` is accepted and changes nothing (in JAX it
        only trades memory for recomputation)."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    def __call__(self, *args):
        if self.fwd is None or self.bwd is None:
            raise TypeError(f"custom_vjp function {self.fun.__name__} has no rule: call defvjp")
        if self._in_rule:
            # fwd computing its primal output by calling the function itself (JAX's
            # fixed-point pattern): the primal, not the rule again.
            return self.fun(*args)
        n = len(args)
        nd = sorted(set(a % n for a in self.nondiff_argnums))
        traced = [i for i in nd if _holds_traced(args[i])]
        if traced:
            from ..errors import UnexpectedTracerError
            raise UnexpectedTracerError(
                f"custom_vjp function {self.fun.__name__}: argument {traced[0]} is marked "
                "nondiff_argnums but holds a traced array. As in JAX, nondiff_argnums of a "
                "custom_vjp are for values that are not arrays (functions, shapes, flags); "
                "pass arrays as ordinary arguments and return None as their cotangent.")
        static = {i: args[i] for i in nd}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        raws, in_tree = flatten_to_raw(dyn)
        if _all_concrete(raws):
            return self.fun(*args)

        def full(d):
            it = iter(d)
            return [static[i] if i in static else next(it) for i in range(n)]

        store = OutStore()
        flat = flat_function(lambda *d: self.fun(*full(d)), in_tree, store)
        res_tree = [None]
        is_float = [r.dtype in ("float32", "float64") for r in raws]

        def fwd(a_raws):
            assert self.fwd is not None
            if self.symbolic_zeros:
                fwd_args = tree_unflatten(in_tree, [CustomVJPPrimal(Array(r), f)
                                                    for r, f in zip(a_raws, is_float)])
            else:
                fwd_args = unflatten_raw(in_tree, a_raws)
            self._in_rule += 1
            try:
                out, res = self.fwd(*full(fwd_args))
            finally:
                self._in_rule -= 1
            o_leaves, o_tree = tree_flatten(out)
            store.tree = o_tree
            r_leaves, res_tree[0] = tree_flatten(res)
            return [to_raw(x) for x in o_leaves], [to_raw(x) for x in r_leaves]

        def bwd(r_raws, ct_raws):
            res = unflatten_raw(res_tree[0], r_raws)
            ct = unflatten_raw(store.tree, ct_raws)
            assert self.bwd is not None
            self._in_rule += 1
            try:
                # nondiff arguments come first, as in JAX.
                grads = self.bwd(*[static[i] for i in nd], res, ct)
            finally:
                self._in_rule -= 1
            # Zeros for None cotangents are made in bwd's own trace, beside its inputs:
            # the primal arguments belong to the enclosing trace.
            beside = (list(ct_raws) + list(r_raws))[:1]
            return _flat_cotangents(grads, dyn, raws, is_float, beside)

        outs = _quabla.custom_vjp(flat, fwd, bwd, raws)
        return unflatten_raw(store.tree, outs)


def _flat_cotangents(grads, dyn: tuple, raws, is_float, beside: list) -> list:
    """custom_vjp bwd's cotangents (one per differentiable argument, None or SymbolicZero
    for zero) as one raw array per float leaf; zeros are made beside ``beside[0]`` (a raw
    array of bwd's trace) when there is one."""
    if not isinstance(grads, (tuple, list)) or len(grads) != len(dyn):
        raise TypeError(f"custom_vjp bwd must return a tuple of {len(dyn)} cotangents (one "
                        "per argument not in nondiff_argnums)")
    flat_g: list = []
    for a, g in zip(dyn, grads):
        leaves, tree = tree_flatten(a)
        if g is None or isinstance(g, SymbolicZero):
            flat_g.extend(None for _ in leaves)
            continue
        gl, gt = tree_flatten(g)
        if gt != tree:
            raise TypeError(f"custom_vjp bwd: cotangent structure {gt} differs from its "
                            f"argument's {tree}")
        flat_g.extend(gl)

    def zeros(r):
        if beside:
            return beside[0].filled(list(r.shape), 0, r.dtype)
        from .numpy.creation import zeros as fresh
        return to_raw(fresh(tuple(r.shape), r.dtype))

    return [zeros(r) if g is None or isinstance(g, SymbolicZero) else to_raw(g)
            for r, g, fl in zip(raws, flat_g, is_float) if fl]


def custom_gradient(fun: Callable) -> Callable:
    """A function whose VJP its own code gives, as ``jax.custom_gradient``: ``fun(*args)``
    returns ``(value, vjp)`` where ``vjp(cotangent)`` gives the tuple of argument
    cotangents (a bare value when there is one argument). Built on :class:`custom_vjp`; the
    backward pass calls ``fun`` again to get its ``vjp`` (Quabla's residuals are arrays, not
    closures), so the forward computation runs twice under differentiation.

    >>> import quabla
    >>> @custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: (g * x,)
    >>> float(quabla.grad(f)(3.0))
    3.0
    """

    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        return fun(*args)[0], args

    def bwd(args, cotangent):
        cts = fun(*args)[1](cotangent)
        return cts if isinstance(cts, tuple) else (cts,)

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped
