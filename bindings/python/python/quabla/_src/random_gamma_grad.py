"""Gamma draws that differentiate with respect to their shape parameter, by implicit
reparameterisation as JAX's: a draw ``z`` of CDF ``P(a, z)`` moves with ``a`` as
``dz/da = -(dP/da) / (dP/dz)`` (the CDF held at the uniform that produced it), so Gamma,
log-Gamma, Beta and Dirichlet samples carry gradients (variational inference with these
families). Also ``lax.igamma_grad_a`` and ``lax.random_gamma_grad``, JAX's names for the two
pieces."""

from __future__ import annotations

from typing import Callable

from .array import Array
from .numpy.creation import asarray


def igamma_grad_a(a, x) -> Array:
    """``dP/da`` of the regularized lower incomplete gamma function ``P(a, x)``, as
    ``jax.lax.igamma_grad_a`` (forward mode through ``scipy.special.gammainc``).

    >>> round(float(igamma_grad_a(1.0, 1.2)), 6)
    -0.387177
    """
    from .api import jvp
    from .scipy.special import _promote, gammainc
    from .numpy.creation import ones_like
    a, x = _promote(a, x)
    return jvp(lambda s: gammainc(s, x), (a,), (ones_like(a),))[1]


def random_gamma_grad(a, x) -> Array:
    """``dx/da`` of a Gamma(a) draw ``x`` at a fixed CDF value, as
    ``jax.lax.random_gamma_grad``: ``-(dP/da) / pdf(x)``, the density in log space; zero at
    ``x = 0``.

    >>> round(float(random_gamma_grad(1.0, 1.2)), 6)
    1.285472
    """
    from .numpy import elementwise as el
    from .scipy.special import _promote, gammaln
    a, x = _promote(a, x)
    positive = x > 0
    safe = el.where(positive, x, 1.0)
    log_pdf = (a - 1.0) * el.log(safe) - safe - gammaln(a)
    return el.where(positive, -igamma_grad_a(a, safe) / el.exp(log_pdf), 0.0)


def _log_random_gamma_grad(a, log_x) -> Array:
    """``d log x / da`` of a Gamma(a) draw given ``log x``: ``random_gamma_grad / x`` with
    ``x * pdf(x)`` formed in log space, so small draws (tiny ``a``) stay finite."""
    from .numpy import elementwise as el
    from .scipy.special import gammaln
    x = el.exp(log_x)
    log_x_pdf = a * log_x - x - gammaln(a)
    return el.where(x > 0, -igamma_grad_a(a, x) / el.exp(log_x_pdf), 0.0)


def differentiable_draws(sample: Callable, log_space: bool) -> Callable:
    """``sample(keys, a)`` (one draw per key, ``a`` flat) with the implicit gradient in
    ``a`` attached (the keys have none)."""
    from .custom_derivatives import custom_jvp

    @custom_jvp
    def draws(keys, a):
        return sample(keys, a)

    @draws.defjvp
    def draws_jvp(primals, tangents):
        keys, a = primals
        da = asarray(tangents[1])
        z = draws(keys, a)
        slope = _log_random_gamma_grad(a, z) if log_space else random_gamma_grad(a, z)
        return z, slope * da

    return draws
