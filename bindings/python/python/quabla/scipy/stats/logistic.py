"""``quabla.scipy.stats.logistic``, as ``jax.scipy.stats.logistic``."""

from ..._src.scipy.stats_families import logistic as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf
sf = _family.sf
ppf = _family.ppf
isf = _family.isf

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]
