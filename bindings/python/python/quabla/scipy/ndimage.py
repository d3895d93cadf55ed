"""``quabla.scipy.ndimage``: ``map_coordinates``, as ``jax.scipy.ndimage``."""

from .._src.scipy.ndimage import map_coordinates  # noqa: F401

__all__ = ["map_coordinates"]
