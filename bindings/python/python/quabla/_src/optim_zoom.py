"""optax's ``scale_by_zoom_linesearch``: a step size satisfying the strong Wolfe conditions
along the update direction, found as Nocedal & Wright's algorithms 3.5 (grow a step until
an interval holds an acceptable one) and 3.6 (shrink that interval), with Hager and Zhang's
approximate decrease test for very flat functions. Written from optax's documentation and
the book, not optax's code: the interval is shrunk at the minimiser of the cubic through
both ends' values and slopes when it lies well inside, else of the quadratic through the
low end's value and slope and the high end's value, else at the midpoint. So the step sizes
satisfy the same conditions as optax's without being the same numbers when the first guess
fails. One ``while_loop`` evaluates ``value_fn`` and its gradient once a trip.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from .api import value_and_grad
from .array import Array
from .control_flow import while_loop
from .numpy.creation import asarray
from .numpy.elementwise import abs as abs_
from .numpy.elementwise import isfinite, maximum, minimum, sign, sqrt, where
from .optim_lbfgs import GradientTransformationExtraArgs, _add_scale, _value_fn_kwargs, tree_vdot
from .tree_util import tree_map


class ZoomLinesearchInfo(NamedTuple):
    """How the last search went: evaluations made, and how far the accepted step is from
    the sufficient decrease and small curvature conditions (0 when it meets them)."""
    num_linesearch_steps: Array
    decrease_error: Array
    curvature_error: Array


class ScaleByZoomLinesearchState(NamedTuple):
    """The accepted step size, the value and gradient there (for
    ``value_and_grad_from_state``), and the search's info."""
    learning_rate: Array
    value: Array
    grad: Any
    info: ZoomLinesearchInfo


class _Point(NamedTuple):
    """A step size tried, with the value, gradient and slope along the direction there."""
    step: Array
    value: Array
    grad: Any
    slope: Array


class _Search(NamedTuple):
    trips: Array
    # 0: growing the step; 1: shrinking the interval [low, high]; 2: done.
    stage: Array
    trial: Array
    prev: _Point
    low: _Point
    high: _Point
    # The point with the least value of those with sufficient decrease (step 0: none yet).
    safe: _Point
    last: _Point
    accepted: _Point


def _interpolate(low: _Point, high: _Point) -> Array:
    """The next step inside [low, high]: the cubic's minimiser at least a fifth of the
    interval from either end, else the quadratic's at least a tenth, else the midpoint."""
    a, b = low.step, high.step
    width = b - a
    left, right = minimum(a, b), maximum(a, b)
    span = abs_(width)
    safe_width = where(width == 0, 1.0, width)
    d1 = low.slope + high.slope - 3.0 * (high.value - low.value) / safe_width
    disc = d1 * d1 - low.slope * high.slope
    d2 = sign(safe_width) * sqrt(maximum(disc, 0.0))
    den = high.slope - low.slope + 2.0 * d2
    cubic = b - width * (high.slope + d2 - d1) / where(den == 0, 1.0, den)
    cubic_ok = (disc >= 0) & (den != 0) & isfinite(cubic) & (cubic > left + 0.2 * span) & (
        cubic < right - 0.2 * span)
    qden = 2.0 * (high.value - low.value - low.slope * width)
    quad = a - low.slope * width * width / where(qden == 0, 1.0, qden)
    quad_ok = (qden > 0) & isfinite(quad) & (quad > left + 0.1 * span) & (
        quad < right - 0.1 * span)
    return where(cubic_ok, cubic, where(quad_ok, quad, 0.5 * (a + b)))


def _pick(flag: Array, a: _Point, b: _Point) -> _Point:
    return _Point(where(flag, a.step, b.step), where(flag, a.value, b.value),
                  tree_map(lambda x, y: where(flag, x, y), a.grad, b.grad),
                  where(flag, a.slope, b.slope))


