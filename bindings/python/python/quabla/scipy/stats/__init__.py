"""``quabla.scipy.stats``, as ``jax.scipy.stats``: one module per distribution family
(``norm``, ``t``, ``gamma``, ``expon``, ``binom``, ``dirichlet``, ...)."""

from . import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from ..._src.scipy.stats_kde import gaussian_kde  # noqa: F401
from ..._src.scipy.stats_summaries import ModeResult, mode, rankdata, sem  # noqa: F401

__all__ = ["gaussian_kde", "ModeResult", "mode", "rankdata", "sem", "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
