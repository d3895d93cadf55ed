"""``quabla.scipy``: scipy's names, as ``jax.scipy`` (``special``, ``linalg``,
``stats.norm``)."""

from . import linalg, special, stats  # noqa: F401

__all__ = ["linalg", "special", "stats"]
