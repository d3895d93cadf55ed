"""``quabla.scipy.stats.norm``, as ``jax.scipy.stats.norm``."""

from ..._src.scipy.stats_norm import (  # noqa: F401
    cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf,
)
from ..._src.scipy.stats_norm import __all__  # noqa: F401
