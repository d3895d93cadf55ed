"""``quabla.scipy.spatial.transform``: ``Rotation`` and ``Slerp``, as
``jax.scipy.spatial.transform``."""

from ..._src.scipy.rotation import Rotation, Slerp  # noqa: F401

__all__ = ["Rotation", "Slerp"]
