"""``minimize(method="BFGS")``, as ``jax.scipy.optimize.minimize``: BFGS on the inverse
Hessian (Nocedal & Wright, Algorithm 6.1) with a strong-Wolfe line search (Algorithms 3.5
and 3.6: bracketing, then zooming by cubic, quadratic or bisection steps), every loop a
``lax.while_loop``, so it runs under ``jit`` and ``vmap``. Same constants and bookkeeping as
JAX's, so the same iterates, counts and status codes.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Optional

import numpy as np

from ..array import Array
from ..numpy.creation import asarray, eye, zeros_like
from ..numpy import elementwise as el
from .. import dtypes as _dt


class OptimizeResults(NamedTuple):
    """What :func:`minimize` returns: ``x``, ``success``, ``status`` (0 converged, 1 the
    iteration limit, 3 the zoom failed, 5 the line search's iteration limit), ``fun``,
    ``jac``, ``hess_inv``, ``nfev``, ``njev``, ``nit``."""
    x: Array
    success: Array
    status: Array
    fun: Array
    jac: Array
    hess_inv: Optional[Array]
    nfev: Array
    njev: Array
    nit: Array


def _pick(cond, new, old):
    """``new`` where ``cond`` else ``old``, field by field of two equal tuples."""
    return type(old)(*(el.where(cond, n, o) for n, o in zip(new, old)))


class _Point(NamedTuple):
    """A trial step ``a`` along the direction, with the value, slope and gradient there."""
    a: Array
    phi: Array
    dphi: Array
    g: Array


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimiser of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a = (dc ** 2 * rb - db ** 2 * rc) / denom
    big_b = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-big_b + el.sqrt(big_b * big_b - 3.0 * big_a * fpa)) / (3.0 * big_a)


def _quad_min(a, fa, fpa, b, fb):
    """The minimiser of the parabola through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    return a - fpa / (2.0 * ((fb - fa - fpa * db) / (db * db)))


class _Zoom(NamedTuple):
    done: Array
    failed: Array
    j: Array
    lo: _Point
    hi: _Point
    rec_a: Array
    rec_phi: Array
    star: _Point
    evals: Array


def _zoom(probe, wolfe_one, wolfe_two, lo: _Point, hi: _Point, g0, skip) -> _Zoom:
    """Narrows the bracket [lo, hi] until a step meets both Wolfe conditions (failed after 30
    steps, or when the bracket is narrower than 1e-10, 1e-5 in float32)."""
    from ..control_flow import while_loop
    threshold = 1e-10 if np.finfo(np.dtype(lo.a.dtype)).bits == 64 else 1e-5
    zero = zeros_like(lo.phi)
    start = _Zoom(asarray(False), asarray(False), asarray(0, np.int32), lo, hi,
                  (lo.a + hi.a) / 2.0, (lo.phi + hi.phi) / 2.0,
                  _Point(zero + 1.0, lo.phi, lo.dphi, g0), asarray(0, np.int32))

    def body(s: _Zoom) -> _Zoom:
        width = s.hi.a - s.lo.a
        left, right = el.minimum(s.hi.a, s.lo.a), el.maximum(s.hi.a, s.lo.a)
        failed = s.failed | (width <= threshold)
        cubic = _cubic_min(s.lo.a, s.lo.phi, s.lo.dphi, s.hi.a, s.hi.phi, s.rec_a, s.rec_phi)
        use_cubic = (s.j > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
        quad = _quad_min(s.lo.a, s.lo.phi, s.lo.dphi, s.hi.a, s.hi.phi)
        use_quad = ~use_cubic & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
        a = el.where(use_cubic, cubic, s.rec_a)
        a = el.where(use_quad, quad, a)
        a = el.where(~use_cubic & ~use_quad, (s.lo.a + s.hi.a) / 2.0, a)
        new = probe(a)
        to_hi = wolfe_one(a, new.phi) | (new.phi >= s.lo.phi)
        to_star = wolfe_two(new.dphi) & ~to_hi
        hi_to_lo = (new.dphi * (s.hi.a - s.lo.a) >= 0.0) & ~to_hi & ~to_star
        to_lo = ~to_hi & ~to_star
        hi, rec_a, rec_phi = s.hi, s.rec_a, s.rec_phi
        rec_a = el.where(to_hi, hi.a, rec_a)
        rec_phi = el.where(to_hi, hi.phi, rec_phi)
        hi = _pick(to_hi, new, hi)
        star = _pick(to_star, new, s.star)
        rec_a = el.where(hi_to_lo, hi.a, rec_a)
        rec_phi = el.where(hi_to_lo, hi.phi, rec_phi)
        hi = _pick(hi_to_lo, s.lo, hi)
        rec_a = el.where(to_lo & ~hi_to_lo, s.lo.a, rec_a)
        rec_phi = el.where(to_lo & ~hi_to_lo, s.lo.phi, rec_phi)
        lo = _pick(to_lo, new, s.lo)
        return _Zoom(s.done | to_star, failed | (s.j + 1 >= 30), s.j + 1, lo, hi, rec_a,
                     rec_phi, star, s.evals + 1)

    return while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, start)


class _Search(NamedTuple):
    done: Array
    failed: Array
    i: Array
    prev: _Point
    star: _Point
    evals: Array


def _line_search(fun, x, p, f0, g0, old_old_fval, maxiter: int):
    """A step along ``p`` meeting the strong Wolfe conditions (c1 = 1e-4, c2 = 0.9): steps
    double from ``min(1, 2.02 (f0 - f_prev) / slope)`` until one is acceptable or brackets
    one for :func:`_zoom`. Returns the step, the point there, the evaluations and a status
    (0 found, 1 the zoom failed, 3 the iteration limit)."""
    from ..api import value_and_grad
    from ..control_flow import while_loop
    from ..numpy.products import dot

    def probe(t) -> _Point:
        t = asarray(t, p.dtype) if not isinstance(t, Array) else t.astype(p.dtype)
        phi, g = value_and_grad(fun)(x + t * p)
        return _Point(t, phi, dot(g, p), g)

    dphi0 = dot(g0, p)
    guess = 1.01 * 2 * (f0 - old_old_fval) / dphi0
    start_a = el.where(guess > 1, asarray(1.0, p.dtype), guess)

    def wolfe_one(a, phi):
        return phi > f0 + 1e-4 * a * dphi0

    def wolfe_two(dphi):
        return el.absolute(dphi) <= -0.9 * dphi0

    zero = zeros_like(f0)
    origin = _Point(zero, f0, dphi0, g0)
    start = _Search(asarray(False), asarray(False), asarray(1, np.int32), origin, origin,
                    asarray(0, np.int32))

    def body(s: _Search) -> _Search:
        a = el.where(s.i == 1, start_a, s.prev.a * 2.0)
        new = probe(a)
        zoom_up = wolfe_one(a, new.phi) | ((new.phi >= s.prev.phi) & (s.i > 1))
        accept = wolfe_two(new.dphi) & ~zoom_up
        zoom_down = (new.dphi >= 0.0) & ~zoom_up & ~accept
        z1 = _zoom(probe, wolfe_one, wolfe_two, s.prev, new, g0, ~zoom_up)
        z2 = _zoom(probe, wolfe_one, wolfe_two, new, s.prev, g0, ~zoom_down)
        star = _pick(zoom_up, z1.star, s.star)
        star = _pick(accept, new, star)
        star = _pick(zoom_down, z2.star, star)
        failed = s.failed | (zoom_up & z1.failed) | (zoom_down & z2.failed)
        return _Search(s.done | zoom_up | accept | zoom_down, failed, s.i + 1, new, star,
                       s.evals + 1 + z1.evals + z2.evals)

    s = while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, start)
    status = el.where(s.failed, 1, el.where(s.i > maxiter, 3, 0)).astype(np.int32)
    a = s.star.a
    if np.finfo(np.dtype(a.dtype)).bits != 64:
        a = el.where(el.absolute(a) < 1e-8, el.sign(a) * 1e-8, a)
    return a, s.star, s.evals, s.failed | ~s.done, status


