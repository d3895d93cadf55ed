"""``quabla.scipy.stats.gamma``, as ``jax.scipy.stats.gamma``."""

from ..._src.scipy.stats_more import (
    gamma_cdf as cdf, gamma_logpdf as logpdf, gamma_sf as sf, with_logs_and_density,
)

pdf, logcdf, logsf = with_logs_and_density(logpdf, cdf, sf)

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
