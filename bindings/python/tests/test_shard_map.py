"""``shard_map`` on a one-device mesh, against JAX 0.10.2's results on a one-device mesh
(``jax.sharding.Mesh(jax.devices()[:1], ...)``, recorded by hand): every axis has size 1,
so collectives are over one device."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax
from quabla.sharding import Mesh, PartitionSpec as P
from quabla.experimental.shard_map import shard_map as legacy_shard_map


def one(*names):
    return quabla.make_mesh((1,) * len(names), names)


def test_collectives_over_one_device_as_jax():
    mesh = one("x")
    f = quabla.shard_map(lambda a: lax.psum(a, "x") * 2 + lax.axis_index("x"), mesh=mesh,
                         in_specs=P("x"), out_specs=P("x"))
    assert f(qnp.arange(4.0)).tolist() == [0.0, 2.0, 4.0, 6.0]
    g = quabla.shard_map(lambda a: lax.psum(a.sum(), "x"), mesh=mesh, in_specs=P("x"),
                         out_specs=P())
    assert float(g(qnp.arange(4.0))) == 6.0
    # all_gather stacks one block (JAX: (1, 4)); tiled, it concatenates (JAX: (4,)).
    h = quabla.shard_map(lambda a: lax.all_gather(a, "x"), mesh=mesh, in_specs=P("x"),
                         out_specs=P("x"))
    assert h(qnp.arange(4.0)).shape == (1, 4)
    t = quabla.shard_map(lambda a: lax.all_gather(a, "x", tiled=True), mesh=mesh,
                         in_specs=P("x"), out_specs=P("x"))
    assert t(qnp.arange(4.0)).shape == (4,)
    # Two mesh axes, a psum over both names, an index on one (JAX: ones).
    two = one("a", "b")
    q = quabla.shard_map(lambda a: lax.psum(a, ("a", "b")) + lax.axis_index("b"), mesh=two,
                         in_specs=P("a", "b"), out_specs=P("a", "b"))
    assert np.asarray(q(qnp.ones((2, 3)))).tolist() == [[1.0] * 3] * 2


def test_jit_grad_decorator_context_mesh_and_pytrees():
    mesh = one("x")

    @quabla.jit
    def r(x):
        return quabla.shard_map(lambda a: lax.pmean(a, "x"), mesh=mesh, in_specs=P(),
                                out_specs=P())(x)
    assert r(qnp.ones(3)).tolist() == [1.0, 1.0, 1.0]
    # JAX (check_vma=False): [0, 2, 4].
    loss = quabla.shard_map(lambda a: (a ** 2).sum(), mesh=mesh, in_specs=P("x"),
                            out_specs=P())
    assert quabla.grad(loss)(qnp.arange(3.0)).tolist() == [0.0, 2.0, 4.0]

    @quabla.shard_map(mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    def d(a):
        return a + 1
    assert d(qnp.zeros(2)).tolist() == [1.0, 1.0]
    # The mesh entered with `with`; pytrees of arguments and results, specs as prefixes.
    with mesh:
        s = quabla.shard_map(lambda p, v: {"w": p["w"] * v, "n": lax.psum(v, "x")},
                             in_specs=({"w": P("x")}, P()), out_specs={"w": P("x"), "n": P()})
        out = s({"w": qnp.arange(3.0)}, qnp.asarray(2.0))
    assert out["w"].tolist() == [0.0, 2.0, 4.0] and float(out["n"]) == 2.0
    # The older spelling, positional mesh and specs.
    legacy = legacy_shard_map(lambda a: a + lax.axis_index("x"), mesh, P("x"), P("x"),
                              check_rep=False)
    assert legacy(qnp.ones(2)).tolist() == [1.0, 1.0]


def test_bad_meshes_and_specs_are_refused():
    mesh = one("x")
    # Without a mesh, the one in context is read when the function is called, as JAX's.
    with pytest.raises(ValueError, match="no mesh given"):
        quabla.shard_map(lambda a: a, in_specs=P(), out_specs=P())(qnp.ones(2))
    with pytest.raises(ValueError, match="one device"):
        quabla.make_mesh((2,), ("x",))
    with pytest.raises(TypeError, match="quabla.sharding.Mesh"):
        quabla.shard_map(lambda a: a, mesh="x", in_specs=P(), out_specs=P())
    with pytest.raises(ValueError, match="not an axis of the mesh"):
        quabla.shard_map(lambda a: a, mesh=mesh, in_specs=P("y"), out_specs=P())(qnp.ones(2))
    with pytest.raises(ValueError, match="2 entries for an array of rank 1"):
        quabla.shard_map(lambda a: a, mesh=mesh, in_specs=P("x", None),
                         out_specs=P())(qnp.ones(2))
    with pytest.raises(ValueError, match="uses a mesh axis twice"):
        quabla.shard_map(lambda a: a, mesh=one("x"), in_specs=P(("x", "x")),
                         out_specs=P())(qnp.ones(2))
    with pytest.raises(ValueError, match="out_specs"):
        quabla.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"),
                         out_specs=P("x", "x"))(qnp.ones((2, 2)))
    with pytest.raises(ValueError, match="structure"):
        quabla.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P(), P(), P()),
                         out_specs=P())(qnp.ones(2), qnp.ones(2))
    with pytest.raises(TypeError, match="expected a function"):
        quabla.shard_map(3, mesh=mesh, in_specs=P(), out_specs=P())
    assert isinstance(mesh, Mesh)


def test_set_mesh_is_the_mesh_when_none_is_given():
    # jax.set_mesh: a global setter and a context manager restoring the previous mesh; a
    # `with mesh:` block inside it wins.
    m = quabla.make_mesh((1,), ("x",))
    other = quabla.make_mesh((1,), ("y",))
    f = quabla.shard_map(lambda a: lax.psum(a, "x"), in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ValueError, match="set_mesh"):
        f(qnp.arange(3.0))
    with quabla.set_mesh(m) as entered:
        assert entered is m
        assert f(qnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
        with other:
            with pytest.raises(ValueError, match="'x'"):
                f(qnp.arange(3.0))
    with pytest.raises(ValueError, match="no mesh given"):
        f(qnp.arange(3.0))
    quabla.set_mesh(m)  # the global form
    try:
        assert f(qnp.arange(2.0)).tolist() == [0.0, 1.0]
    finally:
        quabla.set_mesh(None)
    with pytest.raises(TypeError, match="Mesh or None"):
        quabla.set_mesh("x")
