"""Devices and plugin discovery from Python.

Search order: ``QUABLA_PLUGIN_PATH``, then the plugins shipped inside this package
(``quabla/plugins/``), then plugins named by ``quabla_plugins`` entry points (other wheels).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Iterator, List, Optional, Union

import numpy as np

from .. import _quabla
from .array import Array
from .tree_util import tree_map


class Device:
    """A backend's device, named by its platform (``Device("cpu")``)."""

    __slots__ = ("platform",)

    def __init__(self, platform: str):
        self.platform = platform

    def __repr__(self) -> str:
        return f"Device({self.platform!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.platform == self.platform

    def __hash__(self) -> int:
        return hash(self.platform)


def _register_plugins() -> None:
    # After QUABLA_PLUGIN_PATH (the core reads it): the plugins shipped in this package, then
    # those other wheels declare (as the design's discovery order has it).
    bundled = os.path.join(os.path.dirname(os.path.dirname(__file__)), "plugins")
    if os.path.isdir(bundled):
        _quabla.add_plugin_path(bundled, fallback=True)
    try:
        from importlib.metadata import entry_points
        for ep in entry_points().select(group="quabla_plugins"):
            try:
                target = ep.load()
                path = target() if callable(target) else target
                _quabla.add_plugin_path(os.fspath(path), fallback=True)
            except Exception as e:  # a broken plugin is a warning, as the host does
                warnings.warn(f"quabla: plugin entry point {ep.name!r} failed: {e}")
    except Exception as e:
        warnings.warn(f"quabla: reading quabla_plugins entry points failed: {e}")


def devices(backend: Optional[str] = None) -> List[Device]:
    """The devices of every backend found (or of ``backend``), loading their plugins."""
    names = [backend] if backend else _quabla.platforms()
    out = []
    for n in names:
        try:
            out.append(Device(_quabla.load_platform(n)))
        except _quabla.BackendError:
            if backend:
                raise
    return out


def default_backend() -> str:
    """The platform of the default device (``QUABLA_PLATFORMS`` chooses; else the first
    found)."""
    return _quabla.default_platform()


@contextlib.contextmanager
def default_device(device: Union[Device, str, None]) -> Iterator[None]:
    """Inside the block, arrays made without a device (and Python numbers or numpy arrays
    passed to a jitted function) go to ``device`` (a Device or platform name; None changes
    nothing), as ``jax.default_device``: on this thread, the innermost block winning over
    ``config.update("jax_default_device", ...)``.

    >>> import quabla, quabla.numpy as qnp
    >>> with quabla.default_device(quabla.devices("cpu")[0]):
    ...     qnp.ones(2).device.platform
    'cpu'
    """
    if device is None:
        yield
        return
    scope = _quabla.DefaultDeviceScope(_platform_of(device, "default_device"))
    try:
        yield
    finally:
        scope.close()


def _platform_of(device, what: str) -> str:
    platform = getattr(device, "platform", device)
    if not isinstance(platform, str):
        raise TypeError(f"{what}: expected a Device or a platform name, got "
                        f"{type(device).__name__}")
    return platform


def set_default_device(device: Union[Device, str, None]) -> None:
    """The process-wide default device (None: the discovered default again); what
    ``config.update("jax_default_device", device)`` sets."""
    _quabla.set_default_platform(None if device is None
                                 else _platform_of(device, "jax_default_device"))


def device_put(x, device=None):
    """``x`` (a tree) with every array on ``device`` (a Device, a platform name or a
    ``quabla.sharding`` Sharding, which names one device)."""
    from .sharding import placement
    platform = getattr(placement(device), "platform", placement(device))

    def put(a):
        from .numpy.creation import asarray
        if isinstance(a, Array) and (platform is None or a._raw.platform == platform):
            return a
        host = np.asarray(a)
        return asarray(host, device=Device(platform) if platform else None)

    return tree_map(put, x)
