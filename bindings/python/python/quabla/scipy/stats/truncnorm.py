"""``quabla.scipy.stats.truncnorm``, as ``jax.scipy.stats.truncnorm``."""

from ..._src.scipy.stats_families import truncnorm as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf
logcdf = _family.logcdf
sf = _family.sf
logsf = _family.logsf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
