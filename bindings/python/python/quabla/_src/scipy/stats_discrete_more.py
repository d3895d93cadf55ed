"""``jax.scipy.stats.bernoulli.ppf`` and ``jax.scipy.stats.poisson.entropy``, with JAX's
formulas (so its values at the edges and in each ``mu`` regime)."""

from __future__ import annotations

import math

import numpy as np

from ..array import Array
from ..numpy import elementwise as el
from . import special as sp
from .stats_more import poisson_logpmf

__all__ = ["bernoulli_ppf", "poisson_entropy"]


def bernoulli_ppf(q, p) -> Array:
    """The smallest ``k`` in {0, 1} with ``P(X <= k) >= q``: 0 for ``q <= 1 - p``, else 1;
    NaN for NaN arguments or ``q``, ``p`` outside [0, 1]."""
    q, p = sp._promote(q, p)
    bad = el.isnan(q) | el.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return el.where(bad, np.nan, el.where(q <= 1 - p, 0.0, 1.0))


def _summed_entropy(mu: Array, terms: int, bound) -> Array:
    """``-sum p log p`` over ``k < min(terms, bound)`` of the Poisson pmf (``mu`` a
    vector)."""
    from ..numpy.creation import arange
    from ..numpy.reductions import sum as sum_
    k = arange(terms, dtype=mu.dtype)[:, None]
    probs = el.exp(poisson_logpmf(k, mu[None, :]))
    probs = el.where(k < el.ceil(bound)[None, :], probs, 0.0)
    return sum_(sp.entr(probs), axis=0)


def poisson_entropy(mu, loc=0) -> Array:
    """The entropy of the Poisson distribution of mean ``mu`` (``loc`` shifts it and does
    not change it), as JAX: 0 at ``mu = 0``; the pmf summed directly below 10 (35 terms)
    and below 100 (250 terms, up to ``mu + 10 sqrt(mu) + 20``); the asymptotic
    ``log(2 pi e mu) / 2 - 1 / (12 mu)`` above; NaN for negative ``mu``."""
    from ..numpy.shape import broadcast_shapes, broadcast_to
    mu, loc = sp._promote(mu, loc)
    shape = broadcast_shapes(mu.shape, loc.shape)
    flat = mu.reshape(-1)
    small = _summed_entropy(flat, 35, flat + 20)
    medium = _summed_entropy(flat, 250, flat + 10 * el.sqrt(flat) + 20)
    large = 0.5 * el.log(2 * math.pi * math.e * flat) - 1.0 / (12 * flat)
    out = el.where(flat == 0, 0.0, el.where(flat < 10, small,
                                              el.where(flat < 100, medium, large)))
    return broadcast_to(out.reshape(mu.shape), shape)
