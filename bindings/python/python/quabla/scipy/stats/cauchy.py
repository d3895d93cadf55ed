"""``quabla.scipy.stats.cauchy``, as ``jax.scipy.stats.cauchy``."""

from ..._src.scipy.stats_families import cauchy as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf
logcdf = _family.logcdf
sf = _family.sf
logsf = _family.logsf
ppf = _family.ppf
isf = _family.isf

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
