"""``quabla.scipy.stats``, as ``jax.scipy.stats``: ``norm``, ``multivariate_normal``, ``t``,
``gamma``, ``beta``, ``chi2``, ``poisson``, ``bernoulli``."""

from . import bernoulli, beta, chi2, gamma, multivariate_normal, norm, poisson, t  # noqa: F401

__all__ = ["bernoulli", "beta", "chi2", "gamma", "multivariate_normal", "norm", "poisson", "t"]
