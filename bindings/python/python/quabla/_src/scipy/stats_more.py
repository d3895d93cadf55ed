"""Student's t, gamma, beta, Poisson and Bernoulli distributions, as
``jax.scipy.stats.{t, gamma, beta, poisson, bernoulli}`` (JAX's formulas, so its values at
the support's edges)."""

from __future__ import annotations

import math

import numpy as np

from ..array import Array
from ..numpy import elementwise as el
from . import special as sp


_args = sp._promote


def t_logpdf(x, df, loc=0, scale=1) -> Array:
    """log density of Student's t with ``df`` degrees of freedom."""
    x, df, loc, scale = _args(x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2
    norm = sp.gammaln(half) + el.log(scale * scale * (df * math.pi)) / 2 \
        - sp.gammaln(half + 0.5)
    return -(norm + (half + 0.5) * el.log1p(y * y / df))


def gamma_logpdf(x, a, loc=0, scale=1) -> Array:
    """log density of the gamma distribution of shape ``a``; -inf below ``loc``."""
    x, a, loc, scale = _args(x, a, loc, scale)
    y = (x - loc) / scale
    out = sp.xlogy(a - 1.0, y) - y - (sp.gammaln(a) + el.log(scale))
    return el.where(x < loc, -np.inf, out)


def beta_logpdf(x, a, b, loc=0, scale=1) -> Array:
    """log density of the beta distribution; -inf outside ``[loc, loc + scale]``, NaN for
    non-positive parameters."""
    x, a, b, loc, scale = _args(x, a, b, loc, scale)
    y = (x - loc) / scale
    out = -sp.betaln(a, b) + sp.xlogy(a - 1.0, y) + sp.xlog1py(b - 1.0, -y) - el.log(scale)
    out = el.where((x > loc + scale) | (x < loc), -np.inf, out)
    return el.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def poisson_logpmf(k, mu, loc=0) -> Array:
    """log probability of ``k`` events at rate ``mu``; -inf off the non-negative
    integers."""
    k, mu, loc = _args(k, mu, loc)
    x = k - loc
    out = sp.xlogy(x, mu) - sp.gammaln(x + 1.0) - mu
    return el.where((x < 0) | (el.round(k) != k), -np.inf, out)


def bernoulli_logpmf(k, p, loc=0) -> Array:
    """log probability of ``k`` (0 or 1) with success probability ``p``."""
    k, p, loc = _args(k, p, loc)
    x = k - loc
    out = sp.xlogy(x, p) + sp.xlog1py(1.0 - x, -p)
    return el.where((x < 0) | (x > 1), -np.inf, out)


def bernoulli_cdf(k, p) -> Array:
    """P(X <= k): 0 below 0, ``1 - p`` on [0, 1), 1 from 1; NaN for NaN or ``p`` outside
    [0, 1]."""
    from ..numpy.selection import select
    from ..numpy.creation import asarray
    k, p = _args(k, p)
    const = lambda v: asarray(v, k.dtype)  # noqa: E731
    return select([el.isnan(k) | el.isnan(p) | (p < 0) | (p > 1), k < 0, k < 1],
                  [const(np.nan), const(0.0), 1.0 - p], const(1.0))


def gamma_cdf(x, a, loc=0, scale=1) -> Array:
    """P(X <= x) for the gamma distribution: ``gammainc(a, (x - loc) / scale)``, 0 below
    ``loc``."""
    x, a, loc, scale = _args(x, a, loc, scale)
    return sp.gammainc(a, el.maximum((x - loc) / scale, 0.0))


def gamma_sf(x, a, loc=0, scale=1) -> Array:
    """P(X > x) for the gamma distribution, ``gammaincc``: accurate in the upper tail."""
    x, a, loc, scale = _args(x, a, loc, scale)
    return sp.gammaincc(a, el.maximum((x - loc) / scale, 0.0))


def poisson_cdf(k, mu, loc=0) -> Array:
    """P(K <= k): ``gammaincc(floor(k - loc) + 1, mu)``, 0 below ``loc``."""
    k, mu, loc = _args(k, mu, loc)
    x = k - loc
    return el.where(x < 0, 0.0, sp.gammaincc(el.floor(1.0 + x), mu))


def chi2_logpdf(x, df, loc=0, scale=1) -> Array:
    """log density of the chi-square distribution with ``df`` degrees of freedom."""
    x, df, loc, scale = _args(x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2.0
    kernel = (half - 1.0) * el.log(y) - y / 2.0
    norm = -(sp.gammaln(half) + math.log(2.0) * df / 2.0)
    return el.where(x < loc, -np.inf, norm - el.log(scale) + kernel)


def chi2_cdf(x, df, loc=0, scale=1) -> Array:
    """P(X <= x) for the chi-square distribution, ``gammainc(df / 2, y / 2)``."""
    x, df, loc, scale = _args(x, df, loc, scale)
    return sp.gammainc(df / 2.0, el.maximum((x - loc) / scale, 0.0) / 2.0)


def chi2_sf(x, df, loc=0, scale=1) -> Array:
    """P(X > x) for the chi-square distribution, ``gammaincc(df / 2, y / 2)``."""
    x, df, loc, scale = _args(x, df, loc, scale)
    return sp.gammaincc(df / 2.0, el.maximum((x - loc) / scale, 0.0) / 2.0)


def beta_cdf(x, a, b, loc=0, scale=1) -> Array:
    """P(X <= x) for the beta distribution, ``betainc(a, b, y)`` with ``y`` clipped to
    [0, 1]."""
    x, a, b, loc, scale = _args(x, a, b, loc, scale)
    y = el.minimum(el.maximum((x - loc) / scale, 0.0), 1.0)
    return sp.betainc(a, b, y)


def beta_sf(x, a, b, loc=0, scale=1) -> Array:
    """P(X > x) for the beta distribution, ``betainc(b, a, 1 - y)``."""
    x, a, b, loc, scale = _args(x, a, b, loc, scale)
    y = el.minimum(el.maximum((x - loc) / scale, 0.0), 1.0)
    return sp.betainc(b, a, 1.0 - y)


def with_logs_and_density(logpdf, cdf, sf):
    """``(pdf, logcdf, logsf)`` of a distribution from its ``logpdf``, ``cdf`` and ``sf``."""
    def pdf(*args, **kwargs):
        """The density, ``exp(logpdf)``."""
        return el.exp(logpdf(*args, **kwargs))

    def logcdf(*args, **kwargs):
        """``log(cdf)``."""
        return el.log(cdf(*args, **kwargs))

    def logsf(*args, **kwargs):
        """``log(sf)``."""
        return el.log(sf(*args, **kwargs))

    return pdf, logcdf, logsf
