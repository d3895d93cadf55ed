"""``jax.lax``'s convolutions: ``conv_general_dilated`` (the core's, composed of pad, strided
slices and one ``dot_general``, so it differentiates, batches and runs on every backend),
``conv``, ``conv_with_general_padding``, ``conv_transpose``, ``ConvDimensionNumbers`` and
``conv_dimension_numbers``, with JAX's argument conventions."""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence, Union

import numpy as np

from . import dtypes as _dt
from .array import Array
from .numpy.creation import asarray


class ConvDimensionNumbers(NamedTuple):
    """Axes of (batch, feature, spatial...) for lhs and output, (out feature, in feature,
    spatial...) for the kernel, as JAX's."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def _permutation(spec: str, pair: tuple, rhs: str) -> tuple:
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    if spec is not rhs:
        spatial = sorted(spatial, key=lambda i: rhs.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None: channels first; three layout strings such as
    ``("NHWC", "HWIO", "NHWC")``; or a :class:`ConvDimensionNumbers`) in canonical form."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)) or len(dimension_numbers) != 3 or \
            not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers must be None, a ConvDimensionNumbers "
                        f"or three layout strings, got {dimension_numbers!r}")
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for s, (a, b) in zip(dimension_numbers, pairs):
        if len(s) != len(lhs_shape):
            raise TypeError(f"convolution layout {s!r} must have one letter per axis "
                            f"({len(lhs_shape)})")
        if s.count(a) != 1 or s.count(b) != 1 or len(set(s)) != len(s):
            raise TypeError(f"convolution layout {s!r} must hold '{a}' and '{b}' once each "
                            "and no repeated letters")
    lhs, rhs, out = dimension_numbers
    if not (set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {dimension_numbers}")
    return ConvDimensionNumbers(*(_permutation(s, p, rhs) for s, p in zip(dimension_numbers,
                                                                          pairs)))


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int],
                         padding: Union[str, Sequence[tuple]],
                         lhs_dilation: Optional[Sequence[int]] = None,
                         rhs_dilation: Optional[Sequence[int]] = None,
                         dimension_numbers=None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision=None,
                         preferred_element_type=None) -> Array:
    """The general convolution (a cross-correlation, as XLA's): ``padding`` is "VALID",
    "SAME", "SAME_LOWER" or ``(low, high)`` per spatial axis; ``lhs_dilation`` makes a
    transposed convolution, ``rhs_dilation`` an atrous one. ``precision`` is accepted
    and ignored (the backend computes in the operands' dtype)."""
    del precision
    x = lhs if isinstance(lhs, Array) else asarray(lhs)
    w = rhs if isinstance(rhs, Array) else asarray(rhs)
    d = _dt.result_type(x.dtype, w.dtype)
    x, w = x.astype(d), w.astype(d)
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    n = x.ndim - 2
    strides = [int(s) for s in window_strides]
    if len(strides) != n:
        raise ValueError(f"conv_general_dilated: window_strides {tuple(strides)} needs {n} "
                         "entries, one per spatial axis")
    pad: Union[str, list]
    if isinstance(padding, str):
        if lhs_dilation is not None and any(int(v) != 1 for v in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        pad = padding.upper()
    else:
        pad = [(int(lo), int(hi)) for lo, hi in padding]
    ones = [1] * n
    out = Array(type(x._raw).conv(
        x._raw, w._raw, strides, pad,
        ones if lhs_dilation is None else [int(v) for v in lhs_dilation],
        ones if rhs_dilation is None else [int(v) for v in rhs_dilation],
        ([int(a) for a in dn.lhs_spec], [int(a) for a in dn.rhs_spec],
         [int(a) for a in dn.out_spec]),
        (int(feature_group_count), int(batch_group_count))))
    if preferred_element_type is not None:
        out = out.astype(preferred_element_type)
    return out


def conv_general_dilated_patches(lhs, filter_shape: Sequence[int],
                                 window_strides: Sequence[int],
                                 padding: Union[str, Sequence[tuple]],
                                 lhs_dilation: Optional[Sequence[int]] = None,
                                 rhs_dilation: Optional[Sequence[int]] = None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None) -> Array:
    """The patches a convolution with a ``filter_shape`` window would see, as
    ``jax.lax.conv_general_dilated_patches``: the output's feature axis holds, for each
    input channel ``c`` and window position ``s`` (row-major over ``filter_shape``, given
    in the kernel layout's spatial order), the element at ``c * prod(filter_shape) + s``.
    A convolution with a one-hot kernel per (channel, position), one group per channel, as
    JAX builds it, so it differentiates and batches as convolutions do.

    >>> import quabla.numpy as qnp
    >>> x = qnp.arange(9.0).reshape(1, 1, 3, 3)
    >>> conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID")[0, :, 0, 0].tolist()
    [0.0, 1.0, 3.0, 4.0]
    """
    x = lhs if isinstance(lhs, Array) else asarray(lhs)
    window = tuple(int(k) for k in filter_shape)
    if len(window) != x.ndim - 2 or any(k < 1 for k in window):
        raise ValueError(f"conv_general_dilated_patches: filter_shape {tuple(filter_shape)} "
                         f"needs {x.ndim - 2} positive sizes, one per spatial axis")
    dn = conv_dimension_numbers(x.shape, (1, 1) + window, dimension_numbers)
    positions = int(np.prod(window))
    channels = x.shape[dn.lhs_spec[1]]
    # (out feature = c * positions + s, in feature 1, window...): one-hot at position s.
    onehot = np.broadcast_to(np.eye(positions), (channels, positions, positions))
    kernel = onehot.reshape((channels * positions, 1) + window)
    # The kernel's axis rhs_spec[k] holds canonical axis k.
    kernel = np.transpose(kernel, np.argsort(dn.rhs_spec))
    return conv_general_dilated(x, asarray(kernel, dtype=x.dtype), window_strides, padding,
                                lhs_dilation, rhs_dilation, dn, feature_group_count=channels,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides: Sequence[int],
                               padding: Union[str, Sequence[tuple]],
                               filter_shape: Sequence[int],
                               lhs_dilation: Optional[Sequence[int]] = None,
                               rhs_dilation: Optional[Sequence[int]] = None,
                               dimension_numbers=None, precision=None) -> Array:
    """A locally connected layer, as ``jax.lax.conv_general_dilated_local``: a convolution
    whose kernel differs at every output position. ``rhs`` is laid out as the kernel layout
    says with axes (out features, in features x window positions as
    ``conv_general_dilated_patches`` orders them, output spatial...); the patches contracted
    with it position by position.

    >>> import quabla.numpy as qnp
    >>> x = qnp.arange(4.0).reshape(1, 1, 4)
    >>> w = qnp.ones((1, 2, 3))  # one output feature, a 2-wide window, 3 positions
    >>> conv_general_dilated_local(x, w, (1,), "VALID", (2,)).tolist()
    [[[1.0, 3.0, 5.0]]]
    """
    from .numpy.shape import moveaxis
    from .numpy.products import dot_general
    x = lhs if isinstance(lhs, Array) else asarray(lhs)
    w = rhs if isinstance(rhs, Array) else asarray(rhs)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers)
    dn = conv_dimension_numbers(x.shape, (1, 1) + tuple(int(k) for k in filter_shape),
                                dimension_numbers)
    out_spatial, w_spatial = list(dn.out_spec[2:]), list(dn.rhs_spec[2:])
    # Spatial axes paired in the patches' axis order.
    order = sorted(range(len(out_spatial)), key=lambda k: out_spatial[k])
    w_batch = [w_spatial[k] for k in order]
    del precision  # accepted and ignored, as conv_general_dilated's
    out = dot_general(patches, w, (([dn.out_spec[1]], [dn.rhs_spec[1]]),
                                   (sorted(out_spatial), w_batch)))
    return moveaxis(out, (-2, -1), (dn.out_spec[0], dn.out_spec[1]))


def conv(lhs, rhs, window_strides: Sequence[int], padding: str, precision=None,
         preferred_element_type=None) -> Array:
    """``conv_general_dilated`` with channels-first layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None) -> Array:
    """``conv_general_dilated`` with channels-first layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding) -> tuple:
    """Pads of the transposed convolution for a forward ``padding`` (JAX's rule)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides: Sequence[int], padding, rhs_dilation=None,
                   dimension_numbers=None, transpose_kernel: bool = False, precision=None,
                   preferred_element_type=None, use_consistent_padding: bool = False) -> Array:
    """The "transposed" convolution (keras' ``Conv2DTranspose`` conventions), as JAX's:
    an lhs-dilated convolution; channels-last layouts by default."""
    x = lhs if isinstance(lhs, Array) else asarray(lhs)
    w = rhs if isinstance(rhs, Array) else asarray(rhs)
    if x.ndim != w.ndim or x.ndim < 2:
        raise ValueError("conv_transpose: lhs and rhs need one rank of at least 2")
    if dimension_numbers is None:
        if x.ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[x.ndim]
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    k_sdims = [w.shape[a] for a in dn.rhs_spec[2:]]
    rhs_dilation = [1] * (w.ndim - 2) if rhs_dilation is None else list(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        effective = [(k - 1) * r + 1 if k else 0 for k, r in zip(k_sdims, rhs_dilation)]
        per_axis = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = [_conv_transpose_padding(k, s, p)
                for k, s, p in zip(effective, strides, per_axis)]
    else:
        pads = padding
    if transpose_kernel:
        from .numpy.shape import flip
        w = flip(w, tuple(dn.rhs_spec[2:])).swapaxes(dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(x, w, [1] * (x.ndim - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
