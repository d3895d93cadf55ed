"""``quabla.scipy.stats``, as ``jax.scipy.stats`` (``norm`` and ``multivariate_normal`` so
far)."""

from . import multivariate_normal, norm  # noqa: F401

__all__ = ["multivariate_normal", "norm"]
