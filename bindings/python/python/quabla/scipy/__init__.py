"""``quabla.scipy``: scipy's names, as ``jax.scipy`` (``special``, ``linalg``, ``stats``,
``integrate``, ``optimize``, ``signal``, ``sparse``, ``ndimage``)."""

from . import integrate, linalg, ndimage, optimize, signal, sparse, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "ndimage", "optimize", "signal", "sparse", "special", "stats"]
