"""``jax.image``'s resampling: ``resize`` and ``scale_and_translate``. Each spatial axis is
resampled by one matrix (input positions x output positions) of kernel weights, normalised
per output pixel, contracted with the image: XLA's formulation, so values agree with JAX's
to rounding. Weights are computed in float64 on the host when the scale and translation are
Python numbers (``resize`` always), with Quabla's ops otherwise (traced scales differentiate).
"""

from __future__ import annotations

import enum
from typing import Callable, Sequence, Union

import numpy as np

from .array import Array
from .numpy.creation import asarray


class ResizeMethod(enum.Enum):
    """How ``resize`` and ``scale_and_translate`` resample, as ``jax.image.ResizeMethod``
    (with its string names: ``"linear"``/``"bilinear"``, ``"cubic"``, ``"lanczos3"``...)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        names = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
                 "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
                 "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
                 "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
                 "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
                 "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
                 "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}" (one of {sorted(names)})')
        return names[s]


def _method(m: Union[str, ResizeMethod]) -> ResizeMethod:
    return ResizeMethod.from_string(m) if isinstance(m, str) else ResizeMethod(m)


def _triangle(xp, x):
    return xp.maximum(0.0, 1.0 - xp.abs(x))


def _cubic(a: float) -> Callable:
    """The cubic convolution kernel with parameter ``a`` (Keys' -0.5; OpenCV's -0.75)."""
    def kernel(xp, x):
        near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        return xp.where(x >= 2.0, 0.0, xp.where(x >= 1.0, far, near))
    return kernel


def _keys(xp, x):
    # Keys' kernel (a = -0.5) in the grouping XLA evaluates it in.
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return xp.where(x >= 2.0, 0.0, xp.where(x >= 1.0, far, near))


def _lanczos(radius: float) -> Callable:
    def kernel(xp, x):
        y = radius * xp.sin(np.pi * x) * xp.sin(np.pi * x / radius)
        safe = xp.where(x != 0, np.pi ** 2 * x ** 2, 1.0)
        body = xp.where(x > 1e-3, y / safe, 1.0)
        return xp.where(x > radius, 0.0, body)
    return kernel


# (radius, kernel); AREA's weights are interval overlaps instead.
_KERNELS: dict = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, None),
}


def _normalised(xp, w):
    """Each output pixel's weights divided by their sum (zero where the sum vanishes)."""
    total = xp.sum(w, axis=0, keepdims=True)
    tiny = 1000.0 * float(np.finfo(np.float32).eps)
    return xp.where(xp.abs(total) > tiny, w / xp.where(total != 0, total, 1.0), 0.0)


def _weights(xp, m: int, n: int, scale, translation, method: ResizeMethod, antialias: bool,
             dtype):
    """The (m, n) matrix taking m input pixels to n output pixels along one axis."""
    radius, kernel = _KERNELS[method]
    inv = 1.0 / scale
    # The input coordinate of each output pixel's centre (pixel k spans [k, k + 1)).
    sample = (xp.arange(n, dtype=dtype) + 0.5) * inv - translation * inv - 0.5
    edge = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    pad = radius if edge else 0
    inputs = xp.arange(-pad, m + pad, dtype=dtype)
    if kernel is None:  # AREA: the overlap of each output pixel's span with each input's
        lo = xp.arange(n, dtype=dtype) * inv - translation * inv
        w = xp.maximum(0.0, xp.minimum((lo + inv)[None, :], (inputs + 1.0)[:, None])
                       - xp.maximum(lo[None, :], inputs[:, None]))
    else:
        stretch = xp.maximum(inv, 1.0) if antialias else 1.0
        w = kernel(xp, xp.abs(sample[None, :] - inputs[:, None]) / stretch)
    if edge:
        # Weights of pixels past either edge go to the edge pixel (the image repeats).
        if m == 1:
            w = w.sum(axis=0)[None, :]
        else:
            head, tail = w[:pad + 1].sum(axis=0), w[m + pad - 1:].sum(axis=0)
            w = xp.concatenate([head[None, :], w[pad + 1:m + pad - 1], tail[None, :]], axis=0)
        return _normalised(xp, w)
    w = _normalised(xp, w)
    inside = (sample >= -0.5) & (sample <= m - 0.5)
    return xp.where(inside[None, :], w, 0.0)


def _static(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating))


def _resample(image: Array, shape: tuple, axes: Sequence[int], scales, translations,
              method: ResizeMethod, antialias: bool) -> Array:
    from .. import numpy as qnp
    x = image
    for d, scale, translation in zip(axes, scales, translations):
        m, n = x.shape[d], shape[d]
        if _static(scale) and _static(translation):
            w = qnp.asarray(_weights(np, m, n, float(scale), float(translation), method,
                                     antialias, np.float64), dtype=x.dtype)
        else:
            dt = qnp.result_type(scale, translation, qnp.float32)
            w = _weights(qnp, m, n, qnp.asarray(scale, dt), qnp.asarray(translation, dt),
                         method, antialias, dt).astype(x.dtype)
        x = qnp.moveaxis(qnp.tensordot(x, w, axes=([d], [0])), -1, d)
    return x


