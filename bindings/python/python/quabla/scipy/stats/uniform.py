"""``quabla.scipy.stats.uniform``, as ``jax.scipy.stats.uniform``."""

from ..._src.scipy.stats_families import uniform as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf
ppf = _family.ppf

__all__ = ["cdf", "logpdf", "pdf", "ppf"]
