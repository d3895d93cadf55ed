"""More of ``jax.scipy.special``, composed of the log-gamma functions: ``poch``, ``comb``,
``loggamma``, ``boxcox`` and ``boxcox1p``."""

from __future__ import annotations

import numpy as np

from ..array import Array
from ..numpy import elementwise as el
from ..numpy.creation import full_like, ones_like, zeros_like
from .special import _promote, gammaln, gammasgn


def poch(z, m) -> Array:
    """Pochhammer's rising factorial ``Gamma(z + m) / Gamma(z)``, from the log-gammas and
    their signs, so it stays finite where the two gammas overflow; 1 when ``m`` is 0, NaN
    at the gammas' poles."""
    z, m = _promote(z, m)
    value = gammasgn(z + m) * gammasgn(z) * el.exp(gammaln(z + m) - gammaln(z))
    return el.where(m == 0, ones_like(value), value)


def comb(N, k, *, repetition: bool = False) -> Array:
    """``N`` choose ``k`` as a float, from log-gammas (JAX's; ``exact`` is scipy's only):
    0 when ``N < 0``, ``k < 0`` or ``k > N``; with ``repetition``, ``comb(N + k - 1, k)``
    (1 for ``k == 0``)."""
    N, k = _promote(N, k)
    if repetition:
        return el.where((k == 0) & (N >= 0), ones_like(N), comb(N + k - 1, k))
    inside = (k <= N) & (N >= 0) & (k >= 0)
    # Outside, the log-gammas would see poles: give them 0 and discard the result.
    n = el.where(inside, N, zeros_like(N))
    j = el.where(inside, k, zeros_like(k))
    value = el.exp(gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1))
    return el.where(inside, value, zeros_like(value))


def loggamma(x) -> Array:
    """``log(Gamma(x))`` for real ``x``: ``gammaln`` where ``x > 0``, NaN elsewhere (JAX's
    real branch; 0 included)."""
    (x,) = _promote(x)
    value = gammaln(x)
    return el.where(x > 0, value, full_like(value, np.nan))


def _box_cox(log_x, lmbda) -> Array:
    # Where lmbda is 0 the other branch divides by a stand-in 1, so neither the value nor a
    # derivative picks up 0/0 from the branch not taken.
    zero = lmbda == 0
    safe = el.where(zero, ones_like(lmbda), lmbda)
    return el.where(zero, log_x, el.expm1(safe * log_x) / safe)


def boxcox(x, lmbda) -> Array:
    """The Box-Cox transform: ``(x**lmbda - 1) / lmbda``, ``log(x)`` at ``lmbda == 0``
    (where the derivative in ``lmbda`` is taken as 0, that of the ``log`` branch)."""
    x, lmbda = _promote(x, lmbda)
    return _box_cox(el.log(x), lmbda)


def boxcox1p(x, lmbda) -> Array:
    """:func:`boxcox` of ``1 + x``, accurate for small ``x`` (``log1p``)."""
    x, lmbda = _promote(x, lmbda)
    return _box_cox(el.log1p(x), lmbda)


__all__ = ["boxcox", "boxcox1p", "comb", "loggamma", "poch"]