class _BFGS(NamedTuple):
    converged: Array
    failed: Array
    k: Array
    evals: Array
    x: Array
    f: Array
    g: Array
    h: Array
    old_old_fval: Array
    search_status: Array


def _minimize_bfgs(fun: Callable, x0: Array, maxiter: Optional[int] = None, norm=np.inf,
                   gtol: float = 1e-5, line_search_maxiter: int = 10) -> OptimizeResults:
    from ..api import value_and_grad
    from ..control_flow import while_loop
    from ..linalg import norm as vnorm
    from ..numpy.products import dot

    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    start = _BFGS(vnorm(g0, ord=norm) < gtol, asarray(False), asarray(0, np.int32),
                  asarray(1, np.int32), x0, f0, g0, eye(n, dtype=x0.dtype),
                  f0 + vnorm(g0) / 2, asarray(0, np.int32))

    def body(s: _BFGS) -> _BFGS:
        p = -dot(s.h, s.g)
        a, point, evals, failed, status = _line_search(fun, s.x, p, s.f, s.g,
                                                       s.old_old_fval, line_search_maxiter)
        step = a * p
        y = point.g - s.g
        rho = 1.0 / dot(y, step)
        w = eye(n, dtype=x0.dtype) - rho * step[:, None] * y[None, :]
        h = w @ s.h @ w.T + rho * step[:, None] * step[None, :]
        h = el.where(el.isfinite(rho), h, s.h)
        return _BFGS(vnorm(point.g, ord=norm) < gtol, failed, s.k + 1, s.evals + evals,
                     s.x + step, point.phi, point.g, h, s.f, status)

    s = while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, start)
    status = el.where(s.converged, 0, el.where(s.k == maxiter, 1,
                                               el.where(s.failed, 2 + s.search_status, -1)))
    return OptimizeResults(x=s.x, success=s.converged & ~s.failed,
                           status=status.astype(np.int32), fun=s.f, jac=s.g, hess_inv=s.h,
                           nfev=s.evals, njev=s.evals, nit=s.k)


