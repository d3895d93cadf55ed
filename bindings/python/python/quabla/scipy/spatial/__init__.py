"""``quabla.scipy.spatial``: as ``jax.scipy.spatial``, its ``transform``."""

from . import transform  # noqa: F401

__all__ = ["transform"]
