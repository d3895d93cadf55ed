"""``quabla.scipy.stats.betabinom``, as ``jax.scipy.stats.betabinom``."""

from ..._src.scipy.stats_families import betabinom as _family

logpmf = _family.logpmf
pmf = _family.pmf

__all__ = ["logpmf", "pmf"]
