"""stax's convolution, pooling and batch-normalization layers, as
``jax.example_libraries.stax``: ``GeneralConv`` / ``Conv``, ``GeneralConvTranspose`` /
``ConvTranspose`` / ``Conv1DTranspose``, ``MaxPool``, ``SumPool``, ``AvgPool`` and
``BatchNorm``, over ``lax.conv_general_dilated``, ``lax.conv_transpose`` and
``lax.reduce_window``."""

from __future__ import annotations

import functools

from .. import lax
from .. import numpy as jnp
from .. import random
from .._src.nn.functions import standardize
from ..nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["GeneralConv", "Conv", "GeneralConvTranspose", "ConvTranspose", "Conv1DTranspose",
           "MaxPool", "SumPool", "AvgPool", "BatchNorm"]


def _kernel_shape(rhs_spec: str, lhs_spec: str, input_shape, out_chan, filter_shape):
    sizes = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(sizes) for c in rhs_spec]


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                shape_rule, apply):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = tuple(strides) if strides else (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))
    b_init = normal(1e-6) if b_init is None else b_init

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = shape_rule(input_shape, kernel_shape, strides, padding,
                                  dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return apply(inputs, W, strides) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=None):
    """A convolution layer with layouts ``dimension_numbers`` (three strings such as
    ``("NHWC", "HWIO", "NHWC")``): glorot-normal kernel, normal(1e-6) bias, as stax's."""
    one = (1,) * len(filter_shape)

    def apply(inputs, W, strides):
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers)

    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, lax.conv_general_shape_tuple, apply)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=None):
    """A transposed-convolution layer (``lax.conv_transpose``) with layouts
    ``dimension_numbers``."""
    def apply(inputs, W, strides):
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers)

    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, lax.conv_transpose_shape_tuple, apply)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def _non_spatial(spec, ndim: int) -> tuple:
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _window_sizes(window_shape, strides, padding):
    """AvgPool's rescaling: each output divided by how many inputs its window holds
    (padding excluded), as stax's."""
    def rescale(outputs, inputs, spec):
        skip = _non_spatial(spec, inputs.ndim)
        spatial = tuple(inputs.shape[i] for i in range(inputs.ndim) if i not in skip)
        sizes = lax.reduce_window(jnp.ones(spatial, dtype=inputs.dtype), 0.0, lax.add,
                                  window_shape, strides, padding)
        for i in sorted(skip):
            sizes = jnp.expand_dims(sizes, i)
        return outputs / sizes
    return rescale


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over the spatial axes (``spec`` names the layout, NHWC by
        default)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        full_window, full_strides = window_shape, strides
        for i in sorted(_non_spatial(spec, len(window_shape) + 2)):
            full_window = full_window[:i] + (1,) + full_window[i:]
            full_strides = full_strides[:i] + (1,) + full_strides[i:]

        def init_fun(rng, input_shape):
            pads = (lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
                    if isinstance(padding, str) else padding)
            return lax.reduce_window_shape_tuple(input_shape, full_window, full_strides,
                                                 pads), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, full_window, full_strides,
                                    padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -float("inf"))
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _window_sizes)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalization over ``axis`` with a learned shift ``beta`` (``center``) and
    scale ``gamma`` (``scale``), as stax's (no running statistics)."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun
