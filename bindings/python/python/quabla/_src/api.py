"""Transformations over pytrees: grad, value_and_grad, jvp, vjp, jacfwd, jacrev, jacobian,
hessian, vmap, jit, custom_jvp, custom_vjp, checkpoint, stop_gradient.

Each flattens its arguments, hands the core a flat function, and rebuilds the output tree,
as ``jax._src.api`` does; nesting is calling one inside another.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _quabla
from .array import Array
from .avals import Shaped
from .config import config
from .custom_derivatives import _zeros_raw, custom_jvp, custom_vjp
from .host_utils import jit_disabled, live_jits
from .flat import OutStore, flat_function, flatten_to_raw, to_raw, unflatten_raw
from .lax_collectives import binding
from .tree_util import broadcast_prefix, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "jacobian", "hessian", "vmap",
    "jit", "custom_jvp", "custom_vjp", "checkpoint", "remat", "stop_gradient", "linearize",
]


def _argnums(argnums, nargs: int) -> Tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, numbers.Integral) else tuple(argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"argnums {a} is out of range for {nargs} positional arguments")
    return tuple(a % nargs for a in nums)


def _leaf_ranges(args: tuple):
    """For each positional argument, the range of its leaves in the flattened args tuple."""
    ranges, start = [], 0
    for a in args:
        n = len(tree_flatten(a)[0])
        ranges.append(range(start, start + n))
        start += n
    return ranges


def _check_float(args, nums, what: str):
    for i in nums:
        for leaf in tree_flatten(args[i])[0]:
            dt = leaf.dtype if isinstance(leaf, Array) else np.asarray(leaf).dtype
            if isinstance(leaf, (int, bool)) and not isinstance(leaf, float):
                dt = np.dtype(np.int32)
            if np.dtype(dt).kind != "f":
                raise TypeError(
                    f"{what} requires real-valued (float) inputs, but argument {i} has a "
                    f"{np.dtype(dt)} leaf; differentiate w.r.t. float arrays, or mark integer "
                    "inputs with argnums")


def _differentiated(args: tuple, argnums, what: str):
    """The argument numbers, flat raw arguments, their tree, each argument's leaf range and
    the flat indices of the differentiated leaves."""
    nums = _argnums(argnums, len(args))
    _check_float(args, nums, what)
    raws, in_tree = flatten_to_raw(args)
    ranges = _leaf_ranges(args)
    return nums, raws, in_tree, ranges, [k for i in nums for k in ranges[i]]


def _array_like(tree) -> bool:
    """Every leaf is an array or a number: a value a transformation can trace."""
    return all(isinstance(x, (Array, np.ndarray, np.generic, numbers.Number))
               for x in tree_flatten(tree)[0])


def _holds_quabla_array(tree) -> bool:
    """A Quabla array among the leaves (perhaps an outer transformation's tracer)."""
    return any(isinstance(x, Array) for x in tree_flatten(tree)[0])


def _static_args_closed_over(fun, args: tuple, argnums):
    """``(fun, args, argnums)`` with the arguments outside ``argnums`` baked into ``fun``
    unless they hold Quabla arrays: functions, strings, objects, and Python and numpy
    numbers and arrays reach ``fun`` untouched, as JAX passes them (a Python int stays an
    int, a Python float stays weakly typed, a numpy array stays numpy's). ``argnums`` keeps
    its form (an int stays an int)."""
    n = len(args)
    nums = (argnums,) if isinstance(argnums, numbers.Integral) else tuple(argnums)
    differentiated = {a % n for a in nums if -n <= a < n}
    static = {i: a for i, a in enumerate(args)
              if i not in differentiated
              and not (_array_like(a) and _holds_quabla_array(a))}
    if not static:
        return fun, args, argnums
    keep = [i for i in range(n) if i not in static]

    def with_static(*dyn):
        it = iter(dyn)
        return fun(*[static[i] if i in static else next(it) for i in range(n)])

    # Out-of-range argnums stay out of range, for the transformation's own error.
    renumber = {old: new for new, old in enumerate(keep)}
    moved = tuple(renumber.get(a % n, n) if -n <= a < n else a for a in nums)
    new_nums = moved[0] if isinstance(argnums, numbers.Integral) else moved
    return with_static, tuple(args[i] for i in keep), new_nums


def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0,
                   has_aux: bool = False) -> Callable:
    """``fun``'s value and its gradient w.r.t. ``argnums`` (a tree like those arguments).

    >>> import quabla, quabla.numpy as qnp
    >>> v, g = quabla.value_and_grad(lambda x: qnp.sum(x ** 2))(qnp.arange(3.0))
    >>> g.tolist()
    [0.0, 2.0, 4.0]
    """

    @functools.wraps(fun)
    def vg(*args, **kwargs):
        if kwargs:
            return value_and_grad(functools.partial(fun, **kwargs), argnums, has_aux)(*args)
        closed, dyn, dyn_nums = _static_args_closed_over(fun, args, argnums)
        if closed is not fun:
            return value_and_grad(closed, dyn_nums, has_aux)(*dyn)
        nums, raws, in_tree, ranges, flat_nums = _differentiated(args, argnums, "grad")

        def call(f, a):
            out = f(*a)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise TypeError("with has_aux=True the function must return (value, aux)")
                return (out[0], out[1])
            return (out,)

        store = OutStore()
        flat = flat_function(fun, in_tree, store, call)

        def checked(r):
            out = flat(r)
            value_tree = store.tree.children[0]
            if value_tree.children or value_tree.num_leaves != 1 or store.shapes[0] != ():
                raise TypeError(
                    "grad requires a scalar output (shape ()), got "
                    f"{store.shapes[0] if store.shapes else 'a tree'}; use vjp or jacrev "
                    "for other outputs" + ("" if has_aux else ", or has_aux=True to return "
                                           "(value, aux)"))
            return out

        res = _quabla.value_and_grad(checked, raws, flat_nums, has_aux)
        n_out = store.tree.num_leaves
        outs = unflatten_raw(store.tree, res[:n_out])
        grads = [Array(r) for r in res[n_out:]]
        per_arg, k = [], 0
        for i in nums:
            n = len(ranges[i])
            per_arg.append(tree_unflatten(tree_flatten(args[i])[1], grads[k:k + n]))
            k += n
        g = per_arg[0] if isinstance(argnums, numbers.Integral) else tuple(per_arg)
        value = outs[0]
        if has_aux:
            return (value, outs[1]), g
        return value, g

    return vg


def grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar ``fun`` w.r.t. ``argnums`` (a tree like those arguments).

    >>> import quabla, quabla.numpy as qnp
    >>> float(quabla.grad(qnp.sin)(0.0))
    1.0
    """
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def g(*args, **kwargs):
        (v, g_) = vg(*args, **kwargs)
        if has_aux:
            return g_, v[1]
        return g_

    return g


def jvp(fun: Callable, primals: Sequence, tangents: Sequence):
    """``(fun(*primals), J @ tangents)`` in one forward pass.

    >>> import quabla, quabla.numpy as qnp
    >>> y, t = quabla.jvp(qnp.sin, (0.0,), (1.0,))
    >>> float(t)
    1.0
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes primals and tangents as tuples (one entry per argument)")
    primals, tangents = tuple(primals), tuple(tangents)
    raws, in_tree = flatten_to_raw(primals)
    traws, t_tree = flatten_to_raw(tangents)
    if in_tree != t_tree:
        raise TypeError(f"jvp: primal structure {in_tree} differs from tangent structure {t_tree}")
    traws = [t.astype(p.dtype) if t.dtype != p.dtype and p.dtype in ("float32", "float64")
             else t for p, t in zip(raws, traws)]
    store = OutStore()
    outs, touts = _quabla.jvp(flat_function(fun, in_tree, store), raws, traws)
    return unflatten_raw(store.tree, outs), unflatten_raw(store.tree, touts)


