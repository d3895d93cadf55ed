"""``jax.scipy.linalg``'s Householder-based pair: ``hessenberg`` (reflections as LAPACK's
``gehrd``, so ``H`` and ``Q`` match scipy's and JAX's entries, signs included) and
``qr_multiply`` (``Q`` of the economic QR applied to a matrix)."""

from __future__ import annotations

from .. import dtypes as _dt
from ..array import Array
from ..numpy.elementwise import as_float



def _reflector(x: Array):
    """LAPACK ``dlarfg`` on the trailing axis of ``x``: ``(v, tau, beta)`` with
    ``(I - tau v v^T) x = beta e_0`` and ``v[0] = 1``. A vector already a multiple of
    ``e_0`` gets ``tau = 0`` (no reflection), as LAPACK."""
    from ..numpy.elementwise import copysign, hypot, sqrt, where
    from ..numpy.reductions import sum as sum_
    from ..numpy.shape import concatenate
    alpha, rest = x[..., 0], x[..., 1:]
    sq = sum_(rest * rest, axis=-1)
    still = sq == 0
    # The untaken branch must stay finite: its derivative is multiplied by zero.
    norm = sqrt(where(still, 1, sq))
    beta = where(still, alpha, -copysign(hypot(alpha, norm), alpha))
    tau = where(still, 0, (beta - alpha) / where(still, 1, beta))
    scale = 1 / where(still, 1, alpha - beta)
    v = concatenate([alpha[..., None] * 0 + 1, rest * scale[..., None]], axis=-1)
    return v, tau, beta


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """The Hessenberg form ``H`` of ``a`` (zero below the first subdiagonal, ``a = Q H
    Q^T`` with ``Q`` orthogonal), and ``Q`` with ``calc_q=True``; batched over leading axes
    and differentiable. ``overwrite_a`` and ``check_finite`` are accepted and unused, as
    in JAX.

    >>> import quabla.numpy as qnp
    >>> h = hessenberg(qnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]))
    >>> round(float(h[2, 0]), 6), round(float(h[1, 0]), 4)
    (0.0, -8.0623)
    """
    from ..numpy.creation import eye
    from ..numpy.products import einsum
    from ..numpy.shape import broadcast_to
    h = as_float(a)
    if h.ndim < 2 or h.shape[-1] != h.shape[-2]:
        raise ValueError(f"hessenberg needs square matrices (..., n, n), got shape {h.shape}")
    n = h.shape[-1]
    q = broadcast_to(eye(n, dtype=h.dtype), h.shape) if calc_q else None
    for k in range(n - 2):
        v, tau, beta = _reflector(h[..., k + 1:, k])
        tv = tau[..., None] * v
        # H <- P H P with P = I - tau v v^T acting on rows and columns k+1..n-1.
        low = h[..., k + 1:, :]
        low = low - tv[..., :, None] * einsum("...i,...ij->...j", v, low)[..., None, :]
        h = h.at[..., k + 1:, :].set(low)
        right = h[..., :, k + 1:]
        right = right - einsum("...ij,...j->...i", right, v)[..., :, None] * tv[..., None, :]
        h = h.at[..., :, k + 1:].set(right)
        # Column k is exactly beta e_{k+1} below the diagonal (LAPACK stores it so).
        h = h.at[..., k + 1, k].set(beta).at[..., k + 2:, k].set(0)
        if q is not None:
            qr_ = q[..., :, k + 1:]
            qr_ = qr_ - einsum("...ij,...j->...i", qr_, v)[..., :, None] * tv[..., None, :]
            q = q.at[..., :, k + 1:].set(qr_)
    return (h, q) if calc_q else h


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """``(Q @ c, R)`` (``mode='left'``, ``c`` of shape ``(..., K, P)``) or ``(c @ Q, R)``
    (``mode='right'``, ``c`` of shape ``(..., P, M)``), ``Q`` the ``M x K`` factor and ``R``
    the ``K x N`` one of the economic QR of ``a`` (``K = min(M, N)``), as JAX's. A vector
    ``c`` is a column (left) or a row (right) and the result is raveled. ``conjugate`` has
    no effect on real arrays; column ``pivoting`` is not supported."""
    from ..linalg import qr
    from ..numpy.shape import broadcast_shapes, broadcast_to
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True (column-pivoted QR) is not "
                                  "supported")
    a, c = as_float(a), as_float(c)
    dtype = _dt.result_type(a.dtype, c.dtype)
    a, c = a.astype(dtype), c.astype(dtype)
    if a.ndim < 2:
        raise ValueError(f"qr_multiply: a must be a matrix (..., M, N), got shape {a.shape}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"qr_multiply: a has shape {a.shape}, so Q has {k} columns, but c "
                         f"has {c.shape[-2]} rows (expected {k})")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"qr_multiply: a has shape {a.shape}, so Q has {m} rows, but c "
                         f"has {c.shape[-1]} columns (expected {m})")
    batch = broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    c = broadcast_to(c, batch + c.shape[-2:])
    q, r = qr(a, mode="reduced")
    out = q @ c if mode == "left" else c @ q
    if onedim:
        out = out.reshape(-1)
    return out, r
