"""Kummer's confluent hypergeometric function ``hyp1f1`` and Gauss's ``hyp2f1``, as
``jax.scipy.special`` names them. ``hyp1f1``:
its power series (DLMF 13.2.2) summed in a bounded loop until the terms stop mattering,
after Kummer's transformation ``M(a, b, x) = e^x M(b - a, b, -x)`` for negative ``x`` (so
the terms keep one sign where ``a, b > 0``, instead of cancelling: JAX 0.10.2 sums the
alternating series and gets ``M(3, 0.5, -40)`` wrong by nine orders of magnitude). The
loop is a ``while_loop`` with ``max_steps``, so derivatives in ``a``, ``b`` and ``x``
come from reverse or forward mode through it."""

from __future__ import annotations

import numpy as np

from ..array import Array
from ..numpy import elementwise as el
from .special import _promote

# Terms needed grow like x (the largest term sits near k = x): 4,000 covers x up to about
# 700, where e^x overflows float64 anyway; the loop stops as soon as a term falls below
# an ulp of the sum.
_MAX_TERMS = 4000


def _series(factor, z, max_terms: int):
    """``sum_k t_k`` with ``t_0 = 1`` and ``t_(k+1) = t_k * factor(k) * z / (k + 1)``, until
    every term is below an ulp of its sum (at most ``max_terms`` trips)."""
    from ..control_flow import while_loop
    from ..numpy.creation import zeros
    from ..numpy.reductions import any as any_
    eps = float(np.finfo(np.dtype(str(z.dtype))).eps)

    def going(state):
        _, term, total = state
        return any_(el.abs(term) > eps * el.abs(total))

    def step(state):
        k, term, total = state
        term = term * factor(k) * z / (k + 1.0)
        return k + 1.0, term, total + term

    one = z * 0.0 + 1.0
    _, _, total = while_loop(going, step, (zeros((), z.dtype), one, one), max_steps=max_terms)
    return total


def hyp1f1(a, b, x) -> Array:
    """Kummer's ``M(a, b, x) = 1F1(a; b; x)`` for real arguments (``b`` not a non-positive
    integer, else NaN), differentiable in all three.

    >>> round(float(hyp1f1(1.0, 2.0, 1.0)), 12)  # (e - 1) / 1
    1.718281828459
    """
    a, b, x = _promote(a, b, x)
    negative = x < 0
    a_eff = el.where(negative, b - a, a)
    total = _series(lambda k: (a_eff + k) / (b + k), el.abs(x), _MAX_TERMS)
    out = el.where(negative, el.exp(x) * total, total)
    bad_b = (b <= 0) & (el.floor(b) == b)
    return el.where(bad_b | el.isnan(a) | el.isnan(b) | el.isnan(x), np.nan, out)


# 2F1's series needs about log(eps) / log(z) terms: 20,000 reach an ulp up to z = 0.998.
_MAX_TERMS_2F1 = 20000
_SERIES_LIMIT_2F1 = 0.998


def _series_2f1(a, b, c, z):
    """``sum_k (a)_k (b)_k / (c)_k z^k / k!`` for ``|z| < 1``."""
    return _series(lambda k: (a + k) * (b + k) / (c + k), z, _MAX_TERMS_2F1)


def _gamma_ratio(num, den):
    """``prod Gamma(num) / prod Gamma(den)`` through signs and ``gammaln`` (no overflow)."""
    from .special import gammaln, gammasgn
    log, sign = 0.0, 1.0
    for v in num:
        log, sign = log + gammaln(v), sign * gammasgn(v)
    for v in den:
        log, sign = log - gammaln(v), sign * gammasgn(v)
    return sign * el.exp(log)


def hyp2f1(a, b, c, x) -> Array:
    """Gauss's ``2F1(a, b; c; x)`` for real ``x <= 1`` (``c`` not a non-positive integer):
    the series, after Pfaff's transformation ``(1 - x)^-a 2F1(a, c - b; c; x / (x - 1))``
    for negative ``x`` (DLMF 15.8.1); past ``x = 0.9`` the connection to ``1 - x`` (DLMF
    15.8.4) when ``c - a - b`` is not an integer, else the series up to ``x = 0.998``
    (NaN beyond: the logarithmic case is not implemented); Gauss's theorem at ``x = 1``.
    Differentiable in all four.

    >>> round(float(hyp2f1(1.0, 1.0, 2.0, 0.5)), 12)  # -log(1 - x) / x
    1.386294361120
    """
    a, b, c, x = _promote(a, b, c, x)
    s = c - a - b
    integer_s = el.floor(s) == s
    negative = x < 0
    near_one = (x > 0.9) & (x < 1.0) & ~integer_s
    # The series argument of each branch, kept inside (-1, 1) where a branch is not taken.
    z = el.where(negative, x / (x - 1.0), el.where(near_one, 0.0, x))
    z = el.minimum(el.maximum(z, -0.5), _SERIES_LIMIT_2F1)
    b_series = el.where(negative, c - b, b)
    direct = _series_2f1(a, b_series, c, z)
    direct = el.where(negative, el.exp(-a * el.log1p(-el.minimum(x, 0.0))) * direct, direct)
    # 1 - x connection: two series in w = 1 - x. Where it is not taken its parameters are
    # replaced by harmless ones, so no Gamma pole's NaN reaches a derivative through the
    # zero cotangent of the unselected branch.
    def taken(v, safe):
        return el.where(near_one, v, safe)

    an, bn, cn, sn = taken(a, 0.5), taken(b, 0.5), taken(c, 2.0), taken(s, 1.0)
    w = taken(1.0 - x, 0.0)
    first = _gamma_ratio([cn, sn], [cn - an, cn - bn]) * _series_2f1(an, bn, 1.0 - sn, w)
    second = (_gamma_ratio([cn, taken(-s, 0.5)], [an, bn])
              * el.exp(sn * el.log(taken(w, 1.0))) * _series_2f1(cn - an, cn - bn, 1.0 + sn, w))
    out = el.where(near_one, first + second, direct)
    # Gauss's theorem at x = 1 (c - a - b > 0), likewise guarded.
    gauss = (x == 1.0) & (s > 0)
    ag, bg, cg = (el.where(gauss, v, safe) for v, safe in ((a, 0.25), (b, 0.25), (c, 1.0)))
    at_one = _gamma_ratio([cg, cg - ag - bg], [cg - ag, cg - bg])
    out = el.where(x == 1.0, el.where(s > 0, at_one, np.inf), out)
    uncovered = (x > 1.0) | ((x > _SERIES_LIMIT_2F1) & (x < 1.0) & integer_s)
    bad_c = (c <= 0) & (el.floor(c) == c)
    nan_in = el.isnan(a) | el.isnan(b) | el.isnan(c) | el.isnan(x)
    return el.where(uncovered | bad_c | nan_in, np.nan, out)
