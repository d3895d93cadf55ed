"""``lax.custom_linear_solve`` and ``lax.custom_root``: a solution found by the caller's
own solver, differentiated implicitly rather than through the solver's iterations (the
core's ``linalg::linear_solve`` and ``root_finding::custom_root``).

The core traces the operator, the residual and the solvers itself and turns the values
they close over into parameters, so derivatives reach whatever ``matvec`` or ``f``
captures, to any order, under ``jit`` and ``vmap``.
"""

from typing import Any, Callable, Optional

from .. import _quabla
from .api import stop_gradient, vjp
from .flat import flatten_to_raw, to_raw, unflatten_raw
from .numpy.creation import zeros_like
from .tree_util import tree_flatten, tree_map

__all__ = ["custom_linear_solve", "custom_root"]


def _flat(fn: Callable, tree, what: str, name: str) -> Callable:
    """``fn`` over a pytree shaped as ``tree``, as a function of one flat list of core
    arrays; a result of another structure is a TypeError naming ``what``."""
    def run(raws):
        leaves, out_tree = tree_flatten(fn(unflatten_raw(tree, raws)))
        if out_tree != tree:
            raise TypeError(f"{name}: {what} must return a pytree shaped like its input "
                            f"({tree}), got {out_tree}")
        return [to_raw(x) for x in leaves]
    return run


def _check_float(raws, name: str, what: str) -> None:
    if not raws:
        raise ValueError(f"{name}: {what} holds no arrays")
    for r in raws:
        if r.dtype not in ("float32", "float64"):
            raise TypeError(f"{name}: {what} must be floating point, got {r.dtype}; convert "
                            "it with astype")


def _pair(out: Any, name: str, what: str) -> tuple:
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{name}: with has_aux=True, {what} must return (solution, aux), got "
                        f"{type(out).__name__}")
    return tuple(out)


def _aux(out: Any, name: str, what: str) -> Any:
    """The auxiliary half of a solver's ``(solution, aux)``, not differentiated."""
    return stop_gradient(_pair(out, name, what)[1])


def _solution(solver: Callable, name: str, what: str) -> Callable:
    """``solver`` returning its solution alone (it returns ``(solution, aux)``)."""
    return lambda *args: _pair(solver(*args), name, what)[0]


