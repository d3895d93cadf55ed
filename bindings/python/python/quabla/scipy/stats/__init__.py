"""``quabla.scipy.stats``, as ``jax.scipy.stats``: ``norm``, ``multivariate_normal``, ``t``,
``gamma``, ``beta``, ``poisson``, ``bernoulli``."""

from . import bernoulli, beta, gamma, multivariate_normal, norm, poisson, t  # noqa: F401

__all__ = ["bernoulli", "beta", "gamma", "multivariate_normal", "norm", "poisson", "t"]
