"""Quabla: a differentiable array runtime for scientific machine learning, with backends as
plugins. The API follows JAX, so JAX code ports by changing imports::

    import quabla
    import quabla.numpy as qnp

    def loss(w, x):
        return qnp.mean(qnp.tanh(x @ w) ** 2)

    g = quabla.jit(quabla.grad(loss))(qnp.ones((3, 2)), qnp.ones((5, 3)))
"""

from . import _quabla
from ._quabla import (
    BackendError, CollectiveError, ConcretizationTypeError, QuablaError, QuablaInternalError,
)
from ._src.runtime import (
    Device, _register_plugins, default_backend, default_device, device_put, devices,
)

_register_plugins()

from ._src.array import Array  # noqa: E402
from ._src.api import (  # noqa: E402
    ShapeDtypeStruct, checkpoint, custom_jvp, custom_vjp, eval_shape, grad, hessian, jacfwd,
    jacobian, jacrev, jit, jvp, linearize, make_jaxpr, remat, stop_gradient, value_and_grad, vjp,
    vmap,
)
from ._src.io import load, save  # noqa: E402
from ._src.callbacks import pure_callback  # noqa: E402
from ._src.numerics import OdeStats, newton, odeint  # noqa: E402
from ._src.config import config, enable_x64  # noqa: E402
from ._src.dtypes import float0  # noqa: E402
from ._src.custom_derivatives import custom_gradient  # noqa: E402
from ._src.closure_convert import closure_convert  # noqa: E402
from ._src.pmap import pmap  # noqa: E402
from ._src.shard_map import shard_map  # noqa: E402
from ._src.checkpoint_policies import checkpoint_policies  # noqa: E402
from ._src.host_utils import (  # noqa: E402
    block_until_ready, clear_caches, device_count, device_get, disable_jit,
    ensure_compile_time_eval, linear_transpose,
    local_device_count, local_devices, named_call, named_scope, print_environment_info,
    process_count, process_index, process_indices, effects_barrier,
)
from .sharding import NamedSharding, PartitionSpec as P  # noqa: E402  (jax.NamedSharding, jax.P)
from ._src.avals import typeof  # noqa: E402
from ._src.global_arrays import (  # noqa: E402
    make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from . import (  # noqa: E402
    ad_checkpoint, custom_derivatives, debug, distributed, dtypes, errors, example_libraries,
    experimental,
    flatten_util, image, lax, linalg, nn, numpy, optim, random, scipy, sharding, test_util,
    tree, tree_util, typing,
)
from ._src.sharding import make_mesh, set_mesh  # noqa: E402

__version__ = _quabla.__version__

__all__ = [
    "Array", "Device", "devices", "default_backend", "default_device", "device_put", "grad",
    "value_and_grad",
    "jvp", "vjp", "linearize", "jacfwd", "jacrev", "jacobian", "hessian", "vmap", "jit",
    "custom_jvp", "custom_vjp", "checkpoint", "remat", "stop_gradient", "make_jaxpr",
    "eval_shape", "ShapeDtypeStruct", "lax", "pure_callback", "debug",
    "numpy", "random", "tree", "tree_util", "flatten_util", "test_util", "example_libraries",
    "optim", "linalg", "distributed", "CollectiveError", "custom_derivatives", "dtypes",
    "nn", "scipy", "odeint", "OdeStats", "newton", "save", "load", "config", "enable_x64",
    "BackendError", "process_indices", "effects_barrier", "make_array_from_callback",
    "make_array_from_process_local_data", "make_array_from_single_device_arrays",
    "NamedSharding", "P", "typeof",
    "ConcretizationTypeError", "QuablaError", "QuablaInternalError", "__version__", "errors",
    "typing", "image", "experimental", "float0", "block_until_ready", "device_count",
    "device_get", "disable_jit", "ensure_compile_time_eval", "linear_transpose",
    "local_device_count", "local_devices",
    "named_call", "named_scope", "print_environment_info", "process_count", "process_index",
    "checkpoint_policies", "ad_checkpoint", "custom_gradient", "clear_caches", "closure_convert",
    "pmap", "shard_map", "sharding", "make_mesh", "set_mesh",
]
