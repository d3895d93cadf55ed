"""The matrix exponential by scaling and squaring with Padé approximants (Higham 2005), as
``jax.scipy.linalg.expm``: the approximant's degree and the number of squarings follow the
1-norm, the squarings run in a fixed-length ``scan`` behind ``cond``s, so it traces,
differentiates and batches like any composition."""

from __future__ import annotations

import numpy as np

from ..array import Array
from ..numpy.creation import asarray, eye
from ..numpy import elementwise as el
from ..numpy import reductions as red
from .. import dtypes as _dt

_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# The largest 1-norm each degree is accurate for (Higham's theta_m), and the scaling target.
_THETA = {np.dtype(np.float64): ((3, 5, 7, 9, 13),
                                 (1.495585217958292e-2, 2.539398330063230e-1,
                                  9.504178996162932e-1, 2.097847961257068e0), 5.371920351148152),
          np.dtype(np.float32): ((3, 5, 7), (4.258730016922831e-1, 1.880152677804762e0),
                                 3.925724783138660)}


def _pade(m: int):
    b = _PADE[m]

    def approximant(a: Array):
        ident = eye(a.shape[0], dtype=a.dtype)
        a2 = a @ a
        if m == 13:
            a4 = a2 @ a2
            a6 = a4 @ a2
            u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
                     + b[3] * a2 + b[1] * ident)
            v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 \
                + b[2] * a2 + b[0] * ident
            return u, v
        powers = [ident, a2]
        while len(powers) < (m + 1) // 2:
            powers.append(powers[-1] @ a2)
        u = a @ sum(b[2 * k + 1] * p for k, p in enumerate(powers))
        v = sum(b[2 * k] * p for k, p in enumerate(powers))
        return u, v

    return approximant


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """``exp(A)`` of a (batched) square matrix: NaN when it would need more than
    ``max_squarings`` squarings (a 1-norm past about ``5.4 * 2**16`` in float64).

    >>> expm(qnp.array([[0.0, 1.0], [-1.0, 0.0]]))  # the rotation by 1 radian
    """
    from ..api import vmap
    from ..control_flow import cond, scan, switch
    from ..linalg import solve, solve_triangular
    a = A if isinstance(A, Array) else asarray(A)
    if a.dtype.kind != "f":
        a = a.astype(_dt.default_float())
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape="
                         f"{tuple(a.shape)}.")
    if a.ndim > 2:
        flat = a.reshape((-1,) + tuple(a.shape[-2:]))
        out = vmap(lambda m: expm(m, upper_triangular=upper_triangular,
                                  max_squarings=max_squarings))(flat)
        return out.reshape(a.shape)
    degrees, bounds, max_norm = _THETA[np.dtype(a.dtype)]
    norm1 = red.max(red.sum(el.absolute(a), axis=0))
    squarings = el.maximum(0.0, el.floor(el.log2(norm1 / max_norm)))
    scaled = a / (2.0 ** squarings).astype(a.dtype)
    index = red.sum((norm1 >= asarray(np.array(bounds, a.dtype))).astype(np.int32))
    u, v = switch(index, [_pade(m) for m in degrees], scaled)
    p, q = u + v, -u + v

    def compute(p, q):
        r = solve_triangular(q, p) if upper_triangular else solve(q, p)

        def square(c, i):
            return cond(i < squarings, lambda x: x @ x, lambda x: x, c), None

        return scan(square, r, asarray(np.arange(max_squarings, dtype=a.dtype)))[0]

    def overflow(p, q):
        return asarray(np.full(p.shape, np.nan, p.dtype))

    return cond(squarings > max_squarings, overflow, compute, p, q)
