"""``quabla.scipy.stats.multinomial``, as ``jax.scipy.stats.multinomial``."""

from ..._src.scipy.stats_families import multinomial as _family

logpmf = _family.logpmf
pmf = _family.pmf

__all__ = ["logpmf", "pmf"]
