"""More of ``jax.random``'s distributions, each JAX's formula over ``uniform``, ``normal``,
``randint`` or ``bernoulli``: so bit-equal to JAX where those pieces and ``log``/``log1p``
are, and within a few ulps elsewhere (scaled ``uniform`` differs by an FMA's rounding).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .array import Array
from .numpy.creation import asarray
from .numpy import elementwise as el
from .numpy.elementwise import as_float as _float_array
from . import dtypes as _dt


def _float_dtype(dtype, name: str):
    d = _dt.canonicalize(_dt.default_float() if dtype is None else dtype, "")
    if d.kind != "f":
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {d}")
    return d


def _shape(shape) -> tuple:
    return tuple(int(s) for s in shape)


def _no_top_k(what: str) -> NotImplementedError:
    return NotImplementedError(f"{what} needs top_k, which Quabla does not have yet (no sort "
                               "primitive)")


def exponential(key, shape: Sequence[int] = (), dtype=None) -> Array:
    """Standard exponential samples, ``-log1p(-u)``.

    >>> exponential(PRNGKey(0), (3,))
    """
    from ..random import uniform
    d = _float_dtype(dtype, "exponential")
    return -el.log1p(-uniform(key, _shape(shape), d))


def laplace(key, shape: Sequence[int] = (), dtype=None) -> Array:
    """Standard Laplace samples, ``sign(u) * log1p(-|u|)`` with ``u`` in (-1, 1)."""
    from ..random import uniform
    d = _float_dtype(dtype, "laplace")
    u = uniform(key, _shape(shape), d, -1.0 + float(np.finfo(d).epsneg), 1.0)
    return el.sign(u) * el.log1p(-el.absolute(u))


def logistic(key, shape: Sequence[int] = (), dtype=None) -> Array:
    """Standard logistic samples, ``log(u) - log1p(-u)``."""
    from ..random import uniform
    d = _float_dtype(dtype, "logistic")
    x = uniform(key, _shape(shape), d, float(np.finfo(d).tiny), 1.0)
    return el.log(x) - el.log1p(-x)


def cauchy(key, shape: Sequence[int] = (), dtype=None) -> Array:
    """Standard Cauchy samples, ``tan(pi (u - 1/2))``."""
    from ..random import uniform
    d = _float_dtype(dtype, "cauchy")
    u = uniform(key, _shape(shape), d, float(np.finfo(d).eps), 1.0)
    return el.tan(math.pi * (u - 0.5))


def gumbel(key, shape: Sequence[int] = (), dtype=None, mode: Optional[str] = None) -> Array:
    """Standard Gumbel samples, ``-log(-log(u))``; ``mode="high"`` draws two uniforms a
    sample for more resolution near 0, as JAX (its float32 ``"highest"`` is not
    supported)."""
    from ..random import uniform
    d = _float_dtype(dtype, "gumbel")
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    shape = _shape(shape)
    info = np.finfo(d)
    if mode == "highest" and d == np.float32:
        raise NotImplementedError("gumbel: mode='highest' in float32 is not supported; use "
                                  "'high'")
    if mode in ("high", "highest"):
        both = uniform(key, (2,) + shape, d)
        high, low = both[0], both[1]
        x = el.where(high >= 0.5, high, high + 2.0 ** -int(info.nmant) * low + float(info.tiny))
        return -el.log(-el.log1p(-x))
    return -el.log(-el.log(uniform(key, shape, d, float(info.tiny), 1.0)))


def rademacher(key, shape: Sequence[int] = (), dtype=None) -> Array:
    """-1 or 1 with equal probability (int32 by default)."""
    from ..random import bernoulli
    d = _dt.canonicalize(np.int32 if dtype is None else dtype, "")
    return (2 * bernoulli(key, 0.5, _shape(shape)).astype(np.int32) - 1).astype(d)


def categorical(key, logits, axis: int = -1, shape: Optional[Sequence[int]] = None,
                replace: bool = True, mode: Optional[str] = None) -> Array:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis``, by the Gumbel
    argmax, as JAX; ``shape`` may add leading sample axes to the batch shape."""
    if not replace:
        raise _no_top_k("categorical: replace=False")
    logits = _float_array(logits)
    nd = logits.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"categorical: axis {axis} is out of range for {nd}-d logits")
    ax = axis % nd
    batch = tuple(s for i, s in enumerate(logits.shape) if i != ax)
    shape = batch if shape is None else _shape(shape)
    if shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"categorical: shape {shape} must end with the batch shape {batch}")
    prefix = shape[:len(shape) - len(batch)]
    neg = ax - nd
    gshape = list(shape[len(shape) - len(batch):])
    gshape.insert(ax, logits.shape[ax])
    from .numpy.reductions import argmax
    noise = gumbel(key, prefix + tuple(gshape), logits.dtype, mode=mode)
    return argmax(noise + logits.reshape((1,) * len(prefix) + tuple(logits.shape)), axis=neg)


