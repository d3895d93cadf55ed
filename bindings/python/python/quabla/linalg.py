"""``quabla.linalg``: iterative solvers with implicit derivatives (``cg``, ``gmres``), as
``jax.scipy.sparse.linalg``."""

from ._src.numerics import cg, gmres

__all__ = ["cg", "gmres"]
