"""``quabla.scipy.stats.nbinom``, as ``jax.scipy.stats.nbinom``."""

from ..._src.scipy.stats_families import nbinom as _family

logpmf = _family.logpmf
pmf = _family.pmf

__all__ = ["logpmf", "pmf"]
