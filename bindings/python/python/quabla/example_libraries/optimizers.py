"""First-order optimizers as ``jax.example_libraries.optimizers``: each is a triple
``(init_fun, update_fun, get_params)``, ``update_fun(step, grads, state)``, applied leaf by
leaf over a parameter pytree; ``step_size`` is a number or a function of the step.

>>> opt_init, opt_update, get_params = adam(1e-3)
>>> state = opt_init({"w": qnp.zeros(3)})
>>> state = opt_update(0, {"w": qnp.ones(3)}, state)
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple, Tuple

from .. import numpy as jnp
from .._src.tree_util import (
    register_pytree_node, tree_flatten, tree_unflatten,
)

__all__ = ["OptimizerState", "optimizer", "make_schedule", "constant", "exponential_decay",
           "inverse_time_decay", "polynomial_decay", "piecewise_constant", "sgd", "momentum",
           "nesterov", "adagrad", "rmsprop", "adam", "adamax", "rmsprop_momentum", "sm3",
           "l2_norm", "clip_grads", "JoinPoint", "unpack_optimizer_state",
           "pack_optimizer_state", "Optimizer"]


class OptimizerState(NamedTuple):
    """The per-leaf states of an optimizer, with the parameter tree's structure."""
    packed_state: Any
    tree_def: Any
    subtree_defs: Any


def _flatten_state(s: OptimizerState):
    return (s.packed_state,), (s.tree_def, s.subtree_defs)


def _unflatten_state(aux: Any, children: Any) -> OptimizerState:
    (packed,) = children
    tree_def, subtree_defs = aux
    return OptimizerState(packed, tree_def, subtree_defs)


register_pytree_node(OptimizerState, _flatten_state, _unflatten_state)


def optimizer(opt_maker: Callable[..., Tuple[Callable, Callable, Callable]]):
    """Lifts a per-array ``(init, update, get_params)`` triple to parameter pytrees."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            initial = [init(x0) for x0 in x0_flat]
            flats, subtrees = zip(*[tree_flatten(s) for s in initial]) if initial else ((), ())
            return OptimizerState(list(flats), tree, list(subtrees))

        def tree_update(i, grad_tree, opt_state):
            packed, tree, subtrees = opt_state
            grads, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(f"optimizer update: the gradient tree {tree2} differs from "
                                f"the parameter tree {tree}")
            states = [tree_unflatten(s, f) for s, f in zip(subtrees, packed)]
            new = [update(i, g, s) for g, s in zip(grads, states)]
            flats, subtrees2 = zip(*[tree_flatten(s) for s in new]) if new else ((), ())
            return OptimizerState(list(flats), tree, list(subtrees2))

        def tree_get_params(opt_state):
            packed, tree, subtrees = opt_state
            states = [tree_unflatten(s, f) for s, f in zip(subtrees, packed)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return tree_init, tree_update, tree_get_params

    return tree_opt_maker


def constant(step_size) -> Callable:
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Callable:
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Callable:
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Callable:
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values) -> Callable:
    """``values[k]`` from ``boundaries[k - 1]`` on (one more value than boundaries)."""
    boundaries, values = list(boundaries), list(values)
    if len(values) != len(boundaries) + 1:
        raise ValueError("boundaries.shape[0] != values.shape[0] - 1")
    b, v = jnp.asarray(boundaries), jnp.asarray(values)
    return lambda i: v[jnp.sum(i > b)]


def make_schedule(scalar_or_schedule) -> Callable:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    return constant(scalar_or_schedule)


@optimizer
def sgd(step_size):
    """Stochastic gradient descent."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


def _velocity_method(step_size, mass: float, lookahead: bool):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        step = mass * velocity + g if lookahead else velocity
        return x - step_size(i) * step, velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda s: s[0])


@optimizer
def momentum(step_size, mass: float):
    """Heavy-ball momentum."""
    return _velocity_method(step_size, mass, lookahead=False)


@optimizer
def nesterov(step_size, mass: float):
    """Nesterov's accelerated momentum."""
    return _velocity_method(step_size, mass, lookahead=True)


def _with_two_slots(update):
    """The triple of an optimizer whose state is the parameters and two zero-started arrays
    of their shape."""
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, (lambda s: s[0])


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return _with_two_slots(update)


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda s: s[0])


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam, with the bias-corrected moments as the original paper."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return _with_two_slots(update)


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adamax (Adam with the infinity norm)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps), \
            m, u

    return _with_two_slots(update)




@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose scaled steps accumulate in a momentum buffer."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return _with_two_slots(update)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (memory-efficient adaptive optimization): one accumulator vector per axis of
    each parameter instead of one per entry, with momentum."""
    step_size = make_schedule(step_size)

    def along(ndim: int, v, axis: int):
        """``v`` (a vector) broadcast along ``axis`` of an ``ndim``-axis array (a 0-d
        gradient against its parameter's 1-d state keeps ``v`` whole, as JAX's)."""
        index: list = [None] * ndim
        index[axis:axis + 1] = [slice(None)]
        return v[tuple(index)]

    def init(x0):
        shape = tuple(x0.shape)
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        x, m, vs, shape = state
        accum = functools.reduce(jnp.minimum, [along(g.ndim, v, a) for a, v in enumerate(vs)])
        accum = accum + jnp.square(g)
        inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [jnp.max(accum, axis=tuple(b for b in range(x.ndim) if b != a))
              for a in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state):
        return state[0].reshape(state[3])

    return init, update, get_params


def l2_norm(tree):
    """The l2 norm of all the leaves of a pytree together (for weight decay or clipping)."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled down to l2 norm ``max_norm`` when its norm is larger."""
    norm = l2_norm(grad_tree)
    leaves, tree = tree_flatten(grad_tree)
    return tree_unflatten(tree, [jnp.where(norm < max_norm, g, g * (max_norm / norm))
                                 for g in leaves])


class JoinPoint:
    """A leaf of :func:`unpack_optimizer_state`'s outer tree holding one parameter's state
    (a subtree), so the two levels survive serialization."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState):
    """The state as the parameter tree with a :class:`JoinPoint` per parameter, each holding
    that parameter's state: plain pytrees to save."""
    packed, tree, subtrees = opt_state
    return tree_unflatten(tree, [JoinPoint(tree_unflatten(s, f))
                                 for s, f in zip(subtrees, packed)])


def pack_optimizer_state(marked_pytree) -> OptimizerState:
    """The inverse of :func:`unpack_optimizer_state`."""
    points, tree = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(p, JoinPoint) for p in points):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint (the output of "
                        "unpack_optimizer_state)")
    flats, subtrees = zip(*[tree_flatten(p.subtree) for p in points]) if points else ((), ())
    return OptimizerState(list(flats), tree, list(subtrees))


class Optimizer(NamedTuple):
    """An ``(init_fn, update_fn, params_fn)`` triple with names."""
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable
