"""``quabla.example_libraries``: ``stax`` (a tiny neural-network layer library) and
``optimizers`` (``(init, update, get_params)`` triples), as ``jax.example_libraries``."""

from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
