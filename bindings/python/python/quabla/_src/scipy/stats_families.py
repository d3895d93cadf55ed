"""The rest of ``jax.scipy.stats``'s univariate families: exponential, Laplace, logistic,
uniform, Cauchy, Pareto, Gumbel (right and left), truncated normal, von Mises, wrapped
Cauchy, generalized normal, and the discrete geometric, binomial, negative binomial and
beta-binomial. Densities from their textbook formulas on ``y = (x - loc) / scale``, written
in the stable forms (``log1p``, ``expm1``, ``xlogy``); each family is a namespace of the
functions ``jax.scipy.stats`` gives it."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ..array import Array
from ..numpy import elementwise as el
from . import special as sp
from .special_series import i0e

_args = sp._promote
_LOG_2PI = math.log(2 * math.pi)


def _family(**functions) -> SimpleNamespace:
    """A family's functions; ``pdf``/``pmf`` from ``logpdf``/``logpmf`` where not given."""
    for log_name, name in (("logpdf", "pdf"), ("logpmf", "pmf")):
        if log_name in functions and name not in functions:
            log_fn = functions[log_name]

            def density(*args, _log=log_fn, **kwargs) -> Array:
                return el.exp(_log(*args, **kwargs))

            density.__doc__ = f"``exp({log_name})``."
            functions[name] = density
    return SimpleNamespace(**functions)


def _std(x, loc, scale, *params):
    """``y = (x - loc) / scale`` and the promoted parameters."""
    x, loc, scale, *params = _args(x, loc, scale, *params)
    return ((x - loc) / scale, scale, *params)


def _log_of(fn):
    def log_fn(*args, **kwargs) -> Array:
        return el.log(fn(*args, **kwargs))

    log_fn.__doc__ = f"``log({fn.__name__})``."
    return log_fn


# Exponential: density exp(-y) / scale on y >= 0.

def _expon_logpdf(x, loc=0, scale=1) -> Array:
    y, scale = _std(x, loc, scale)
    return el.where(y < 0, -np.inf, -y - el.log(scale))


def _expon_cdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return el.where(y < 0, 0.0, -el.expm1(-y))


def _expon_sf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return el.where(y < 0, 1.0, el.exp(-y))


def _expon_logcdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return el.where(y < 0, -np.inf, el.log(-el.expm1(-y)))


def _expon_logsf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return el.where(y < 0, 0.0, -y)


def _expon_ppf(q, loc=0, scale=1) -> Array:
    q, loc, scale = _args(q, loc, scale)
    out = -el.log1p(-q) * scale + loc
    return el.where((q < 0) | (q > 1), np.nan, out)


expon = _family(logpdf=_expon_logpdf, cdf=_expon_cdf, sf=_expon_sf, logcdf=_expon_logcdf,
                logsf=_expon_logsf, ppf=_expon_ppf)


# Laplace: exp(-|y|) / (2 scale).

def _laplace_logpdf(x, loc=0, scale=1) -> Array:
    y, scale = _std(x, loc, scale)
    return -el.abs(y) - el.log(2.0 * scale)


def _laplace_cdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return el.where(y < 0, 0.5 * el.exp(y), 1.0 - 0.5 * el.exp(-y))


laplace = _family(logpdf=_laplace_logpdf, cdf=_laplace_cdf)


# Logistic: e^-y / (1 + e^-y)^2 / scale, written through |y| so neither tail overflows.

def _logistic_logpdf(x, loc=0, scale=1) -> Array:
    y, scale = _std(x, loc, scale)
    a = el.abs(y)
    return -a - 2.0 * el.log1p(el.exp(-a)) - el.log(scale)


def _logistic_cdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return sp.expit(y)


def _logistic_sf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return sp.expit(-y)


def _logistic_ppf(x, loc=0, scale=1) -> Array:
    q, loc, scale = _args(x, loc, scale)
    return sp.logit(q) * scale + loc


def _logistic_isf(x, loc=0, scale=1) -> Array:
    q, loc, scale = _args(x, loc, scale)
    return -sp.logit(q) * scale + loc


logistic = _family(logpdf=_logistic_logpdf, cdf=_logistic_cdf, sf=_logistic_sf,
                   ppf=_logistic_ppf, isf=_logistic_isf)


# Uniform on [loc, loc + scale].

# A NaN ``x`` gives NaN (scipy's answer; JAX's comparisons count it inside the support).

