"""More of ``jax.scipy.linalg`` over the dense primitives: ``qr`` with scipy's modes, the
polar decomposition (from the SVD), ``eigh_tridiagonal``, and ``solve_sylvester``."""

from __future__ import annotations

from typing import Optional

from ..array import Array
from ..numpy.creation import asarray


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """``(Q, R)`` with scipy's ``mode``: ``'full'`` (square Q), ``'economic'`` (reduced),
    ``'r'`` (``(R,)`` alone, full-sized, as JAX's tuple) or ``'raw'`` (refused).
    Column pivoting is not supported."""
    from ..linalg import qr as numpy_qr
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    if mode == "r":
        return (numpy_qr(a, mode="complete")[1],)
    q, r = numpy_qr(a, mode="complete" if mode == "full" else "reduced")
    return q, r


def polar(a, side: str = "right", *, method: str = "qdwh", eps: Optional[float] = None,
          max_iterations: Optional[int] = None):
    """``(u, p)`` with ``a = u p`` (``side='right'``) or ``a = p u`` (``'left'``): ``u``
    with orthonormal columns (rows, when wide) and ``p`` symmetric positive semidefinite,
    from the SVD ``a = W S V^T``: ``u = W V^T``, ``p = V S V^T`` (or ``W S W^T``). Both
    ``method``s give that (JAX's QDWH iteration converges to the same factors)."""
    from ..linalg import svd
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    a = asarray(a)
    w, s, vt = svd(a, full_matrices=False)
    u = w @ vt
    if side == "right":
        p = (vt.T * s) @ vt
    else:
        p = (w * s) @ w.T
    return u, p


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) and, unless ``eigvals_only``, eigenvectors of the symmetric
    tridiagonal matrix with diagonal ``d`` and off-diagonal ``e``. Only ``select='a'``
    (all of them)."""
    from ..linalg import eigh, eigvalsh
    from ..numpy.creation import zeros
    if select != "a":
        raise NotImplementedError("eigh_tridiagonal: only select='a' is supported")
    d, e = asarray(d), asarray(e)
    n = d.shape[0]
    if e.shape != (n - 1,):
        raise ValueError(f"eigh_tridiagonal: e must have {n - 1} entries, got {e.shape}")
    idx = asarray(list(range(n - 1)))
    m = zeros((n, n), d.dtype).at[asarray(list(range(n))), asarray(list(range(n)))].set(d)
    if n > 1:
        m = m.at[idx, idx + 1].set(e).at[idx + 1, idx].set(e)
    if eigvals_only:
        return eigvalsh(m)
    return tuple(eigh(m))


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8) -> Array:
    """``X`` with ``A X + X B = C``, solved as the linear system ``(I (x) A + B^T (x) I)
    vec(X) = vec(C)`` (exact for any sizes whose ``m n`` by ``m n`` system fits; ``method``
    and ``tol`` are accepted as JAX's and change nothing)."""
    from ..linalg import solve
    from ..numpy.creation import eye
    from ..numpy.products import kron
    a, b, c = asarray(A), asarray(B), asarray(C)
    m, n = a.shape[0], b.shape[0]
    if a.shape != (m, m) or b.shape != (n, n) or c.shape != (m, n):
        raise ValueError(f"solve_sylvester: A ({a.shape}) and B ({b.shape}) must be square "
                         f"and C ({c.shape}) m x n")
    system = kron(eye(n, dtype=a.dtype), a) + kron(b.T, eye(m, dtype=a.dtype))
    # vec stacks columns: C.T's rows.
    x = solve(system, c.T.reshape(-1))
    return x.reshape(n, m).T