def scale_by_zoom_linesearch(max_linesearch_steps: int, max_learning_rate: Optional[float] = None,
                             tol: float = 0.0, increase_factor: float = 2.0,
                             slope_rtol: float = 1e-4, curv_rtol: float = 0.9,
                             approx_dec_rtol: Optional[float] = 1e-6,
                             stepsize_precision: float = 1e-5,
                             initial_guess_strategy: str = "keep", verbose: bool = False):
    """Scales updates ``u`` by a step ``s`` with sufficient decrease,
    ``f(w + s u) <= f(w) + slope_rtol s <u, g> + tol``, and small curvature,
    ``|<g(w + s u), u>| <= curv_rtol |<u, g>| + tol``, as ``optax.scale_by_zoom_linesearch``
    with its signature and state. Where values barely change (below
    ``approx_dec_rtol |f(w)|``) Hager and Zhang's ``<g(w + s u), u> <= (2 slope_rtol - 1)
    <u, g> + tol`` stands for the decrease test (``approx_dec_rtol=None``: never).

    The first guess is 1 (``initial_guess_strategy="one"``, for quasi-Newton directions) or
    the previous step (``"keep"``), at most ``max_learning_rate``; it grows by
    ``increase_factor`` until an interval holds an acceptable step, which is then narrowed
    by interpolation. At most ``max_linesearch_steps`` evaluations of ``value_fn`` and its
    gradient. Out of evaluations, or with the interval below ``stepsize_precision``, the
    step is the one with the least value among those with sufficient decrease, or the last
    one tried if none had it (as optax). ``update(updates, state, params, *, value, grad,
    value_fn, **extra)``: ``extra`` goes to ``value_fn`` as in optax. ``verbose`` is
    accepted and prints nothing. ::

        opt = optim.chain(optim.sgd(1.0), optim.scale_by_zoom_linesearch(15))
        state = opt.init(w)
        vg = optim.value_and_grad_from_state(fn)   # reuses the search's last evaluation
        value, grad = vg(w, state=state)
        updates, state = opt.update(grad, state, w, value=value, grad=grad, value_fn=fn)
        w = optim.apply_updates(w, updates)
    """
    del verbose
    if initial_guess_strategy not in ("one", "keep"):
        raise ValueError(f"initial_guess_strategy must be 'one' or 'keep', got "
                         f"{initial_guess_strategy!r}")
    if int(max_linesearch_steps) < 1:
        raise ValueError("max_linesearch_steps must be at least 1")
    steps = int(max_linesearch_steps)

    def init(params):
        from .tree_util import tree_leaves
        dtype = tree_leaves(params)[0].dtype
        return ScaleByZoomLinesearchState(
            asarray(1.0, dtype), asarray(np.inf, dtype), tree_map(lambda x: x * 0, params),
            ZoomLinesearchInfo(asarray(0, "int32"), asarray(np.inf, dtype),
                               asarray(np.inf, dtype)))

    def update(updates, state, params=None, *, value, grad, value_fn, **extra):
        if params is None:
            raise ValueError("scale_by_zoom_linesearch.update needs params")
        kwargs = _value_fn_kwargs(value_fn, extra)
        dtype = asarray(value).dtype
        f0 = asarray(value).astype(dtype)
        slope0 = asarray(tree_vdot(updates, grad)).astype(dtype)

        def errors(p: _Point):
            dec = maximum(p.value - f0 - slope_rtol * p.step * slope0 - tol, 0.0)
            curv = maximum(abs_(p.slope) - curv_rtol * abs_(slope0) - tol, 0.0)
            dec = where(isfinite(dec), dec, np.inf)
            curv = where(isfinite(curv), curv, np.inf)
            return dec, curv

        def decreases(p: _Point) -> Array:
            ok = errors(p)[0] <= 0
            if approx_dec_rtol is None:
                return ok
            flat = (p.value <= f0 + approx_dec_rtol * abs_(f0)) & (
                p.slope <= (2.0 * slope_rtol - 1.0) * slope0 + tol)
            return ok | flat

        def evaluate(step: Array) -> _Point:
            v, g = value_and_grad(lambda q: value_fn(q, **kwargs))(
                _add_scale(params, step, updates))
            v = asarray(v).astype(dtype)
            return _Point(step, v, g, asarray(tree_vdot(g, updates)).astype(dtype))

        def body(s: _Search) -> _Search:
            p = evaluate(s.trial)
            dec, curv = errors(p)
            good = decreases(p)
            wolfe = good & (curv <= 0)
            growing = s.stage == 0
            # Growing (N&W 3.5): the interval is [prev, p] when p fails the decrease or is no
            # better than prev, [p, prev] when the slope turned upward.
            worse = ~good | ((s.trips > 0) & (p.value >= s.prev.value))
            upward = ~worse & (p.slope >= 0)
            # Shrinking (N&W 3.6): p replaces the high end, or becomes the low end (the old
            # low end becoming the high end when the slope points back at it).
            to_high = ~good | (p.value >= s.low.value)
            flip = ~to_high & (p.slope * (s.high.step - s.low.step) >= 0)
            low = _pick(growing, _pick(upward, p, s.prev), _pick(to_high, s.low, p))
            high = _pick(growing, _pick(upward, s.prev, p),
                         _pick(to_high, p, _pick(flip, s.low, s.high)))
            bracketed = growing & (worse | upward)
            safe = _pick((dec <= 0) & ((s.safe.step == 0) | (p.value < s.safe.value)), p,
                         s.safe)
            narrow = ~growing & (abs_(high.step - low.step) <= stepsize_precision) & (
                safe.step > 0)
            grown = s.trial * increase_factor
            if max_learning_rate is not None:
                grown = minimum(grown, max_learning_rate)
            stuck = growing & ~bracketed & (grown == s.trial)
            done = wolfe | narrow | stuck
            accepted = _pick(wolfe, p, _pick(safe.step > 0, safe, p))
            stage = where(done, 2, where(growing & ~bracketed, 0, 1))
            trial = where(growing & ~bracketed, grown, _interpolate(low, high))
            return _Search(s.trips + 1, stage.astype("int32"), trial.astype(dtype), p, low,
                           high, safe, p, accepted)

        first = asarray(1.0 if initial_guess_strategy == "one" else state.learning_rate)
        if max_learning_rate is not None:
            first = minimum(first, max_learning_rate)
        zero_grad = tree_map(lambda x: x * 0, grad)
        origin = _Point(asarray(0.0, dtype), f0, zero_grad, slope0)
        start = _Search(asarray(0, "int32"), asarray(0, "int32"), first.astype(dtype), origin,
                        origin, origin, origin, origin, origin)
        end = while_loop(lambda s: (s.stage != 2) & (s.trips < steps), body, start)
        # Out of evaluations: the safe step if there is one, else the last tried.
        chosen = _pick(end.stage == 2, end.accepted,
                       _pick(end.safe.step > 0, end.safe, end.last))
        dec, curv = errors(chosen)
        new_updates = tree_map(lambda u: chosen.step * u, updates)
        return new_updates, ScaleByZoomLinesearchState(
            chosen.step, chosen.value, chosen.grad, ZoomLinesearchInfo(end.trips, dec, curv))

    return GradientTransformationExtraArgs(init, update)


__all__ = ["ScaleByZoomLinesearchState", "ZoomLinesearchInfo", "scale_by_zoom_linesearch"]
