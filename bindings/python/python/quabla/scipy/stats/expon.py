"""``quabla.scipy.stats.expon``, as ``jax.scipy.stats.expon``."""

from ..._src.scipy.stats_families import expon as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf
logcdf = _family.logcdf
sf = _family.sf
logsf = _family.logsf
ppf = _family.ppf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
