"""``quabla.scipy.stats.gennorm``, as ``jax.scipy.stats.gennorm``."""

from ..._src.scipy.stats_families import gennorm as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf

__all__ = ["cdf", "logpdf", "pdf"]
