"""``quabla.scipy.integrate``: ``trapezoid``, as ``jax.scipy.integrate``."""

from .._src.numpy.misc import trapezoid  # noqa: F401

__all__ = ["trapezoid"]
