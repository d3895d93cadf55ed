"""``quabla.scipy.stats.gamma``, as ``jax.scipy.stats.gamma``."""

from ..._src.numpy.elementwise import exp as _exp
from ..._src.scipy.stats_more import gamma_logpdf as logpdf


def pdf(*args, **kwargs):
    """The density, ``exp(logpdf)``."""
    return _exp(logpdf(*args, **kwargs))


__all__ = ["logpdf", "pdf"]
