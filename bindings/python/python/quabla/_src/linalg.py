"""Dense linear algebra on Quabla arrays: ``jax.numpy.linalg`` / ``numpy.linalg`` names and
the ``jax.scipy.linalg`` / ``jax.lax.linalg`` factorizations. Matrices are the last two
axes; leading axes batch. Every function differentiates (forward and reverse) and traces.

Conventions (as JAX): ``cholesky`` and ``eigh`` use the symmetric part ``(a + aᵀ)/2`` so
their gradients are symmetric; ``cholesky`` of a matrix that is not positive definite is
all NaN (``cholesky_checked`` raises instead, on concrete input); ``solve``/``inv`` of a
singular matrix give inf/NaN, ``det`` gives 0. Derivative caveats: ``eigh`` eigenvectors and
``svd`` singular vectors are not differentiable at repeated eigen/singular values (inf/NaN
there); ``qr`` derivatives need ``m >= n``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple, Optional, Union

import numpy as np

from .. import _quabla
from .array import Array
from .flat import to_raw

_L = _quabla.linalg


def _raw(x):
    return to_raw(x)


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _mT(x: Array) -> Array:
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return x.transpose(axes)


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor (lower, or upper with ``upper=True``); NaN if not positive
    definite.

    >>> cholesky(qnp.array([[4.0, 2.0], [2.0, 3.0]]))
    """
    l = Array(_L.cholesky(_raw(a), bool(symmetrize_input), False))
    return _mT(l) if upper else l


def cholesky_checked(a, *, upper: bool = False) -> Array:
    """:func:`cholesky` that raises ``QuablaError`` when the matrix is not positive definite
    (needs a concrete matrix)."""
    l = Array(_L.cholesky(_raw(a), True, True))
    return _mT(l) if upper else l


def det(a) -> Array:
    """The determinant, by LU."""
    return Array(_L.det(_raw(a)))


def slogdet(a) -> SlogdetResult:
    """``(sign, log|det|)``, by LU."""
    s, l = _L.slogdet(_raw(a))
    return SlogdetResult(Array(s), Array(l))


def eigh(a, UPLO: Optional[str] = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix."""
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {UPLO!r}")
    x = _raw(a)
    if UPLO == "U" and not symmetrize_input:
        x = _raw(_mT(Array(x)))
    w, v = _L.eigh(x, bool(symmetrize_input))
    return EighResult(Array(w), Array(v))


def eigvalsh(a, UPLO: Optional[str] = None) -> Array:
    """The eigenvalues of a symmetric matrix, ascending."""
    return eigh(a, UPLO).eigenvalues


def inv(a) -> Array:
    """The inverse, by LU."""
    return Array(_L.inv(_raw(a)))


def solve(a, b) -> Array:
    """``a⁻¹ b`` by LU with partial pivoting, broadcast as numpy 2 and JAX: ``b`` of one axis
    is a vector solved against every matrix of ``a``; otherwise ``b`` holds matrices and the
    batch axes broadcast (a stack of vectors is ``solve(a, b[..., None])[..., 0]``).
    Mismatched shapes raise ValueError."""
    return Array(_L.solve(_raw(a), _raw(b)))


def pinv(a, rtol: Optional[float] = None) -> Array:
    """The Moore-Penrose pseudo-inverse by SVD; singular values below ``rtol·max(s)`` (default
    ``10·max(m, n)·eps``) count as zero."""
    return Array(_L.pinv(_raw(a), None if rtol is None else float(rtol)))


def lstsq(a, b, rcond: Optional[float] = None):
    """``(x, residuals, rank, s)`` of ``min ‖a x - b‖`` (minimum-norm ``x``), as numpy."""
    x, r, k, s = _L.lstsq(_raw(a), _raw(b), None if rcond is None else float(rcond))
    return Array(x), Array(r), Array(k), Array(s)


def _axes(axis) -> Optional[list]:
    if axis is None:
        return None
    if isinstance(axis, int):
        return [axis]
    return [int(a) for a in axis]


def norm(x, ord: Union[None, int, float, str] = None, axis=None, keepdims: bool = False) -> Array:
    """Vector and matrix norms as ``numpy.linalg.norm`` (``ord``: None, 'fro', 'nuc', ±inf,
    or a number)."""
    return Array(_L.norm(_raw(x), ord, _axes(axis), bool(keepdims)))


def matrix_power(a, n: int) -> Array:
    """``a`` to the integer power ``n`` (negative: of the inverse), by repeated squaring."""
    if int(n) != n:
        raise TypeError(f"matrix_power: n must be an integer, got {n!r}")
    return Array(_L.matrix_power(_raw(a), int(n)))


def cond(x, p=None) -> Array:
    """The condition number in the ``p`` norm (default 2: ``σ_max/σ_min``)."""
    return Array(_L.cond(_raw(x), p))


def qr(a, mode: str = "reduced"):
    """Householder QR; ``mode`` 'reduced', 'complete' or 'r' (R only)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = _L.qr(_raw(a), mode == "complete")
    if mode == "r":
        return Array(r)
    return QRResult(Array(q), Array(r))


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """``(U, S, Vh)`` with ``a = U diag(S) Vh`` (singular values descending), or ``S`` alone."""
    if hermitian:
        raise NotImplementedError("svd: hermitian=True is not supported; use eigh")
    if not compute_uv:
        return Array(_L.singular_values(_raw(a)))
    u, s, vt = _L.svd(_raw(a), bool(full_matrices))
    return SVDResult(Array(u), Array(s), Array(vt))


def svdvals(a) -> Array:
    """The singular values, descending."""
    return Array(_L.singular_values(_raw(a)))


def matrix_rank(M, rtol: Optional[float] = None) -> Array:
    """The number of singular values above ``rtol·max(s)`` (default ``max(m, n)·eps``)."""
    m = Array(_raw(M))
    s = svdvals(m)
    if rtol is None:
        eps = 1.1920929e-07 if str(m.dtype) == "float32" else 2.220446049250313e-16
        rtol = max(m.shape[-2:]) * eps
    from .numpy.reductions import max as _max, sum as _sum
    return _sum(s > _max(s, axis=-1, keepdims=True) * rtol, axis=-1)


def lu(a):
    """``(lu, pivots, permutation)`` as ``jax.lax.linalg.lu``: ``a[permutation] = L U``."""
    f, p, q = _L.lu(_raw(a))
    return Array(f), Array(p), Array(q)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, unit_diagonal: bool = False) -> Array:
    """``jax.lax.linalg.triangular_solve``: solves ``op(a) x = b`` (``left_side``) or
    ``x op(a) = b``. Defaults follow JAX (right side, upper)."""
    return Array(_L.triangular_solve(_raw(a), _raw(b), bool(left_side), bool(lower),
                                     bool(transpose_a), bool(unit_diagonal)))


