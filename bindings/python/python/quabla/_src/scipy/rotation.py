"""``jax.scipy.spatial.transform``: ``Rotation`` (unit quaternions, scalar last, as scipy)
and ``Slerp``. Both are NamedTuples, so they pass through ``jit``, ``grad`` and ``vmap``
as pytrees. The conversions are scipy's: Markley's method from matrices, the quaternion
Euler-angle algorithm of Bernardes and Viollet (gimbal lock sets the third angle to 0, as
scipy, without its warning), Taylor series near the identity for rotation vectors."""

from __future__ import annotations

import math
from typing import NamedTuple, Optional, Sequence

import numpy as np

from ..array import Array
from ..numpy.creation import asarray
from ..numpy.elementwise import arctan2, as_float, cos, hypot, sin, sqrt, where
from ..numpy.reductions import sum as sum_
from ..numpy.shape import concatenate, stack

__all__ = ["Rotation", "Slerp"]

_AXIS = {"x": 0, "y": 1, "z": 2}


def _norm(v):
    return sqrt(sum_(v * v, axis=-1))


def _unit(quat):
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    """The quaternion of rotating by ``q`` and then by ``p``."""
    pv, pw, qv, qw = p[..., :3], p[..., 3], q[..., :3], q[..., 3]
    cross = stack([pv[..., 1] * qv[..., 2] - pv[..., 2] * qv[..., 1],
                   pv[..., 2] * qv[..., 0] - pv[..., 0] * qv[..., 2],
                   pv[..., 0] * qv[..., 1] - pv[..., 1] * qv[..., 0]], axis=-1)
    w = pw * qw - sum_(pv * qv, axis=-1)
    v = pw[..., None] * qv + qw[..., None] * pv + cross
    return concatenate([v, w[..., None]], axis=-1)


def _check_seq(seq: str, lengths: Sequence[int]) -> bool:
    """Whether ``seq`` is intrinsic (upper case); raises for a malformed sequence."""
    if len(seq) not in lengths:
        raise ValueError(f"Expected {' or '.join(map(str, lengths))} axes, got {seq!r}")
    intrinsic, extrinsic = seq.isupper(), seq.islower()
    if not (set(seq.lower()) <= set("xyz")) or not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq!r}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq!r}")
    return intrinsic


def _elementary(axis: int, angle):
    half = angle / 2
    zero = half * 0
    parts = [zero, zero, zero, cos(half)]
    parts[axis] = sin(half)
    return stack(parts, axis=-1)


def _matrix_to_quat(m):
    """Markley's method: the quaternion from the largest of the trace and the diagonal,
    chosen per matrix."""
    from ..numpy.misc import take_along_axis
    from ..numpy.reductions import argmax
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - trace + 2 * m[..., i, i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        candidates.append(stack(q, axis=-1))
    candidates.append(stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                             m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    all_q = stack(candidates, axis=-2)
    choice = argmax(decision, axis=-1)
    picked = take_along_axis(all_q, choice[..., None, None], axis=-2)[..., 0, :]
    return _unit(picked)


def _canonical(quat):
    """The quaternion with ``w >= 0``; at ``w == 0`` the first nonzero of x, y, z positive."""
    x, y, z, w = (quat[..., i] for i in range(4))
    keep = (w > 0) | ((w == 0) & ((x > 0) | ((x == 0) & ((y > 0) | ((y == 0) & (z > 0))))))
    return where(keep[..., None], quat, -quat)


class Rotation(NamedTuple):
    """Rotations in 3 dimensions as unit quaternions ``(x, y, z, w)``, one or a stack
    (leading axis), as ``jax.scipy.spatial.transform.Rotation``.

    >>> import quabla.numpy as qnp
    >>> r = Rotation.from_euler("z", 90, degrees=True)
    >>> [round(float(v), 6) for v in r.apply(qnp.array([1.0, 0.0, 0.0]))]
    [0.0, 1.0, 0.0]
    """

    quat: Array

    @classmethod
    def from_quat(cls, quat, *, scalar_first: bool = False) -> "Rotation":
        """From quaternions ``(x, y, z, w)`` (``(w, x, y, z)`` with ``scalar_first``),
        normalized."""
        q = as_float(quat)
        if q.ndim not in (1, 2) or q.shape[-1] != 4:
            raise ValueError(f"Expected `quat` to have shape (4,) or (N, 4), got {q.shape}")
        if scalar_first:
            q = concatenate([q[..., 1:], q[..., :1]], axis=-1)
        return cls(_unit(q))

    @classmethod
    def from_matrix(cls, matrix) -> "Rotation":
        """From rotation matrices ``(3, 3)`` or ``(N, 3, 3)`` (Markley's method)."""
        m = as_float(matrix)
        if m.ndim not in (2, 3) or m.shape[-2:] != (3, 3):
            raise ValueError(f"Expected `matrix` to have shape (3, 3) or (N, 3, 3), got "
                             f"{m.shape}")
        return cls(_matrix_to_quat(m))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False) -> "Rotation":
        """From rotation vectors (axis times angle)."""
        v = as_float(rotvec)
        if v.ndim not in (1, 2) or v.shape[-1] != 3:
            raise ValueError(f"Expected `rot_vec` to have shape (3,) or (N, 3), got {v.shape}")
        if degrees:
            v = v * (math.pi / 180)
        angle = _norm(v)
        small = angle <= 1e-3
        a2 = angle * angle
        safe = where(small, 1.0, angle)
        scale = where(small, 0.5 - a2 / 48 + a2 * a2 / 3840, sin(safe / 2) / safe)
        return cls(concatenate([scale[..., None] * v, cos(angle / 2)[..., None]], axis=-1))

    @classmethod
    def from_mrp(cls, mrp) -> "Rotation":
        """From modified Rodrigues parameters."""
        p = as_float(mrp)
        if p.ndim not in (1, 2) or p.shape[-1] != 3:
            raise ValueError(f"Expected `mrp` to have shape (3,) or (N, 3), got {p.shape}")
        sq = sum_(p * p, axis=-1)
        return cls(concatenate([2 * p / (1 + sq)[..., None], ((1 - sq) / (1 + sq))[..., None]],
                               axis=-1))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False) -> "Rotation":
        """From Euler angles about up to three axes: ``'xyz'`` extrinsic (fixed axes),
        ``'XYZ'`` intrinsic (rotating axes); ``angles`` of shape ``(len(seq),)`` or ``(N,
        len(seq))`` (a scalar for one axis), as scipy's and JAX's."""
        intrinsic = _check_seq(seq, (1, 2, 3))
        a = as_float(angles)
        if a.ndim == 0:
            a = a[None]
        if a.ndim not in (1, 2) or a.shape[-1] != len(seq):
            raise ValueError(f"Expected angles of shape ({len(seq)},) or (N, {len(seq)}) for "
                             f"{seq!r}, got {a.shape}")
        if degrees:
            a = a * (math.pi / 180)
        quat = _elementary(_AXIS[seq[0].lower()], a[..., 0])
        for n, axis in enumerate(seq[1:].lower(), start=1):
            step = _elementary(_AXIS[axis], a[..., n])
            quat = _compose(quat, step) if intrinsic else _compose(step, quat)
        return cls(quat)

    @classmethod
    def identity(cls, num: Optional[int] = None, dtype=None) -> "Rotation":
        """The identity, or ``num`` of them."""
        from .. import dtypes as _dt
        q = np.array([0.0, 0.0, 0.0, 1.0])
        if num is not None:
            q = np.tile(q, (int(num), 1))
        return cls(asarray(q, dtype=dtype if dtype is not None else _dt.default_float()))

    @classmethod
    def random(cls, random_key, num: Optional[int] = None) -> "Rotation":
        """Uniformly distributed rotations (normalized Gaussian quaternions, as scipy)."""
        from ...random import normal
        shape = (4,) if num is None else (int(num), 4)
        return cls(_unit(normal(random_key, shape)))

    @classmethod
    def concatenate(cls, rotations: Sequence["Rotation"]) -> "Rotation":
        """The rotations stacked into one (single ones count as one each)."""
        return cls(concatenate([r.quat.reshape(-1, 4) for r in rotations], axis=0))

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (no leading axis)."""
        return self.quat.ndim == 1

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    # A NamedTuple's indexing and `*` are tuple's; a Rotation's are its own, as JAX's.
    def __getitem__(self, indexer) -> "Rotation":  # type: ignore[override]
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __mul__(self, other: "Rotation") -> "Rotation":  # type: ignore[override]
        """``other`` first, then ``self`` (as scipy's composition)."""
        return Rotation(_unit(_compose(self.quat, other.quat)))

    def inv(self) -> "Rotation":
        return Rotation(concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1))

    def magnitude(self):
        """The rotation angle in radians, in ``[0, pi]``."""
        from ..numpy.elementwise import abs as abs_
        return 2 * arctan2(_norm(self.quat[..., :3]), abs_(self.quat[..., 3]))

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """The quaternions ``(x, y, z, w)`` (``canonical``: ``w >= 0``; ``scalar_first``:
        ``(w, x, y, z)``)."""
        q = _canonical(self.quat) if canonical else self.quat
        if scalar_first:
            q = concatenate([q[..., 3:], q[..., :3]], axis=-1)
        return q

    def as_matrix(self):
        """The rotation matrices, ``(3, 3)`` or ``(N, 3, 3)``."""
        x, y, z, w = (self.quat[..., i] for i in range(4))
        xx, yy, zz, ww = x * x, y * y, z * z, w * w
        rows = [[xx - yy - zz + ww, 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), -xx + yy - zz + ww, 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), -xx - yy + zz + ww]]
        return stack([stack(r, axis=-1) for r in rows], axis=-2)

    def as_rotvec(self, degrees: bool = False):
        """The rotation vectors (axis times angle in ``[0, pi]``)."""
        q = _canonical(self.quat)
        angle = 2 * arctan2(_norm(q[..., :3]), q[..., 3])
        small = angle <= 1e-3
        a2 = angle * angle
        safe = where(small, 1.0, angle)
        scale = where(small, 2 + a2 / 12 + 7 * a2 * a2 / 2880, safe / sin(safe / 2))
        v = scale[..., None] * q[..., :3]
        return v * (180 / math.pi) if degrees else v

    def as_mrp(self):
        """The modified Rodrigues parameters (of the quaternion with ``w >= 0``)."""
        sign = where(self.quat[..., 3] < 0, -1.0, 1.0)
        return self.quat[..., :3] * (sign / (1 + self.quat[..., 3] * sign))[..., None]

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles about the three axes of ``seq`` (``'xyz'`` extrinsic, ``'XYZ'``
        intrinsic); the first and third in ``[-pi, pi)``, the second in ``[-pi/2, pi/2]``
        (different axes) or ``[0, pi]`` (first and third the same)."""
        intrinsic = _check_seq(seq, (3,))
        axes = [_AXIS[c] for c in seq.lower()]
        if intrinsic:
            axes = axes[::-1]
        first, third = (2, 0) if intrinsic else (0, 2)
        i, j, k = axes
        symmetric = i == k
        if symmetric:
            k = 3 - i - j
        sign = (i - j) * (j - k) * (k - i) // 2
        q = self.quat
        if symmetric:
            a, b, c, d = q[..., 3], q[..., i], q[..., j], q[..., k] * sign
        else:
            a, b = q[..., 3] - q[..., j], q[..., i] + q[..., k] * sign
            c, d = q[..., j] + q[..., 3], q[..., k] * sign - q[..., i]
        middle = 2 * arctan2(hypot(c, d), hypot(a, b))
        half_sum, half_diff = arctan2(b, a), arctan2(d, c)
        eps = 1e-7
        from ..numpy.elementwise import abs as abs_
        at_zero = abs_(middle) <= eps
        degenerate = at_zero | (abs_(middle - math.pi) <= eps)
        # Gimbal lock: the third angle is 0 and the first takes the whole rotation.
        lock = where(at_zero, 2 * half_sum, 2 * half_diff * (1 if intrinsic else -1))
        angles = [None, middle, None]
        angles[first] = where(degenerate, lock if first == 0 else 0.0, half_sum - half_diff)
        angles[third] = where(degenerate, lock if third == 0 else 0.0, half_sum + half_diff)
        if not symmetric:
            angles[third] = angles[third] * sign
            angles[1] = angles[1] - math.pi / 2
        out = stack(angles, axis=-1)
        out = (out + math.pi) % (2 * math.pi) - math.pi
        return out * (180 / math.pi) if degrees else out

    def apply(self, vectors, inverse: bool = False):
        """The vectors ``(3,)`` or ``(N, 3)`` rotated (by the inverse with ``inverse``),
        one rotation for all or one per vector."""
        from ..numpy.products import einsum
        m = self.as_matrix()
        if inverse:
            m = m.swapaxes(-1, -2)
        v = as_float(vectors)
        if v.shape[-1] != 3 or v.ndim not in (1, 2):
            raise ValueError(f"Expected input of shape (3,) or (P, 3), got {v.shape}")
        return einsum("...ij,...j->...i", m, v)

    def mean(self, weights=None) -> "Rotation":
        """The (weighted) mean rotation: the eigenvector of the largest eigenvalue of
        ``sum w q q^T`` (its sign is arbitrary, as scipy's and JAX's)."""
        from ..linalg import eigh
        q = self.quat.reshape(-1, 4)
        w = asarray(np.ones(q.shape[0]), dtype=q.dtype) if weights is None else \
            asarray(weights).astype(q.dtype)
        if w.ndim != 1 or w.shape[0] != q.shape[0]:
            raise ValueError(f"Expected `weights` of shape ({q.shape[0]},), got {w.shape}")
        k = (w[:, None] * q).T @ q
        return Rotation(eigh(k)[1][:, -1])


class Slerp(NamedTuple):
    """Spherical linear interpolation between key rotations at increasing ``times``, as
    ``jax.scipy.spatial.transform.Slerp`` (built with :meth:`init`; calling it with times
    gives the interpolated ``Rotation``)."""

    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times, rotations: Rotation) -> "Slerp":
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) < 2:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        t = asarray(times).astype(rotations.quat.dtype)
        if t.ndim != 1 or t.shape[0] != len(rotations):
            raise ValueError(f"Expected {len(rotations)} times in a 1-d array, got shape "
                             f"{t.shape}")
        starts = Rotation(rotations.quat[:-1])
        steps = (starts.inv() * Rotation(rotations.quat[1:])).as_rotvec()
        return cls(t, t[1:] - t[:-1], starts, steps)

    def __call__(self, times) -> Rotation:
        from ..numpy.sorting import searchsorted
        t = asarray(times).astype(self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        flat = t.reshape(-1)
        index = (searchsorted(self.times, flat) - 1).clip(0, None)
        alpha = (flat - self.times[index]) / self.timedelta[index]
        out = self.rotations[index] * Rotation.from_rotvec(self.rotvecs[index] * alpha[:, None])
        return out[0] if t.ndim == 0 else out