def minimize(fun: Callable, x0, args: tuple = (), *, method: str, tol: Optional[float] = None,
             options: Optional[Mapping[str, Any]] = None) -> OptimizeResults:
    """Minimises ``fun(x, *args)`` over a 1-D ``x`` from ``x0`` by ``method="BFGS"`` (the
    gradient by autodiff), as ``jax.scipy.optimize.minimize``; ``options``: ``maxiter``,
    ``norm``, ``gtol``, ``line_search_maxiter``. Runs under ``jit``; not differentiable
    through (as in JAX).

    >>> r = minimize(lambda x: qnp.sum((x - 3.0) ** 2), qnp.zeros(2), method="BFGS")
    >>> r.x  # [3, 3]
    """
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to minimize must be a tuple, got {args!r}")
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise ValueError(f"minimize: method {method!r} is not supported; use 'BFGS'")
    options = dict(options or {})
    unknown = set(options) - {"maxiter", "norm", "gtol", "line_search_maxiter"}
    if unknown:
        raise TypeError(f"minimize: unknown BFGS options {sorted(unknown)}; they are maxiter, "
                        "norm, gtol and line_search_maxiter")
    x = x0 if isinstance(x0, Array) else asarray(x0)
    if x.dtype.kind != "f":
        x = x.astype(_dt.default_float())
    if x.ndim != 1:
        raise ValueError(f"minimize: x0 must be 1-D, got shape {tuple(x.shape)}")
    del tol  # accepted, as JAX accepts and ignores it for BFGS
    return _minimize_bfgs(lambda v: fun(v, *args), x, **options)
