"""``quabla.experimental``: what JAX keeps under ``jax.experimental`` that ported programs
use: :func:`io_callback` (a host call for its effect and its results),
:mod:`quabla.experimental.ode` (``odeint`` with ``jax.experimental.ode``'s keywords) and
:mod:`quabla.experimental.shard_map` (``shard_map``'s older signature).

>>> from quabla.experimental import io_callback
>>> from quabla.experimental.ode import odeint
"""

from .._src.callbacks import io_callback
from . import ode, shard_map

__all__ = ["io_callback", "ode", "shard_map"]
