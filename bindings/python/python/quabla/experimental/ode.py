"""``quabla.experimental.ode``: ``odeint`` with ``jax.experimental.ode.odeint``'s signature,
so ``from jax.experimental.ode import odeint`` ports by changing the import. It is
:func:`quabla.odeint` (dopri5, differentiable through the solver), with JAX's ``mxstep``
(steps per interval between requested times) turned into a bound on the whole solve.

>>> import quabla.numpy as qnp
>>> ys = odeint(lambda y, t: -y, qnp.array(1.0), qnp.array([0.0, 1.0]))
>>> round(float(ys[1]), 6)
0.367879
"""

import math

from .._src.numerics import odeint as _odeint


def odeint(func, y0, t, *args, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           mxstep: float = math.inf, hmax: float = math.inf):
    """``dy/dt = func(y, t, *args)`` solved from ``y(t[0]) = y0``, ``y`` at every time of
    ``t``, as JAX's. ``mxstep`` bounds the steps between two requested times (the default,
    unbounded, becomes :func:`quabla.odeint`'s default bound of 4,096 steps over the whole
    solve; times it does not reach are NaN, with a warning on concrete values). A finite
    ``hmax`` (a largest step) is refused: Quabla's step control has none."""
    if not math.isinf(hmax):
        raise NotImplementedError("odeint: a finite hmax is not supported (Quabla's step "
                                  "control has no largest step); leave it at inf")
    intervals = max(int(getattr(t, "shape", (len(t),))[0]) - 1, 1)
    if math.isinf(mxstep):
        return _odeint(func, y0, t, *args, rtol=rtol, atol=atol)
    if mxstep < 1:
        raise ValueError(f"odeint: mxstep must be at least 1, got {mxstep}")
    return _odeint(func, y0, t, *args, rtol=rtol, atol=atol,
                   max_steps=int(mxstep) * intervals)


__all__ = ["odeint"]
