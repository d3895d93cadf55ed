"""``jax.scipy.sparse.linalg``'s Krylov solvers, ``cg``, ``bicgstab`` and ``gmres``: ``A``
a matrix or a function (a linear operator) on pytrees like ``b``, an optional
preconditioner ``M``, scipy's "non-legacy" tolerance ``|r| <= max(tol |b|, atol)``, and
JAX's iterates (to rounding: the same stopping points).

``cg`` is :func:`quabla.linalg.cg`, whose derivatives are implicit (another solve), as
JAX's. ``bicgstab`` and ``gmres`` (JAX's full restart cycles; :func:`quabla.linalg.gmres`
stops inside a cycle) run as a ``lax.while_loop`` bounded by ``maxiter`` (default
``10 * b.size`` as scipy), so they pay for the iterations they take and differentiate in
both modes through the iterations, where JAX differentiates implicitly; the two agree to
the solver's tolerance.
"""

from __future__ import annotations

from typing import Callable, Optional

from ..array import Array
from ..control_flow import while_loop
from ..flatten_util import ravel_pytree
from ..numpy.creation import asarray
from ..numpy.elementwise import maximum, minimum, where
from ..tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["cg", "bicgstab", "gmres"]


def _operator(A, what: str) -> Callable:
    if callable(A):
        return A
    a = asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{what}: A must be a square matrix or a function, got shape "
                         f"{a.shape}")
    return lambda x: a @ x


def _flat_problem(A, b, x0, M, maxiter, what: str):
    """The problem on flat vectors: ``(matvec, precondition, b, x0, unravel, maxiter)``."""
    from ..numpy.creation import zeros_like
    if x0 is None:
        x0 = tree_map(zeros_like, b)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"{what}: x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    shapes = [tuple(asarray(l).shape) for l in tree_leaves(b)]
    if [tuple(asarray(l).shape) for l in tree_leaves(x0)] != shapes:
        raise ValueError(f"{what}: arrays in x0 and b must have matching shapes")
    flat_b, unravel = ravel_pytree(b)
    flat_x0, _ = ravel_pytree(x0)
    flat_x0 = flat_x0.astype(flat_b.dtype)
    if maxiter is None:
        maxiter = 10 * flat_b.shape[0]
    if not isinstance(maxiter, int) or maxiter < 0:
        raise ValueError(f"{what}: maxiter must be a non-negative int, got {maxiter!r}")
    op = _operator(A, what)
    pre = (lambda v: v) if M is None else _operator(M, what)

    def matvec(v):
        return ravel_pytree(op(unravel(v)))[0].astype(flat_b.dtype)

    def precondition(v):
        return v if M is None else ravel_pytree(pre(unravel(v)))[0].astype(flat_b.dtype)

    return matvec, precondition, flat_b, flat_x0, unravel, maxiter


def _tolerance2(b, tol, atol):
    return maximum((tol * tol) * (b @ b), atol * atol)


