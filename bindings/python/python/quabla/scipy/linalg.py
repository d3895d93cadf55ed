"""``quabla.scipy.linalg``, as ``jax.scipy.linalg``."""

from .._src.scipy.linalg import (  # noqa: F401
    block_diag, cho_factor, cho_solve, cholesky, det, eigh, expm, inv, lu, lu_factor,
    lu_solve, solve, solve_triangular, svd,
)
from .._src.scipy.special_matrices import (  # noqa: F401
    circulant, companion, convolution_matrix, expm_frechet, fiedler, fiedler_companion, hadamard,
    hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal, toeplitz,
)
from .._src.scipy.linalg_more import (  # noqa: F401
    eigh_tridiagonal, polar, qr, solve_sylvester,
)
from .._src.scipy.linalg_householder import hessenberg, qr_multiply  # noqa: F401
from .._src.scipy.linalg import __all__ as _base

__all__ = _base + ["circulant", "companion", "convolution_matrix", "expm_frechet", "fiedler",
                   "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert",
                   "invhilbert", "invpascal", "leslie", "pascal", "toeplitz",
                   "eigh_tridiagonal", "polar", "qr", "solve_sylvester", "hessenberg",
                   "qr_multiply"]
