"""``quabla.scipy.stats.beta``, as ``jax.scipy.stats.beta``."""

from ..._src.numpy.elementwise import exp as _exp
from ..._src.scipy.stats_more import beta_logpdf as logpdf


def pdf(*args, **kwargs):
    """The density, ``exp(logpdf)``."""
    return _exp(logpdf(*args, **kwargs))


__all__ = ["logpdf", "pdf"]