def linearize(fun: Callable, *primals):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``."""
    out = fun(*primals)
    return out, lambda *tangents: jvp(fun, primals, tangents)[1]


def vjp(fun: Callable, *primals, has_aux: bool = False):
    """``(fun(*primals), vjp_fun)``: ``vjp_fun(cotangent)`` gives one cotangent per primal.

    >>> import quabla, quabla.numpy as qnp
    >>> y, pb = quabla.vjp(qnp.sin, 0.0)
    >>> float(pb(qnp.asarray(1.0))[0])
    1.0
    """
    raws, in_tree = flatten_to_raw(primals)
    store = OutStore()

    outs, pullback = _quabla.vjp(flat_function(fun, in_tree, store), raws)
    tree = store.tree
    if has_aux:
        if tree.kind is not tuple or len(tree.children) != 2:
            raise TypeError("with has_aux=True the function must return (value, aux)")
        vtree = tree.children[0]
        n = vtree.num_leaves
        value = unflatten_raw(vtree, outs[:n])
        aux = unflatten_raw(tree.children[1], outs[n:])
    else:
        vtree, n, value = tree, len(outs), unflatten_raw(tree, outs)
    out_raws = outs

    def vjp_fun(cotangent):
        cts, ct_tree = flatten_to_raw(cotangent)
        if ct_tree != vtree:
            raise TypeError(f"vjp: cotangent structure {ct_tree} differs from output {vtree}")
        cts = [c.astype(o.dtype) if c.dtype != o.dtype else c for c, o in zip(cts, out_raws)]
        if has_aux:
            cts = cts + [_zeros_raw(o) for o in out_raws[n:]]
        grads = pullback(cts)
        return unflatten_raw(in_tree, grads)

    return (value, vjp_fun, aux) if has_aux else (value, vjp_fun)


def _nest(outer_tree, inner_tree, flat: list):
    """Output-major flat blocks as ``outer_tree`` of ``inner_tree``s."""
    n = inner_tree.num_leaves
    blocks = [tree_unflatten(inner_tree, flat[i * n:(i + 1) * n])
              for i in range(outer_tree.num_leaves)]
    return tree_unflatten(outer_tree, blocks)


def _jacobian_transform(fun, argnums, mode: str):
    @functools.wraps(fun)
    def jac(*args):
        closed, dyn, dyn_nums = _static_args_closed_over(fun, args, argnums)
        if closed is not fun:
            return _jacobian_transform(closed, dyn_nums, mode)(*dyn)
        nums, raws, in_tree, _, flat_nums = _differentiated(args, argnums, "jacobian")
        store = OutStore()
        res = _quabla.jacobian(flat_function(fun, in_tree, store), raws, flat_nums, mode)
        sel = tuple(args[i] for i in nums) if not isinstance(argnums, numbers.Integral) \
            else args[nums[0]]
        arg_tree = tree_flatten(sel)[1]
        arrays = [Array(r) for r in res]
        if mode == "hessian":
            return _nest(arg_tree, arg_tree, arrays)
        return _nest(store.tree, arg_tree, arrays)

    return jac


def jacfwd(fun: Callable, argnums: Union[int, Sequence[int]] = 0) -> Callable:
    """The Jacobian by forward mode (columns pushed through in vmapped chunks): for each output
    leaf, a tree like the ``argnums`` arguments of arrays of shape ``out.shape + in.shape``."""
    return _jacobian_transform(fun, argnums, "fwd")


def jacrev(fun: Callable, argnums: Union[int, Sequence[int]] = 0) -> Callable:
    """The Jacobian by reverse mode (rows pulled back in vmapped chunks); see :func:`jacfwd`."""
    return _jacobian_transform(fun, argnums, "rev")


jacobian = jacrev


def hessian(fun: Callable, argnums: Union[int, Sequence[int]] = 0) -> Callable:
    """The Hessian of a scalar ``fun`` (forward over reverse)."""
    return _jacobian_transform(fun, argnums, "hessian")


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Optional[str] = None,
         axis_size: Optional[int] = None, spmd_axis_name=None):
    """``fun`` vectorised over ``in_axes`` of its arguments (a prefix tree of the arguments;
    None: not batched), with the batch axis of the outputs at ``out_axes``. ``axis_name``
    names the batch axis for ``lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
    ``axis_index`` and ``axis_size`` inside ``fun``. ``axis_size`` (JAX's size for a vmap
    with no batched argument) must match the batch when given; ``spmd_axis_name`` is refused.

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.vmap(qnp.dot)(qnp.ones((4, 3)), qnp.ones((4, 3))).shape
    (4,)
    """

    if spmd_axis_name is not None:
        raise NotImplementedError("vmap: spmd_axis_name is not supported (no sharding here)")
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f"vmap: axis_name must be a string, got {axis_name!r}")

    @functools.wraps(fun)
    def batched(*args):
        spec = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        if isinstance(spec, tuple) and len(spec) != len(args):
            raise ValueError(
                f"vmap: in_axes has {len(spec)} entries but {len(args)} arguments were given")
        raws, in_tree = flatten_to_raw(args)
        per_leaf = broadcast_prefix(spec if isinstance(spec, tuple) else (spec,) * len(args),
                                    args, "vmap in_axes")
        axes = []
        for r, ax in zip(raws, per_leaf):
            nd = len(r.shape)
            if ax is not None and not -nd <= ax < nd:
                raise ValueError(f"vmap: in_axes {ax} is out of range for an argument of "
                                 f"rank {nd}")
            axes.append(None if ax is None else ax % nd)
        if all(a is None for a in axes):
            raise ValueError("vmap needs at least one batched argument (in_axes all None)")
        size = next(r.shape[a] for r, a in zip(raws, axes) if a is not None)
        if axis_size is not None and axis_size != size:
            raise ValueError(f"vmap: axis_size {axis_size} differs from the batch size {size}")
        store = OutStore()
        flat = flat_function(fun, in_tree, store)

        def out_axes_for(n):
            dummy = tree_unflatten(store.tree, list(range(n)))
            spec_out = broadcast_prefix(out_axes, dummy, "vmap out_axes")
            result = []
            for ax, shape in zip(spec_out, store.shapes):
                if ax is None:
                    result.append(None)
                else:
                    nd = len(shape) + 1
                    if not -nd <= ax < nd:
                        raise ValueError(f"vmap: out_axes {ax} is out of range for an output "
                                         f"of rank {nd}")
                    result.append(ax % nd)
            return result

        with binding(axis_name, size):
            outs = _quabla.vmap(flat, raws, axes, out_axes_for, axis_name)
        return unflatten_raw(store.tree, outs)

    return batched


class _Lowered:
    """``jit(f).lower(*args)``: the traced program, readable and compilable."""

    def __init__(self, text: str, compile_fn: Callable[[], Callable]):
        self._text = text
        self._compile = compile_fn

    def as_text(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text

    def compile(self) -> Callable:
        return self._compile()


def _x64() -> bool:
    # Part of every trace's key, as in JAX: with x64 on, Python floats and float results of
    # integers are float64, so a trace made with it off does not serve a call with it on.
    return bool(config._values["jax_enable_x64"])


class _Jitted:
    def __init__(self, fun, static_argnums, donate_argnums, device, static_argnames=(),
                 donate_argnames=()):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static = tuple(static_argnums)
        self._donate = tuple(donate_argnums)
        self._static_names = frozenset(static_argnames)
        self._donate_names = frozenset(donate_argnames)
        self._platform = None if device is None else getattr(device, "platform", device)
        self._cache: dict = {}
        self._fast: dict = {}
        live_jits.add(self)

    def clear_cache(self) -> None:
        """Forgets this function's traces and compiled programs: the next call traces
        again."""
        self._cache.clear()
        self._fast.clear()

    def _entry(self, args, kwargs):
        n = len(args)
        static = tuple(a % n for a in self._static if -n <= a < n)
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        kw_static = {k: v for k, v in kwargs.items() if k in self._static_names}
        kwargs = {k: v for k, v in kwargs.items() if k not in self._static_names}
        try:
            key_static = tuple((i, args[i]) for i in static)
            key_kw = tuple(sorted(kw_static.items()))
            hash((key_static, key_kw))
        except TypeError:
            # ValueError, as jax.jit raises for the same call.
            raise ValueError("jit: non-hashable static arguments are not supported; pass a "
                             "tuple instead of a list, or make the argument traced") from None
        raws, in_tree = flatten_to_raw((dyn, kwargs), self._platform)
        key = (in_tree, key_static, key_kw, n, _x64())
        entry = self._cache.get(key)
        if entry is None:
            store = OutStore()

            def call(f, a):
                dyn_args, kw = a
                it = iter(dyn_args)
                full = [args_static[i] if i in static else next(it) for i in range(n)]
                return f(*full, **kw, **kw_static)

            args_static = dict(key_static)
            flat = flat_function(self._fun, in_tree, store, call)
            entry = (_quabla.Jit(flat, self._platform), store)
            self._cache[key] = entry
            if not (kwargs or kw_static or static or self._donate or self._donate_names):
                self._fast[(tree_flatten(args)[1], key[-1])] = entry
        return entry, raws, self._donated(n, static, dyn, kwargs, len(raws))

    def _donated(self, n, static, dyn, kwargs, count):
        """Per flattened leaf of `(dyn, kwargs)`, whether its buffer is donated."""
        if not (self._donate or self._donate_names):
            return []
        # Leaves come in the order of `(dyn, kwargs)`: positional ones, then keyword ones
        # by sorted name (a dict's flattening order).
        names = sorted(kwargs)
        ranges = _leaf_ranges(dyn + tuple(kwargs[k] for k in names))
        dyn_index = [i for i in range(n) if i not in static]
        marked = set()
        for d in self._donate:
            if -n <= d < n and d % n in dyn_index:
                marked.update(ranges[dyn_index.index(d % n)])
        for j, k in enumerate(names):
            if k in self._donate_names:
                marked.update(ranges[len(dyn) + j])
        return [k in marked for k in range(count)]

    def __call__(self, *args, **kwargs):
        if jit_disabled[0]:
            return self._fun(*args, **kwargs)
        if not (kwargs or self._static or self._donate or self._donate_names):
            # The common case, kept short: a jit call's own cost is mostly this function.
            raws, in_tree = flatten_to_raw(args, self._platform)
            entry = self._fast.get((in_tree, _x64()))
            if entry is not None:
                return unflatten_raw(entry[1].tree, entry[0](raws))
        (jit, store), raws, donate = self._entry(args, kwargs)
        outs = jit.call_donating(raws, donate) if any(donate) else jit(raws)
        return unflatten_raw(store.tree, outs)

    def lower(self, *args, **kwargs) -> _Lowered:
        (jit, store), raws, _ = self._entry(args, kwargs)
        text = jit.lower(raws)

        def compile_():
            jit.compile(raws)
            return lambda *a, **k: self(*a, **k)

        return _Lowered(text, compile_)


def _argnames(fun: Callable):
    """The names of `fun`'s parameters that can be passed by position, in order (empty when
    the signature cannot be read, as for some builtins)."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


