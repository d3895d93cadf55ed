"""Dense linear algebra with scipy's signatures, as ``jax.scipy.linalg``: ``cholesky`` is
upper by default, ``solve`` takes ``assume_a``, ``lu`` returns ``(p, l, u)``, ``eigh`` reads
one triangle. scipy's ``overwrite_*`` and ``check_finite`` are accepted and ignored, as in
JAX.
"""

from __future__ import annotations

from typing import Union

import numpy as np

from ..api import custom_jvp, stop_gradient
from ..array import Array
from ..numpy.creation import asarray, zeros
from ..numpy.shape import atleast_2d, concatenate, pad
from .. import linalg as _la
from .. import dtypes as _dt
from ..linalg import cho_factor, cho_solve, det, inv, solve_triangular  # noqa: F401
from .expm import expm  # noqa: F401


def _arr(x) -> Array:
    x = x if isinstance(x, Array) else asarray(x)
    return x if x.dtype.kind == "f" else x.astype(_dt.default_float())


def cholesky(a, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    """The Cholesky factor, upper (``a = U^T U``) unless ``lower``, of the symmetric matrix
    in that triangle of ``a`` (the other is not read, as JAX); NaN if it is not positive
    definite.

    >>> cholesky(qnp.array([[4.0, 2.0], [2.0, 3.0]]), lower=True)
    """
    return _la.cholesky_triangle(_arr(a), bool(lower))


def _pos_solve_value(a, b, lower):
    return cho_solve(cho_factor(stop_gradient(a), lower=lower), b)


def _pos_solve_rule(lower, primals, tangents):
    (a, b), (ad, bd) = primals, tangents
    factors = cho_factor(stop_gradient(a), lower=lower)
    x = cho_solve(factors, b)
    vec = x.ndim == a.ndim - 1
    ax = (ad @ x[..., None])[..., 0] if vec else ad @ x
    return x, cho_solve(factors, bd - ax)


_pos_solve = custom_jvp(_pos_solve_value, nondiff_argnums=(2,))
_pos_solve.defjvp(_pos_solve_rule)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Array:
    """``a⁻¹ b``. ``assume_a="pos"`` solves by Cholesky (reading the ``lower`` or upper
    triangle) with the derivative of the linear system, ``d x = a⁻¹ (d b - d a x)``, as
    JAX (``a`` taken as a general matrix there); ``"gen"``, ``"sym"`` and ``"her"`` by
    LU."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got "
                         f"{assume_a!r}")
    a, b = _arr(a), _arr(b)
    if assume_a != "pos":
        return _la.solve(a, b)
    d = _dt.result_type(a.dtype, b.dtype)
    return _pos_solve(a.astype(d), b.astype(d), bool(lower))


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(p, l, u)`` with ``a = p @ l @ u`` (``l`` unit lower, ``u`` upper), or
    ``(p @ l, u)`` with ``permute_l``."""
    a = _arr(a)
    f, _, perm = _la.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    from ..numpy.shape import tril, triu
    from ..numpy.creation import eye
    l = tril(f[..., :, :k], -1) + eye(m, k, dtype=f.dtype)
    u = triu(f[..., :k, :])
    # a[perm] = l u, so p is the permutation matrix with p[perm[i], i] = 1.
    p = (perm[..., None, :] == asarray(np.arange(m, dtype=np.int32))[:, None]).astype(f.dtype)
    if permute_l:
        return p @ l, u
    return p, l, u


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)``: both factors in one matrix and LAPACK's row interchanges (row ``i``
    was swapped with row ``piv[i]``), for :func:`lu_solve`."""
    f, piv, _ = _la.lu(_arr(a))
    return f, piv


def _pivots_to_permutation(piv: Array, m: int) -> Array:
    """The row order ``perm`` with ``a[perm] = l u``, from LAPACK's interchanges."""
    p = np.asarray(piv)
    if p.ndim != 1:
        raise NotImplementedError("lu_solve: stacked factors are not supported; vmap over "
                                  "the stack")
    perm = np.arange(m)
    for i, j in enumerate(p):
        perm[i], perm[j] = perm[j], perm[i]
    return asarray(perm.astype(np.int32))


def lu_solve(lu_and_piv, b, trans: Union[int, str] = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:
    """Solves ``a x = b`` (``trans=0``) or ``a^T x = b`` (1) from :func:`lu_factor`; ``b``
    a vector or a matrix of right-hand sides. The pivots must be concrete."""
    f, piv = lu_and_piv
    t = {0: 0, "N": 0, 1: 1, "T": 1, 2: 1, "C": 1}.get(trans)
    if t is None:
        raise ValueError(f"lu_solve: trans must be 0, 1, 'N' or 'T', got {trans!r}")
    f, b = _arr(f), _arr(b)
    m = f.shape[-1]
    if b.shape[0] != m:
        raise ValueError(f"lu_solve: b has {b.shape[0]} rows, the factors {m}")
    perm = _pivots_to_permutation(piv, m)
    vec = b.ndim == 1
    x = b[:, None] if vec else b
    if t == 0:
        x = x[perm]
        x = solve_triangular(f, x, lower=True, unit_diagonal=True)
        x = solve_triangular(f, x, lower=False)
    else:
        x = solve_triangular(f, x, trans=1, lower=False)
        x = solve_triangular(f, x, trans=1, lower=True, unit_diagonal=True)
        x = zeros(x.shape, x.dtype).at[perm].set(x)
    return x[:, 0] if vec else x


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals=None, type: int = 1, check_finite: bool = True):  # noqa: A002
    """Eigenvalues (ascending) and eigenvectors (columns) of ``(a + a^T) / 2``, as JAX
    (whose ``lower`` then changes nothing); ``eigvals_only`` returns the values."""
    if b is not None:
        raise NotImplementedError("eigh: the generalized problem (b) is not supported, as in "
                                  "JAX")
    if eigvals is not None:
        raise NotImplementedError("eigh: eigvals (a subset) is not supported, as in JAX")
    w, v = _la.eigh(_arr(a))
    return w if eigvals_only else (w, v)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """``(U, s, Vh)`` with ``a = U diag(s) Vh``, or ``s`` alone."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got "
                         f"{lapack_driver!r}")
    out = _la.svd(_arr(a), full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def block_diag(*arrs) -> Array:
    """The arrays (scalars and vectors as one-row matrices) along the diagonal of one
    matrix, zeros elsewhere."""
    if not arrs:
        return zeros((1, 0), _dt.default_float())
    mats = [atleast_2d(x if isinstance(x, Array) else asarray(x)) for x in arrs]
    if any(m.ndim != 2 for m in mats):
        raise ValueError("block_diag: arguments must have two or fewer dimensions")
    d = _dt.result_type(*[m.dtype for m in mats])
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        right = cols - left - m.shape[1]
        rows.append(pad(m.astype(d), ((0, 0), (left, right))))
        left += m.shape[1]
    return concatenate(rows, axis=0)


__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv",
           "lu", "lu_factor", "lu_solve", "solve", "solve_triangular", "svd"]
