"""``random.binomial`` and ``random.multinomial``, with JAX's signatures and edge values.

Binomial counts use the same two samplers as JAX (not its bits): below a mean of 10,
inversion by geometric waiting times (about ``n p + 1`` uniforms an element); from 10,
Hormann's BTRS transformed rejection (1993), on ``min(p, 1 - p)`` by symmetry. Each is a
loop over the whole array that runs until every element is accepted. Multinomial counts
are conditional binomials category by category, the last taking the remainder.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .array import Array
from .numpy import elementwise as el
from .numpy.creation import asarray
from .random_distributions import _broadcast_shape, _float_dtype


def binomial(key, n, p, shape: Optional[Sequence[int]] = None, dtype=None) -> Array:
    """Binomial(n, p) counts as floats, ``n`` and ``p`` broadcast to ``shape``, as
    ``jax.random.binomial``: 0 at ``p == 0``, ``n`` at ``p == 1``, NaN for ``p`` outside
    [0, 1] or NaN, and for ``n < 0``; a fractional ``n`` counts its whole trials."""
    from .numpy.shape import broadcast_to
    d = _float_dtype(dtype, "binomial")
    shape = _broadcast_shape("binomial", shape, n, p)
    n = broadcast_to(asarray(n).astype(d), shape)
    p = broadcast_to(asarray(p).astype(d), shape)
    bad = el.isnan(p) | (p < 0) | (p > 1) | el.isnan(n) | (n < 0)
    trials = el.floor(el.where(bad, 0.0, n))
    # Sample min(p, 1 - p) and reflect: both samplers want p <= 1/2.
    flip = p > 0.5
    q = el.where(bad, 0.0, el.where(flip, 1.0 - p, p))
    small = trials * q < 10
    from ..random import split
    k_inv, k_btrs = split(key)
    inv = _inversion(k_inv, el.where(small, trials, 0.0), el.where(small, q, 0.0), shape)
    btrs = _btrs(k_btrs, el.where(small, 1e4, trials), el.where(small, 0.5, q), shape)
    count = el.where(small, inv, btrs)
    count = el.where(flip, trials - count, count)
    return el.where(bad, np.nan, count).astype(d)


def _inversion(key, n, p, shape) -> Array:
    """Counts of successes as the geometric waiting times that fit in ``n`` trials."""
    from ..random import split, uniform
    from .control_flow import while_loop
    from .numpy import reductions as red
    log1mp = el.log1p(-p)
    never = p <= 0

    def body(s):
        k, total, count = s
        pair = split(k)
        u = uniform(pair[1], shape, n.dtype)
        # ceil(log(u) / log(1 - p)) trials to the next success; none when p == 0.
        wait = el.where(never, np.inf, el.ceil(el.log(u) / el.where(never, -1.0, log1mp)))
        going = total <= n
        return (pair[0], el.where(going, total + wait, total),
                el.where(going, count + 1.0, count))

    zero = asarray(np.zeros(shape)).astype(n.dtype)
    _, _, count = while_loop(lambda s: red.any(s[1] <= n), body, (key, zero, zero))
    return count - 1.0


def _btrs(key, n, p, shape) -> Array:
    """Hormann's BTRS rejection for ``n p >= 10``, ``p <= 1/2``."""
    from ..random import split, uniform
    from .control_flow import while_loop
    from .numpy import reductions as red
    from .scipy.special import gammaln
    q = 1.0 - p
    spq = el.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = el.log(p / q)
    m = el.floor((n + 1.0) * p)
    h = gammaln(m + 1.0) + gammaln(n - m + 1.0)

    def body(s):
        out, accepted, k = s
        keys = split(k, 3)
        u = uniform(keys[1], shape, n.dtype) - 0.5
        v = uniform(keys[2], shape, n.dtype)
        us = 0.5 - el.absolute(u)
        kk = el.floor((2.0 * a / us + b) * u + c)
        inside = (kk >= 0) & (kk <= n)
        quick = (us >= 0.07) & (v <= v_r)
        kc = el.clip(kk, 0.0, n)
        lv = el.log(v * alpha / (a / (us * us) + b))
        bound = h - gammaln(kc + 1.0) - gammaln(n - kc + 1.0) + (kc - m) * lpq
        accept = inside & (quick | (lv <= bound)) & ~accepted
        return el.where(accept, kk, out), accepted | accept, keys[0]

    start = (asarray(np.zeros(shape)).astype(n.dtype), asarray(np.zeros(shape, bool)), key)
    return while_loop(lambda s: red.any(~s[1]), body, start)[0]


def multinomial(key, n, p, *, shape: Optional[Sequence[int]] = None, dtype=None,
                unroll=1) -> Array:
    """Multinomial(n, p) counts over the last axis of ``p`` (categories), as
    ``jax.random.multinomial``: conditional binomials category by category (category ``i``
    draws from the trials left with probability ``p_i / (1 - p_0 - ... - p_{i-1})``), the
    last category taking the remainder, so ``p`` need not sum exactly to 1. ``shape``
    includes the category axis. ``unroll`` is accepted for JAX's signature."""
    del unroll
    from ..random import split
    from .numpy.shape import broadcast_to
    from .. import numpy as qnp
    d = _float_dtype(dtype, "multinomial")
    p = asarray(p).astype(d)
    if p.ndim == 0:
        raise ValueError("multinomial: p needs a category axis (its last)")
    n = asarray(n).astype(d)
    if shape is None:
        shape = tuple(qnp.broadcast_shapes(tuple(n.shape) + (1,), tuple(p.shape)))
    shape = tuple(int(s) for s in shape)
    if not shape or shape[-1] != p.shape[-1]:
        raise ValueError(f"multinomial: shape {shape} must end with the {p.shape[-1]} "
                         "categories of p")
    batch = shape[:-1]
    p = broadcast_to(p, shape)
    left = broadcast_to(n, batch)
    mass = asarray(np.ones(batch)).astype(d)
    counts = []
    keys = split(key, shape[-1])
    for i in range(shape[-1] - 1):
        pi = p[..., i]
        ratio = el.clip(el.where(mass > 0, pi / el.where(mass > 0, mass, 1.0), 0.0), 0.0, 1.0)
        c = binomial(keys[i], left, ratio, shape=batch, dtype=d)
        counts.append(c)
        left = left - c
        mass = mass - pi
    counts.append(left)
    return qnp.stack(counts, axis=-1)


__all__ = ["binomial", "multinomial"]
