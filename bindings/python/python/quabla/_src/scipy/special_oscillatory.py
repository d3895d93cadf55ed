"""The sine and cosine integrals ``sici`` and the Fresnel integrals ``fresnel``, as
``jax.scipy.special`` names them: their power series near zero (DLMF 6.6.5-6, 7.6.4-5),
and beyond, continued fractions in the complex plane (for ``E1(ix)`` and for ``erfc`` on
the diagonal) evaluated backward to a fixed depth, in real arithmetic on (re, im) pairs
since Quabla has no complex dtype. Derivatives are the closed forms (``custom_jvp``)."""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np

from ..api import custom_jvp, jit
from ..array import Array
from ..numpy import elementwise as el
from .special import _float

_EULER = 0.57721566490153286061
Pair = Tuple[Array, Array]


def _div(a: Pair, b: Pair) -> Pair:
    """``a / b`` for complex numbers as (re, im), scaled by the larger part of ``b`` (Smith's
    method) so neither overflows."""
    ar, ai = a
    br, bi = b
    wide = el.abs(br) >= el.abs(bi)
    r = el.where(wide, bi / br, br / bi)
    d = el.where(wide, br + bi * r, bi + br * r)
    re = el.where(wide, ar + ai * r, ar * r + ai) / d
    im = el.where(wide, ai - ar * r, ai * r - ar) / d
    return re, im


def _mul(a: Pair, b: Pair) -> Pair:
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


# Below these the series (their largest term stays below 3); above, the fractions, whose
# fixed depths converge to an ulp at the switch point (checked against mpmath).
_SICI_SWITCH, _SICI_DEPTH, _SICI_TERMS = 2.0, 80, 24
_FRESNEL_SWITCH, _FRESNEL_DEPTH, _FRESNEL_TERMS = 1.5, 60, 24


def _sici_value(x):
    """``(Si(x), Ci(x))``: Si odd, Ci of ``|x|`` (JAX's real part), ``Ci(0) = -inf``."""
    t = el.abs(x)
    small = t <= _SICI_SWITCH
    s = el.where(small, t, 1.0)
    s2 = s * s
    term = s + 0.0  # (-1)^k s^(2k+1) / (2k+1)!
    si = s + 0.0
    ci_sum = s * 0.0
    for k in range(1, _SICI_TERMS):
        term = -term * s2 / ((2 * k) * (2 * k + 1))
        si = si + term / (2 * k + 1)
        # (-1)^k s^(2k) / (2k)! is term * (2k+1) / s.
        ci_sum = ci_sum + term * (2 * k + 1) / s / (2 * k)
    ci_small = _EULER + el.log(el.where(t > 0, s, 1.0)) + ci_sum
    # E1(it) e^(it) = 1 / (it + 1 - 1 / (it + 3 - 4 / (it + 5 - ...))), t > 2.
    big = el.where(small, 3.0, t)
    zero = big * 0.0
    g: Pair = (zero + 2.0 * _SICI_DEPTH + 1.0, big)
    for k in range(_SICI_DEPTH - 1, -1, -1):
        q = _div((zero + float((k + 1) ** 2), zero), g)
        g = (2.0 * k + 1.0 - q[0], big - q[1])
    e1 = _div((el.cos(big), -el.sin(big)), g)
    si = el.where(small, si, math.pi / 2 + e1[1])
    ci = el.where(small, ci_small, -e1[0])
    ci = el.where(t == 0, -np.inf, el.where(el.isinf(t), 0.0, ci))
    si = el.where(el.isinf(t), math.pi / 2, si)
    return el.where(x < 0, -si, si), ci


# Compiled once a signature: eagerly, the fractions' hundreds of small ops would each be
# dispatched on their own (inside a trace, jit inlines). One custom_jvp gives both
# integrals, so they share one evaluation.
_sici = custom_jvp(jit(_sici_value))


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    safe = el.where(x == 0, 1.0, x)
    sinc = el.where(x == 0, 1.0, el.sin(x) / safe)
    return _sici(x), (t * sinc, t * el.cos(x) / x)


