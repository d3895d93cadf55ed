"""``quabla.optim``: optax-style optimizers over pytrees, built from traced arrays (so an
update runs inside ``jit`` on any backend). The built-in rules live in the Rust core
(``quabla::optim``), whose Adam follows optax's order of operations exactly; a
``GradientTransformation(init, update)`` of your own, written in Python over pytrees as for
optax, chains with them (``chain``) and trains with ``Trainer``.

>>> import quabla, quabla.numpy as qnp
>>> from quabla import optim
>>> params = {"w": qnp.ones(3)}
>>> opt = optim.adam(1e-3)
>>> state = opt.init(params)
>>> grads = quabla.grad(lambda p: qnp.sum(p["w"] ** 2))(params)
>>> updates, state = opt.update(grads, state, params)
>>> params = optim.apply_updates(params, updates)
"""

from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional, Tuple, Union

from . import _quabla
from ._src.array import Array
from ._src.flat import to_raw
from ._src.tree_util import (
    register_pytree_node, tree_flatten, tree_map, tree_structure, tree_unflatten,
)
from ._src.optim_lbfgs import (
    BacktrackingLinesearchInfo, GradientTransformationExtraArgs,
    ScaleByBacktrackingLinesearchState, ScaleByLBFGSState, scale_by_backtracking_linesearch,
    scale_by_lbfgs, tree_get, tree_l2_norm, tree_vdot, value_and_grad_from_state,
)
from ._src.optim_zoom import (
    ScaleByZoomLinesearchState, ZoomLinesearchInfo, scale_by_zoom_linesearch,
)

__all__ = [
    "GradientTransformation", "OptState", "EmptyState", "ScaleByScheduleState",
    "ScaleByAdamState", "ScaleByRmsState", "TraceState", "identity",
    "stateless", "scale_by_schedule", "apply_updates", "chain", "sgd", "adam", "adamw",
    "rmsprop", "clip_by_global_norm", "scale", "scale_by_adam", "scale_by_learning_rate",
    "add_decayed_weights", "trace", "constant_schedule", "exponential_decay",
    "cosine_decay_schedule", "warmup_cosine_decay_schedule", "piecewise_constant_schedule",
    "Schedule", "lbfgs", "Trainer", "GradientTransformationExtraArgs", "scale_by_lbfgs",
    "ScaleByLBFGSState", "scale_by_backtracking_linesearch",
    "ScaleByBacktrackingLinesearchState", "BacktrackingLinesearchInfo",
    "value_and_grad_from_state", "tree_get", "tree_l2_norm", "tree_vdot",
    "scale_by_zoom_linesearch", "ScaleByZoomLinesearchState", "ZoomLinesearchInfo",
]

class Schedule:
    """A learning-rate schedule, called as optax's: ``schedule(step)`` is the rate at that
    step (a number or an int array), in the default float unless ``dtype`` is given.

    >>> exponential_decay(1.0, 10, 0.5)(20)  # 0.25
    """

    __slots__ = ("_core",)

    def __init__(self, core: "_quabla.Schedule"):
        self._core = core

    def __call__(self, step, dtype=None) -> Array:
        from ._src import dtypes as _dt
        from ._src.numpy.creation import asarray
        count = step if isinstance(step, Array) else asarray(step)
        d = _dt.default_float() if dtype is None else _dt.canonicalize(dtype)
        return Array(self._core(to_raw(count.astype("int32")), _dt.name(d)))


LearningRate = Union[float, Schedule]


def _core_arg(a):
    return a._core if isinstance(a, Schedule) else a


class OptState:
    """An optimizer's state: a flat list of arrays (a pytree, so it passes through ``jit``)."""

    __slots__ = ("leaves",)

    def __init__(self, leaves: List[Any]):
        self.leaves = list(leaves)

    def __repr__(self) -> str:
        return f"OptState({len(self.leaves)} arrays)"


register_pytree_node(OptState, lambda s: (s.leaves, None), lambda _, c: OptState(list(c)))


class GradientTransformation(NamedTuple):
    """optax's protocol: ``init(params) -> state`` and ``update(updates, state, params=None)
    -> (updates, state)``, over pytrees, the state a pytree. Write your own as in optax::

        def scale_by_sign():
            return optim.GradientTransformation(
                lambda params: optim.EmptyState(),
                lambda updates, state, params=None: (
                    quabla.tree.map(qnp.sign, updates), state))

    The built-in transformations are instances too (running the Rust core's rules; their
    state is an :class:`OptState`), and ``chain`` mixes both.
    """
    init: Callable[..., Any]
    update: Callable[..., Tuple[Any, Any]]


