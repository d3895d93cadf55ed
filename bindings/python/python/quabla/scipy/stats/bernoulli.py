"""``quabla.scipy.stats.bernoulli``, as ``jax.scipy.stats.bernoulli``."""

from ..._src.numpy.elementwise import exp as _exp
from ..._src.scipy.stats_more import bernoulli_cdf as cdf, bernoulli_logpmf as logpmf
from ..._src.scipy.stats_discrete_more import bernoulli_ppf as ppf


def pmf(k, p, loc=0):
    """The probability, ``exp(logpmf)``."""
    return _exp(logpmf(k, p, loc))


__all__ = ["cdf", "logpmf", "pmf", "ppf"]
