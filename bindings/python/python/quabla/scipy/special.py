"""``quabla.scipy.special``, as ``jax.scipy.special``."""

from .._src.scipy.special import (  # noqa: F401
    beta, betainc, betaln, digamma, entr, erf, erfc, erfinv, expit, factorial, gamma,
    gammainc, gammaincc, gammaln, gammasgn, kl_div, log_ndtr, log_softmax, logit, logsumexp,
    multigammaln, ndtr, ndtri, polygamma, rel_entr, softmax, xlog1py, xlogy, zeta,
)
from .._src.scipy.special_more import (  # noqa: F401
    boxcox, boxcox1p, comb, loggamma, poch,
)
from .._src.scipy.special_series import (  # noqa: F401
    bernoulli, bessel_jn, dawsn, erfcx, exp1, expi, i0, i0e, i1, i1e,
)
from .._src.scipy.special_integrals import expn, owens_t, spence  # noqa: F401
from .._src.scipy.special_oscillatory import fresnel, sici  # noqa: F401
from .._src.scipy.special_hypergeometric import hyp1f1, hyp2f1  # noqa: F401
from .._src.scipy.special import __all__ as _base
from .._src.scipy.special_more import __all__ as _more
from .._src.scipy.special_series import __all__ as _series

__all__ = list(_base) + list(_more) + list(_series) + ["expn", "fresnel", "hyp1f1", "hyp2f1", "owens_t", "sici", "spence"]
