"""``quabla.scipy.stats``, as ``jax.scipy.stats`` (``norm`` so far)."""

from . import norm  # noqa: F401

__all__ = ["norm"]
