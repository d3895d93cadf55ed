"""``quabla.numpy.linalg``: ``numpy.linalg`` / ``jax.numpy.linalg`` on Quabla arrays."""

from .._quabla import LinAlgError
from .._src.linalg import (
    EighResult, QRResult, SlogdetResult, SVDResult, cholesky, cond, det, eigh, eigvalsh, inv,
    lstsq, matrix_power, matrix_rank, norm, pinv, qr, slogdet, solve, svd, svdvals,
)
from .._src.linalg_array_api import (
    cross, diagonal, matmul, matrix_norm, matrix_transpose, multi_dot, outer, tensordot,
    tensorinv, tensorsolve, trace, vecdot, vector_norm,
)

__all__ = [
    "LinAlgError", "cholesky", "cond", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_power", "matrix_rank",
    "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "EighResult", "QRResult",
    "SlogdetResult", "SVDResult", "cross", "diagonal", "matmul", "matrix_norm",
    "matrix_transpose", "multi_dot", "outer", "tensordot", "tensorinv", "tensorsolve", "trace",
    "vecdot", "vector_norm",
]