def sici(x) -> Tuple[Array, Array]:
    """``(Si(x), Ci(x))``: ``Si(x) = int_0^x sin(t)/t dt``, ``Ci(x) = gamma + ln x +
    int_0^x (cos t - 1)/t dt``; for negative ``x``, ``Si(-x) = -Si(x)`` and ``Ci`` is
    ``Ci(|x|)`` (the real part, as JAX's). Derivatives ``sin(x)/x`` and ``cos(x)/x``.

    >>> [round(float(v), 6) for v in sici(1.0)]
    [0.946083, 0.337404]
    """
    si, ci = _sici(_float(x))
    return si, ci


def _fresnel_value(x):
    """``(S(x), C(x))`` with ``S = int_0^x sin(pi t^2 / 2) dt``, ``C`` with ``cos``; odd."""
    a = el.abs(x)
    small = a <= _FRESNEL_SWITCH
    s = el.where(small, a, 1.0)
    h = 0.5 * math.pi * s * s  # the phase pi s^2 / 2
    # C = sum (-1)^k h^(2k) s / ((2k)! (4k+1)), S = sum (-1)^k h^(2k+1) s / ((2k+1)! (4k+3)).
    c_term = s + 0.0
    c_sum = s + 0.0
    s_term = s * h
    s_sum = s_term / 3.0
    for k in range(1, _FRESNEL_TERMS):
        c_term = -c_term * h * h / ((2 * k - 1) * (2 * k))
        c_sum = c_sum + c_term / (4 * k + 1)
        s_term = -s_term * h * h / ((2 * k) * (2 * k + 1))
        s_sum = s_sum + s_term / (4 * k + 3)
    # Beyond: C + iS = (1+i)/2 (1 - e^(i pi a^2/2) (a - ia) F), F = 1/(b1 + a2/(b2 + ...)),
    # b_k = 4k - 3 - i pi a^2, a_k = -(2k - 3)(2k - 2): the even form of erfc's fraction
    # on the diagonal.
    big = el.where(small, 2.0, a)
    zero = big * 0.0
    phase = math.pi * big * big
    g: Pair = (zero + 4.0 * _FRESNEL_DEPTH - 3.0, -phase)
    for k in range(_FRESNEL_DEPTH - 1, 0, -1):
        n = 2 * (k + 1) - 3
        q = _div((zero - float(n * (n + 1)), zero), g)
        g = (4.0 * k - 3.0 + q[0], -phase + q[1])
    f = _div((zero + 1.0, zero), g)
    f = _mul(f, (big, -big))
    w = _mul((el.cos(0.5 * phase), el.sin(0.5 * phase)), f)
    one_minus = (1.0 - w[0], -w[1])
    cs = _mul((zero + 0.5, zero + 0.5), one_minus)
    c = el.where(small, c_sum, cs[0])
    s_out = el.where(small, s_sum, cs[1])
    c = el.where(el.isinf(a), 0.5, c)
    s_out = el.where(el.isinf(a), 0.5, s_out)
    neg = x < 0
    return el.where(neg, -s_out, s_out), el.where(neg, -c, c)


_fresnel = custom_jvp(jit(_fresnel_value))


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    phase = 0.5 * math.pi * x * x
    return _fresnel(x), (t * el.sin(phase), t * el.cos(phase))


def fresnel(x) -> Tuple[Array, Array]:
    """``(S(x), C(x))``, the Fresnel integrals ``int_0^x sin(pi t^2/2) dt`` and with
    ``cos`` (scipy's normalization; both odd, 1/2 at +inf); derivatives ``sin(pi x^2/2)``
    and ``cos(pi x^2/2)``.

    >>> [round(float(v), 6) for v in fresnel(1.0)]
    [0.438259, 0.779893]
    """
    s, c = _fresnel(_float(x))
    return s, c
