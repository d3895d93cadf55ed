"""``quabla.scipy.sparse``: as ``jax.scipy.sparse``, its ``linalg`` (Krylov solvers)."""

from . import linalg  # noqa: F401

__all__ = ["linalg"]
