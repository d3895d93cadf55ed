"""``jax.scipy.stats.gaussian_kde``: a weighted Gaussian kernel density estimate with
Scott's or Silverman's bandwidth (or a given factor), its density and log density,
integrals against boxes (1-D), Gaussians and other estimates, and resampling. A pytree
(the data and weights are its leaves), so it passes through ``jit`` and ``vmap``."""

from __future__ import annotations

import math
from typing import Any, Callable, Union

import numpy as np

from ..array import Array
from ..numpy import elementwise as el
from ..numpy.creation import asarray
from ..tree_util import register_pytree_node

__all__ = ["gaussian_kde"]


def _gauss_sum(points: Array, centres: Array, weights: Array, cov: Array, log: bool):
    """``sum_i w_i N(points_j; centres_i, cov)`` for every point ``j`` (or its log), through
    the Cholesky factor of ``cov``: ``(d, m)`` points, ``(d, n)`` centres."""
    from ..linalg import cholesky, solve_triangular
    from ..numpy.reductions import sum as sum_
    from .special import logsumexp
    d = centres.shape[0]
    low = cholesky(cov)
    diff = points[:, :, None] - centres[:, None, :]  # (d, m, n)
    z = solve_triangular(low, diff.reshape(d, -1), lower=True).reshape(diff.shape)
    log_norm = 0.5 * d * math.log(2 * math.pi) + sum_(el.log(el.abs(low.diagonal())))
    log_terms = -0.5 * sum_(z * z, axis=0) - log_norm + el.log(weights)[None, :]
    if log:
        return logsumexp(log_terms, axis=-1)
    return sum_(el.exp(log_terms), axis=-1)


