"""``quabla.scipy.stats.geom``, as ``jax.scipy.stats.geom``."""

from ..._src.scipy.stats_families import geom as _family

logpmf = _family.logpmf
pmf = _family.pmf

__all__ = ["logpmf", "pmf"]
