"""``quabla.random``: counter-based random numbers from threefry-2x32, as ``jax.random``.

Keys are ``uint32[2]`` arrays (``PRNGKey(seed)`` and ``key(seed)`` give the same thing).
Streams follow JAX 0.10 with ``jax_threefry_partitionable=True`` (its default): for the same
key, ``split``, ``fold_in``, ``bits``, ``uniform`` on [0, 1) (float32 and float64),
``bernoulli``, ``randint`` and ``permutation`` give JAX's numbers bit for bit (tested against
JAX). Scaled ``uniform`` draws agree to 1 ulp (XLA's CPU compiler fuses the scaling into an
FMA); ``normal`` uses its own inverse error function: float32 samples are bit-equal for ~95%
and within 3 ulp, float64 within 7e-14 relative (measured on 100,000 samples; Quabla's float64
erfinv agrees with mpmath to an ulp or two, JAX's is off by up to 4e-13 near +-1).

Everything is built from array operations, so it traces: keys may be traced values inside
``jit``, ``vmap`` and loops (``permutation`` excepted: it needs a concrete key, as it sorts
on the host).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np

from ._src.array import Array
from ._src.api import jit
from ._src.numpy.creation import asarray, iota_like
from ._src.numpy.elementwise import where, sqrt, log1p
from ._src.numpy.shape import stack
from ._src import dtypes as _dt

__all__ = ["PRNGKey", "key", "key_data", "split", "fold_in", "bits", "uniform", "normal",
           "truncated_normal", "bernoulli", "randint", "permutation", "exponential",
           "laplace", "logistic", "cauchy", "gumbel", "rademacher", "categorical", "choice",
           "multivariate_normal", "gamma", "loggamma", "beta", "dirichlet", "chisquare", "t",
           "generalized_normal", "ball", "orthogonal", "poisson", "lognormal", "pareto",
           "weibull_min", "rayleigh", "maxwell", "double_sided_maxwell", "geometric",
           "triangular", "wald", "f"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _rotl(v: Array, r: int) -> Array:
    return (v << r) | Array(v._raw.binary("shift_right_logical", 32 - r))


def _threefry2x32_impl(k1: Array, k2: Array, x0: Array, x1: Array):
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011), as JAX's ``threefry2x32_p``."""
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + (i + 1)
    return x0, x1


_threefry2x32 = jit(_threefry2x32_impl)


def _u32(x) -> Array:
    a = x if isinstance(x, Array) else asarray(np.asarray(x, dtype=np.uint32))
    if a.dtype != np.uint32:
        a = a.astype(np.uint32)
    return a


def PRNGKey(seed: Union[int, Array]) -> Array:
    """A key from an integer seed: ``[seed >> 32, seed & 0xFFFFFFFF]`` (64-bit seeds, as JAX
    with x64)."""
    if isinstance(seed, Array):
        if seed.is_traced:
            s = seed.astype(np.uint32)
            return stack([s & 0, s])
        seed = int(seed)
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    return asarray(np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32))


key = PRNGKey


def key_data(k: Array) -> Array:
    """The raw ``uint32[2]`` of a key (keys already are raw data)."""
    return _check_key(k)


def _check_key(k) -> Array:
    k = k if isinstance(k, Array) else asarray(np.asarray(k, dtype=np.uint32))
    if k.shape != (2,) or k.dtype != np.uint32:
        raise TypeError(f"a PRNG key is a uint32[2] array (from random.PRNGKey), got "
                        f"{k.dtype}{list(k.shape)}")
    return k


def _counts(k: Array, shape: Sequence[int]) -> Array:
    """The low words of a 64-bit iota over ``shape`` (high words are zero below 2^32)."""
    n = int(np.prod(shape)) if len(shape) else 1
    if n >= 2 ** 32:
        raise ValueError("random: at most 2^32 - 1 values per call")
    return iota_like(k, np.uint32, (n,), 0).reshape(tuple(shape))


def _bits_pair(k: Array, shape: Sequence[int]):
    c = _counts(k, shape)
    zeros = c & 0
    return _threefry2x32(k[0], k[1], zeros, c)


def split(key: Array, num: Union[int, Sequence[int]] = 2) -> Array:
    """``num`` new keys (shape ``num + (2,)``)."""
    k = _check_key(key)
    shape = (num,) if isinstance(num, int) else tuple(num)
    b1, b2 = _bits_pair(k, shape)
    return stack([b1, b2], axis=-1)


def fold_in(key: Array, data: Union[int, Array]) -> Array:
    """A new key from ``key`` and 32-bit ``data``."""
    k = _check_key(key)
    d = _u32(data & 0xFFFFFFFF if isinstance(data, int) else data).reshape(())
    b1, b2 = _threefry2x32(k[0], k[1], d & 0, d)
    return stack([b1, b2])


