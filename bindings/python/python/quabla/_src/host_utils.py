"""JAX's top-level helpers around arrays and devices: ``block_until_ready``, ``device_get``,
the device and process counts (and ``process_indices``), ``effects_barrier``,
``disable_jit``, ``clear_caches``, ``linear_transpose``, ``named_call`` / ``named_scope``
and ``print_environment_info``."""

from __future__ import annotations

import contextlib
import platform as _py_platform
import sys
import weakref
from typing import Any, Callable, List, Optional

import numpy as np

from .array import Array
from .tree_util import tree_leaves, tree_map

# Set by `disable_jit`: jitted functions then run their Python function directly.
jit_disabled: List[bool] = [False]

# Every jitted function alive, for `clear_caches` (weak: a cache does not keep one alive).
live_jits: "weakref.WeakSet" = weakref.WeakSet()


def clear_caches() -> None:
    """Forgets every jitted function's traces and compiled programs, as
    ``jax.clear_caches``: their next calls trace and compile again."""
    for jitted in list(live_jits):
        jitted.clear_cache()


def block_until_ready(x: Any) -> Any:
    """Waits until every array of the tree ``x`` is computed; returns ``x``, as
    ``jax.block_until_ready``.

    >>> import quabla, quabla.numpy as qnp
    >>> quabla.block_until_ready({"w": qnp.ones(2)})["w"].shape
    (2,)
    """
    for leaf in tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x


def device_get(x: Any) -> Any:
    """The tree ``x`` with every array copied to a numpy array on the host, as
    ``jax.device_get`` (other leaves unchanged).

    >>> import quabla, quabla.numpy as qnp
    >>> type(quabla.device_get([qnp.ones(2)])[0]).__name__
    'ndarray'
    """
    # Every leaf's copy started before the first is read, as JAX does: on a device whose
    # reads are asynchronous the transfers overlap.
    for leaf in tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.copy_to_host_async()
    return tree_map(lambda leaf: np.array(leaf) if isinstance(leaf, Array) else leaf, x)


def device_count(backend: Optional[str] = None) -> int:
    """How many devices this process sees (of ``backend``, or of every backend found)."""
    from .runtime import devices
    return len(devices(backend))


def local_devices(process_index: Optional[int] = None, backend: Optional[str] = None) -> list:
    """This process's devices, as ``jax.local_devices`` (every device is local here)."""
    from .runtime import devices
    return devices(backend)


def local_device_count(backend: Optional[str] = None) -> int:
    """How many devices this process drives."""
    return device_count(backend)


def process_index() -> int:
    """This process's rank among ``quabla.distributed``'s processes (0 when alone)."""
    from ..distributed import process_index as rank
    return rank()


def process_count() -> int:
    """How many processes ``quabla.distributed`` joined (1 when alone)."""
    from ..distributed import process_count as count
    return count()


def process_indices() -> list:
    """Every process's index, ``[0, ..., process_count() - 1]``, as ``jax.process_indices``.

    >>> process_indices()
    [0]
    """
    return list(range(process_count()))


def effects_barrier() -> None:
    """Waits for the side effects of the calls made so far (host callbacks such as
    ``debug.print``), as ``jax.effects_barrier``. Quabla's plugins make a host call while
    the program runs, on the calling thread (the CPU and MLX plugins; the others refuse
    programs with callbacks), so every effect of a call has happened when the call returns
    and there is nothing left to wait for.

    >>> effects_barrier()
    """


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions run their Python code directly (values are
    concrete: ``print`` and ``pdb`` see them), as ``jax.disable_jit``.

    >>> import quabla
    >>> f = quabla.jit(lambda x: float(x) * 2)  # float() needs a concrete value
    >>> with quabla.disable_jit():
    ...     f(1.5)
    3.0
    """
    previous = jit_disabled[0]
    jit_disabled[0] = bool(disable)
    try:
        yield
    finally:
        jit_disabled[0] = previous


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Within the block, computations on values that are not traced are evaluated when they
    are made, even inside ``jit``, as ``jax.ensure_compile_time_eval``. Quabla always does
    this (a constant computed inside a jitted function is a concrete array, outside the
    block too), so the block changes nothing; computations on traced values stay traced,
    as in JAX.

    >>> import quabla, quabla.numpy as qnp
    >>> @quabla.jit
    ... def f(x):
    ...     with quabla.ensure_compile_time_eval():
    ...         scale = float(qnp.sin(0.5))  # concrete: float() works
    ...     return x * scale
    >>> round(float(f(2.0)), 6)
    0.958851
    """
    yield


def linear_transpose(fun: Callable, *primals) -> Callable:
    """The transpose of the linear function ``fun`` at inputs shaped like ``primals``
    (arrays or ``ShapeDtypeStruct``s), as ``jax.linear_transpose``: it maps an output
    cotangent to the tuple of input cotangents. ``fun`` must be linear (it is differentiated
    at zero).

    >>> import quabla.numpy as qnp
    >>> t = linear_transpose(lambda x: 2.0 * x[::-1], qnp.zeros(3))
    >>> t(qnp.array([1.0, 2.0, 3.0]))[0].tolist()
    [6.0, 4.0, 2.0]
    """
    from .api import vjp
    from .numpy.creation import zeros
    at = tuple(zeros(p.shape, p.dtype) for p in primals)
    _, pullback = vjp(fun, *at)

    def transposed(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        return tuple(pullback(ct))

    return transposed


def named_call(fun: Callable, *, name: Optional[str] = None) -> Callable:
    """``fun`` itself: JAX's ``named_call`` names a scope for profilers and changes no
    value; Quabla's traces carry no such names."""
    return fun


@contextlib.contextmanager
def named_scope(name: str):
    """A block whose operations JAX's profilers would group under ``name``; it changes no
    value, and Quabla's traces carry no such names."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope name must be a string, got {type(name).__name__}")
    yield


def print_environment_info(return_string: bool = False) -> Optional[str]:
    """The versions of Quabla, numpy and Python, and the devices found, as
    ``jax.print_environment_info``."""
    from .. import __version__
    from .runtime import default_backend, devices
    found = [f"{d.platform}: {d}" for d in devices()]
    text = (f"quabla:  {__version__}\nnumpy:   {np.__version__}\n"
            f"python:  {sys.version.split()[0]}\nplatform: {_py_platform.platform()}\n"
            f"default backend: {default_backend()}\ndevices: " + ", ".join(found) + "\n")
    if return_string:
        return text
    print(text, end="")
    return None
