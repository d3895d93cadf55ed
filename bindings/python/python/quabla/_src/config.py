"""``quabla.config``: the JAX configuration flags that change Quabla's behaviour.

``jax_default_device`` (a Device, a platform name or None): where arrays made without a
device go, as ``quabla.default_device`` does inside a block.

``jax_enable_x64`` (also the ``QUABLA_ENABLE_X64`` or ``JAX_ENABLE_X64`` environment
variable, read once at import): with it on, the default float dtype is float64, as JAX's
with x64 on: Python floats, float lists, ``zeros``/``ones``/``eye``/``arange``/``linspace``
without a dtype, ``random.uniform``/``normal``, integer arrays combined with a Python float
(``0.1 * i``) and float results of integer inputs (``mean``, ``sqrt``). Integers stay int32:
Quabla has no int64. With it off (the default) there is no float64, as in JAX: float64 numpy
input becomes float32, and an explicitly requested ``dtype=float64`` float32 with JAX's
warning (``dtypes.canonicalize``).

>>> import quabla
>>> quabla.config.update("jax_enable_x64", True)
>>> quabla.numpy.zeros(2).dtype
dtype('float64')
>>> quabla.config.update("jax_enable_x64", False)
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

_TRUE = ("1", "true", "yes", "on")


def _env_x64() -> bool:
    for name in ("QUABLA_ENABLE_X64", "JAX_ENABLE_X64"):
        value = os.environ.get(name)
        if value is not None:
            return value.strip().lower() in _TRUE
    return False


class Config:
    """The flags, read as attributes or with :meth:`read`, set with :meth:`update`."""

    def __init__(self) -> None:
        self._values = {"jax_enable_x64": _env_x64(), "jax_default_device": None}

    def update(self, name: str, value) -> None:
        """Sets ``name`` (``"jax_enable_x64"``, or ``"jax_default_device"``: a Device, a
        platform name or None) to ``value``, as ``jax.config.update``."""
        if name not in self._values:
            raise AttributeError(f"unknown config option {name!r}: Quabla has "
                                 f"{', '.join(sorted(self._values))}")
        if name == "jax_default_device":
            from .runtime import set_default_device
            set_default_device(value)
            self._values[name] = value
            return
        self._values[name] = bool(value)

    def read(self, name: str):
        """The value of ``name``."""
        if name not in self._values:
            raise AttributeError(f"unknown config option {name!r}")
        return self._values[name]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)


config = Config()


class _Setting:
    """One flag as ``jax.enable_x64`` is: its ``value``, and called, a context manager that
    sets it for a block and restores it after (process-wide: Quabla's flags are not
    per-thread, as JAX's context values are).

    >>> import quabla
    >>> with quabla.enable_x64(True):
    ...     quabla.numpy.zeros(2).dtype
    dtype('float64')
    >>> quabla.enable_x64.value
    False
    """

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def value(self):
        return config.read(self._name)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        old = config.read(self._name)
        config.update(self._name, new_val)
        try:
            yield
        finally:
            config.update(self._name, old)


enable_x64 = _Setting("jax_enable_x64")


def default_float() -> np.dtype:
    """float64 with ``jax_enable_x64`` on, else float32."""
    return np.dtype(np.float64 if config.read("jax_enable_x64") else np.float32)
