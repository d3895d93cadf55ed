"""scipy.linalg's special matrices, as ``jax.scipy.linalg``: the structured ones built from a
vector (``toeplitz``, ``hankel``, ``circulant``, ``companion``, ``leslie``, ``fiedler``,
``convolution_matrix``; differentiable in their entries, batched over leading axes where
JAX batches), and the fixed ones of a size (``hilbert``, ``invhilbert``, ``pascal``,
``invpascal``, ``hadamard``, ``helmert``), exact: built in integers or from exact formulas,
then converted once. Plus ``expm_frechet``, the directional derivative of ``expm``."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array
from ..numpy.creation import asarray, zeros


def _vector(x, what: str, batched: bool) -> Array:
    x = asarray(x)
    if x.dtype.kind in "iub":
        x = x.astype(_dt.default_float())
    if x.ndim == 0 or (x.ndim > 1 and not batched):
        raise ValueError(f"{what} takes a {'vector (or a stack of them)' if batched else 'vector'}"
                         f", got shape {x.shape}")
    return x


def _gathered(values: Array, index: np.ndarray) -> Array:
    """``values[..., index]`` for a static integer ``index`` array."""
    return values[..., asarray(index.reshape(-1))].reshape(values.shape[:-1] + index.shape)


def toeplitz(c, r=None) -> Array:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (default ``c``;
    ``r[0]`` is ignored), batched over leading axes as JAX's.

    >>> toeplitz([1.0, 2.0, 3.0]).tolist()[1]
    [2.0, 1.0, 2.0]
    """
    from ..numpy.shape import broadcast_arrays, concatenate, flip
    c = _vector(c, "toeplitz", True)
    r = c if r is None else _vector(r, "toeplitz", True)
    lead = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = broadcast_arrays(c, zeros(lead + (1,), c.dtype))[0]
    r = broadcast_arrays(r, zeros(lead + (1,), r.dtype))[0]
    m, n = c.shape[-1], r.shape[-1]
    values = concatenate([flip(c, -1), r[..., 1:].astype(c.dtype)], axis=-1)
    i, j = np.indices((m, n))
    return _gathered(values, m - 1 - i + j)


def hankel(c, r=None) -> Array:
    """The Hankel matrix with first column ``c`` and last row ``r`` (default zeros;
    ``r[0]`` is ignored), batched over leading axes as JAX's."""
    from ..numpy.creation import zeros_like
    from ..numpy.shape import concatenate
    c = _vector(c, "hankel", True)
    r = zeros_like(c) if r is None else _vector(r, "hankel", True)
    m, n = c.shape[-1], r.shape[-1]
    values = concatenate([c, r[..., 1:].astype(c.dtype)], axis=-1)
    i, j = np.indices((m, n))
    return _gathered(values, i + j)


def circulant(c) -> Array:
    """The circulant matrix whose first column is ``c``: ``C[i, j] = c[(i - j) mod n]``,
    batched over leading axes."""
    c = _vector(c, "circulant", True)
    n = c.shape[-1]
    i, j = np.indices((n, n))
    return _gathered(c, (i - j) % n)


def companion(a) -> Array:
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): first row ``-a[1:] / a[0]``, ones below the diagonal."""
    from ..numpy.creation import eye
    from ..numpy.shape import concatenate
    a = _vector(a, "companion", False)
    n = a.shape[0]
    if n < 2:
        raise ValueError(f"companion needs at least two coefficients, got {n}")
    first = (-a[1:] / a[0]).reshape(1, n - 1)
    below = eye(n - 2, n - 1, dtype=a.dtype)
    return concatenate([first, below], axis=0)


def leslie(f, s) -> Array:
    """The Leslie matrix: fecundities ``f`` in the first row, survival rates ``s`` on the
    subdiagonal."""
    from ..numpy.creation import eye
    from ..numpy.shape import concatenate, pad
    f, s = _vector(f, "leslie", False), _vector(s, "leslie", False)
    n = f.shape[0]
    if s.shape[0] != n - 1:
        raise ValueError(f"leslie: s must have len(f) - 1 = {n - 1} entries, got {s.shape[0]}")
    below = pad(eye(n - 1, dtype=s.dtype) * s.astype(f.dtype)[:, None], ((0, 0), (0, 1)))
    return concatenate([f.reshape(1, n), below], axis=0)


def fiedler(a) -> Array:
    """The symmetric Fiedler matrix ``|a[i] - a[j]|``."""
    from ..numpy.elementwise import abs as abs_
    a = _vector(a, "fiedler", False)
    return abs_(a[:, None] - a[None, :])


def fiedler_companion(a) -> Array:
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (highest
    degree first), batched over leading axes: pentadiagonal, with the polynomial's roots
    as eigenvalues. ``(..., 0, 0)`` for one coefficient; as JAX, a zero leading
    coefficient gives inf or NaN entries rather than an error.

    >>> fiedler_companion([1.0, -16.0, 86.0, -176.0, 105.0]).tolist()[2]
    [0.0, 176.0, 0.0, -105.0]
    """
    from ..numpy.shape import concatenate
    a = _vector(a, "fiedler_companion", True)
    size = a.shape[-1]
    if size == 0:
        raise ValueError("fiedler_companion needs at least one coefficient; the last axis "
                         f"of a has length zero (shape {a.shape})")
    n = size - 1
    # Entries are 0, 1 or -a[k] / a[0]: one gather from [0, 1, -a / a[0]] keeps an inf
    # from a zero leading coefficient in its own entries, as JAX's scatter does.
    lead = a.shape[:-1]
    values = concatenate([zeros(lead + (1,), a.dtype), zeros(lead + (1,), a.dtype) + 1,
                          -a / a[..., :1]], axis=-1)
    index = np.zeros((n, n), np.int64)
    for r in range(3, n, 2):
        index[r, r - 2] = 1
    for r in range(2, n, 2):
        index[r, r - 1] = 2 + r + 1
    for r in range(0, n - 2, 2):
        index[r, r + 2] = 1
    for r in range(0, n - 1, 2):
        index[r, r + 1] = 2 + r + 2
    if n >= 1:
        index[0, 0] = 2 + 1
    if n >= 2:
        index[1, 0] = 1
    return _gathered(values, index)


