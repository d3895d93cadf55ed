"""``quabla.scipy``: scipy's names, as ``jax.scipy`` (``special``, ``linalg``, ``stats``,
``integrate``, ``optimize``, ``signal``, ``sparse``)."""

from . import integrate, linalg, optimize, signal, sparse, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "signal", "sparse", "special", "stats"]
