"""``quabla.random``: counter-based random numbers from threefry-2x32, as ``jax.random``.

Keys are ``uint32[2]`` arrays (``PRNGKey(seed)`` and ``key(seed)`` give the same thing).
Streams follow JAX 0.10 with ``jax_threefry_partitionable=True`` (its default): for the same
key, ``split``, ``fold_in``, ``bits``, ``uniform`` on [0, 1) (float32 and float64),
``normal`` (on the CPU backend: its inverse error function is XLA's, the ``erf_inv``
primitive), ``bernoulli``, ``randint`` and ``permutation`` give JAX's numbers bit for bit
(tested against JAX). Scaled ``uniform`` draws agree to 1 ulp (XLA's CPU compiler fuses the
scaling into an FMA, an operation Quabla's programs do not have), and the samplers built on
scaled draws (``truncated_normal``, ``laplace``, ...) to their rounding.

The hash, the bits, ``uniform``, ``normal`` and the inverse error function are the Rust
core's (``quabla::random``), so Rust programs draw the same numbers. Everything is built
from array operations, so it traces: keys may be traced values inside ``jit``, ``vmap`` and
loops.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from . import _quabla
from ._src.array import Array
from ._src.numpy.creation import asarray
from ._src.numpy.elementwise import where
from ._src.numpy.shape import stack
from ._src import dtypes as _dt

__all__ = ["PRNGKey", "key", "key_data", "clone", "key_impl", "wrap_key_data", "split", "fold_in", "bits", "uniform", "normal",
           "truncated_normal", "bernoulli", "randint", "permutation", "exponential",
           "laplace", "logistic", "cauchy", "gumbel", "rademacher", "categorical", "choice",
           "multivariate_normal", "gamma", "loggamma", "beta", "dirichlet", "chisquare", "t",
           "generalized_normal", "ball", "orthogonal", "poisson", "lognormal", "pareto",
           "weibull_min", "rayleigh", "maxwell", "double_sided_maxwell", "geometric",
           "triangular", "wald", "f", "binomial", "multinomial"]


def _threefry2x32(k1: Array, k2: Array, x0: Array, x1: Array):
    """Threefry-2x32 with 20 rounds, as JAX's ``threefry2x32_p`` (the core's
    ``quabla::random::threefry_2x32``, compiled once a signature)."""
    y0, y1 = _quabla.random_threefry_2x32(k1._raw, k2._raw, x0._raw, x1._raw)
    return Array(y0), Array(y1)


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
    """The raw ``uint32[..., 2]`` of keys (keys already are raw data)."""
    k = k if isinstance(k, Array) else asarray(np.asarray(k, dtype=np.uint32))
    key_impl(k)
    return k


def clone(key: Array) -> Array:
    """The key itself: keys here are plain ``uint32[2]`` arrays, with no reuse tracking
    for a clone to reset (``jax.random.clone``)."""
    return _check_key(key)


def key_impl(keys: Array) -> str:
    """The name of the keys' generator: always ``'threefry2x32'``, JAX's default."""
    k = keys if isinstance(keys, Array) else asarray(np.asarray(keys, dtype=np.uint32))
    if k.dtype != np.uint32 or k.ndim < 1 or k.shape[-1] != 2:
        raise TypeError(f"key_impl takes keys (uint32[..., 2]), got {k.dtype}{list(k.shape)}")
    return "threefry2x32"


def wrap_key_data(key_bits_array: Array, *, impl=None, dtype=None) -> Array:
    """Keys from their raw ``uint32[..., 2]`` data (the inverse of :func:`key_data`): the
    data itself, checked; ``impl`` may only name threefry (``'threefry2x32'``)."""
    if impl not in (None, "threefry2x32", "threefry"):
        raise ValueError(f"wrap_key_data: only the threefry2x32 generator is available, "
                         f"got impl={impl!r}")
    if dtype is not None:
        raise ValueError("wrap_key_data: typed key dtypes do not exist here; keys are "
                         "uint32[..., 2] arrays")
    k = key_bits_array if isinstance(key_bits_array, Array) else asarray(
        np.asarray(key_bits_array, dtype=np.uint32))
    key_impl(k)
    return k


def _check_key(k) -> Array:
    k = k if isinstance(k, Array) else asarray(np.asarray(k, dtype=np.uint32))
    if k.shape != (2,) or k.dtype != np.uint32:
        raise TypeError(f"a PRNG key is a uint32[2] array (from random.PRNGKey), got "
                        f"{k.dtype}{list(k.shape)}")
    return k


def _bits_pair(k: Array, shape: Sequence[int]):
    """Both threefry words for every position of ``shape`` (the counter is a 64-bit iota
    whose high words are zero), as the core's ``random::bits_pair``."""
    y0, y1 = _quabla.random_bits_pair(k._raw, [int(d) for d in shape])
    return Array(y0), Array(y1)


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
    # ``max(lo, u * (hi - lo) + lo)`` with ``u`` in [0, 1), as JAX (the core's
    # ``random::uniform_between``).
    return Array(_quabla.random_uniform(k._raw, list(shape), _dt.name(d), lo._raw, hi._raw))


def _erfinv(x: Array) -> Array:
    """``lax.erf_inv``: the ``erf_inv`` primitive (XLA's polynomials, JAX's bits on the CPU
    backend), as JAX's samplers use it."""
    return Array(x._raw.unary("erf_inv"))


def normal(key: Array, shape: Sequence[int] = (), dtype=None) -> Array:
    """Standard normal samples: ``sqrt(2) * erfinv(u)`` with ``u`` uniform in (-1, 1), as JAX
    (float32, or float64 with x64 on, by default)."""
    d = _float_dtype(_dt.default_float() if dtype is None else dtype)
    k = _check_key(key)
    return Array(_quabla.random_normal(k._raw, [int(n) for n in shape], _dt.name(d)))


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
from ._src.random_binomial import binomial, multinomial  # noqa: E402
