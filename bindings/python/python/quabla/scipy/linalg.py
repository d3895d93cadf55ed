"""``quabla.scipy.linalg``, as ``jax.scipy.linalg``."""

from .._src.scipy.linalg import (  # noqa: F401
    block_diag, cho_factor, cho_solve, cholesky, det, eigh, expm, inv, lu, lu_factor,
    lu_solve, solve, solve_triangular, svd,
)
from .._src.scipy.linalg import __all__  # noqa: F401
