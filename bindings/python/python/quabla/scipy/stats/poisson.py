"""``quabla.scipy.stats.poisson``, as ``jax.scipy.stats.poisson`` (``logpmf``, ``pmf``,
``cdf``, ``entropy``)."""

from ..._src.numpy.elementwise import exp as _exp
from ..._src.scipy.stats_more import poisson_cdf as cdf, poisson_logpmf as logpmf
from ..._src.scipy.stats_discrete_more import poisson_entropy as entropy


def pmf(k, mu, loc=0):
    """The probability, ``exp(logpmf)``."""
    return _exp(logpmf(k, mu, loc))


__all__ = ["cdf", "entropy", "logpmf", "pmf"]
