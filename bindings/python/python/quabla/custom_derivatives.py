"""``quabla.custom_derivatives``: functions with hand-written derivative rules and the
symbolic-zero objects of their ``symbolic_zeros=True`` protocol, as
``jax.custom_derivatives``."""

from ._src.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal, SymbolicZero, custom_gradient, custom_jvp, custom_vjp, zero_from_primal,
)
from ._src.closure_convert import closure_convert  # noqa: F401

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "SymbolicZero", "CustomVJPPrimal",
           "zero_from_primal", "closure_convert"]