class gaussian_kde:
    """A kernel density estimate of ``dataset`` (``(d, n)``, or ``(n,)`` for one dimension)
    with Gaussian kernels of covariance ``factor^2`` times the data's (weighted)
    covariance; ``bw_method``: ``'scott'`` (default, ``neff^(-1/(d+4))``), ``'silverman'``
    (``(neff (d+2)/4)^(-1/(d+4))``), a number (the factor), or a function of the estimate.

    >>> kde = gaussian_kde(qnp.asarray([0.0, 1.0, 3.0, 4.5, 2.0]))
    >>> round(float(kde.evaluate(qnp.asarray([0.5]))[0]), 8)
    0.15723515
    """

    def __init__(self, dataset, bw_method: Union[None, str, float, Callable] = None,
                 weights=None):
        from ..numpy.reductions import sum as sum_
        from ..numpy.shape import atleast_2d
        data = atleast_2d(asarray(dataset))
        if data.dtype.kind != "f":
            data = data.astype("float32")
        d, n = data.shape
        if n < 2:
            raise ValueError("gaussian_kde: the dataset needs more than one point")
        w = asarray(np.full(n, 1.0 / n)).astype(data.dtype) if weights is None else \
            asarray(weights).astype(data.dtype)
        if w.ndim != 1 or w.shape[0] != n:
            raise ValueError(f"gaussian_kde: weights must be a vector of the {n} points' "
                             f"weights, got shape {w.shape}")
        w = w / sum_(w)
        self.dataset, self.weights = data, w
        self.d, self.n = d, n
        self.neff = 1.0 / sum_(w * w)
        self._bw_method = "scott" if bw_method is None else bw_method
        self.covariance, self.inv_cov = self._kernel_covariance()

    def _factor(self):
        bw = self._bw_method
        if bw == "scott":
            return self.neff ** (-1.0 / (self.d + 4))
        if bw == "silverman":
            return (self.neff * (self.d + 2) / 4.0) ** (-1.0 / (self.d + 4))
        if callable(bw):
            return bw(self)
        if isinstance(bw, str):
            raise ValueError(f"gaussian_kde: bw_method must be 'scott', 'silverman', a "
                             f"number or a function, got {bw!r}")
        return asarray(bw).astype(self.dataset.dtype)

    def _kernel_covariance(self):
        from ..linalg import inv
        from ..numpy.reductions import sum as sum_
        w, x = self.weights, self.dataset
        mean = sum_(x * w[None, :], axis=1, keepdims=True)
        centred = x - mean
        # numpy's unbiased weighted covariance: divided by 1 - sum(w^2) for normalized w.
        data_cov = (centred * w[None, :]) @ centred.T / (1.0 - sum_(w * w))
        factor = self._factor()
        cov = data_cov * (factor * factor)
        return cov, inv(cov)

    def _points(self, points) -> Array:
        from ..numpy.shape import atleast_2d
        p = atleast_2d(asarray(points)).astype(self.dataset.dtype)
        if p.shape[0] != self.d:
            if p.shape[0] == 1 and p.shape[1] == self.d:
                return p.T
            raise ValueError(f"gaussian_kde: points have dimension {p.shape[0]}, the data "
                             f"{self.d}")
        return p

    def evaluate(self, points) -> Array:
        """The estimated density at ``points`` (``(d, m)``)."""
        return _gauss_sum(self._points(points), self.dataset, self.weights, self.covariance,
                          log=False)

    __call__ = pdf = evaluate

    def logpdf(self, points) -> Array:
        """The log density at ``points``, summed in log space (no underflow far out)."""
        return _gauss_sum(self._points(points), self.dataset, self.weights, self.covariance,
                          log=True)

    def integrate_gaussian(self, mean, cov) -> Array:
        """``int kde(x) N(x; mean, cov) dx``."""
        mean = asarray(mean).astype(self.dataset.dtype).reshape(self.d, 1)
        cov = asarray(cov).astype(self.dataset.dtype).reshape(self.d, self.d)
        return _gauss_sum(mean, self.dataset, self.weights, self.covariance + cov,
                          log=False)[0]

    def integrate_box_1d(self, low, high) -> Array:
        """The mass between ``low`` and ``high`` (one-dimensional data only)."""
        from ..numpy.reductions import sum as sum_
        from .special import ndtr
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        sd = el.sqrt(self.covariance[0, 0])
        x = self.dataset[0]
        return sum_(self.weights * (ndtr((high - x) / sd) - ndtr((low - x) / sd)))

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported (as in JAX): use :meth:`integrate_box_1d`."""
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def integrate_kde(self, other: "gaussian_kde") -> Array:
        """``int kde(x) other(x) dx``."""
        from ..numpy.reductions import sum as sum_
        if other.d != self.d:
            raise ValueError(f"integrate_kde: dimensions {other.d} and {self.d} differ")
        dens = _gauss_sum(other.dataset, self.dataset, self.weights,
                          self.covariance + other.covariance, log=False)
        return sum_(other.weights * dens)

    def resample(self, key, shape=()) -> Array:
        """``shape`` draws from the estimate (``(d, *shape)``): a data point chosen by
        weight, plus Gaussian noise of the kernel's covariance. Not JAX's stream."""
        from ... import random
        from ..linalg import cholesky
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        k1, k2 = random.split(key)
        idx = random.choice(k1, self.n, shape, p=self.weights)
        noise = random.normal(k2, (self.d,) + shape, self.dataset.dtype)
        low = cholesky(self.covariance)
        return self.dataset[:, idx] + (low @ noise.reshape(self.d, -1)).reshape(noise.shape)

    def set_bandwidth(self, bw_method=None):
        """Not supported (as in JAX): build a new estimate with the bandwidth."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")


def _flatten(k: gaussian_kde):
    return (k.dataset, k.weights, k.covariance, k.inv_cov, k.neff), (k.d, k.n, k._bw_method)


def _unflatten(aux: Any, children) -> gaussian_kde:
    k = object.__new__(gaussian_kde)
    k.dataset, k.weights, k.covariance, k.inv_cov, k.neff = children
    k.d, k.n, k._bw_method = aux
    return k


register_pytree_node(gaussian_kde, _flatten, _unflatten)
