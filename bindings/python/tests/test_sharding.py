"""quabla.sharding: JAX's sharding vocabulary on one device per program (a mesh of one
device, device_put, Array.sharding, with_sharding_constraint, jit's shardings), and the
refusal of a mesh of several devices."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding


def test_a_one_device_mesh_places_arrays_on_its_device():
    mesh = quabla.make_mesh((quabla.device_count(),), ("data",))
    assert mesh.shape == {"data": 1} and mesh.size == 1
    s = NamedSharding(mesh, P("data", None))
    assert s.device_set == {quabla.devices()[0]} and s.is_fully_replicated
    x = quabla.device_put(np.arange(6.0).reshape(3, 2), s)
    assert x.device == quabla.devices()[0] and x.tolist() == [[0, 1], [2, 3], [4, 5]]
    assert x.sharding == SingleDeviceSharding(x.device)
    with mesh:
        y = quabla.lax.with_sharding_constraint(x * 2, s)
    assert y.tolist() == (np.arange(6.0).reshape(3, 2) * 2).tolist()
    assert repr(P("data", None)) == "PartitionSpec('data', None)"
    assert Mesh(quabla.devices()[:1], "data") == mesh


def test_sharding_constraints_are_identities_under_transformations():
    mesh = quabla.make_mesh((1, 1), ("a", "b"))
    s = NamedSharding(mesh, P(("a", "b")))

    @quabla.jit
    def f(x):
        return quabla.numpy.sum(quabla.lax.with_sharding_constraint(x * x, s))
    x = qnp.array([1.0, 2.0, 3.0])
    assert float(f(x)) == 14.0
    assert quabla.grad(f)(x).tolist() == [2.0, 4.0, 6.0]
    g = quabla.jit(lambda v: v + 1, in_shardings=s, out_shardings=P())
    assert g(x).tolist() == [2.0, 3.0, 4.0]
    # A pytree of shardings, one per array.
    pair = quabla.lax.with_sharding_constraint((x, x), (s, None))
    assert pair[0] is x and pair[1] is x


def test_meshes_of_several_devices_and_bad_specs_are_refused():
    with pytest.raises(ValueError, match="one device"):
        quabla.make_mesh((2,), ("data",))
    cpu = quabla.devices()[0]
    with pytest.raises(ValueError, match="one device"):
        Mesh(np.array([cpu, cpu]), ("data",))
    mesh = quabla.make_mesh((1,), ("data",))
    with pytest.raises(ValueError, match="not an axis"):
        NamedSharding(mesh, P("model"))
    with pytest.raises(ValueError, match="twice"):
        NamedSharding(quabla.make_mesh((1, 1), ("a", "b")), P("a", "a"))
    with pytest.raises(ValueError, match="more entries"):
        quabla.lax.with_sharding_constraint(qnp.ones(2), NamedSharding(mesh, P(None, None)))
    with pytest.raises(TypeError, match="Shardings, PartitionSpecs or None"):
        quabla.jit(lambda v: v, in_shardings=3)
    with pytest.raises(ValueError, match="one device"):
        quabla.jit(lambda v: v, in_shardings=SingleDeviceSharding(cpu), device="mlx")
    with pytest.raises(ValueError, match="not both"):
        quabla.jit(lambda v: v, in_shardings=P(), device="cpu", backend="cpu")
    # The decorator form keeps the device the shardings name.
    deco = quabla.jit(in_shardings=SingleDeviceSharding(cpu))(lambda v: v * 3)
    assert deco(qnp.ones(2)).device == cpu
