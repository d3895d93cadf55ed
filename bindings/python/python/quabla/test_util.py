"""``quabla.test_util``: ``check_grads`` and its parts, as ``jax.test_util``."""

from ._src.test_util import check_grads, check_jvp, check_vjp, numerical_jvp  # noqa: F401

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp"]