def _core_of(t) -> Optional["_quabla.GradientTransformation"]:
    """The Rust core behind a built-in transformation, or None for one written in Python."""
    return getattr(getattr(t, "init", None), "_quabla_core", None)


def _from_core(core: "_quabla.GradientTransformation",
               template: Callable[[Any], Any]) -> GradientTransformation:
    """A built-in transformation whose state has optax's shape (``template(params)``), or
    is an opaque :class:`OptState` where that shape does not fit the core's arrays."""

    def shaped(params: Any, leaves: List[Any]) -> Any:
        tree = tree_structure(template(params))
        if tree.num_leaves == len(leaves):
            return tree_unflatten(tree, leaves)
        return OptState(leaves)

    def init(params: Any) -> Any:
        leaves, _ = tree_flatten(params)
        return shaped(params, [Array(r) for r in core.init([to_raw(x) for x in leaves])])

    def update(grads: Any, state: Any, params: Optional[Any] = None) -> Tuple[Any, Any]:
        g_leaves, g_tree = tree_flatten(grads)
        if params is None:
            params = grads
        p_leaves, p_tree = tree_flatten(params)
        if p_tree != g_tree:
            raise ValueError(f"update: gradient structure {g_tree} differs from the "
                             f"parameters' {p_tree}")
        s_leaves, s_tree = tree_flatten(state)
        if not isinstance(state, OptState) and s_tree != tree_structure(template(params)):
            raise TypeError("update: `state` must be the state init returned (optax-style "
                            "named tuples, or an OptState)")
        u, s = core.update([to_raw(x) for x in g_leaves], [to_raw(x) for x in s_leaves],
                           [to_raw(x) for x in p_leaves])
        new = [Array(r) for r in s]
        out = OptState(new) if isinstance(state, OptState) else tree_unflatten(s_tree, new)
        return tree_unflatten(g_tree, [Array(r) for r in u]), out

    init._quabla_core = core  # type: ignore[attr-defined]
    init._quabla_template = template  # type: ignore[attr-defined]
    return GradientTransformation(init, update)


class EmptyState(NamedTuple):
    """The state of a transformation that keeps none (optax's ``EmptyState``)."""


class ScaleByScheduleState(NamedTuple):
    """The step count of :func:`scale_by_schedule` (and of a scheduled learning rate)."""
    count: Any


class ScaleByAdamState(NamedTuple):
    """Adam's step count and moment estimates, as optax's."""
    count: Any
    mu: Any
    nu: Any


class ScaleByRmsState(NamedTuple):
    """RMSProp's average of squared gradients, as optax's."""
    nu: Any


class TraceState(NamedTuple):
    """Momentum's trace, as optax's."""
    trace: Any


def _lr_state(learning_rate):
    """The state optax's ``scale_by_learning_rate`` keeps: a count for a schedule."""
    return ScaleByScheduleState(0) if isinstance(learning_rate, Schedule) else EmptyState()


def _arg(args, kwargs, index: int, name: str, default=None):
    return args[index] if len(args) > index else kwargs.get(name, default)


# Each built-in's state in optax's shape, as a template over the parameters (its leaves
# stand for the core's state arrays, which come in the same order).
_TEMPLATES: dict = {
    "sgd": lambda p, a, k: (TraceState(p) if _arg(a, k, 1, "momentum") is not None
                            else EmptyState(), _lr_state(_arg(a, k, 0, "learning_rate"))),
    "adam": lambda p, a, k: (ScaleByAdamState(0, p, p), _lr_state(_arg(a, k, 0,
                                                                      "learning_rate"))),
    "adamw": lambda p, a, k: (ScaleByAdamState(0, p, p), EmptyState(),
                              _lr_state(_arg(a, k, 0, "learning_rate"))),
    "rmsprop": lambda p, a, k: (ScaleByRmsState(p), _lr_state(_arg(a, k, 0, "learning_rate")),
                                EmptyState()),
    "clip_by_global_norm": lambda p, a, k: EmptyState(),
    "scale": lambda p, a, k: EmptyState(),
    "scale_by_adam": lambda p, a, k: ScaleByAdamState(0, p, p),
    "scale_by_learning_rate": lambda p, a, k: _lr_state(_arg(a, k, 0, "learning_rate")),
    "add_decayed_weights": lambda p, a, k: EmptyState(),
    "trace": lambda p, a, k: TraceState(p),
}


