"""``quabla.scipy.stats.dirichlet``, as ``jax.scipy.stats.dirichlet``."""

from ..._src.scipy.stats_families import dirichlet as _family

logpdf = _family.logpdf
pdf = _family.pdf

__all__ = ["logpdf", "pdf"]
