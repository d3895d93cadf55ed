"""``jax.lax``'s output-shape helpers for convolutions and windowed reductions, pure integer
arithmetic on shapes, as JAX's (a convolution passes a batch size of -1, stax's unknown
batch, through; a windowed reduction's sizes are at least 0):
``conv_general_permutations``, ``conv_shape_tuple``, ``conv_general_shape_tuple``,
``conv_transpose_shape_tuple``, ``reduce_window_shape_tuple``."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .lax_conv import _conv_transpose_padding
from .lax_windows import padtype_to_pads

__all__ = ["conv_general_permutations", "conv_shape_tuple", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "reduce_window_shape_tuple"]


def conv_general_permutations(dimension_numbers) -> tuple:
    """The three axis permutations (lhs, rhs, out) that take three layout strings such as
    ``("NHWC", "HWIO", "NHWC")`` to channels-first order (N, C, spatial... / O, I,
    spatial...), spatial axes in the kernel's order.

    >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    from .lax_conv import conv_dimension_numbers
    if not isinstance(dimension_numbers, (list, tuple)) or len(dimension_numbers) != 3 or \
            not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("conv_general_permutations takes three layout strings, got "
                        f"{dimension_numbers!r}")
    n = len(dimension_numbers[0])
    dn = conv_dimension_numbers((0,) * n, (0,) * n, tuple(dimension_numbers))
    return tuple(tuple(int(i) for i in p) for p in dn)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads, batch_group_count: int = 1) -> tuple:
    """The output shape of a channels-first convolution (lhs ``N C spatial...``, rhs ``O I
    spatial...``) with ``pads`` (``(low, high)`` pairs or a padding name)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"conv_shape_tuple: {len(pads)} pads for {len(lhs_shape) - 2} "
                        "spatial axes")
    padded = [int(d) + int(lo) + int(hi) for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    space = [max(0, (p - int(k)) // int(s) + 1)
             for p, k, s in zip(padded, rhs_shape[2:], strides)]
    return (int(lhs_shape[0]) // batch_group_count, int(rhs_shape[0])) + tuple(space)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers) -> tuple:
    """The output shape of ``conv_general_dilated`` with layout strings, without dilation."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_trans = np.take(lhs_shape, lhs_perm)
    rhs_trans = np.take(rhs_shape, rhs_perm)
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding)
    return tuple(int(d) for d in np.take(out_trans, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers) -> tuple:
    """The output shape of ``conv_transpose`` with layout strings."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_trans = [int(d) for d in np.take(lhs_shape, lhs_perm)]
    rhs_trans = [int(d) for d in np.take(rhs_shape, rhs_perm)]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_trans[2:], window_strides)]
    total = [int(lo) + int(hi) for lo, hi in padding]
    space = [(i - 1) * int(s) - k + 2 + p
             for i, k, s, p in zip(lhs_trans[2:], rhs_trans[2:], window_strides, total)]
    out_trans = (lhs_trans[0], rhs_trans[0]) + tuple(space)
    return tuple(int(d) for d in np.take(out_trans, np.argsort(out_perm)))


def _dilate(shape, dilation):
    return [0 if d == 0 else 1 + int(r) * (int(d) - 1) for d, r in zip(shape, dilation)]


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The output shape of ``reduce_window`` with explicit ``(low, high)`` padding.

    >>> reduce_window_shape_tuple((8, 28, 28, 3), (1, 2, 2, 1), (1, 2, 2, 1), [(0, 0)] * 4)
    (8, 14, 14, 3)
    """
    shape = list(operand_shape)
    window = list(window_dimensions)
    if base_dilation is not None:
        shape = _dilate(shape, base_dilation)
    if window_dilation is not None:
        window = _dilate(window, window_dilation)
    padded = [d + int(lo) + int(hi) for d, (lo, hi) in zip(shape, padding)]
    # Empty windows give size 0 (also for stax's batch size -1, as JAX).
    return tuple(max(0, (p - w) // int(s) + 1)
                 for p, w, s in zip(padded, window, window_strides))
