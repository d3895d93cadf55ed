"""Products: matmul, dot, vdot, inner, tensordot, einsum, outer, kron, cross — all one
``dot_general`` each (einsum: one per pair of operands, left to right)."""

from __future__ import annotations

import numbers
import string

from .. import dtypes as _dt
from ..array import Array, _axis
from .creation import asarray
from .shape import broadcast_shapes, broadcast_to, moveaxis, stack


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def _promote(a: Array, b: Array):
    d = _dt.result_type(a.dtype, b.dtype)
    return a.astype(d), b.astype(d)


def dot_general(lhs, rhs, dimension_numbers, precision=None,
                preferred_element_type=None) -> Array:
    """``lax.dot_general`` with ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``;
    the result is batch dims, then lhs free dims, then rhs free dims. ``precision`` is
    accepted and ignored (products are computed in the operands' dtype);
    ``preferred_element_type`` converts the result."""
    del precision
    (lc, rc), (lb, rb) = dimension_numbers
    a, b = _promote(_arr(lhs), _arr(rhs))
    out = Array(a._raw.dot_general(b._raw, list(lc), list(rc), list(lb), list(rb)))
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def matmul(a, b) -> Array:
    """Matrix product with numpy's rules (1-D operands promoted and squeezed, batch dims
    broadcast)."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must not be scalars (use *)")
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = a.reshape(1, -1)
    if vb:
        b = b.reshape(-1, 1)
    if a.shape[-1] != b.shape[-2]:
        raise TypeError(f"matmul: shapes {a.shape} and {b.shape} do not match "
                        f"({a.shape[-1]} vs {b.shape[-2]})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    nb = len(batch)
    out = dot_general(a, b, (([nb + 1], [nb]), (list(range(nb)), list(range(nb)))))
    if va:
        out = out.reshape(out.shape[:-2] + out.shape[-1:])
    if vb:
        out = out.reshape(out.shape[:-1])
    return out


def dot(a, b) -> Array:
    """numpy ``dot``: products for scalars, inner product of vectors, else a sum over the last
    axis of ``a`` and the second-to-last of ``b``."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if b.ndim == 1:
        return tensordot(a, b, ([a.ndim - 1], [0]))
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))


def vdot(a, b) -> Array:
    return dot(_arr(a).reshape(-1), _arr(b).reshape(-1))


def inner(a, b) -> Array:
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def tensordot(a, b, axes=2) -> Array:
    """Sum over ``axes`` (an int: the last ``axes`` of ``a`` with the first of ``b``; or two
    sequences of axes)."""
    a, b = _arr(a), _arr(b)
    if isinstance(axes, numbers.Integral):
        n = int(axes)
        ca, cb = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        ca, cb = axes
        ca = [int(ca)] if isinstance(ca, numbers.Integral) else list(ca)
        cb = [int(cb)] if isinstance(cb, numbers.Integral) else list(cb)
    ca = [_axis(x, a.ndim) for x in ca]
    cb = [_axis(x, b.ndim) for x in cb]
    return dot_general(a, b, ((ca, cb), ([], [])))


def outer(a, b) -> Array:
    a, b = _arr(a).reshape(-1), _arr(b).reshape(-1)
    return a.reshape(-1, 1) * b.reshape(1, -1)