def cg(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: Optional[int] = None,
       M=None):
    """Conjugate gradients for ``A x = b`` with ``A`` symmetric positive definite:
    ``(x, None)`` as ``jax.scipy.sparse.linalg.cg`` (preconditioned by ``M`` when given).
    The iteration is :func:`quabla.linalg.cg`'s (JAX's iterates, to rounding), so its
    derivatives are implicit, as JAX's.

    >>> import quabla.numpy as qnp
    >>> x, _ = cg(qnp.array([[4.0, 1.0], [1.0, 3.0]]), qnp.array([1.0, 2.0]), tol=1e-10)
    >>> [round(float(v), 6) for v in x]
    [0.090909, 0.636364]
    """
    from ..numerics import cg as implicit_cg
    if maxiter is not None and (not isinstance(maxiter, int) or maxiter < 0):
        raise ValueError(f"cg: maxiter must be a non-negative int, got {maxiter!r}")
    _operator(A, "cg")
    if x0 is not None and tree_structure(x0) != tree_structure(b):
        raise ValueError(f"cg: x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    return implicit_cg(A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M)[0], None


def bicgstab(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: Optional[int] = None, M=None):
    """Stabilized biconjugate gradients for a general square ``A x = b``: ``(x, None)`` as
    ``jax.scipy.sparse.linalg.bicgstab``. A breakdown (``rho``, ``alpha`` or ``omega``
    zero) stops the iteration where it is, as JAX's."""
    matvec, pre, b, x0, unravel, maxiter = _flat_problem(A, b, x0, M, maxiter, "bicgstab")
    atol2 = _tolerance2(b, tol, atol)

    def keep_going(state):
        _, r, *_, k = state
        return (r @ r > atol2) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = rhat @ r
        beta = rho_next / rho * alpha / omega
        p = r + beta * (p - omega * q)
        phat = pre(p)
        q = matvec(phat)
        alpha = rho_next / (rhat @ q)
        s = r - alpha * q
        done = s @ s < atol2
        shat = pre(s)
        t = matvec(shat)
        omega = (t @ s) / (t @ t)
        x = where(done, x + alpha * phat, x + alpha * phat + omega * shat)
        r = where(done, s, s - omega * t)
        k = where((omega == 0) | (alpha == 0), -11, k + 1)
        k = where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    r0 = b - matvec(x0)
    one = asarray(1.0, dtype=b.dtype)
    init = (x0, r0, r0, one, one, one, r0, r0, asarray(0))
    # Each trip counts once, whatever k becomes (a breakdown makes it negative).
    x = while_loop(keep_going, step, init, max_steps=maxiter)[0]
    return unravel(x), None


def gmres(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, restart: int = 20,
          maxiter: Optional[int] = None, M=None, solve_method: str = "batched"):
    """Restarted GMRES for a general square ``A x = b``: ``(x, info)`` as
    ``jax.scipy.sparse.linalg.gmres``. Each cycle builds a Krylov basis of ``restart``
    vectors (Arnoldi with modified Gram-Schmidt) and solves the small least-squares problem
    by QR; at most ``maxiter`` cycles (default ``10 * b.size``, as scipy), stopping when
    the preconditioned residual meets the tolerance. ``solve_method`` ``'batched'`` and
    ``'incremental'`` give the same solution here (both are JAX's names for how the
    least-squares problem is updated). ``info`` is -1 where the solution holds NaN, else
    0, as JAX's."""
    if solve_method not in ("batched", "incremental"):
        raise ValueError(f"gmres: solve_method must be 'batched' or 'incremental', got "
                         f"{solve_method!r}")
    matvec, pre, b, x0, unravel, maxiter = _flat_problem(A, b, x0, M, maxiter, "gmres")
    n = b.shape[0]
    restart = min(int(restart), n)
    if restart < 1:
        raise ValueError(f"gmres: restart must be a positive int, got {restart!r}")
    from ..linalg import norm
    b_norm = norm(b)
    # JAX's tolerances: the preconditioned residual against |M b| scaled as |r| to |b|.
    tolerance = maximum(tol * b_norm, atol)
    ptol = norm(pre(b)) * minimum(1.0, tolerance / b_norm)

    def residual_norm(x):
        return norm(pre(b - matvec(x)))

    def keep_going(state):
        x, res, k = state
        return (res > ptol) & (k < maxiter)

    def cycle(state):
        x, _, k = state
        x = x + _arnoldi_correction(matvec, pre, b - matvec(x), restart)
        return x, residual_norm(x), k + 1

    init = (x0, residual_norm(x0), asarray(0))
    x = while_loop(keep_going, cycle, init, max_steps=maxiter)[0]
    from ..numpy.elementwise import isnan
    # info as JAX's gmres: -1 where the solve produced NaN, else 0.
    return unravel(x), where(isnan(norm(x)), -1, 0)


def _arnoldi_correction(matvec, pre, r, m: int) -> Array:
    """``V y`` minimizing ``|beta e_1 - H y|`` over an ``m``-vector Krylov basis ``V`` of
    the preconditioned operator from ``M r`` (modified Gram-Schmidt; a basis that closes
    early, a norm at most the dtype's epsilon as JAX's breakdown test, continues with zero
    vectors, which the minimum-norm least-squares solve ignores)."""
    import numpy as np
    from ..linalg import lstsq, norm
    from ..numpy.shape import stack
    eps = float(np.finfo(np.dtype(r.dtype)).eps)

    def unit(v, length):
        return where(length > eps, v / where(length > eps, length, 1.0), v * 0)

    z = pre(r)
    beta = norm(z)
    basis = [unit(z, beta)]
    h_cols = []
    for j in range(m):
        w = pre(matvec(basis[j]))
        col = []
        for v in basis:
            h = v @ w
            w = w - h * v
            col.append(h)
        h_next = norm(w)
        col.append(h_next)
        col.extend([h_next * 0] * (m - j - 1))
        h_cols.append(stack(col))
        basis.append(unit(w, h_next))
    hess = stack(h_cols, axis=1)
    rhs = stack([beta] + [beta * 0] * m)
    y = lstsq(hess, rhs)[0]
    return stack(basis[:m], axis=1) @ y
