"""A tiny layer library, as ``jax.example_libraries.stax``: a layer is a pair
``(init_fun(rng, input_shape) -> (output_shape, params), apply_fun(params, inputs,
**kwargs))``, composed by ``serial`` and ``parallel``.

>>> init, apply = serial(Dense(32), Tanh, Dense(1))
>>> out_shape, params = init(quabla.random.PRNGKey(0), (-1, 4))
"""

from __future__ import annotations

import functools
import math

from .. import numpy as jnp
from .. import random
from .._src.nn import functions as _nn

from .._src.nn.functions import (  # noqa: F401  (stax's namespace re-exports jax.nn's)
    elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize,
)
from ..nn.initializers import glorot_normal, normal, ones, zeros  # noqa: F401
from ._stax_spatial import (  # noqa: F401
    AvgPool, BatchNorm, Conv, Conv1DTranspose, ConvTranspose, GeneralConv, GeneralConvTranspose,
    MaxPool, SumPool,
)

logsoftmax = log_softmax
glorot = glorot_normal
randn = normal

__all__ = ["Dense", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus",
           "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "Identity", "FanOut", "FanInSum",
           "FanInConcat", "Flatten", "Dropout", "serial", "parallel", "shape_dependent",
           "GeneralConv", "Conv", "GeneralConvTranspose", "ConvTranspose", "Conv1DTranspose",
           "MaxPool", "SumPool", "AvgPool", "BatchNorm", "elu", "gelu", "leaky_relu",
           "log_softmax", "logsoftmax", "relu", "selu", "sigmoid", "softmax", "softplus",
           "standardize", "glorot", "glorot_normal", "normal", "randn", "ones", "zeros"]


def Dense(out_dim, W_init=None, b_init=None):
    """A fully connected layer, ``inputs @ W + b`` (glorot-normal ``W``, normal ``b``)."""
    W_init = glorot_normal() if W_init is None else W_init
    b_init = normal() if b_init is None else b_init

    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying ``fun`` to its input."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(_nn.relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(_nn.log_softmax, axis=-1)
Softmax = elementwise(_nn.softmax, axis=-1)
Softplus = elementwise(_nn.softplus)
Sigmoid = elementwise(_nn.sigmoid)
Elu = elementwise(_nn.elu)
LeakyRelu = elementwise(_nn.leaky_relu)
Selu = elementwise(_nn.selu)
Gelu = elementwise(_nn.gelu)


def _identity():
    return (lambda rng, input_shape: (input_shape, ())), \
        (lambda params, inputs, **kwargs: inputs)


Identity = _identity()


def FanOut(num):
    """``num`` copies of the input, for ``parallel``."""
    return (lambda rng, input_shape: ([input_shape] * num, ())), \
        (lambda params, inputs, **kwargs: [inputs] * num)


def _fan_in_sum():
    return (lambda rng, input_shape: (input_shape[0], ())), \
        (lambda params, inputs, **kwargs: functools.reduce(lambda a, b: a + b, inputs))


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """The inputs concatenated along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = tuple(input_shape[0][:ax]) + (concat_size,) + tuple(input_shape[0][ax + 1:])
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()


def Dropout(rate, mode="train"):
    """Keeps each input with probability ``rate`` (scaled by ``1 / rate``) in ``"train"``
    mode, given ``rng=`` at apply time; the identity otherwise."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng)` where `rng` is a "
                             "PRNG key (e.g. from `quabla.random.PRNGKey`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


def _layer_rngs(kwargs: dict, n: int):
    """The ``rng=`` of an apply call (removed from ``kwargs``) split among ``n`` layers."""
    rng = kwargs.pop("rng", None)
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers):
    """The layers applied one after another; ``rng=`` at apply time is split among them."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        for fun, param, r in zip(apply_funs, params, _layer_rngs(kwargs, nlayers)):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """The layers applied to the matching inputs of a list (as ``FanOut`` makes)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, nlayers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by ``make_layer(input_shape)`` when its shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
