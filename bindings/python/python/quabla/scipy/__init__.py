"""``quabla.scipy``: scipy's names, as ``jax.scipy`` (``special``, ``linalg``, ``stats``,
``integrate``)."""

from . import integrate, linalg, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "special", "stats"]
