"""``quabla.errors``: the errors a traced program raises, as ``jax.errors`` names them, so
``except jax.errors.TracerBoolConversionError`` ports by changing the import.

Each is a :class:`ConcretizationTypeError` (a ``TypeError``): code that caught that keeps
working. ``JaxRuntimeError`` is :class:`quabla.BackendError`, what a backend's failure raises.

>>> import quabla, quabla.errors, quabla.numpy as qnp
>>> @quabla.jit
... def f(x):
...     return x if x > 0 else -x
>>> try:
...     f(qnp.float32(1.0))
... except quabla.errors.TracerBoolConversionError:
...     print("use lax.cond")
use lax.cond
"""

from ._quabla import BackendError as JaxRuntimeError
from ._quabla import ConcretizationTypeError


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` (an ``if``, ``while``, ``and``) of a traced array inside ``jit``."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int()`` or ``__index__`` (a ``range``, a Python index) of a traced array inside
    ``jit``."""


class TracerArrayConversionError(ConcretizationTypeError):
    """``numpy.asarray`` of a traced array inside ``jit``."""


class UnexpectedTracerError(TypeError):
    """A traced array where none may be: at a ``custom_vjp``'s ``nondiff_argnums``."""


__all__ = ["ConcretizationTypeError", "JaxRuntimeError", "TracerArrayConversionError",
           "TracerBoolConversionError", "TracerIntegerConversionError", "UnexpectedTracerError"]
