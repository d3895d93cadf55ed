"""``quabla.scipy.special``, as ``jax.scipy.special``."""

from .._src.scipy.special import (  # noqa: F401
    betainc, betaln, digamma, erf, erfc, erfinv, expit, gamma, gammainc, gammaincc, gammaln, gammasgn,
    log_ndtr, logit, logsumexp, ndtr, ndtri, xlog1py, xlogy,
)
from .._src.scipy.special import __all__  # noqa: F401
