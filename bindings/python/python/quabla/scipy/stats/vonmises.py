"""``quabla.scipy.stats.vonmises``, as ``jax.scipy.stats.vonmises``."""

from ..._src.scipy.stats_families import vonmises as _family

logpdf = _family.logpdf
pdf = _family.pdf

__all__ = ["logpdf", "pdf"]