def identity() -> GradientTransformation:
    """Updates unchanged."""
    return GradientTransformation(lambda params: EmptyState(),
                                  lambda updates, state, params=None: (updates, state))


def stateless(f: Callable[[Any, Any], Any]) -> GradientTransformation:
    """``f(updates, params) -> updates`` as a transformation with no state."""
    return GradientTransformation(lambda params: EmptyState(),
                                  lambda updates, state, params=None: (f(updates, params),
                                                                       state))


def scale_by_schedule(step_size_fn: Callable[[Any], Any]) -> GradientTransformation:
    """Updates times ``step_size_fn(count)`` (a :class:`Schedule` or any function of the
    int32 step count), the count starting at 0, as optax."""
    from ._src.numpy.creation import asarray

    def init(params):
        return ScaleByScheduleState(asarray(0, "int32"))

    def update(updates, state, params=None):
        factor = step_size_fn(state.count)
        out = tree_map(lambda u: u * asarray(factor).astype(u.dtype), updates)
        return out, ScaleByScheduleState(state.count + 1)

    return GradientTransformation(init, update)


def _wrap(name: str, doc: str):
    core_fn = getattr(_quabla, name)

    shape = _TEMPLATES[name]

    def make(*args, **kwargs) -> GradientTransformation:
        core = core_fn(*[_core_arg(a) for a in args],
                       **{k: _core_arg(v) for k, v in kwargs.items()})
        return _from_core(core, lambda params: shape(params, args, kwargs))

    make.__name__ = name
    make.__doc__ = doc
    return make


sgd = _wrap("sgd", "SGD: ``sgd(learning_rate, momentum=None, nesterov=False)``, as optax.")
adam = _wrap("adam", "Adam: ``adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8)``, as optax.")
adamw = _wrap("adamw", "AdamW with decoupled weight decay: ``adamw(learning_rate, "
              "weight_decay=1e-4)``, as optax.")
rmsprop = _wrap("rmsprop", "RMSProp: ``rmsprop(learning_rate, decay=0.9, eps=1e-8)``.")
clip_by_global_norm = _wrap("clip_by_global_norm", "Scales all updates so their global "
                            "norm is at most ``max_norm``.")
scale = _wrap("scale", "Multiplies updates by ``factor``.")
scale_by_adam = _wrap("scale_by_adam", "Adam's preconditioning without the learning rate.")
scale_by_learning_rate = _wrap("scale_by_learning_rate", "Multiplies by ``-learning_rate``.")
add_decayed_weights = _wrap("add_decayed_weights", "Adds ``weight_decay * params``.")
trace = _wrap("trace", "Momentum: ``trace(decay, nesterov=False)``.")


