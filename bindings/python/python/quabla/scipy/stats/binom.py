"""``quabla.scipy.stats.binom``, as ``jax.scipy.stats.binom``."""

from ..._src.scipy.stats_families import binom as _family

logpmf = _family.logpmf
pmf = _family.pmf

__all__ = ["logpmf", "pmf"]
