"""``jax.scipy.cluster.vq.vq``: the nearest code of each observation."""

from __future__ import annotations

from .. import dtypes as _dt
from ..numpy.elementwise import as_float

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """``(codes, distances)``: for each observation (row of ``obs``) the index of the
    nearest code (row of ``code_book``, euclidean; the first on ties) and its distance, as
    ``jax.scipy.cluster.vq.vq``. ``check_finite`` is accepted and unused, as in JAX."""
    from ..linalg import norm
    from ..numpy.reductions import argmin
    from ..numpy.misc import take_along_axis
    o, c = as_float(obs), as_float(code_book)
    dtype = _dt.result_type(o.dtype, c.dtype)
    o, c = o.astype(dtype), c.astype(dtype)
    if o.ndim != c.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if o.ndim == 1:
        o, c = o[:, None], c[:, None]
    if o.ndim != 2:
        raise ValueError("vq: ndim different than 1 or 2 are not supported")
    dist = norm(o[:, None, :] - c[None, :, :], axis=-1)
    code = argmin(dist, axis=-1)
    return code, take_along_axis(dist, code[:, None], axis=-1)[:, 0]
