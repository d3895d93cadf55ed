"""``quabla.scipy``: scipy's names, as ``jax.scipy`` (``special``, ``linalg``, ``stats``,
``integrate``, ``optimize``, ``signal``)."""

from . import integrate, linalg, optimize, signal, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]