def _nums_and_names(fun, nums, names, what: str):
    """`nums` and `names` completed from each other through `fun`'s signature, as
    `jax.jit` infers `static_argnames` from `static_argnums` and the reverse."""
    nums = (nums,) if isinstance(nums, numbers.Integral) else tuple(nums)
    names = (names,) if isinstance(names, str) else tuple(names)
    positional = _argnames(fun)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"jit: {what}_argnames must be strings, got {name!r}")
        if name in positional and positional.index(name) not in nums:
            nums += (positional.index(name),)
    for i in nums:
        if -len(positional) <= i < len(positional) and positional[i] not in names:
            names += (positional[i],)
    return nums, names


_JIT_IGNORED = ("inline", "keep_unused", "abstracted_axes", "compiler_options")


def _sharding_device(shardings, what: str, device):
    """The device a jit's ``in_shardings``/``out_shardings`` name (each a Sharding, a
    PartitionSpec or None; a tree of them), checked against ``device`` when it is given."""
    from .sharding import PartitionSpec, Sharding
    from .tree_util import tree_flatten
    leaves, _ = tree_flatten(shardings, is_leaf=lambda s: s is None or isinstance(
        s, (Sharding, PartitionSpec)))
    named = set()
    for s in leaves:
        if isinstance(s, Sharding):
            named.add(s.device)
        elif not (s is None or isinstance(s, PartitionSpec)):
            raise TypeError(f"jit: {what} must be Shardings, PartitionSpecs or None, got "
                            f"{type(s).__name__}")
    wanted = getattr(device, "platform", device)
    platforms = {d.platform for d in named} | ({wanted} if wanted is not None else set())
    if len(platforms) > 1:
        raise ValueError(f"jit: {what} name devices of {sorted(platforms)}; a program runs "
                         "on one device")
    return next(iter(platforms), None)


