"""``quabla.scipy.stats.gumbel_l``, as ``jax.scipy.stats.gumbel_l``."""

from ..._src.scipy.stats_families import gumbel_l as _family

logpdf = _family.logpdf
pdf = _family.pdf
cdf = _family.cdf
logcdf = _family.logcdf
sf = _family.sf
logsf = _family.logsf
ppf = _family.ppf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
