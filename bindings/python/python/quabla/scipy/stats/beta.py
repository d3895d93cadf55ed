"""``quabla.scipy.stats.beta``, as ``jax.scipy.stats.beta``."""

from ..._src.scipy.stats_more import (
    beta_cdf as cdf, beta_logpdf as logpdf, beta_sf as sf, with_logs_and_density,
)

pdf, logcdf, logsf = with_logs_and_density(logpdf, cdf, sf)

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
