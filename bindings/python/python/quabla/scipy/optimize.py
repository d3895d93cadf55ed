"""``quabla.scipy.optimize``: ``minimize(method="BFGS")``, as ``jax.scipy.optimize``."""

from .._src.scipy.optimize import OptimizeResults, minimize  # noqa: F401

__all__ = ["OptimizeResults", "minimize"]
