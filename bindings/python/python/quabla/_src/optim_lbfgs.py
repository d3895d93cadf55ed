"""optax's L-BFGS toolbox over pytrees, as optax composes it: ``scale_by_lbfgs`` (the
two-loop recursion over a ring of parameter and gradient differences, with optax's initial
scaling), ``scale_by_backtracking_linesearch`` (Armijo backtracking in a ``while_loop``),
``value_and_grad_from_state`` and the state helpers. Written from optax's documented
algorithms, with the same order of operations, so trajectories follow optax's step for step.
Everything is traced array code: an update runs eagerly, under ``jit`` and inside loops.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple

import numpy as np

from .api import value_and_grad
from .array import Array
from .control_flow import cond, while_loop
from .numpy.creation import asarray, zeros
from .numpy.elementwise import isinf, isnan, maximum, minimum, sqrt, where
from .numpy.reductions import sum as sum_
from .tree_util import tree_leaves, tree_map


class GradientTransformationExtraArgs(NamedTuple):
    """A transformation whose ``update`` takes keyword arguments beyond optax's three
    (``value``, ``grad``, ``value_fn``, and those ``value_fn`` needs); ``chain`` passes them
    on to it."""
    init: Callable[..., Any]
    update: Callable[..., Any]


def tree_vdot(a: Any, b: Any) -> Array:
    """``sum(a * b)`` over every leaf pair."""
    parts = [sum_(x * y) for x, y in zip(tree_leaves(a), tree_leaves(b))]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def tree_l2_norm(tree: Any, squared: bool = False) -> Array:
    """The Euclidean norm of all leaves together (``optax.tree.norm``)."""
    sq = tree_vdot(tree, tree)
    return sq if squared else sqrt(sq)


def tree_get(tree: Any, key: str, default: Any = None) -> Any:
    """The one field named ``key`` anywhere in a tree of named tuples (``optax.tree.get``);
    ``default`` when there is none, an error when there are several."""
    found = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if hasattr(node, "_fields"):
            if key in node._fields:
                found.append(getattr(node, key))
            stack.extend(getattr(node, f) for f in node._fields)
        elif isinstance(node, (tuple, list)):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
    if len(found) > 1:
        raise KeyError(f"tree_get: the tree holds {len(found)} fields named {key!r}")
    return found[0] if found else default


def _add_scale(a: Any, s: Any, b: Any) -> Any:
    return tree_map(lambda x, y: x + s * y, a, b)


class ScaleByLBFGSState(NamedTuple):
    count: Any
    params: Any
    updates: Any
    diff_params_memory: Any
    diff_updates_memory: Any
    weights_memory: Array


def _precondition(updates, dw, du, rhos, identity_scale, memory_idx, memory_size: int):
    """The two-loop recursion: newest pair first on the way in, oldest first on the way
    out, over the ring buffer starting at ``memory_idx``."""
    order = [(memory_idx + k) % memory_size for k in range(memory_size)]

    def pick(tree, i):
        return tree_map(lambda x: x[i], tree)

    vec, alphas = updates, []
    for i in reversed(order):
        alpha = rhos[i] * tree_vdot(pick(dw, i), vec)
        vec = _add_scale(vec, -alpha, pick(du, i))
        alphas.append(alpha)
    alphas.reverse()
    vec = tree_map(lambda x: identity_scale * x, vec)
    for i, alpha in zip(order, alphas):
        beta = rhos[i] * tree_vdot(pick(du, i), vec)
        vec = _add_scale(vec, alpha - beta, pick(dw, i))
    return vec


def scale_by_lbfgs(memory_size: int = 10, scale_init_precond: bool = True):
    """Updates times the L-BFGS approximation of the inverse Hessian, from the last
    ``memory_size`` differences of parameters and updates (optax's rule: the identity scaled
    by ``dw.du / du.du``, and on the first step by ``min(1, 1 / |g|)``)."""
    if memory_size < 1:
        raise ValueError("memory_size must be >= 1")

    def init(params):
        stacked = tree_map(lambda x: zeros((memory_size,) + tuple(x.shape), x.dtype), params)
        like = tree_map(lambda x: x * 0, params)
        return ScaleByLBFGSState(asarray(0, "int32"), like, like, stacked, stacked,
                                 zeros((memory_size,)))

    def update(updates, state, params=None):
        if params is None:
            raise ValueError("scale_by_lbfgs.update needs params")
        count = state.count
        memory_idx = count % memory_size
        prev_idx = (count - 1) % memory_size
        diff_params = tree_map(lambda p, q: p - q, params, state.params)
        diff_updates = tree_map(lambda u, v: u - v, updates, state.updates)
        curvature = tree_vdot(diff_updates, diff_params)
        weight = where(curvature == 0.0, 0.0, 1.0 / curvature)
        started = count > 0
        diff_params, diff_updates = (tree_map(lambda x: where(started, x, x * 0), t)
                                     for t in (diff_params, diff_updates))
        weight = where(started, weight, weight * 0)
        dw = tree_map(lambda m, x: m.at[prev_idx].set(x), state.diff_params_memory,
                      diff_params)
        du = tree_map(lambda m, x: m.at[prev_idx].set(x), state.diff_updates_memory,
                      diff_updates)
        rhos = state.weights_memory.at[prev_idx].set(weight)
        if scale_init_precond:
            numerator = tree_vdot(diff_updates, diff_params)
            denominator = tree_l2_norm(diff_updates, squared=True)
            scale = where(denominator > 0.0, numerator / denominator, 1.0)
            first = minimum(1.0, 1.0 / tree_l2_norm(updates))
            scale = where(started, scale, first)
        else:
            scale = 1.0
        out = _precondition(updates, dw, du, rhos, scale, memory_idx, memory_size)
        return out, ScaleByLBFGSState(count + 1, params, updates, dw, du, rhos)

    return GradientTransformationExtraArgs(init, lambda u, s, params=None, **_: update(u, s,
                                                                                       params))


class BacktrackingLinesearchInfo(NamedTuple):
    num_linesearch_steps: Array
    decrease_error: Array


class ScaleByBacktrackingLinesearchState(NamedTuple):
    learning_rate: Array
    value: Array
    grad: Any
    info: BacktrackingLinesearchInfo


def _value_fn_kwargs(value_fn: Callable, extra: dict) -> dict:
    """The extra keyword arguments ``value_fn`` accepts (all of them if it takes
    ``**kwargs``); the rest are an error, as in optax."""
    try:
        sig = inspect.signature(value_fn)
    except (TypeError, ValueError):
        return dict(extra)
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return dict(extra)
    taken = {k: v for k, v in extra.items() if k in sig.parameters}
    rest = sorted(set(extra) - set(taken))
    if rest:
        raise TypeError("Unexpected keyword arguments passed to the linesearch's update; "
                        f"these were not consumed by `value_fn`: {rest}")
    return taken


def scale_by_backtracking_linesearch(max_backtracking_steps: int, slope_rtol: float = 1e-4,
                                     decrease_factor: float = 0.8,
                                     increase_factor: float = 1.5,
                                     max_learning_rate: float = 1.0, atol: float = 0.0,
                                     rtol: float = 0.0, store_grad: bool = False,
                                     verbose: bool = False):
    """Scales updates by a step that satisfies Armijo's sufficient decrease: starting from
    ``min(increase_factor * last step, max_learning_rate)`` and multiplying by
    ``decrease_factor`` until ``f(x + s u) <= (1 + rtol) f(x) + s slope_rtol <u, g>``, at
    most ``max_backtracking_steps`` times (a step of 0 if every try was inf or NaN)."""
    del verbose

    def init(params):
        dtype = tree_leaves(params)[0].dtype
        grad = tree_map(lambda x: x * 0, params) if store_grad else None
        return ScaleByBacktrackingLinesearchState(
            asarray(1.0, dtype), asarray(np.inf, dtype), grad,
            BacktrackingLinesearchInfo(asarray(0, "int32"), asarray(np.inf, dtype)))

    def decrease_error(stepsize, slope, value, new_value):
        err = new_value - (1.0 + rtol) * value - stepsize * slope_rtol * slope
        err = where(isnan(err), np.inf, err)
        return maximum(err, 0.0)

    def update(updates, state, params=None, *, value, grad, value_fn, **extra):
        if params is None:
            raise ValueError("scale_by_backtracking_linesearch.update needs params")
        kwargs = _value_fn_kwargs(value_fn, extra)

        def f(p):
            return value_fn(p, **kwargs)

        slope = tree_vdot(updates, grad)
        start = minimum(increase_factor * state.learning_rate, max_learning_rate)
        zero_grad = tree_map(lambda x: x * 0, params)

        def keep_going(s):
            rate, new_value, new_grad, err, k = s
            return (~(err <= atol)) & (k <= max_backtracking_steps)

        def body(s):
            rate, new_value, new_grad, err, k = s
            rate = where(k > 0, decrease_factor * rate, rate)
            trial = _add_scale(params, rate, updates)
            if store_grad:
                new_value, new_grad = value_and_grad(f)(trial)
            else:
                new_value = f(trial)
            err = decrease_error(rate, slope, value, new_value)
            return rate, new_value, new_grad, err, k + 1

        dtype = asarray(value).dtype
        init_search = (asarray(start).astype(dtype), asarray(value).astype(dtype), zero_grad,
                       asarray(np.inf, dtype), asarray(0, "int32"))
        rate, new_value, new_grad, err, k = while_loop(keep_going, body, init_search)
        rate = where(isinf(err), 0.0, rate)
        new_updates = tree_map(lambda u: rate * u, updates)
        info = BacktrackingLinesearchInfo(k, err)
        return new_updates, ScaleByBacktrackingLinesearchState(
            rate, new_value, new_grad if store_grad else None, info)

    return GradientTransformationExtraArgs(init, update)


def value_and_grad_from_state(value_fn: Callable) -> Callable:
    """``(params, *args, state=...) -> (value, grad)``: the value and gradient a line
    search left in ``state`` (``store_grad=True``), recomputed when the state has none yet
    (its value is inf or NaN), as ``optax.value_and_grad_from_state``."""

    def value_and_grad_fn(params, *args, state, **kwargs):
        value = tree_get(state, "value")
        grad = tree_get(state, "grad")
        if value is None or grad is None:
            raise ValueError("Value or gradient not found in the state. Make sure that "
                             "these values are stored in the state by the optimizer "
                             "(a line search with store_grad=True).")
        return cond((~isinf(value)) & (~isnan(value)),
                    lambda p: (value, grad),
                    lambda p: value_and_grad(lambda q: value_fn(q, *args, **kwargs))(p),
                    params)

    return value_and_grad_fn
