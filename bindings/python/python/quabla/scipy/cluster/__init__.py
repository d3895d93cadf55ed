"""``quabla.scipy.cluster``: as ``jax.scipy.cluster``, its ``vq``."""

from . import vq  # noqa: F401

__all__ = ["vq"]
