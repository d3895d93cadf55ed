"""``quabla.scipy``: scipy's names, as ``jax.scipy`` (``special``, ``linalg``, ``stats``,
``integrate``, ``optimize``, ``signal``, ``sparse``, ``ndimage``, ``interpolate``,
``cluster``, ``spatial``)."""

from . import (  # noqa: F401
    cluster, integrate, interpolate, linalg, ndimage, optimize, signal, sparse, spatial, special,
    stats,
)

__all__ = ["cluster", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
           "sparse", "spatial", "special", "stats"]