def _warn_stacked_vectors(a, b, what: str) -> None:
    """JAX's scipy solves still read ``b`` of one axis fewer than ``a`` (more than one, its
    last fitting ``a``) as a stack of vectors, with this FutureWarning; so does Quabla."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if len(b_shape) > 1 and len(b_shape) + 1 == len(a_shape) and b_shape[-1] == a_shape[-1]:
        warnings.warn(f"{what}: batched 1D solves with b.ndim > 1 are deprecated (as in JAX), "
                      f"and in the future will be treated as a batched 2D solve. Use "
                      f"{what}(a, b[..., None]).squeeze(-1) to avoid this warning.",
                      FutureWarning, stacklevel=3)


def solve_triangular(a, b, trans: Union[int, str] = 0, lower: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """``scipy.linalg.solve_triangular``: ``op(a) x = b`` with ``trans`` 0/'N' or 1/'T';
    batch axes of ``a`` and ``b`` broadcast, as ``jax.scipy.linalg``."""
    t = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}.get(trans)
    if t is None:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 'N' or 'T', got {trans!r}")
    _warn_stacked_vectors(a, b, "solve_triangular")
    return Array(_L.solve_triangular(_raw(a), _raw(b), bool(lower), t, bool(unit_diagonal)))


def cholesky_triangle(a, lower: bool) -> Array:
    """The Cholesky factor of the symmetric matrix held in ``a``'s ``lower`` (or upper)
    triangle, the other one never read, as ``jax.scipy.linalg.cholesky``; lower or upper to
    match."""
    x = Array(_raw(a))
    l = Array(_L.cholesky(_raw(x if lower else _mT(x)), False, False))
    return l if lower else _mT(l)


def cho_factor(a, lower: bool = False):
    """``scipy.linalg.cho_factor``: ``(c, lower)`` for :func:`cho_solve`; reads only the
    ``lower`` (or upper) triangle of ``a``, as JAX."""
    return cholesky_triangle(a, bool(lower)), bool(lower)


def cho_solve(c_and_lower, b) -> Array:
    """``scipy.linalg.cho_solve``: solves ``a x = b`` from ``cho_factor(a)``; batch axes
    broadcast, as ``jax.scipy.linalg``."""
    c, lower = c_and_lower
    _warn_stacked_vectors(c, b, "cho_solve")
    return Array(_L.cho_solve(_raw(c), bool(lower), _raw(b)))

