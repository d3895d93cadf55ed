"""The multivariate normal distribution, as ``jax.scipy.stats.multivariate_normal``."""

from __future__ import annotations

import math

from ..numpy import elementwise as el
from ..numpy import reductions as red
from . import special


def logpdf(x, mean, cov, allow_singular=None):
    """``log N(x; mean, cov)`` over the last axis (``cov`` a matrix, or a scalar variance
    shared by every coordinate; a scalar ``mean`` makes it univariate), by Cholesky, as JAX.

    >>> logpdf(qnp.zeros(2), qnp.zeros(2), qnp.eye(2))  # -log(2 pi)
    """
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not "
                                  "supported, as in JAX")
    x, mean, cov = special._promote(x, mean, cov, broadcast=False)
    log2pi = math.log(2 * math.pi)
    if not mean.shape:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (log2pi + el.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not cov.shape:
        return -0.5 * red.sum(y * y, axis=-1) / cov - n / 2 * (log2pi + el.log(cov))
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    from ..linalg import cholesky, triangular_solve
    from ..numpy.shape import broadcast_shapes, broadcast_to, diagonal
    l = cholesky(cov)
    # y L^-T as a row: the whitened residual, batched over y's and cov's leading axes.
    batch = tuple(broadcast_shapes(tuple(l.shape[:-2]), tuple(y.shape[:-1])))
    lb = broadcast_to(l, batch + (n, n))
    yb = broadcast_to(y, batch + (n,))[..., None, :]
    z = triangular_solve(lb, yb, left_side=False, lower=True, transpose_a=True)[..., 0, :]
    return (-0.5 * red.sum(z * z, axis=-1) - n / 2 * log2pi
            - red.sum(el.log(diagonal(l, axis1=-2, axis2=-1)), axis=-1))


def pdf(x, mean, cov):
    """The density, ``exp(logpdf)``."""
    return el.exp(logpdf(x, mean, cov))


__all__ = ["logpdf", "pdf"]
