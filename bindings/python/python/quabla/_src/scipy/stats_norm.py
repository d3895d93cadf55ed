"""The normal distribution, as ``jax.scipy.stats.norm``."""

from __future__ import annotations

import math

from ..numpy import elementwise as el
from . import special


def logpdf(x, loc=0, scale=1):
    """``log N(x; loc, scale**2)``.

    >>> logpdf(0.0)  # -0.9189...
    """
    x, loc = special._promote(x, loc)
    scale = special._float(scale).astype(x.dtype)
    var = scale * scale
    return -(el.log(2 * math.pi * var) + (x - loc) * (x - loc) / var) / 2


def pdf(x, loc=0, scale=1):
    """The density, ``exp(logpdf)``."""
    return el.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The CDF, ``ndtr((x - loc) / scale)``."""
    x, loc = special._promote(x, loc)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """``log_ndtr((x - loc) / scale)``."""
    x, loc = special._promote(x, loc)
    return special.log_ndtr((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    """The quantile function, ``ndtri(q) * scale + loc``."""
    return special.ndtri(q) * scale + loc


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, as ``cdf(-x, -loc, scale)``."""
    x, loc = special._promote(x, loc)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """``log(sf)``, as ``logcdf(-x, -loc, scale)``."""
    x, loc = special._promote(x, loc)
    return logcdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """The inverse survival function, ``ppf(1 - q)``."""
    return ppf(1 - special._float(q), loc, scale)


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
