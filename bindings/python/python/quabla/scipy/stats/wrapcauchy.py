"""``quabla.scipy.stats.wrapcauchy``, as ``jax.scipy.stats.wrapcauchy``."""

from ..._src.scipy.stats_families import wrapcauchy as _family

logpdf = _family.logpdf
pdf = _family.pdf

__all__ = ["logpdf", "pdf"]
