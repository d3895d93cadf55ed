"""``quabla.scipy.sparse.linalg``: ``cg``, ``bicgstab`` and ``gmres``, as
``jax.scipy.sparse.linalg``."""

from ..._src.scipy.sparse_linalg import bicgstab, cg, gmres  # noqa: F401

__all__ = ["cg", "bicgstab", "gmres"]
