"""``quabla.image``: image resampling, as ``jax.image``: :func:`resize`,
:func:`scale_and_translate` and :class:`ResizeMethod`.

>>> import quabla.numpy as qnp
>>> from quabla import image
>>> image.resize(qnp.ones((4, 4, 3)), (8, 8, 3), "bilinear").shape
(8, 8, 3)
"""

from ._src.image_resize import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