def bits(key: Array, shape: Sequence[int] = (), dtype=np.uint32) -> Array:
    """Uniform random ``uint32`` bits."""
    if _dt.canonicalize(dtype) != np.uint32:
        raise TypeError("random.bits: Quabla's unsigned dtype is uint32")
    b1, b2 = _bits_pair(_check_key(key), tuple(shape))
    return b1 ^ b2


def _uniform01(k: Array, shape, dtype) -> Array:
    """Floats in [0, 1) from the mantissa bits, as JAX (bit for bit)."""
    b1, b2 = _bits_pair(k, shape)
    if dtype == np.float32:
        b = b1 ^ b2
        one = 0x3F800000
        return Array(((Array(b._raw.binary("shift_right_logical", 9))) | one)._raw
                     .bitcast("float32")) - 1.0
    # float64: 64 random bits (b1 high, b2 low); the top 52 are the mantissa, exactly.
    hi = b1.astype(np.float64) * 2.0 ** -32
    lo = Array(b2._raw.binary("shift_right_logical", 12)).astype(np.float64) * 2.0 ** -52
    return hi + lo


def _float_dtype(dtype):
    d = _dt.canonicalize(dtype, "")
    if d.kind != "f":
        raise TypeError(f"random: a float dtype is needed, got {d}")
    return d


def uniform(key: Array, shape: Sequence[int] = (), dtype=None, minval=0.0,
            maxval=1.0) -> Array:
    """Uniform floats in ``[minval, maxval)`` (float32, or float64 with x64 on, by default)."""
    d = _float_dtype(_dt.default_float() if dtype is None else dtype)
    k = _check_key(key)
    shape = tuple(shape)
    lo = asarray(minval, d) if not isinstance(minval, Array) else minval.astype(d)
    hi = asarray(maxval, d) if not isinstance(maxval, Array) else maxval.astype(d)
    f = _uniform01(k, shape, d)
    from ._src.numpy.elementwise import maximum
    return maximum(lo, f * (hi - lo) + lo)


def _erfinv(x: Array) -> Array:
    """The inverse error function: Giles' single-precision polynomials (XLA's ErfInv32) in
    float32; in float64 that estimate refined by Newton steps on ``erf`` (on
    ``log(erfc)`` in the tails, which keeps their relative accuracy)."""
    w = -log1p(-x * x)
    small = w < 5.0
    ws = where(small, w - 2.5, sqrt(where(small, 5.0, w)) - 3.0)
    c_small = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
               0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
    c_large = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
    # Typed coefficients: `where` of two Python floats would be the default float (float64
    # with x64 on), where JAX's weak types keep x's dtype.
    def coef(a, b):
        return where(small, asarray(a, x.dtype), asarray(b, x.dtype))

    p = coef(c_small[0], c_large[0])
    for a, b in zip(c_small[1:], c_large[1:]):
        p = coef(a, b) + p * ws
    y = p * x
    from ._src.numpy.elementwise import absolute
    if x.dtype == np.float64:
        from ._src.numpy.elementwise import erf, erfc, exp, log, sign
        # Newton steps on erf(y) = x near 0; in the tails on log(erfc(|y|)) = log(1 - |x|),
        # whose terms stay accurate where erf(y) - x would cancel to a few ulps of 1, and
        # which is nearly quadratic in y, so the far tail (where the float32 polynomial is
        # off by percents) converges in as few steps.
        ax = absolute(x)
        tail = ax > 0.5
        log_c = log(where(tail & (ax < 1.0), 1.0 - ax, 0.5))
        slope = 2.0 / math.sqrt(math.pi)
        for _ in range(4):
            ay = absolute(y)
            ec = erfc(ay)
            tail_step = sign(x) * (log(ec) - log_c) * ec / (slope * exp(-ay * ay))
            body_step = (erf(y) - x) / (slope * exp(-y * y))
            y = y + where(tail, tail_step, -body_step)
    return where(absolute(x) == 1.0, x * float("inf"), y)


def normal(key: Array, shape: Sequence[int] = (), dtype=None) -> Array:
    """Standard normal samples: ``sqrt(2) * erfinv(u)`` with ``u`` uniform in (-1, 1), as JAX
    (float32, or float64 with x64 on, by default)."""
    d = _float_dtype(_dt.default_float() if dtype is None else dtype)
    lo = float(np.nextafter(np.array(-1.0, d), np.array(0.0, d)))
    u = uniform(key, shape, d, lo, 1.0)
    return _erfinv(u) * float(np.sqrt(np.array(2.0, d)))


