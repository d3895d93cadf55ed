"""``quabla.scipy.stats.beta``, as ``jax.scipy.stats.beta``."""

from ..._src.numpy.elementwise import exp as _exp, log as _log
from ..._src.scipy.stats_more import beta_cdf as cdf, beta_logpdf as logpdf, beta_sf as sf


def pdf(*args, **kwargs):
    """The density, ``exp(logpdf)``."""
    return _exp(logpdf(*args, **kwargs))


def logcdf(*args, **kwargs):
    """``log(cdf)``."""
    return _log(cdf(*args, **kwargs))


def logsf(*args, **kwargs):
    """``log(sf)``."""
    return _log(sf(*args, **kwargs))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
