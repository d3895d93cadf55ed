"""``quabla.linalg``: dense linear algebra (``jax.numpy.linalg`` names, plus the
``jax.scipy.linalg`` / ``jax.lax.linalg`` factorizations) and iterative solvers with implicit
derivatives (``cg``, ``gmres``, as ``jax.scipy.sparse.linalg``)."""

from ._src.linalg import (
    EighResult, QRResult, SlogdetResult, SVDResult, cho_factor, cho_solve, cholesky,
    cholesky_checked, cond, det, eigh, eigvalsh, inv, lstsq, lu, matrix_power, matrix_rank,
    norm, pinv, qr, slogdet, solve, solve_triangular, svd, svdvals, triangular_solve,
)
from ._src.numerics import cg, gmres
from ._quabla import LinAlgError

__all__ = [
    "LinAlgError", "cg", "gmres", "cho_factor", "cho_solve", "cholesky", "cholesky_checked", "cond", "det",
    "eigh", "eigvalsh", "inv", "lstsq", "lu", "matrix_power", "matrix_rank", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_triangular", "svd", "svdvals", "triangular_solve", "EighResult",
    "QRResult", "SlogdetResult", "SVDResult",
]
