"""``quabla.scipy.stats.multivariate_normal``, as ``jax.scipy.stats.multivariate_normal``."""

from ..._src.scipy.stats_mvn import logpdf, pdf  # noqa: F401

__all__ = ["logpdf", "pdf"]