def choice(key, a, shape: Sequence[int] = (), replace: bool = True, p=None,
           axis: int = 0) -> Array:
    """Draws from ``a`` (an int ``n`` meaning ``arange(n)``, or an array along ``axis``):
    uniformly with ``p=None``, else with probabilities ``p`` (by its cumulative sum, as
    JAX); without replacement by a permutation (the key must be concrete)."""
    from ..random import permutation, randint, uniform
    from .numpy.misc import searchsorted, take
    from .numpy.reductions import cumsum
    shape = _shape(shape)
    arr = None if isinstance(a, (int, np.integer)) else (a if isinstance(a, Array)
                                                         else asarray(a))
    if arr is not None and arr.ndim == 0:
        raise ValueError("choice: a must be an int or an array of at least one axis")
    n = int(a) if arr is None else arr.shape[axis]
    n_draws = int(np.prod(shape))
    if n_draws == 0:
        return asarray(np.zeros(shape, np.int32)) if arr is None else \
            take(arr, asarray(np.zeros(shape, np.int32)), axis=axis)
    if n <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n)
        else:
            ind = permutation(key, n)[:n_draws].reshape(shape)
    else:
        if not replace:
            raise _no_top_k("choice: replace=False with p")
        pa = _float_array(p)
        if tuple(pa.shape) != (n,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {tuple(pa.shape)} and "
                             f"a.shape[axis] is {n}.")
        cuml = cumsum(pa)
        r = cuml[-1] * (1 - uniform(key, shape, pa.dtype))
        ind = searchsorted(cuml, r).astype(np.int32)
    if arr is None:
        return ind
    out = take(arr, ind.reshape(-1), axis=axis)
    return out.reshape(tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:]))


def multivariate_normal(key, mean, cov, shape: Optional[Sequence[int]] = None, dtype=None,
                        method: str = "cholesky") -> Array:
    """``mean + factor @ z`` for standard normal ``z``, ``factor`` from ``cov``'s Cholesky,
    ``eigh`` or ``svd`` (``method``), as JAX; batch axes of ``mean`` and ``cov`` broadcast."""
    from ..random import normal
    from . import linalg as la
    from .numpy.shape import broadcast_shapes
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean = mean if isinstance(mean, Array) else asarray(mean)
    cov = cov if isinstance(cov, Array) else asarray(cov)
    d = _dt.result_type(mean.dtype, cov.dtype)
    d = _dt.default_float() if d.kind != "f" else d
    mean, cov = mean.astype(d), cov.astype(d)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    batch = tuple(broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2])))
    shape = batch if shape is None else _shape(shape)
    if method == "svd":
        u, s, _ = la.svd(cov)
        factor = u * el.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = la.eigh(cov)
        factor = v * el.sqrt(w[..., None, :])
    else:
        factor = la.cholesky(cov)
    z = normal(key, shape + (n,), _dt.canonicalize(d if dtype is None else dtype, ""))
    return mean + (factor @ z[..., :, None])[..., 0]


__all__ = ["categorical", "cauchy", "choice", "exponential", "gumbel", "laplace", "logistic",
           "multivariate_normal", "rademacher"]
