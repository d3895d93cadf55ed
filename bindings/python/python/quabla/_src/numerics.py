"""Solvers over pytrees: ``linalg.cg``/``linalg.gmres`` (as ``jax.scipy.sparse.linalg``),
``newton`` (a custom root) and ``odeint`` (as ``jax.experimental.ode.odeint``).

Derivatives never go through solver iterations where the answer does not depend on them:
``cg``/``gmres``/``newton`` use the implicit function theorem (forward and reverse, any
order); ``odeint`` differentiates the discrete solution or uses the continuous adjoint.
Functions may close over traced values, which receive gradients like explicit arguments.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, NamedTuple, Optional

from .. import _quabla
from .array import Array
from .flat import OutStore, flat_function, flatten_to_raw, to_raw
from .tree_util import tree_flatten, tree_unflatten


def _operator(A, what: str) -> Callable:
    """``A`` as a function of a pytree: a matrix applies by ``@``."""
    if callable(A):
        return A
    from .numpy.creation import asarray
    m = asarray(A)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise TypeError(f"{what} must be a square matrix or a function, got shape {m.shape}")
    return lambda v: m @ v


def _flat_operator(fun: Callable, tree, raws_like, what: str) -> Callable:
    store = OutStore()
    flat = flat_function(fun, tree, store)

    def checked(raws):
        out = flat(raws)
        shapes = [(tuple(r.shape), r.dtype) for r in out]
        want = [(tuple(r.shape), r.dtype) for r in raws_like]
        if shapes != want:
            raise TypeError(f"{what} must return a tree shaped like b: {want}, got {shapes}")
        return out

    return checked


def _isolve(method: str, A, b, x0, tol, atol, maxiter, M, restart):
    b_raws, b_tree = flatten_to_raw(b)
    _, args_tree = tree_flatten((b,))
    a = _flat_operator(_operator(A, "A"), args_tree, b_raws, "A")
    m = None if M is None else _flat_operator(_operator(M, "M"), args_tree, b_raws, "M")
    x0_raws = None
    if x0 is not None:
        x0_raws, x0_tree = flatten_to_raw(x0)
        if x0_tree != b_tree:
            raise TypeError(f"x0 must have b's tree structure {b_tree}, got {x0_tree}")
    if maxiter is not None:
        maxiter = int(maxiter)
        if maxiter < 0:
            raise ValueError(f"maxiter must be non-negative, got {maxiter}")
    x, info = _quabla.linear_solve(method, a, b_raws, x0_raws, m, float(tol), float(atol),
                                   maxiter, int(restart))
    return tree_unflatten(b_tree, [Array(r) for r in x]), Array(info)


def cg(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: Optional[int] = None,
       M=None):
    """Solves ``A x = b`` for symmetric positive definite ``A`` by conjugate gradients.

    ``A`` is a square matrix or a linear function of a pytree shaped like ``b``; ``M`` a
    preconditioner approximating ``A⁻¹``. Stops when ``‖r‖ <= max(tol·‖b‖, atol)`` or after
    ``maxiter`` iterations (default ``10·size(b)``). Returns ``(x, info)``: ``info`` is 0 on
    convergence, else the iterations run (scipy's convention; JAX returns None).

    >>> x, info = cg(qnp.array([[4.0, 1.0], [1.0, 3.0]]), qnp.array([1.0, 2.0]))
    """
    return _isolve("cg", A, b, x0, tol, atol, maxiter, M, 20)


def gmres(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, restart: int = 20,
          maxiter: Optional[int] = None, M=None):
    """Solves ``A x = b`` for general ``A`` by restarted GMRES (Givens rotations, so each cycle
    stops as soon as the residual meets the tolerance). ``maxiter`` counts restart cycles.
    Returns ``(x, info)`` as :func:`cg`. All leaves of ``b`` must share one dtype."""
    if int(restart) < 1:
        raise ValueError(f"restart must be at least 1, got {restart}")
    return _isolve("gmres", A, b, x0, tol, atol, maxiter, M, restart)


def newton(f: Callable, x0, *args, tol: Optional[float] = None, maxiter: Optional[int] = None,
           full_output: bool = False):
    """A root of ``f(x, *args) = 0`` by Newton's method from ``x0``.

    Each step solves ``J dx = -f`` by GMRES with ``J v`` from forward mode (no Jacobian is
    formed). Stops when ``‖dx‖∞ <= tol·(1 + ‖x‖∞)`` (default ``tol``: sqrt of the dtype's
    epsilon) or after ``maxiter`` steps (default 50). Derivatives with respect to ``args``
    and captured values come from the implicit function theorem, to fourth order; ``x0``
    gets none. With ``full_output`` returns ``(x, info)``, ``info`` 0 on convergence.
    """
    x_raws, x_tree = flatten_to_raw(x0)
    a_raws, _ = flatten_to_raw(args)
    _, all_tree = tree_flatten((x0,) + tuple(args))
    store = OutStore()
    flat = flat_function(f, all_tree, store)

    def checked(raws):
        out = flat(raws)
        if store.tree != x_tree:
            raise TypeError(f"newton: f must return a tree shaped like x {x_tree}, got {store.tree}")
        return out

    x, info = _quabla.newton(checked, x_raws, a_raws,
                             None if tol is None else float(tol),
                             None if maxiter is None else int(maxiter))
    root = tree_unflatten(x_tree, [Array(r) for r in x])
    return (root, Array(info)) if full_output else root


class OdeStats(NamedTuple):
    """Step counts of a solve (int32 scalars; batched under vmap), and ``reached``: whether
    every requested time was reached (a bool; ``False`` when ``max_steps`` ran out first and
    the states at the later times are NaN)."""
    steps: Array
    accepted: Array
    rejected: Array
    reached: Array


_METHODS = ("dopri5", "tsit5", "rk4", "rosenbrock23")


def _checkpoints(k) -> Optional[int]:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValueError(f"odeint: checkpoints must be None or an int >= 1, got {k!r}")
    return k
_GRADIENTS = ("direct", "adjoint", "forward")


def odeint(func: Callable, y0, t, *args, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           max_steps: int = 4096, method: str = "dopri5", dt0: Optional[float] = None,
           gradient: str = "direct", full_output: bool = False, throw: bool = False,
           checkpoints: Optional[int] = None):
    """Integrates ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``; returns ``y`` at every
    time in ``t`` (strictly increasing), each leaf with a leading time axis, as
    ``jax.experimental.ode.odeint``.

    ``method``: ``"dopri5"`` (default) or ``"tsit5"`` (adaptive 5(4) with PI step control and
    fourth-order dense output, so the requested times do not force steps), ``"rk4"`` (fixed
    step ``dt0``, landing on every requested time) or ``"rosenbrock23"`` (L-stable, for stiff
    problems). ``max_steps`` bounds the steps over the whole solve (unlike JAX's per-interval
    ``mxstep``); times not reached are NaN. ``gradient``: ``"direct"`` differentiates through
    the solver (forward and reverse, through a bounded ``while_loop``, whose cost
    follows the steps taken), ``"adjoint"`` uses the continuous adjoint (reverse only, memory independent of
    the steps), ``"forward"`` is the cheapest solve (forward mode only). ``y0`` leaves must
    have ``t``'s float dtype. With ``full_output`` returns ``(ys, OdeStats)``.
    ``checkpoints`` is the direct gradient's memory budget, ``while_loop``'s keyword of that
    name: how many solver states reverse mode may keep (default about
    ``2 sqrt(max_steps + len(t))``, with which a solve of up to ``sqrt(max_steps + len(t))``
    iterations recomputes nothing). Solutions do not depend on it, nor gradients.

    When ``max_steps`` runs out before the last time, the states at the times not reached
    are NaN: a concrete solve warns (``RuntimeWarning``), ``OdeStats.reached`` is ``False``
    (also under ``jit``, ``grad`` and ``vmap``), and ``throw=True`` raises ``ValueError``
    instead, as diffrax's ``throw``. ``throw`` reads the result, so it needs a concrete
    solve: inside ``jit``, ``grad`` or ``vmap`` it raises at trace time; test
    ``OdeStats.reached`` there.
    """
    if method not in _METHODS:
        raise ValueError(f"odeint: method must be one of {_METHODS}, got {method!r}")
    if gradient not in _GRADIENTS:
        raise ValueError(f"odeint: gradient must be one of {_GRADIENTS}, got {gradient!r}")
    y_raws, y_tree = flatten_to_raw(y0)
    t_raw = to_raw(t)
    if len(t_raw.shape) != 1:
        raise TypeError(f"odeint: t must be a 1-D array of times, got shape {tuple(t_raw.shape)}")
    a_raws, _ = flatten_to_raw(args)
    # The time passed to func is a scalar leaf between y and args.
    _, all_tree = tree_flatten((y0, 0.0) + tuple(args))
    store = OutStore()
    flat = flat_function(func, all_tree, store)

    def checked(raws):
        out = flat(raws)
        if store.tree != y_tree:
            raise TypeError(f"odeint: func must return a tree shaped like y {y_tree}, "
                            f"got {store.tree}")
        return out

    ys, steps, acc, rej, reached_raw = _quabla.odeint(
        checked, y_raws, t_raw, a_raws, method, float(rtol), float(atol), int(max_steps),
        None if dt0 is None else float(dt0), gradient, bool(throw), _checkpoints(checkpoints))
    reached = Array(reached_raw)
    if not reached.is_traced and not bool(reached):
        warnings.warn(f"odeint: max_steps={int(max_steps)} ran out before the last requested "
                      "time; the states at the times not reached are NaN. Raise max_steps, "
                      "loosen rtol/atol, or use method='rosenbrock23' if the problem is stiff "
                      "(throw=True raises instead)", RuntimeWarning, stacklevel=2)
    out = tree_unflatten(y_tree, [Array(r) for r in ys])
    if full_output:
        return out, OdeStats(Array(steps), Array(acc), Array(rej), reached)
    return out
