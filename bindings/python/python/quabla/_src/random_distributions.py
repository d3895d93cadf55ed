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
from .random_gamma_grad import differentiable_draws


def _float_dtype(dtype, name: str):
    d = _dt.canonicalize(_dt.default_float() if dtype is None else dtype, "")
    if d.kind != "f":
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {d}")
    return d


def _shape(shape) -> tuple:
    return tuple(int(s) for s in shape)


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
    if not replace:
        return _categorical_without_replacement(key, logits, ax, shape, prefix, mode)
    neg = ax - nd
    gshape = list(shape[len(shape) - len(batch):])
    gshape.insert(ax, logits.shape[ax])
    from .numpy.reductions import argmax
    noise = gumbel(key, prefix + tuple(gshape), logits.dtype, mode=mode)
    return argmax(noise + logits.reshape((1,) * len(prefix) + tuple(logits.shape)), axis=neg)


def _categorical_without_replacement(key, logits, ax, shape, prefix, mode) -> Array:
    """The Gumbel top-k trick: the ``k`` largest of ``logits + gumbel`` are a sample of
    ``k`` distinct categories, as JAX."""
    from .numpy.shape import moveaxis
    from .numpy.sorting import top_k
    from .lax_ops import reshape
    k = int(np.prod(prefix))
    if k > logits.shape[ax]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[ax]}).")
    noisy = logits + gumbel(key, tuple(logits.shape), logits.dtype, mode=mode)
    _, indices = top_k(moveaxis(noisy, ax, -1), k)
    dims = (indices.ndim - 1,) + tuple(range(indices.ndim - 1))
    return reshape(indices, shape, dims)


def choice(key, a, shape: Sequence[int] = (), replace: bool = True, p=None,
           axis: int = 0, *, mode: Optional[str] = None) -> Array:
    """Draws from ``a`` (an int ``n`` meaning ``arange(n)``, or an array along ``axis``):
    uniformly with ``p=None``, else with probabilities ``p`` (by its cumulative sum, as
    JAX); without replacement by a permutation, or with ``p`` by the Gumbel top-k trick."""
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
        pa = _float_array(p)
        if tuple(pa.shape) != (n,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {tuple(pa.shape)} and "
                             f"a.shape[axis] is {n}.")
        if replace:
            cuml = cumsum(pa)
            r = cuml[-1] * (1 - uniform(key, shape, pa.dtype))
            ind = searchsorted(cuml, r).astype(np.int32)
        else:
            from .numpy.elementwise import log
            from .numpy.sorting import top_k
            g = gumbel(key, (n,), pa.dtype, mode=mode) + log(pa)
            ind = top_k(g, n_draws)[1].reshape(shape)
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


__all__ = ["ball", "beta", "categorical", "cauchy", "chisquare", "choice", "dirichlet",
           "exponential", "gamma", "generalized_normal", "gumbel", "laplace", "loggamma",
           "logistic", "multivariate_normal", "orthogonal", "poisson", "rademacher", "t"]


def _gamma_one(key, alpha, log_space: bool):
    """One Gamma(alpha) draw (or its log) by Marsaglia and Tsang's squeeze-and-reject method,
    alpha < 1 boosted to alpha + 1 and scaled back by ``u**(1/alpha)``, as JAX."""
    from ..random import normal, split, uniform
    from .control_flow import while_loop
    d_type = alpha.dtype
    zero, one = asarray(0.0, d_type), asarray(1.0, d_type)
    boost = alpha >= 1.0
    alpha_orig = alpha
    alpha = el.where(boost, alpha, alpha + 1.0)
    d = alpha - 1.0 / 3.0
    c = (1.0 / 3.0) / el.sqrt(d)

    def rejected(state):
        _, x2, v3, u = state
        return (u >= 1.0 - 0.0331 * x2 * x2) & (el.log(u) >= x2 * 0.5 + d * (1.0 - v3
                                                                              + el.log(v3)))

    def propose(state):
        k = state[0]
        keys = split(k, 3)
        k, x_key, u_key = keys[0], keys[1], keys[2]

        def next_x(s):
            pair = split(s[0])
            x = normal(pair[1], (), d_type)
            return pair[0], x, 1.0 + x * c

        _, x, v = while_loop(lambda s: s[2] <= 0.0, next_x, (x_key, zero, -one))
        return k, x * x, v * v * v, uniform(u_key, (), d_type)

    pair = split(key)
    _, _, v3, _ = while_loop(rejected, propose, (pair[0], zero, one, asarray(2.0, d_type)))
    if log_space:
        log_u = -exponential(pair[1], (), d_type)
        log_boost = el.where(boost | (log_u == 0), zero, log_u * (1.0 / alpha_orig))
        return el.log(d) + el.log(v3) + log_boost
    u = 1.0 - uniform(pair[1], (), d_type)
    return d * v3 * el.where(boost, one, u ** (1.0 / alpha_orig))


