"""``quabla.sharding``: JAX's sharding vocabulary on one device per program.

A Quabla program runs on one device, so a sharding here names that device: a
``SingleDeviceSharding``, or a ``NamedSharding`` over a ``Mesh`` of one device (every
axis of size 1, so every ``PartitionSpec`` places the whole array there). Code written for
``jax.sharding`` that runs on one device (``make_mesh((jax.device_count(),), ("data",))``
on one GPU) runs unchanged; a mesh of several devices is refused where it is made, naming
the alternative (``vmap`` with an ``axis_name``, or the data-parallel ``Trainer`` across
processes).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from .runtime import Device

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "Sharding", "SingleDeviceSharding",
           "make_mesh", "with_sharding_constraint"]


class PartitionSpec(tuple):
    """How each array axis maps onto mesh axes (a name, a tuple of names, or None for
    replicated), as ``jax.sharding.PartitionSpec``.

    >>> PartitionSpec("data", None)
    PartitionSpec('data', None)
    """

    def __new__(cls, *partitions):
        return super().__new__(cls, partitions)

    def __repr__(self) -> str:
        return f"PartitionSpec{tuple.__repr__(self)}"

    def names(self) -> Tuple[str, ...]:
        out: list = []
        for p in self:
            if p is None:
                continue
            out.extend(p if isinstance(p, tuple) else (p,))
        return tuple(out)


def _one_device(devices: np.ndarray, what: str) -> Device:
    if devices.size != 1:
        raise ValueError(f"{what}: a mesh of {devices.size} devices, but a Quabla program "
                         "runs on one device; map over the axis with vmap(..., axis_name=) "
                         "on one device, or train across processes with the data-parallel "
                         "Trainer")
    device = devices.reshape(-1)[0]
    if not isinstance(device, Device):
        raise TypeError(f"{what}: mesh entries must be Devices (quabla.devices()), got "
                        f"{type(device).__name__}")
    return device


class Mesh:
    """Devices laid out on named axes, as ``jax.sharding.Mesh`` (one device here; usable as
    a context manager, which makes it the mesh ``shard_map`` uses when given none).

    >>> import quabla
    >>> Mesh(quabla.devices()[:1], ("data",)).shape
    {'data': 1}
    """

    def __init__(self, devices: Any, axis_names: Union[str, Sequence[str]], *,
                 axis_types: Any = None):
        del axis_types
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        grid = np.array(devices, dtype=object)
        if grid.ndim == 0:
            grid = grid.reshape(1)
        if grid.ndim != len(names):
            raise ValueError(f"Mesh: devices of rank {grid.ndim} for {len(names)} axis "
                             f"names {names}")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis names must differ, got {names}")
        self.devices = grid
        self.axis_names = names
        self.device = _one_device(grid, "Mesh")

    @property
    def shape(self) -> Dict[str, int]:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    def __enter__(self) -> "Mesh":
        _CONTEXT.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _CONTEXT.pop()
        return None

    def __repr__(self) -> str:
        return f"Mesh(device_ids={[0] * self.size}, axis_names={self.axis_names})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.devices.shape == other.devices.shape and self.device == other.device)

    def __hash__(self) -> int:
        return hash((self.axis_names, self.devices.shape, self.device))


#: The meshes entered with ``with mesh:``, innermost last.
_CONTEXT: list = []
#: The mesh ``set_mesh`` set, under every ``with mesh:`` block.
_SET: list = [None]


def current_mesh() -> Optional["Mesh"]:
    """The innermost mesh entered with ``with mesh:``, else the one ``set_mesh`` set, or
    None."""
    return _CONTEXT[-1] if _CONTEXT else _SET[0]


class _MeshSetting:
    """What ``set_mesh`` returns: a context manager putting the previous mesh back."""

    def __init__(self, mesh: Optional["Mesh"], previous: Optional["Mesh"]) -> None:
        self._mesh, self._previous = mesh, previous

    def __enter__(self) -> Optional["Mesh"]:
        return self._mesh

    def __exit__(self, *exc) -> None:
        _SET[0] = self._previous
        return None


def set_mesh(mesh: Optional["Mesh"]) -> _MeshSetting:
    """Makes ``mesh`` the mesh APIs use when none is given (``shard_map(mesh=None)``), as
    ``jax.set_mesh``: a global setter, or a context manager that restores the previous one
    (process-wide, where JAX's is per thread).

    >>> m = make_mesh((1,), ("x",))
    >>> with set_mesh(m):
    ...     current_mesh() is m
    True
    >>> current_mesh() is None
    True
    """
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh: expected a Mesh or None, got {type(mesh).__name__}")
    previous, _SET[0] = _SET[0], mesh
    return _MeshSetting(mesh, previous)


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], *,
              devices: Optional[Sequence[Device]] = None, axis_types: Any = None) -> Mesh:
    """A mesh of ``axis_shapes`` over ``devices`` (the default device when None), as
    ``jax.make_mesh``: their product must be the number of devices (one here)."""
    del axis_types
    shape = tuple(int(s) for s in axis_shapes)
    if devices is None:
        from .numpy.creation import zeros
        devices = [zeros(()).device]
    if int(np.prod(shape)) != len(devices):
        raise ValueError(f"make_mesh: axis shapes {shape} hold {int(np.prod(shape))} devices, "
                         f"but {len(devices)} are given; a Quabla program runs on one device, "
                         "so every axis has size 1")
    grid = np.empty(len(devices), dtype=object)
    grid[:] = list(devices)
    return Mesh(grid.reshape(shape), tuple(axis_names))


def check_spec_names(spec: PartitionSpec, mesh: Mesh, what: str) -> None:
    """A ValueError (its message starting with ``what``) unless ``spec`` names axes of
    ``mesh``, each at most once."""
    names = spec.names()
    unknown = [n for n in names if n not in mesh.axis_names]
    if unknown:
        raise ValueError(f"{what} {spec} names {unknown[0]!r}, not an axis of the mesh "
                         f"{mesh.axis_names}")
    if len(set(names)) != len(names):
        raise ValueError(f"{what} {spec} uses a mesh axis twice")


class Sharding:
    """Where an array lives: one device here (``device_set`` holds it)."""

    device: Device

    @property
    def device_set(self) -> set:
        return {self.device}

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def num_devices(self) -> int:
        return 1


class SingleDeviceSharding(Sharding):
    """The whole array on ``device``, as ``jax.sharding.SingleDeviceSharding``."""

    def __init__(self, device: Device, *, memory_kind: Optional[str] = None):
        del memory_kind
        if not isinstance(device, Device):
            raise TypeError(f"SingleDeviceSharding: expected a Device, got "
                            f"{type(device).__name__}")
        self.device = device

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, SingleDeviceSharding) and other.device == self.device

    def __hash__(self) -> int:
        return hash(("single", self.device))


class NamedSharding(Sharding):
    """``spec`` over ``mesh``, as ``jax.sharding.NamedSharding``; the spec must name axes of
    the mesh, each at most once."""

    def __init__(self, mesh: Mesh, spec: Optional[PartitionSpec] = None, *,
                 memory_kind: Optional[str] = None):
        del memory_kind
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: expected a Mesh, got {type(mesh).__name__}")
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        check_spec_names(spec, mesh, "NamedSharding:")
        self.mesh, self.spec, self.device = mesh, spec, mesh.device

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and tuple(other.spec) == tuple(self.spec))

    def __hash__(self) -> int:
        return hash((self.mesh, tuple(self.spec)))


def placement(target: Any) -> Any:
    """The device a ``device_put`` target names: a Sharding's device, else ``target``."""
    return target.device if isinstance(target, Sharding) else target


def _check(sharding: Any, x: Any, what: str) -> None:
    if sharding is None:
        return
    if isinstance(sharding, PartitionSpec):
        return  # against the mesh in context: one device, nothing to check
    if not isinstance(sharding, Sharding):
        raise TypeError(f"{what}: expected a Sharding or a PartitionSpec, got "
                        f"{type(sharding).__name__}")
    if isinstance(sharding, NamedSharding) and len(sharding.spec) > np.ndim(x):
        raise ValueError(f"{what}: {sharding.spec} has more entries than the array's "
                         f"{np.ndim(x)} axes")


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` itself, as ``jax.lax.with_sharding_constraint`` on one device (the shardings
    are checked: each must fit its array)."""
    from .tree_util import tree_flatten
    leaves, _ = tree_flatten(x)
    specs: Iterable[Any]
    if isinstance(shardings, (Sharding, PartitionSpec)) or shardings is None:
        specs = [shardings] * len(leaves)
    else:
        specs, _ = tree_flatten(shardings, is_leaf=lambda s: s is None or isinstance(
            s, (Sharding, PartitionSpec)))
    specs = list(specs)
    if len(specs) != len(leaves):
        raise ValueError(f"with_sharding_constraint: {len(specs)} shardings for "
                         f"{len(leaves)} arrays")
    for leaf, s in zip(leaves, specs):
        _check(s, leaf, "with_sharding_constraint")
    return x
