"""``quabla.scipy``: scipy's names, as ``jax.scipy`` (``special``, ``linalg``, ``stats``,
``integrate``, ``optimize``)."""

from . import integrate, linalg, optimize, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "special", "stats"]