def truncated_normal(key: Array, lower, upper, shape: Optional[Sequence[int]] = None,
                     dtype=None) -> Array:
    """Standard normal samples truncated to ``(lower, upper)``, by inverting the normal CDF
    on a uniform draw between ``erf(lower / sqrt 2)`` and ``erf(upper / sqrt 2)`` and
    clipping to the open interval, as JAX. ``lower`` and ``upper`` are numbers (or concrete
    arrays) broadcasting to ``shape`` (their broadcast shape when ``shape`` is None).

    >>> truncated_normal(PRNGKey(0), -2.0, 2.0, (3,))  # three draws in (-2, 2)
    """
    d = _float_dtype(_dt.default_float() if dtype is None else dtype)
    try:
        lo_np = np.asarray(lower, d)
        hi_np = np.asarray(upper, d)
    except Exception as e:  # a traced bound: its nextafter would need a primitive
        raise TypeError("truncated_normal: lower and upper must be numbers or concrete "
                        "arrays, not traced values") from e
    shape = np.broadcast_shapes(lo_np.shape, hi_np.shape) if shape is None else tuple(shape)
    from ._src.numpy.elementwise import clip, erf
    sqrt2 = float(np.sqrt(np.array(2.0, d)))
    a = erf(asarray(lo_np) / sqrt2)
    b = erf(asarray(hi_np) / sqrt2)
    out = _erfinv(uniform(key, shape, d, a, b)) * sqrt2
    return clip(out, asarray(np.nextafter(lo_np, np.array(np.inf, d))),
                asarray(np.nextafter(hi_np, np.array(-np.inf, d))))


def bernoulli(key: Array, p=0.5, shape: Optional[Sequence[int]] = None) -> Array:
    """True with probability ``p``: ``uniform(key, shape, dtype of p) < p``."""
    pa = p if isinstance(p, Array) else asarray(p)
    if pa.dtype.kind != "f":
        pa = pa.astype(np.float32)
    shape = pa.shape if shape is None else tuple(shape)
    return uniform(key, shape, pa.dtype) < pa


def randint(key: Array, shape: Sequence[int], minval, maxval, dtype=np.int32) -> Array:
    """Uniform integers in ``[minval, maxval)`` (two 32-bit draws combined, as JAX, so the
    bias is negligible for any span)."""
    d = _dt.canonicalize(dtype)
    if d.kind not in "iu":
        raise TypeError(f"randint needs an integer dtype, got {d}")
    shape = tuple(shape)
    k1, k2 = split(_check_key(key))
    higher, lower = bits(k1, shape), bits(k2, shape)
    lo = asarray(minval, d) if not isinstance(minval, Array) else minval.astype(d)
    hi = asarray(maxval, d) if not isinstance(maxval, Array) else maxval.astype(d)
    span = (hi - lo).astype(np.uint32)
    span = where(hi <= lo, 1, span).astype(np.uint32)
    rem = lambda a, b: Array(a._raw.binary("rem", b._raw))  # noqa: E731
    multiplier = rem(asarray(np.uint32(2 ** 16)) + span * 0, span)
    multiplier = rem(multiplier * multiplier, span)
    offset = rem(higher, span) * multiplier + rem(lower, span)
    offset = rem(offset, span)
    return lo + offset.astype(d)


def permutation(key: Array, x: Union[int, Array], axis: int = 0,
                independent: bool = False) -> Array:
    """A random permutation of ``range(x)`` or of ``x`` along ``axis`` (each line on its own
    when ``independent``): rounds of sorting by random keys, as JAX's ``_shuffle``, so the
    result is JAX's for the same key, also under ``jit``."""
    from ._src.numpy.creation import arange
    from ._src.numpy.misc import take
    k = _check_key(key)
    if isinstance(x, (int, np.integer)) or (not isinstance(x, Array) and np.ndim(x) == 0):
        if not isinstance(x, (int, np.integer)) and not np.issubdtype(np.asarray(x).dtype,
                                                                      np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(k, arange(int(x)), 0)
    arr = x if isinstance(x, Array) else asarray(x)
    if arr.ndim == 0:
        raise TypeError("x must be an integer or at least 1-dimensional")
    ax = axis % arr.ndim
    if independent or arr.ndim == 1:
        return _shuffle(k, arr, ax)
    return take(arr, _shuffle(k, arange(arr.shape[ax]), 0), axis=ax)


def _shuffle(key: Array, x: Array, axis: int) -> Array:
    """``x`` sorted along ``axis`` by fresh random 32-bit keys, ``ceil(3 ln n / ln 2^32)``
    rounds (enough that ties between keys are unlikely to matter), as JAX."""
    from ._src.numpy.sorting import sort_key_val
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, sub = split(key)
        _, x = sort_key_val(bits(sub, tuple(x.shape)), x, axis)
    return x


from ._src.random_distributions import (  # noqa: E402  (they build on the functions above)
    ball, beta, categorical, cauchy, chisquare, choice, dirichlet, double_sided_maxwell,
    exponential, f, gamma, generalized_normal, geometric, gumbel, laplace, loggamma, logistic,
    lognormal, maxwell, multivariate_normal, orthogonal, pareto, poisson, rademacher,
    rayleigh, t, triangular, wald, weibull_min,
)
