"""``quabla.scipy.stats.chi2``, as ``jax.scipy.stats.chi2``."""

from ..._src.scipy.stats_more import (
    chi2_cdf as cdf, chi2_logpdf as logpdf, chi2_sf as sf, with_logs_and_density,
)

pdf, logcdf, logsf = with_logs_and_density(logpdf, cdf, sf)

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
