"""``quabla.nn``: activations, normalisation and initializers, as ``jax.nn``::

    import quabla.nn as nn
    h = nn.gelu(x @ w)
    p = nn.softmax(logits, axis=-1)
    w = nn.initializers.he_normal()(key, (64, 32))
"""

from .._src.nn.functions import (  # noqa: F401
    celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity,
    leaky_relu, log1mexp, log_sigmoid, log_softmax, logmeanexp, logsumexp, mish, one_hot, relu,
    relu6, selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus, sparse_sigmoid,
    squareplus, standardize, swish,
)
from .._src.nn.attention import dot_product_attention  # noqa: F401
from .._src.numpy.elementwise import tanh  # noqa: F401
from . import initializers  # noqa: F401

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "one_hot",
           "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus",
           "standardize", "swish", "tanh", "initializers", "identity", "log1mexp",
           "logmeanexp", "mish", "sparse_plus", "sparse_sigmoid", "squareplus",
           "dot_product_attention"]