def _transposed(matvec: Callable, like) -> Callable:
    """``x -> Aᵀ x`` for the linear ``matvec`` at vectors shaped like ``like``."""
    _, pullback = vjp(matvec, tree_map(zeros_like, like))
    return lambda x: pullback(x)[0]


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Optional[Callable] = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """``x`` with ``matvec(x) == b``, computed by ``solve(matvec, b)`` and differentiated
    implicitly, as ``jax.lax.custom_linear_solve``: the tangent of ``x`` solves
    ``A dx = db - dA x`` with ``solve``, the reverse mode solves with ``Aᵀ`` by
    ``transpose_solve(vecmat, ct)`` (``solve`` itself when ``symmetric``). Gradients reach
    ``b`` and everything ``matvec`` closes over; never the solver's iterations.

    Without ``transpose_solve`` for a non-symmetric operator, JAX refuses reverse mode;
    Quabla uses ``solve`` on the transposed operator when ``solve`` applies the operator
    it is given (an operator-generic solver: CG, GMRES, a solve of the matrix it
    materializes from ``matvec``), and raises that TypeError when it does not (a solver
    that, say, uses a factorization it closes over, which would solve with ``A`` instead
    of ``Aᵀ``).

    With ``has_aux``, ``solve`` (and ``transpose_solve``) return ``(solution, aux)`` and the
    result is ``(x, aux)``, ``aux`` (solver diagnostics, say) not differentiated, as JAX's.
    The solver then runs once more for ``aux``, outside the implicitly differentiated
    solve (which takes the solution alone).

    >>> import quabla.numpy as qnp
    >>> a = qnp.array([[2.0, 1.0], [0.0, 4.0]])
    >>> def solve(mv, rhs):
    ...     m = qnp.stack([mv(e) for e in qnp.eye(2)], axis=1)  # the matrix, from matvec
    ...     return qnp.linalg.solve(m, rhs)
    >>> x = custom_linear_solve(lambda v: a @ v, qnp.array([3.0, 4.0]), solve)
    >>> [round(float(v), 6) for v in x]
    [1.0, 1.0]
    """
    name = "custom_linear_solve"
    for fn, what in ((matvec, "matvec"), (solve, "solve")):
        if not callable(fn):
            raise TypeError(f"{name}: {what} must be callable, got {type(fn).__name__}")
    if has_aux:
        aux = _aux(solve(matvec, b), name, "solve")
        x = custom_linear_solve(
            matvec, b, _solution(solve, name, "solve"),
            None if transpose_solve is None else _solution(transpose_solve, name,
                                                             "transpose_solve"),
            symmetric=symmetric)
        return x, aux
    raws, tree = flatten_to_raw(b)
    _check_float(raws, name, "b")
    # Whether `solve` applied the operator it was given (the core traces it before the
    # transposed solve, so the flag is set when that one is traced).
    applied = [False]

    def applying(x):
        applied[0] = True
        return matvec(x)

    def transposed_solve(v):
        vecmat = _transposed(matvec, v)
        if transpose_solve is not None:
            return transpose_solve(vecmat, v)
        if not applied[0]:
            raise TypeError(f"{name}: transpose_solve is required for reverse-mode "
                            "differentiation of a non-symmetric operator whose solve does not "
                            "apply the matvec it is given; pass transpose_solve=, or "
                            "symmetric=True if the operator is symmetric")
        return solve(vecmat, v)

    backward = None if symmetric else _flat(transposed_solve, tree, "transpose_solve", name)
    outs = _quabla.custom_linear_solve(_flat(matvec, tree, "matvec", name), raws,
                                       _flat(lambda v: solve(applying, v), tree, "solve", name),
                                       backward)
    return unflatten_raw(tree, outs)


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """A root of ``f`` found by ``solve(f, initial_guess)`` and differentiated implicitly,
    as ``jax.lax.custom_root``: the solver is never differentiated; derivatives with
    respect to what ``f`` closes over follow from ``J dx = -∂f/∂θ dθ`` at the root. (The
    ``f`` the solver gets computes the same residual with what ``f`` captures made inputs
    of the solve's trace, so loops inside the solver may call it.)

    Quabla solves that system by GMRES with ``J v`` from forward mode (the core's
    ``custom_root``, as its ``newton``), so ``tangent_solve`` is checked but not called:
    derivatives agree with JAX's to the tolerance of that solve. With ``has_aux``, ``solve``
    returns ``(root, aux)`` and so does this, ``aux`` not differentiated, as JAX's (the
    solver runs once more for it, outside the implicitly differentiated solve).

    >>> import quabla
    >>> def sqrt(a):
    ...     def newton(f, x0):
    ...         x = x0
    ...         for _ in range(30):
    ...             x = x - f(x) / quabla.grad(f)(x)
    ...         return x
    ...     return custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> round(float(quabla.grad(sqrt)(4.0)), 6)  # d sqrt(a)/da = 1 / (2 sqrt(a))
    0.25
    """
    name = "custom_root"
    for fn, what in ((f, "f"), (solve, "solve"), (tangent_solve, "tangent_solve")):
        if not callable(fn):
            raise TypeError(f"{name}: {what} must be callable, got {type(fn).__name__}")
    if has_aux:
        aux = _aux(solve(f, initial_guess), name, "solve")
        return custom_root(f, initial_guess, _solution(solve, name, "solve"),
                           tangent_solve), aux
    raws, tree = flatten_to_raw(initial_guess)
    _check_float(raws, name, "initial_guess")

    def flat_solve(residual, x0_raws):
        # The solver gets the core's residual (f over what it captures, those made inputs
        # of the solve's trace), as a function of pytrees shaped like the guess.
        def g(x):
            leaves, x_tree = tree_flatten(x)
            if x_tree != tree:
                raise TypeError(f"{name}: the residual takes a pytree shaped like the initial "
                                f"guess ({tree}), got {x_tree}")
            return unflatten_raw(tree, residual([to_raw(v) for v in leaves]))
        return _flat(lambda x0: solve(g, x0), tree, "solve", name)(x0_raws)

    outs = _quabla.custom_root(_flat(f, tree, "f", name), raws, flat_solve)
    return unflatten_raw(tree, outs)
