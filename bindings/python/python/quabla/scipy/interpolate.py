"""``quabla.scipy.interpolate``: ``RegularGridInterpolator``, as ``jax.scipy.interpolate``."""

from .._src.scipy.interpolate import RegularGridInterpolator  # noqa: F401

__all__ = ["RegularGridInterpolator"]