def _gamma_draws(key, a, shape, dtype, log_space: bool, name: str) -> Array:
    from ..random import split
    from .api import vmap
    from .numpy.shape import broadcast_to
    d = _float_dtype(dtype, name)
    a = _float_array(a).astype(d)
    shape = tuple(a.shape) if shape is None else _shape(shape)
    a = broadcast_to(a, shape)
    n = int(np.prod(shape))
    if n == 0:
        return a
    keys = split(key, n)
    sample = vmap(lambda k, al: _gamma_one(k, al, log_space))
    draws = differentiable_draws(sample, log_space)(keys, a.reshape(-1))
    return draws.reshape(shape)


def gamma(key, a, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Gamma(a) samples (unit scale), one key per element split from ``key``, as JAX;
    differentiable with respect to ``a`` by implicit reparameterisation, as JAX's (so are
    ``loggamma``, ``beta`` and ``dirichlet``, built on these draws)."""
    return _gamma_draws(key, a, shape, dtype, False, "gamma")


def loggamma(key, a, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """``log`` of Gamma(a) samples, computed in log space so tiny ``a`` does not underflow."""
    return _gamma_draws(key, a, shape, dtype, True, "loggamma")


def beta(key, a, b, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Beta(a, b) samples, ``Ga / (Ga + Gb)`` from log-space gamma draws."""
    from ..random import split
    from .numpy.shape import broadcast_shapes, broadcast_to
    d = _float_dtype(dtype, "beta")
    a, b = _float_array(a).astype(d), _float_array(b).astype(d)
    if shape is None:
        shape = tuple(broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    shape = _shape(shape)
    keys = split(key)
    lga = loggamma(keys[0], broadcast_to(a, shape), shape, d)
    lgb = loggamma(keys[1], broadcast_to(b, shape), shape, d)
    top = el.maximum(lga, lgb)
    ga, gb = el.exp(lga - top), el.exp(lgb - top)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Dirichlet(alpha) samples over the last axis: a softmax of log-gamma draws."""
    from .nn.functions import softmax
    d = _float_dtype(dtype, "dirichlet")
    alpha = _float_array(alpha).astype(d)
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    shape = tuple(alpha.shape[:-1]) if shape is None else _shape(shape)
    return softmax(loggamma(key, alpha, shape + tuple(alpha.shape[-1:]), d), -1)


def chisquare(key, df, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Chi-square(df) samples, ``2 exp(loggamma(df / 2))``."""
    d = _float_dtype(dtype, "chisquare")
    return 2.0 * el.exp(loggamma(key, _float_array(df).astype(d) / 2.0, shape, d))


def t(key, df, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Student's t(df) samples, ``z * sqrt(df / 2 / g)`` with ``g ~ Gamma(df / 2)``."""
    from ..random import normal, split
    d = _float_dtype(dtype, "t")
    df = _float_array(df).astype(d)
    shape = tuple(df.shape) if shape is None else _shape(shape)
    keys = split(key)
    z = normal(keys[0], shape, d)
    half = df / 2.0
    return z * el.sqrt(half / gamma(keys[1], half, shape, d))


def generalized_normal(key, p, shape: Sequence[int] = (), dtype=None) -> Array:
    """Generalized normal samples of power ``p``: ``r * g**(1/p)``, ``g ~ Gamma(1/p)`` and a
    random sign ``r``."""
    from ..random import split
    d = _float_dtype(dtype, "generalized_normal")
    keys = split(key)
    g = gamma(keys[0], 1.0 / p, _shape(shape), d)
    return rademacher(keys[1], _shape(shape), d) * g ** (1.0 / p)


def ball(key, d: int, p: float = 2, shape: Sequence[int] = (), dtype=None) -> Array:
    """Uniform samples from the unit ``p``-norm ball in ``d`` dimensions, shape
    ``shape + (d,)`` (Barthe, Guedon, Mendelson and Naor's construction, as JAX)."""
    from ..random import split
    from .numpy import reductions as red
    dt = _float_dtype(dtype, "ball")
    if not isinstance(d, (int, np.integer)) or d < 0:
        raise ValueError(f"ball: d must be a non-negative int, got {d!r}")
    keys = split(key)
    g = generalized_normal(keys[0], p, _shape(shape) + (int(d),), dt)
    e = exponential(keys[1], _shape(shape), dt)
    return g / ((red.sum(el.absolute(g) ** p, axis=-1) + e) ** (1.0 / p))[..., None]


def orthogonal(key, n: int, shape: Sequence[int] = (), dtype=None, m: Optional[int] = None):
    """Haar-random ``n x m`` matrices with orthonormal columns (or rows when wide; ``m``
    defaults to ``n``): the Q of a normal matrix's QR, its columns signed by R's diagonal."""
    from ..random import normal
    from . import linalg as la
    from .numpy.shape import diagonal, swapaxes
    d = _float_dtype(dtype, "orthogonal")
    m = n if m is None else m
    z = normal(key, _shape(shape) + (max(n, m), min(n, m)), d)
    q, r = la.qr(z)
    x = q * el.sign(diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    return swapaxes(x, -1, -2) if n < m else x


def poisson(key, lam, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Poisson(lam) counts (int32): Knuth's product of uniforms below lam = 10, Hormann's
    transformed rejection from 10, each a loop over the whole array, in float32, as JAX."""
    from .numpy.shape import broadcast_to
    d = _dt.canonicalize(np.int32 if dtype is None else dtype, "")
    lam = _float_array(lam)
    shape = tuple(lam.shape) if shape is None else _shape(shape)
    # float32 whatever lam's dtype, as JAX (its uniforms are then float32 draws).
    lam = broadcast_to(lam, shape).astype(np.float32)
    knuth = el.isnan(lam) | (lam < 10)
    small = _poisson_knuth(key, el.where(knuth, lam, 0.0), shape)
    large = _poisson_rejection(key, el.where(knuth, 1e5, lam), shape)
    out = el.where(knuth, small, large)
    return el.where(lam == 0, 0.0, out).astype(d)


def _poisson_knuth(key, lam, shape):
    from ..random import split, uniform
    from .control_flow import while_loop
    from .numpy import reductions as red

    def body(s):
        k, count, log_prod = s
        pair = split(k)
        count = el.where(log_prod > -lam, count + 1.0, count)
        return pair[0], count, log_prod + el.log(uniform(pair[1], shape, np.float32))

    start = (key, asarray(np.zeros(shape, lam.dtype)), asarray(np.zeros(shape, np.float32)))
    _, count, _ = while_loop(lambda s: red.any(s[2] > -lam), body, start)
    return count - 1.0


def _poisson_rejection(key, lam, shape):
    from ..random import split, uniform
    from .control_flow import while_loop
    from .numpy import reductions as red
    from .scipy.special import gammaln
    log_lam = el.log(lam)
    b = 0.931 + 2.53 * el.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(s):
        k_out, accepted, k = s
        keys = split(k, 3)
        u = uniform(keys[1], shape, lam.dtype) - 0.5
        v = uniform(keys[2], shape, lam.dtype)
        us = 0.5 - el.absolute(u)
        kk = el.floor((2 * a / us + b) * u + lam + 0.43)
        s_ = el.log(v * inv_alpha / (a / (us * us) + b))
        t_ = -lam + kk * log_lam - gammaln(kk + 1)
        accept = ((us >= 0.07) & (v <= v_r)) | (~((kk < 0) | ((us < 0.013) & (v > us)))
                                                 & (s_ <= t_))
        return el.where(accept, kk, k_out), accepted | accept, keys[0]

    start = (asarray(np.full(shape, -1.0, lam.dtype)), asarray(np.zeros(shape, bool)), key)
    return while_loop(lambda s: red.any(~s[1]), body, start)[0]


def _broadcast_shape(name: str, shape, *params) -> tuple:
    """``shape``, or the parameters' broadcast shape when it is None (as JAX checks it)."""
    from .numpy.shape import broadcast_shapes
    param_shape = broadcast_shapes(*[tuple(np.shape(p)) for p in params]) if params else ()
    if shape is None:
        return tuple(param_shape)
    shape = _shape(shape)
    if broadcast_shapes(shape, param_shape) != shape:
        raise ValueError(f"{name} parameter shapes {param_shape} do not broadcast to the "
                         f"shape {shape}")
    return shape


def lognormal(key, sigma=1.0, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """``exp(sigma * z)`` for standard normal ``z``."""
    from ..random import normal
    d = _float_dtype(dtype, "lognormal")
    shape = _broadcast_shape("lognormal", shape, sigma)
    return el.exp(normal(key, shape, d) * _float_array(sigma).astype(d))


def pareto(key, b, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Pareto(b) samples on [1, inf), ``exp(e / b)`` for standard exponential ``e``."""
    d = _float_dtype(dtype, "pareto")
    shape = _broadcast_shape("pareto", shape, b)
    return el.exp(exponential(key, shape, d) / _float_array(b).astype(d))


def weibull_min(key, scale, concentration, shape: Sequence[int] = (), dtype=None) -> Array:
    """Weibull samples, ``(-log1p(-u)) ** (1 / concentration) * scale``."""
    from ..random import uniform
    d = _float_dtype(dtype, "weibull_min")
    u = uniform(key, _shape(shape), d, 0.0, 1.0)
    return el.power(-el.log1p(-u), 1.0 / _float_array(concentration)) * scale


def rayleigh(key, scale=1.0, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Rayleigh samples, ``scale * sqrt(-2 log u)``."""
    from ..random import uniform
    from .numpy.shape import broadcast_to
    d = _float_dtype(dtype, "rayleigh")
    shape = _broadcast_shape("rayleigh", shape, scale)
    u = uniform(key, shape, d)
    s = broadcast_to(_float_array(scale).astype(d), shape)
    return s * el.sqrt(el.log(u) * -2.0)


def maxwell(key, shape: Sequence[int] = (), dtype=None) -> Array:
    """Maxwell samples: the length of a standard normal 3-vector."""
    from ..random import normal
    d = _float_dtype(dtype, "maxwell")
    z = normal(key, _shape(shape) + (3,), d)
    from .numpy.reductions import sum as sum_
    return el.sqrt(sum_(z * z, axis=-1))


def double_sided_maxwell(key, loc, scale, shape: Sequence[int] = (), dtype=None) -> Array:
    """``sign * maxwell * scale + loc``, the sign a Rademacher draw."""
    from ..random import split
    from .numpy.shape import broadcast_shapes
    d = _float_dtype(dtype, "double_sided_maxwell")
    params = tuple(broadcast_shapes(tuple(np.shape(loc)), tuple(np.shape(scale))))
    shape = _shape(shape) or params
    shape = shape + params
    keys = split(key)
    m = maxwell(keys[0], shape, d)
    sign = rademacher(keys[1], shape, d)
    return sign * m * scale + loc


def geometric(key, p, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """The number of Bernoulli(p) trials up to the first success (int32 by default)."""
    from ..random import uniform
    from .numpy.shape import broadcast_to
    d = _dt.canonicalize(np.int32 if dtype is None else dtype, "")
    if d.kind not in "iu":
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {d}")
    pa = _float_array(p)
    shape = _broadcast_shape("geometric", shape, p)
    u = uniform(key, shape, pa.dtype)
    u = el.where(u == 0, 1.0, u)
    g = el.floor(el.log(u) / broadcast_to(el.log1p(-pa), shape)) + 1
    return g.astype(d)


def triangular(key, left, mode, right, shape: Optional[Sequence[int]] = None,
               dtype=None) -> Array:
    """Triangular samples on [left, right] peaking at ``mode`` (inverse CDF)."""
    from ..random import uniform
    from .numpy.shape import broadcast_to
    d = _float_dtype(dtype, "triangular")
    shape = _broadcast_shape("triangular", shape, left, mode, right)
    lo, mo, hi = (broadcast_to(_float_array(v).astype(d), shape) for v in (left, mode, right))
    fc = (mo - lo) / (hi - lo)
    u = uniform(key, shape, d)
    below = lo + el.sqrt(u * (hi - lo) * (mo - lo))
    above = hi - el.sqrt((1 - u) * (hi - lo) * (hi - mo))
    return el.where(u < fc, below, above)


def wald(key, mean, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Wald (inverse Gaussian) samples by Michael, Schucany and Haas' transformation."""
    from ..random import normal, split, uniform
    from .numpy.shape import broadcast_to
    d = _float_dtype(dtype, "wald")
    shape = _broadcast_shape("wald", shape, mean)
    keys = split(key)
    m = broadcast_to(_float_array(mean).astype(d), shape)
    v = normal(keys[0], shape, d)
    z = uniform(keys[1], shape, d)
    y = v * v
    y_sq = y * y
    m_sq = m * m
    root = el.sqrt(4 * m * y + m_sq * y_sq)
    x = m + m_sq * y / 2 - m / 2 * root
    return el.where(z <= m / (m + x), x, m_sq / x)


def f(key, dfnum, dfden, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """F(dfnum, dfden) samples, a ratio of scaled chi-squares."""
    from ..random import split
    d = _float_dtype(dtype, "f")
    shape = _broadcast_shape("f", shape, dfnum, dfden)
    num_df, den_df = _float_array(dfnum).astype(d), _float_array(dfden).astype(d)
    keys = split(key)
    chi_num = chisquare(keys[1], num_df, shape, d)
    chi_den = chisquare(keys[0], den_df, shape, d)
    return (chi_num / num_df) / (chi_den / den_df)