def jit(fun: Optional[Callable] = None, *, static_argnums: Union[int, Sequence[int]] = (),
        static_argnames: Union[str, Sequence[str]] = (),
        donate_argnums: Union[int, Sequence[int]] = (),
        donate_argnames: Union[str, Sequence[str]] = (), device=None, backend=None,
        **options):
    """``fun`` traced once per input signature and run compiled, as ``jax.jit``.

    ``device`` (a Device or a platform name) or its alias ``backend`` picks where it runs.
    ``static_argnums`` / ``static_argnames`` are hashed into the cache key instead of traced
    (each is completed from the other through ``fun``'s signature, as in JAX, so a static
    argument may be passed by position or by name); ``donate_argnums`` /
    ``donate_argnames`` hand those arguments' buffers to the computation. JAX's
    ``inline``, ``keep_unused``, ``abstracted_axes`` and ``compiler_options`` are accepted
    and change nothing here (Quabla inlines nested jits and keeps every argument);
    ``in_shardings`` / ``out_shardings`` (``quabla.sharding``: one device) pick the device
    they name; any other keyword is refused.

    >>> import quabla, quabla.numpy as qnp
    >>> f = quabla.jit(lambda x: qnp.tanh(x) * 2)
    >>> f(qnp.zeros(3)).tolist()
    [0.0, 0.0, 0.0]
    """
    if device is not None and backend is not None:
        raise ValueError("jit: pass device or backend, not both (backend is device's alias)")
    device = backend if device is None else device
    for key in ("in_shardings", "out_shardings"):
        shardings = options.pop(key, None)
        if shardings is not None:
            device = _sharding_device(shardings, key, device)
    unknown = sorted(k for k in options if k not in _JIT_IGNORED)
    if unknown:
        raise TypeError(f"jit() got an unexpected keyword argument {unknown[0]!r}; it takes "
                        "static_argnums, static_argnames, donate_argnums, donate_argnames, "
                        "device, backend, inline, keep_unused, abstracted_axes and "
                        "compiler_options, in_shardings and out_shardings")
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                             device=device, **options)
    s, sn = _nums_and_names(fun, static_argnums, static_argnames, "static")
    d, dn = _nums_and_names(fun, donate_argnums, donate_argnames, "donate")
    return _Jitted(fun, s, d, device, sn, dn)


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy=None,
               static_argnums=()) -> Callable:
    """``fun`` whose intermediates are recomputed in the backward pass instead of stored.
    ``policy`` (``checkpoint_policies.*``) is accepted: ``everything_saveable`` stores
    everything (``fun`` itself), any other recomputes everything; no policy changes a value
    or a gradient. Arguments at ``static_argnums`` are Python values (shapes, flags)."""
    from .checkpoint_policies import Policy
    if policy is not None and not isinstance(policy, Policy):
        raise TypeError(f"checkpoint: policy must be one of quabla.checkpoint_policies, got "
                        f"{policy!r}")
    if policy is not None and policy.keeps_everything:
        return fun
    static = {int(static_argnums)} if isinstance(static_argnums, int) else \
        {int(i) for i in (static_argnums or ())}

    @functools.wraps(fun)
    def remat_fun(*args):
        # Static arguments (shapes, flags) stay Python values the function closes over.
        fixed = {i % len(args): args[i % len(args)] for i in static}
        dyn = tuple(a for i, a in enumerate(args) if i not in fixed)

        def full(*d):
            it = iter(d)
            return fun(*[fixed[i] if i in fixed else next(it) for i in range(len(args))])

        raws, in_tree = flatten_to_raw(dyn)
        store = OutStore()
        outs = _quabla.checkpoint(flat_function(full, in_tree, store), raws)
        return unflatten_raw(store.tree, outs)

    return remat_fun