def _float_image(image) -> Array:
    from .. import numpy as qnp
    x = asarray(image)
    return x if x.dtype.kind == "f" else x.astype(qnp.result_type(x.dtype, qnp.float32))


def _check_shape(shape, image: Array) -> tuple:
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of x; "
                         f"{shape} vs {image.shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"shape {shape} has a negative size")
    return shape


def _nearest(image: Array, shape: tuple) -> Array:
    x = image
    for d in range(x.ndim):
        m, n = x.shape[d], shape[d]
        if m == n:
            continue
        # In float32, as JAX computes the source index.
        at = np.floor(((np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m)
                       / np.float32(n)).astype(np.float32)).astype(np.int32)
        index: list = [slice(None)] * x.ndim
        index[d] = asarray(at)
        x = x[tuple(index)]
    return x


def resize(image, shape: Sequence[int], method: Union[str, ResizeMethod],
           antialias: bool = True, precision=None) -> Array:
    """``image`` resampled to ``shape`` (every axis, batch and channel axes kept at their
    size), as ``jax.image.resize``: ``"nearest"`` keeps the dtype; ``"linear"``,
    ``"cubic"`` (Keys), ``"cubic-pytorch"``, ``"lanczos3"``, ``"lanczos5"`` and ``"area"``
    give floats, with a widened kernel when shrinking where ``antialias``. Half-pixel
    centres; pixels sampled outside the image weigh nothing (``cubic-pytorch`` without
    antialiasing repeats the edge instead). ``precision`` is accepted and ignored.

    >>> import quabla.numpy as qnp
    >>> resize(qnp.array([0.0, 1.0]), (4,), "linear").tolist()
    [0.0, 0.25, 0.75, 1.0]
    """
    del precision
    x = asarray(image)
    shape = _check_shape(shape, x)
    m = _method(method)
    if m == ResizeMethod.NEAREST:
        return _nearest(x, shape)
    x = _float_image(x)
    axes = [d for d in range(x.ndim) if x.shape[d] != shape[d]]
    scales = [1.0 if shape[d] == 0 else shape[d] / x.shape[d] for d in axes]
    if m == ResizeMethod.CUBIC_PYTORCH and antialias:
        m = ResizeMethod.CUBIC
    return _resample(x, shape, axes, scales, [0.0] * len(axes), m, antialias)


def scale_and_translate(image, shape: Sequence[int], spatial_dims: Sequence[int], scale,
                        translation, method: Union[str, ResizeMethod],
                        antialias: bool = True, precision=None) -> Array:
    """``image`` resampled to ``shape`` so that input coordinate ``x`` of axis
    ``spatial_dims[k]`` lands at ``x * scale[k] + translation[k]``, as
    ``jax.image.scale_and_translate`` (the methods of :func:`resize` but ``"nearest"``;
    output pixels that sample outside the image are zero). ``scale`` and ``translation``
    may be traced arrays: the result differentiates with respect to them.

    >>> import quabla.numpy as qnp
    >>> scale_and_translate(qnp.array([0.0, 1.0]), (2,), (0,), [1.0], [0.5], "linear").tolist()
    [0.0, 0.5]
    """
    del precision
    x = _float_image(image)
    shape = _check_shape(shape, x)
    m = _method(method)
    if m == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not supported by "
                         "scale_and_translate (use resize)")
    axes = [int(d) % x.ndim for d in spatial_dims]
    scales = list(scale) if not isinstance(scale, Array) else [scale[k] for k in range(len(axes))]
    shifts = (list(translation) if not isinstance(translation, Array)
              else [translation[k] for k in range(len(axes))])
    if len(scales) != len(axes) or len(shifts) != len(axes):
        raise ValueError(f"scale_and_translate: {len(axes)} spatial_dims need as many scales "
                         f"and translations, got {len(scales)} and {len(shifts)}")
    if m == ResizeMethod.CUBIC_PYTORCH and antialias:
        m = ResizeMethod.CUBIC
    # Axes not resampled keep their size; resampled ones take shape's.
    for d in range(x.ndim):
        if d not in axes and shape[d] != x.shape[d]:
            raise ValueError(f"scale_and_translate: axis {d} is not in spatial_dims but its "
                             f"size changes ({x.shape[d]} -> {shape[d]})")
    return _resample(x, shape, axes, scales, shifts, m, antialias)