def _uniform_logpdf(x, loc=0, scale=1) -> Array:
    x, loc, scale = _args(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return el.where(el.isnan(x), np.nan, el.where(inside, -el.log(scale), -np.inf))


def _uniform_cdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return el.where(el.isnan(y), np.nan, el.minimum(el.maximum(y, 0.0), 1.0))


def _uniform_ppf(q, loc=0, scale=1) -> Array:
    q, loc, scale = _args(q, loc, scale)
    return el.where((q < 0) | (q > 1), np.nan, loc + q * scale)


uniform = _family(logpdf=_uniform_logpdf, cdf=_uniform_cdf, ppf=_uniform_ppf)


# Cauchy: 1 / (pi scale (1 + y^2)); the sf is the cdf at -y (no cancellation in the tail).

def _cauchy_logpdf(x, loc=0, scale=1) -> Array:
    y, scale = _std(x, loc, scale)
    return -math.log(math.pi) - el.log(scale) - el.log1p(y * y)


def _cauchy_cdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return 0.5 + el.arctan(y) / math.pi


def _cauchy_sf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return 0.5 - el.arctan(y) / math.pi


def _cauchy_ppf(q, loc=0, scale=1) -> Array:
    q, loc, scale = _args(q, loc, scale)
    return loc + scale * el.tan(math.pi * (q - 0.5))


def _cauchy_isf(q, loc=0, scale=1) -> Array:
    q, loc, scale = _args(q, loc, scale)
    return loc + scale * el.tan(math.pi * (0.5 - q))


cauchy = _family(logpdf=_cauchy_logpdf, cdf=_cauchy_cdf, sf=_cauchy_sf,
                 logcdf=_log_of(_cauchy_cdf), logsf=_log_of(_cauchy_sf), ppf=_cauchy_ppf,
                 isf=_cauchy_isf)


# Pareto of shape b: b / (scale y^(b + 1)) on y >= 1.

def _pareto_logpdf(x, b, loc=0, scale=1) -> Array:
    y, scale, b = _std(x, loc, scale, b)
    out = el.log(b) - el.log(scale) - (b + 1.0) * el.log(y)
    return el.where(y < 1, -np.inf, out)


def _pareto_sf(x, b, loc=0, scale=1) -> Array:
    y, _, b = _std(x, loc, scale, b)
    return el.where(y < 1, 1.0, el.exp(-b * el.log(y)))


def _pareto_cdf(x, b, loc=0, scale=1) -> Array:
    y, _, b = _std(x, loc, scale, b)
    return el.where(y < 1, 0.0, -el.expm1(-b * el.log(y)))


def _pareto_logsf(x, b, loc=0, scale=1) -> Array:
    y, _, b = _std(x, loc, scale, b)
    return el.where(y < 1, 0.0, -b * el.log(y))


def _pareto_ppf(q, b, loc=0, scale=1) -> Array:
    q, b, loc, scale = _args(q, b, loc, scale)
    out = scale * el.exp(-el.log1p(-q) / b) + loc
    return el.where((q < 0) | (q > 1), np.nan, out)


pareto = _family(logpdf=_pareto_logpdf, cdf=_pareto_cdf, sf=_pareto_sf,
                 logcdf=_log_of(_pareto_cdf), logsf=_pareto_logsf, ppf=_pareto_ppf)


# Gumbel for maxima (right-skewed): exp(-(y + e^-y)) / scale; for minima, y -> -y.

def _gumbel_r_logpdf(x, loc=0, scale=1) -> Array:
    y, scale = _std(x, loc, scale)
    return -(y + el.exp(-y)) - el.log(scale)


def _gumbel_r_logcdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return -el.exp(-y)


def _gumbel_r_cdf(x, loc=0, scale=1) -> Array:
    return el.exp(_gumbel_r_logcdf(x, loc, scale))


def _gumbel_r_sf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return -el.expm1(-el.exp(-y))


def _gumbel_r_ppf(p, loc=0, scale=1) -> Array:
    p, loc, scale = _args(p, loc, scale)
    out = loc - scale * el.log(-el.log(p))
    # NaN at 0 and 1 too, as JAX (not -inf and inf).
    return el.where((p <= 0) | (p >= 1), np.nan, out)


gumbel_r = _family(logpdf=_gumbel_r_logpdf, cdf=_gumbel_r_cdf, sf=_gumbel_r_sf,
                   logcdf=_gumbel_r_logcdf, logsf=_log_of(_gumbel_r_sf), ppf=_gumbel_r_ppf)


def _gumbel_l_logpdf(x, loc=0, scale=1) -> Array:
    y, scale = _std(x, loc, scale)
    return y - el.exp(y) - el.log(scale)


def _gumbel_l_logsf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return -el.exp(y)


def _gumbel_l_sf(x, loc=0, scale=1) -> Array:
    return el.exp(_gumbel_l_logsf(x, loc, scale))


def _gumbel_l_cdf(x, loc=0, scale=1) -> Array:
    y, _ = _std(x, loc, scale)
    return -el.expm1(-el.exp(y))


def _gumbel_l_ppf(p, loc=0, scale=1) -> Array:
    p, loc, scale = _args(p, loc, scale)
    out = loc + scale * el.log(-el.log1p(-p))
    return el.where((p <= 0) | (p >= 1), np.nan, out)


gumbel_l = _family(logpdf=_gumbel_l_logpdf, cdf=_gumbel_l_cdf, sf=_gumbel_l_sf,
                   logcdf=_log_of(_gumbel_l_cdf), logsf=_gumbel_l_logsf, ppf=_gumbel_l_ppf)


# The normal truncated to standardized [a, b]. Masses are taken on the side of zero where
# they do not cancel: Phi(b) - Phi(a) for a <= 0, else Phi(-a) - Phi(-b).

def _normal_mass(lo, hi):
    flip = lo > 0
    return el.where(flip, sp.ndtr(-lo) - sp.ndtr(-hi), sp.ndtr(hi) - sp.ndtr(lo))


def _truncnorm_logpdf(x, a, b, loc=0, scale=1) -> Array:
    y, scale, a, b = _std(x, loc, scale, a, b)
    out = -0.5 * y * y - 0.5 * _LOG_2PI - el.log(_normal_mass(a, b)) - el.log(scale)
    return el.where((y < a) | (y > b), -np.inf, out)


def _truncnorm_cdf(x, a, b, loc=0, scale=1) -> Array:
    y, _, a, b = _std(x, loc, scale, a, b)
    c = el.minimum(el.maximum(y, a), b)
    return _normal_mass(a, c) / _normal_mass(a, b)


def _truncnorm_sf(x, a, b, loc=0, scale=1) -> Array:
    y, _, a, b = _std(x, loc, scale, a, b)
    c = el.minimum(el.maximum(y, a), b)
    return _normal_mass(c, b) / _normal_mass(a, b)


truncnorm = _family(logpdf=_truncnorm_logpdf, cdf=_truncnorm_cdf, sf=_truncnorm_sf,
                    logcdf=_log_of(_truncnorm_cdf), logsf=_log_of(_truncnorm_sf))


# Circular families on one period.

def _vonmises_logpdf(x, kappa) -> Array:
    """``kappa cos x - log(2 pi I0(kappa))`` (through ``i0e``, so a large ``kappa`` does not
    overflow). Normalized over one period; like JAX's it is periodic, not -inf outside
    ``[-pi, pi]``."""
    x, kappa = _args(x, kappa)
    return kappa * (el.cos(x) - 1.0) - _LOG_2PI - el.log(i0e(kappa))


vonmises = _family(logpdf=_vonmises_logpdf)


def _wrapcauchy_logpdf(x, c) -> Array:
    """``(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))`` on ``[0, 2 pi]``, ``0 < c < 1``."""
    x, c = _args(x, c)
    out = el.log1p(-c * c) - _LOG_2PI - el.log1p(c * c - 2.0 * c * el.cos(x))
    inside = (x >= 0) & (x <= 2 * math.pi) & (c > 0) & (c < 1)
    return el.where(inside, out, -np.inf)


wrapcauchy = _family(logpdf=_wrapcauchy_logpdf)


def _gennorm_logpdf(x, beta) -> Array:
    """``beta / (2 Gamma(1/beta)) exp(-|x|^beta)``."""
    x, beta = _args(x, beta)
    return el.log(0.5 * beta) - sp.gammaln(1.0 / beta) - el.abs(x) ** beta


def _gennorm_cdf(x, beta) -> Array:
    x, beta = _args(x, beta)
    half = 0.5 * sp.gammainc(1.0 / beta, el.abs(x) ** beta)
    return 0.5 + el.where(x < 0, -half, half)


gennorm = _family(logpdf=_gennorm_logpdf, cdf=_gennorm_cdf)


# Discrete families; -inf off the support, as JAX.

def _geom_logpmf(k, p, loc=0) -> Array:
    """``(1 - p)^(k - 1) p`` on ``k = 1, 2, ...``."""
    k, p, loc = _args(k, p, loc)
    x = k - loc
    out = sp.xlog1py(x - 1.0, -p) + el.log(p)
    return el.where(x <= 0, -np.inf, out)


geom = _family(logpmf=_geom_logpmf)


def _log_choose(n, k):
    return sp.gammaln(n + 1.0) - sp.gammaln(k + 1.0) - sp.gammaln(n - k + 1.0)


def _binom_logpmf(k, n, p, loc=0) -> Array:
    """``C(n, k) p^k (1 - p)^(n - k)`` on ``0 <= k <= n``."""
    k, n, p, loc = _args(k, n, p, loc)
    x = k - loc
    out = _log_choose(n, x) + sp.xlogy(x, p) + sp.xlog1py(n - x, -p)
    return el.where((x < 0) | (x > n), -np.inf, out)


binom = _family(logpmf=_binom_logpmf)


def _nbinom_logpmf(k, n, p, loc=0) -> Array:
    """``C(k + n - 1, k) p^n (1 - p)^k`` on ``k >= 0``."""
    k, n, p, loc = _args(k, n, p, loc)
    x = k - loc
    out = (sp.gammaln(x + n) - sp.gammaln(x + 1.0) - sp.gammaln(n) + sp.xlogy(n, p)
           + sp.xlog1py(x, -p))
    return el.where(x < 0, -np.inf, out)


nbinom = _family(logpmf=_nbinom_logpmf)


def _betabinom_logpmf(k, n, a, b, loc=0) -> Array:
    """``C(n, k) B(k + a, n - k + b) / B(a, b)`` on ``0 <= k <= n`` (a fractional ``k``
    counts as its floor, as JAX)."""
    k, n, a, b, loc = _args(k, n, a, b, loc)
    x = el.floor(k - loc)
    out = _log_choose(n, x) + sp.betaln(x + a, n - x + b) - sp.betaln(a, b)
    out = el.where((x < 0) | (x > n), -np.inf, out)
    return el.where((a <= 0) | (b <= 0), np.nan, out)


betabinom = _family(logpmf=_betabinom_logpmf)


# Multivariate discrete and simplex families.

def _dirichlet_logpdf(x, alpha) -> Array:
    """log density on the simplex: ``x`` has ``len(alpha)`` entries along its first axis (or
    one fewer, the last being ``1 - sum``); -inf off the simplex (an entry <= 0, or a sum
    farther than 1e-6 from 1) and for non-positive ``alpha``, as JAX."""
    from ..numpy.reductions import all as all_, sum as sum_
    from ..numpy.shape import concatenate
    x, alpha = _args(x, alpha, broadcast=False)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet: alpha must be a vector, got shape {alpha.shape}")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(f"dirichlet: x must have {k} or {k - 1} entries along its first "
                         f"axis (alpha has {k}), got shape {x.shape}")
    if x.shape[0] == k - 1:
        x = concatenate([x, (1.0 - sum_(x, axis=0, keepdims=True))], axis=0)
    a = alpha.reshape((k,) + (1,) * (x.ndim - 1))
    norm = sp.gammaln(sum_(alpha)) - sum_(sp.gammaln(alpha))
    out = sum_(sp.xlogy(a - 1.0, x), axis=0) + norm
    on_simplex = all_(x > 0, axis=0) & (el.abs(sum_(x, axis=0) - 1.0) < 1e-6)
    return el.where(on_simplex & all_(alpha > 0), out, -np.inf)


dirichlet = _family(logpdf=_dirichlet_logpdf)


def _multinomial_logpmf(x, n, p) -> Array:
    """``n! prod(p_i^x_i / x_i!)`` for integer counts ``x`` (categories on the last axis,
    scipy's batching) summing to ``n``; -inf otherwise."""
    from ..numpy.creation import asarray
    from ..numpy.reductions import sum as sum_
    xs, ns = asarray(x), asarray(n)
    if xs.dtype.kind not in "iu" or ns.dtype.kind not in "iu":
        raise ValueError(f"multinomial: x and n must be of integer type; got x.dtype="
                         f"{xs.dtype}, n.dtype={ns.dtype}")
    p = _args(p)[0]
    xf, nf = xs.astype(p.dtype), ns.astype(p.dtype)
    out = (sp.gammaln(nf + 1.0)
           + sum_(sp.xlogy(xf, p) - sp.gammaln(xf + 1.0), axis=-1))
    return el.where(sum_(xs, axis=-1) == ns, out, -np.inf)


multinomial = _family(logpmf=_multinomial_logpmf)