def chain(*parts: GradientTransformation) -> GradientTransformation:
    """The transformations applied in order, their states side by side (a tuple, as optax's,
    when any part is written in Python; one core when all are built in)."""
    cores = [c for c in (_core_of(p) for p in parts) if c is not None]
    if parts and len(cores) == len(parts):
        templates = [p.init._quabla_template for p in parts]  # type: ignore[attr-defined]
        return _from_core(_quabla.chain(*cores),
                          lambda params: tuple(t(params) for t in templates))

    def init(params):
        return tuple(p.init(params) for p in parts)

    def update(updates, state, params=None, **extra_args):
        if not isinstance(state, tuple) or len(state) != len(parts):
            raise TypeError(f"chain.update: state must be the tuple of {len(parts)} states "
                            "that init returned")
        new_states = []
        for part, s in zip(parts, state):
            # As optax: the extra arguments (value, grad, value_fn, ...) go to the parts
            # that take them.
            if isinstance(part, GradientTransformationExtraArgs):
                updates, s = part.update(updates, s, params, **extra_args)
            else:
                updates, s = part.update(updates, s, params)
            new_states.append(s)
        return updates, tuple(new_states)

    if any(isinstance(p, GradientTransformationExtraArgs) for p in parts):
        return GradientTransformationExtraArgs(init, update)  # type: ignore[return-value]
    return GradientTransformation(init, update)


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates`` leaf by leaf (updates cast to each parameter's dtype)."""
    return tree_map(lambda p, u: p + u.astype(p.dtype), params, updates)


def _schedule(name: str, doc: str):
    core_fn = getattr(_quabla, name)

    def make(*args, **kwargs) -> Schedule:
        return Schedule(core_fn(*args, **kwargs))

    make.__name__ = name
    make.__doc__ = doc
    return make


constant_schedule = _schedule("constant_schedule", "``value`` at every step.")
exponential_decay = _schedule(
    "exponential_decay", "``init_value * decay_rate ** (step / transition_steps)`` (optax's "
    "signature: ``transition_begin``, ``staircase``, ``end_value``).")
cosine_decay_schedule = _schedule(
    "cosine_decay_schedule", "A cosine from ``init_value`` to ``alpha * init_value`` over "
    "``decay_steps``.")
warmup_cosine_decay_schedule = _schedule(
    "warmup_cosine_decay_schedule", "A linear warmup, then a cosine decay (optax's "
    "signature).")
_piecewise_core = _schedule("piecewise_constant_schedule", "")


def piecewise_constant_schedule(init_value: float, boundaries_and_scales=None) -> Schedule:
    """``init_value`` scaled by each factor once its step is reached; the boundaries as a
    dict ``{step: scale}`` (optax's form) or a list of ``(step, scale)`` pairs."""
    if isinstance(boundaries_and_scales, dict):
        boundaries_and_scales = sorted((int(k), float(v))
                                       for k, v in boundaries_and_scales.items())
    return _piecewise_core(init_value, list(boundaries_and_scales or []))


_CORE_LINESEARCH: Any = object()


def lbfgs(learning_rate=None, memory_size: int = 10, scale_init_precond: bool = True,
          linesearch=_CORE_LINESEARCH, *, max_linesearch_steps: int = 20, c1: float = 1e-4,
          c2: float = 0.9):
    """L-BFGS, with optax's signature. Without ``linesearch``: the Rust core's L-BFGS with
    its strong Wolfe zoom search (the conditions optax's default zoom search enforces; its
    own interpolation, so iterates differ from optax's in the last digits of a step size).
    With ``linesearch`` (a transformation such as :func:`scale_by_zoom_linesearch`, optax's
    default, or :func:`scale_by_backtracking_linesearch`, or None): optax's composition,
    ``chain(scale_by_lbfgs(memory_size, scale_init_precond), scale(-1) or
    scale_by_learning_rate(learning_rate), linesearch)``, step for step as optax."""
    if linesearch is _CORE_LINESEARCH:
        if learning_rate is not None or not scale_init_precond:
            raise ValueError("lbfgs: learning_rate and scale_init_precond apply to optax's "
                             "composition; pass linesearch= (e.g. "
                             "scale_by_backtracking_linesearch(...) or None) to use them")
        return _CoreLbfgs(memory_size, max_linesearch_steps, c1, c2)
    base = scale(-1.0) if learning_rate is None else scale_by_learning_rate(learning_rate)
    parts = [scale_by_lbfgs(memory_size, scale_init_precond), base]
    if linesearch is not None:
        parts.append(linesearch)
    return chain(*parts)


class _CoreLbfgs:
    """L-BFGS with a strong Wolfe line search (the rules in ``quabla::optim::Lbfgs``), with
    optax's calling convention::

        opt = optim.lbfgs()
        state = opt.init(params)
        value, grads = quabla.value_and_grad(loss)(params)
        updates, state = opt.update(grads, state, params, value=value, grad=grads,
                                    value_fn=loss)
        params = optim.apply_updates(params, updates)

    ``step(value_fn, params, state) -> (params, state, value)`` does the same without the
    updates. The line search evaluates ``value_fn`` (traced: it runs inside ``jit`` too); the
    gradients passed to ``update`` are recomputed inside the step.
    """

    def __init__(self, memory_size: int = 10, max_linesearch_steps: int = 20,
                 c1: float = 1e-4, c2: float = 0.9):
        self._core = _quabla.Lbfgs(memory_size, max_linesearch_steps, c1, c2)

    def init(self, params: Any) -> OptState:
        leaves, _ = tree_flatten(params)
        return OptState([Array(r) for r in self._core.init([to_raw(x) for x in leaves])])

    def step(self, value_fn, params: Any, state: OptState):
        leaves, tree = tree_flatten(params)

        def flat(raws):
            out = value_fn(tree_unflatten(tree, [Array(r) for r in raws]))
            return [to_raw(out)]

        p, s, value, _ = self._core.step(flat, [to_raw(x) for x in leaves],
                                         [to_raw(x) for x in state.leaves])
        return (tree_unflatten(tree, [Array(r) for r in p]), OptState([Array(r) for r in s]),
                Array(value))

    def update(self, grads: Any, state: OptState, params: Any = None, *, value=None,
               grad=None, value_fn=None):
        if params is None or value_fn is None:
            raise TypeError("lbfgs.update needs params and value_fn (as optax.lbfgs)")
        new, state, _ = self.step(value_fn, params, state)
        return tree_map(lambda a, b: a - b, new, params), state


class Trainer:
    """One compiled step (loss, gradient, update) with the parameters and optimizer state kept
    on the device between steps (donated to each step); the loss is read back only when asked
    or shown. ``run`` shows a progress line (step, loss, steps/s) unless ``progress=False``.
    The arrays of ``params`` are donated to the first step: keep using ``trainer.params()``.
    With ``data_parallel=True`` (under ``mpirun``, see :mod:`quabla.distributed`) each rank
    passes its shard of the batch and every rank takes the full batch's step.

    >>> import quabla.numpy as qnp
    >>> t = Trainer(lambda p, x: qnp.sum((p["w"] * x - 1.0) ** 2), {"w": qnp.zeros(3)},
    ...             adam(0.1))
    >>> t.run(100, qnp.ones(3), progress=False)
    >>> t.loss() < 1e-2
    True
    """

    def __init__(self, loss_fn, params: Any, optimizer: GradientTransformation, device=None,
                 data_parallel: bool = False):
        from ._src.api import jit, value_and_grad

        self._state = None
        self._steps = 0
        self._last = None
        self._data_parallel = data_parallel
        if data_parallel:
            from . import distributed

            # The replicas start from rank 0's parameters, whatever each rank was given.
            params = distributed.broadcast(params)
            self._grad = distributed.value_and_grad(loss_fn)

            def update(params, state, grads):
                updates, state = optimizer.update(grads, state, params)
                return apply_updates(params, updates), state

            self._update = jit(update, donate_argnums=(0, 1), device=device)
        else:
            def step(params, state, *batch):
                value, grads = value_and_grad(loss_fn)(params, *batch)
                updates, state = optimizer.update(grads, state, params)
                return apply_updates(params, updates), state, value

            self._step = jit(step, donate_argnums=(0, 1), device=device)
        self._params = params
        self._state = optimizer.init(params)

    def step(self, *batch) -> None:
        """One optimisation step on ``batch`` (the loss function's arguments after params;
        with ``data_parallel``, this rank's shard of them: the loss and gradients are averaged
        across ranks before the update, and ``loss()`` is the global mean)."""
        if self._data_parallel:
            self._last, grads = self._grad(self._params, *batch)
            self._params, self._state = self._update(self._params, self._state, grads)
        else:
            self._params, self._state, self._last = self._step(self._params, self._state,
                                                               *batch)
        self._steps += 1

    def run(self, steps: int, *batch, progress: bool = True, every: float = 0.25,
            file=None) -> None:
        """``steps`` steps on the same batch; a progress line refreshed every ``every`` s."""
        import sys
        import time

        out = file if file is not None else sys.stderr
        start = last_shown = time.perf_counter()
        for k in range(steps):
            self.step(*batch)
            now = time.perf_counter()
            if progress and (now - last_shown >= every or k + 1 == steps):
                last_shown = now
                rate = (k + 1) / max(now - start, 1e-9)
                out.write(f"\rstep {k + 1}/{steps} | loss {self.loss():.6e} | "
                          f"{rate:.1f} steps/s")
                out.flush()
        if progress and steps:
            out.write("\n")

    def loss(self) -> float:
        """The loss of the last step (one read back from the device)."""
        if self._last is None:
            raise ValueError("Trainer.loss: no step has run yet")
        return float(self._last)

    def params(self) -> Any:
        """The current parameters."""
        return self._params

    @property
    def steps(self) -> int:
        return self._steps