def kron(a, b) -> Array:
    """Kronecker product."""
    a, b = _arr(a), _arr(b)
    nd = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b = b.reshape((1,) * (nd - b.ndim) + b.shape)
    ea = a.reshape([d for s in a.shape for d in (s, 1)])
    eb = b.reshape([d for s in b.shape for d in (1, s)])
    return (ea * eb).reshape([x * y for x, y in zip(a.shape, b.shape)])


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None) -> Array:
    """Cross product of 3-vectors (or 2-vectors, giving the z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(_arr(a), axisa, -1)
    b = moveaxis(_arr(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("cross: vectors must have 2 or 3 components")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else 0 * a0
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if b.shape[-1] == 3 else 0 * b0
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, axisc)


def einsum(subscripts: str, *operands, optimize=None, precision=None) -> Array:
    """Einstein summation, e.g. ``einsum("bij,bjk->bik", a, b)``; implicit output (labels
    seen once, sorted), ``...`` for leading broadcast dims, and repeated labels within one
    operand (diagonals) are supported. Operands are contracted left to right."""
    ops = [_arr(o) for o in operands]
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        lhs, out = spec.split("->")
    else:
        lhs, out = spec, None
    ins = lhs.split(",")
    if len(ins) != len(ops):
        raise ValueError(f"einsum: {len(ins)} operand specs for {len(ops)} operands")
    # '...' becomes fresh upper-case labels, right aligned.
    free = [c for c in string.ascii_uppercase if c not in spec]
    ell_n = 0
    for s, o in zip(ins, ops):
        if "..." in s:
            ell_n = max(ell_n, o.ndim - (len(s) - 3))
    ell = "".join(free[:ell_n])
    labels_in = []
    for s, o in zip(ins, ops):
        if "..." in s:
            k = o.ndim - (len(s) - 3)
            s = s.replace("...", ell[ell_n - k:] if k else "")
        if len(s) != o.ndim:
            raise ValueError(f"einsum: spec {s!r} for an operand of rank {o.ndim}")
        labels_in.append(s)
    if out is None:
        counts: dict = {}
        for s in labels_in:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    # Diagonals first (repeated labels within one operand).
    terms = [_take_diagonals(o, s) for o, s in zip(ops, labels_in)]
    # Labels seen by only one operand and not in the output are summed out at once.
    terms = [_sum_private(t, s, out, [x[1] for j, x in enumerate(terms) if j != i])
             for i, (t, s) in enumerate(terms)]
    acc, acc_l = terms[0]
    for i, (t, tl) in enumerate(terms[1:], start=1):
        later = "".join(x[1] for x in terms[i + 1:]) + out
        acc, acc_l = _contract(acc, acc_l, t, tl, later)
    # Remaining labels not in the output (only possible with one operand) are summed.
    acc, acc_l = _sum_private(acc, acc_l, out, [])
    for c in out:
        if c not in acc_l:
            raise ValueError(f"einsum: output label {c!r} appears in no input")
    perm = [acc_l.index(c) for c in out]
    return acc.transpose(perm) if perm != list(range(len(perm))) else acc


def _take_diagonals(o: Array, s: str):
    while len(set(s)) != len(s):
        c = next(c for c in s if s.count(c) > 1)
        i = s.index(c)
        j = s.index(c, i + 1)
        from .shape import diagonal
        o = diagonal(o, 0, i, j)
        s = "".join(x for k, x in enumerate(s) if k not in (i, j)) + c
    return o, s


def _sum_private(o: Array, s: str, out: str, others):
    keep = set(out).union(*[set(x) for x in others]) if others else set(out)
    drop = [i for i, c in enumerate(s) if c not in keep]
    if not drop:
        return o, s
    from .reductions import sum as sum_
    return sum_(o, tuple(drop)), "".join(c for i, c in enumerate(s) if i not in drop)


def _contract(a: Array, al: str, b: Array, bl: str, later: str):
    shared = [c for c in al if c in bl]
    batch = [c for c in shared if c in later]
    contract = [c for c in shared if c not in later]
    # Broadcast size-1 batch dims (from '...').
    for c in batch:
        na, nb = a.shape[al.index(c)], b.shape[bl.index(c)]
        if na != nb:
            if na == 1:
                shape = list(a.shape)
                shape[al.index(c)] = nb
                a = broadcast_to(a, shape)
            elif nb == 1:
                shape = list(b.shape)
                shape[bl.index(c)] = na
                b = broadcast_to(b, shape)
    out = dot_general(a, b, (([al.index(c) for c in contract], [bl.index(c) for c in contract]),
                             ([al.index(c) for c in batch], [bl.index(c) for c in batch])))
    labels = "".join(batch) + "".join(c for c in al if c not in shared) + "".join(
        c for c in bl if c not in shared)
    return out, labels


def matvec(x1, x2) -> Array:
    """Matrix-vector products over the last axes, broadcast over the others (numpy 2.2's
    ``matvec``): ``x1[..., m, n] @ x2[..., n] -> [..., m]``."""
    a, v = _arr(x1), _arr(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("matvec: x1 needs at least 2 dimensions and x2 at least 1")
    return matmul(a, v[..., None])[..., 0]


def vecmat(x1, x2) -> Array:
    """Vector-matrix products over the last axes (numpy 2.2's ``vecmat``):
    ``x1[..., n] @ x2[..., n, m] -> [..., m]`` (real dtypes: no conjugate to take)."""
    v, a = _arr(x1), _arr(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("vecmat: x1 needs at least 1 dimension and x2 at least 2")
    return matmul(v[..., None, :], a)[..., 0, :]