remat = checkpoint


def stop_gradient(x):
    """``x`` with a zero derivative (leaf by leaf)."""
    return tree_map(lambda a: Array(to_raw(a).unary("stop_gradient")), x)


class ClosedJaxpr:
    """What :func:`make_jaxpr` returns: the traced, optimized QIR program of a function
    (Quabla's counterpart of a jaxpr), printed by ``str``; ``.jaxpr`` is itself, as JAX's
    ``ClosedJaxpr.jaxpr`` is printable."""

    def __init__(self, text: str):
        self.text = text

    @property
    def jaxpr(self) -> "ClosedJaxpr":
        return self

    def pretty_print(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def make_jaxpr(fun: Callable, static_argnums: Union[int, Sequence[int]] = (),
               return_shape: bool = False) -> Callable[..., ClosedJaxpr]:
    """A function returning the program ``fun`` traces to on its arguments (as
    ``jax.make_jaxpr``; the text is QIR, not jaxpr syntax).

    >>> print(make_jaxpr(lambda x: qnp.sin(x) * 2)(1.0))
    """
    if return_shape:
        raise NotImplementedError("make_jaxpr: return_shape=True is not supported; call the "
                                  "function (or jit it) for its output shapes")
    jitted = jit(fun, static_argnums=static_argnums)

    def traced(*args, **kwargs) -> ClosedJaxpr:
        return ClosedJaxpr(jitted.lower(*args, **kwargs).as_text())

    return traced


class ShapeDtypeStruct(Shaped):
    """A shape and a dtype standing for an array, as ``jax.ShapeDtypeStruct``: what
    :func:`eval_shape` returns and accepts.

    >>> ShapeDtypeStruct((3, 2), qnp.float32)
    ShapeDtypeStruct(shape=(3, 2), dtype=float32)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    def __eq__(self, other) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def _spec_of(x):
    """``(shape, dtype name)`` of an eval_shape argument leaf."""
    from . import dtypes as _dt
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return tuple(x.shape), _dt.name(_dt.canonicalize(x.dtype))
    from .numpy.creation import asarray
    a = asarray(x)
    return tuple(a.shape), _dt.name(a.dtype)


def eval_shape(fun: Callable, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)``'s outputs, as a pytree of
    :class:`ShapeDtypeStruct`, found by tracing ``fun`` without computing anything (as
    ``jax.eval_shape``); arguments may be arrays, ``ShapeDtypeStruct``s or anything with a
    ``shape`` and ``dtype``.

    >>> eval_shape(lambda x: x @ x.T, ShapeDtypeStruct((1000, 3), qnp.float32))
    ShapeDtypeStruct(shape=(1000, 1000), dtype=float32)
    """
    leaves, in_tree = tree_flatten((args, kwargs))
    specs = [_spec_of(x) for x in leaves]
    store = OutStore()
    flat = flat_function(fun, in_tree, store, call=lambda f, a: f(*a[0], **a[1]))
    outs = _quabla.eval_shape(flat, [list(s) for s, _ in specs], [d for _, d in specs])
    return tree_unflatten(store.tree, [ShapeDtypeStruct(s, d) for s, d in outs])
