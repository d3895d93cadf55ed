"""``quabla.scipy.stats.laplace``, as ``jax.scipy.stats.laplace``."""

from ..._src.scipy.stats_families import laplace as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf

__all__ = ["cdf", "logpdf", "pdf"]
