"""``quabla.scipy.stats.pareto``, as ``jax.scipy.stats.pareto``."""

from ..._src.scipy.stats_families import pareto as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf
logcdf = _family.logcdf
sf = _family.sf
logsf = _family.logsf
ppf = _family.ppf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
