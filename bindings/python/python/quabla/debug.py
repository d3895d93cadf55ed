"""``quabla.debug``: printing and callbacks from inside traced code, as ``jax.debug``."""

from ._src.callbacks import debug_callback as callback
from ._src.callbacks import debug_log as log
from ._src.callbacks import debug_print as print  # noqa: A004 - JAX's name
from ._src.debugger import breakpoint  # noqa: A004 - JAX's name

__all__ = ["breakpoint", "callback", "log", "print"]