def convolution_matrix(a, n: int, mode: str = "full") -> Array:
    """The matrix ``A`` with ``A @ v == numpy.convolve(a, v, mode)`` for vectors ``v`` of
    length ``n`` (``mode``: ``'full'``, ``'same'``, ``'valid'``)."""
    a = _vector(a, "convolution_matrix", False)
    m = a.shape[0]
    if int(n) != n or n < 1:
        raise ValueError(f"convolution_matrix: n must be a positive integer, got {n!r}")
    n = int(n)
    if mode == "full":
        start, rows = 0, m + n - 1
    elif mode == "same":
        start, rows = (min(m, n) - 1) // 2, max(m, n)
    elif mode == "valid":
        start, rows = min(m, n) - 1, max(m, n) - min(m, n) + 1
    else:
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', "
                         f"got {mode!r}")
    from ..numpy.shape import concatenate
    padded = concatenate([zeros((1,), a.dtype), a], axis=0)
    i, j = np.indices((rows, n))
    k = i + start - j
    # Index 0 of `padded` is the zero that fills outside the band.
    return _gathered(padded, np.where((k >= 0) & (k < m), k + 1, 0))


def _float_matrix(values: np.ndarray) -> Array:
    return asarray(values.astype(np.float64)).astype(_dt.default_float())


def hilbert(n: int) -> Array:
    """The Hilbert matrix ``1 / (i + j + 1)``."""
    i, j = np.indices((int(n), int(n)))
    return _float_matrix(1.0 / (i + j + 1.0))


def invhilbert(n: int) -> Array:
    """The exact inverse of the Hilbert matrix (integer entries, from the closed form
    ``(-1)^(i+j) (i+j+1) C(n+i, n-j-1) C(n+j, n-i-1) C(i+j, i)^2``), as floats."""
    n = int(n)
    out = np.array([[(-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                     * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2
                     for j in range(n)] for i in range(n)], dtype=object)
    return _float_matrix(out.astype(np.float64) if n else np.zeros((0, 0)))


def _pascal_lower(n: int) -> np.ndarray:
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)],
                    dtype=np.float64).reshape(n, n)


def _pascal_kind(kind: Optional[str]) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return kind


def pascal(n: int, kind: Optional[str] = None) -> Array:
    """The Pascal matrix of binomial coefficients: ``C(i + j, i)`` (``'symmetric'``, the
    default), ``C(i, j)`` (``'lower'``) or its transpose (``'upper'``); exact (JAX 0.10.2's
    float32 entries are off in the sixth digit)."""
    kind, n = _pascal_kind(kind), int(n)
    low = _pascal_lower(n)
    return _float_matrix({"lower": low, "upper": low.T, "symmetric": low @ low.T}[kind])


def invpascal(n: int, kind: Optional[str] = None) -> Array:
    """The exact inverse of :func:`pascal`: ``(-1)^(i+j) C(i, j)`` for ``'lower'``, its
    transpose for ``'upper'``, their product for ``'symmetric'``."""
    kind, n = _pascal_kind(kind), int(n)
    i, j = np.indices((n, n))
    low = _pascal_lower(n) * np.where((i + j) % 2 == 0, 1.0, -1.0)
    return _float_matrix({"lower": low, "upper": low.T, "symmetric": low.T @ low}[kind])


def hadamard(n: int, dtype=int) -> Array:
    """The Sylvester-Hadamard matrix of order ``n`` (a power of 2), entries +-1."""
    n = int(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a positive power of 2, got {n}")
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    out = asarray(h)
    return out.astype(_dt.canonicalize(dtype, "hadamard"))


def helmert(n: int, full: bool = False) -> Array:
    """The Helmert matrix of order ``n``: orthonormal rows, the first (kept with
    ``full=True``) constant."""
    n = int(n)
    i, j = np.indices((n, n))
    h = np.where(j < i, 1.0, 0.0) - np.diag(np.arange(n, dtype=np.float64))
    h[0] = 1.0
    d = np.arange(n, dtype=np.float64) * np.arange(1, n + 1)
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return _float_matrix(h if full else h[1:])


def expm_frechet(A, E, *, method: Optional[str] = None, compute_expm: bool = True):
    """The Fréchet derivative of ``expm`` at ``A`` in the direction ``E`` (with ``expm(A)``
    first when ``compute_expm``), as the forward-mode derivative of :func:`expm`
    (``method`` is accepted as JAX's and changes nothing)."""
    from ..api import jvp
    from .expm import expm
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: method must be 'SPS' or 'blockEnlarge', got {method!r}")
    a, e = asarray(A), asarray(E)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or e.shape != a.shape:
        raise ValueError(f"expm_frechet: A and E must be square matrices of one shape, got "
                         f"{a.shape} and {e.shape}")
    value, derivative = jvp(expm, (a,), (e.astype(a.dtype),))
    return (value, derivative) if compute_expm else derivative
