"""``quabla.scipy.cluster.vq``: ``vq``, as ``jax.scipy.cluster.vq``."""

from ..._src.scipy.cluster_vq import vq  # noqa: F401

__all__ = ["vq"]
