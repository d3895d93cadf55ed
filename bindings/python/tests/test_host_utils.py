"""JAX's top-level helpers: block_until_ready, device_get, the counts, disable_jit,
ensure_compile_time_eval, linear_transpose, named_call / named_scope, print_environment_info."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp


def test_trees_of_arrays_to_the_host():
    tree = {"a": qnp.arange(3.0), "b": (qnp.ones((2, 2)), "label", 7)}
    assert quabla.block_until_ready(tree) is tree
    host = quabla.device_get(tree)
    assert isinstance(host["a"], np.ndarray) and host["a"].tolist() == [0.0, 1.0, 2.0]
    assert host["b"][1:] == ("label", 7)
    host["a"][0] = 5.0  # a writable copy
    assert float(tree["a"][0]) == 0.0


def test_counts():
    assert quabla.device_count() == len(quabla.devices()) >= 1
    assert quabla.local_device_count() == quabla.device_count()
    assert [d.platform for d in quabla.local_devices()] == [d.platform for d in quabla.devices()]
    assert (quabla.process_index(), quabla.process_count()) == (0, 1)


def test_disable_jit_runs_python_with_concrete_values():
    seen = []

    @quabla.jit
    def f(x):
        seen.append(float(x))  # needs a concrete value
        return x * 2

    with quabla.disable_jit():
        assert float(f(qnp.asarray(1.5))) == 3.0
        assert float(f(qnp.asarray(2.0))) == 4.0
    assert seen == [1.5, 2.0]
    with pytest.raises(quabla.ConcretizationTypeError):
        f(qnp.asarray(1.0))  # compiled again outside the block


def test_ensure_compile_time_eval_gives_concrete_constants_and_keeps_traced_values():
    concrete = []

    @quabla.jit
    def f(x):
        with quabla.ensure_compile_time_eval():
            scale = float(qnp.cos(qnp.asarray(0.25)))  # concrete inside jit
            y = x * scale  # x is traced: this stays a computation of the program
            try:
                float(y)
                concrete.append(True)
            except quabla.ConcretizationTypeError:
                concrete.append(False)
        return y
    assert float(f(qnp.asarray(2.0))) == pytest.approx(2.0 * np.cos(0.25), rel=1e-6)
    assert concrete == [False]
    assert float(quabla.grad(f)(qnp.asarray(1.0))) == pytest.approx(np.cos(0.25), rel=1e-6)


def test_linear_transpose_is_the_adjoint():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, 4))
    t = quabla.linear_transpose(lambda x: qnp.asarray(m) @ x,
                                quabla.ShapeDtypeStruct((4,), np.float32))
    y = rng.normal(size=3)
    (got,) = t(qnp.asarray(y, dtype=qnp.float32))
    np.testing.assert_allclose(np.asarray(got), m.T @ y, rtol=1e-5)
    two = quabla.linear_transpose(lambda a, b: a + 2.0 * b, qnp.zeros(2), qnp.zeros(2))
    ga, gb = two(qnp.asarray([1.0, -1.0]))
    assert ga.tolist() == [1.0, -1.0] and gb.tolist() == [2.0, -2.0]


def test_named_call_scope_and_environment():
    f = quabla.named_call(lambda x: x + 1, name="inc")
    with quabla.named_scope("block"):
        assert float(quabla.jit(f)(1.0)) == 2.0
    with pytest.raises(TypeError):
        with quabla.named_scope(3):
            pass
    text = quabla.print_environment_info(return_string=True)
    assert "quabla:" in text and "numpy:" in text and "devices:" in text
    assert quabla.float0 == quabla.dtypes.float0


def test_clear_caches_makes_jitted_functions_trace_again():
    traces = []

    @quabla.jit
    def f(x):
        traces.append(1)  # runs when traced
        return x + 1

    f(qnp.asarray(1.0))
    f(qnp.asarray(2.0))
    assert len(traces) == 1
    quabla.clear_caches()
    assert float(f(qnp.asarray(3.0))) == 4.0 and len(traces) == 2
    f.clear_cache()
    f(qnp.asarray(3.0))
    assert len(traces) == 3


def _through_custom_vjp(theta):
    """JAX's closure_convert pattern: a custom_vjp over a function closing over `theta`,
    given the hoisted consts as ordinary arguments so its backward rule reaches them."""
    g = lambda x: qnp.sin(x * theta)  # noqa: E731
    converted, consts = quabla.closure_convert(g, 0.5)

    @quabla.custom_vjp
    def run(x, *cs):
        return converted(x, *cs)

    def fwd(x, *cs):
        return run(x, *cs), (x, cs)

    def bwd(res, ct):
        x, cs = res
        _, pullback = quabla.vjp(converted, x, *cs)
        return pullback(ct)

    run.defvjp(fwd, bwd)
    return run(qnp.asarray(0.5, dtype=theta.dtype), *consts)


def test_closure_convert_hoists_traced_captures_for_custom_vjp():
    theta = qnp.asarray(1.2, dtype=qnp.float64)
    want = 0.5 * np.cos(0.6)  # d/dtheta sin(0.5 theta)
    assert float(quabla.grad(_through_custom_vjp)(theta)) == pytest.approx(want, rel=1e-14)
    assert float(quabla.jit(quabla.grad(_through_custom_vjp))(theta)) == pytest.approx(
        want, rel=1e-14)
    # Outside transformations nothing is traced: no consts; pytrees in and out.
    w = qnp.array([2.0, -1.0])
    f = lambda d: (qnp.sum(d["x"] * w), d["x"] * 2.0)  # noqa: E731
    converted, consts = quabla.closure_convert(f, {"x": qnp.ones(2)})
    assert consts == []
    s, twice = converted({"x": qnp.array([3.0, 4.0])})
    assert float(s) == 2.0 and twice.tolist() == [6.0, 8.0]
    with pytest.raises(TypeError, match="1 argument"):
        converted({"x": qnp.ones(2)}, qnp.ones(1))
    with pytest.raises(TypeError, match="shaped like the example"):
        converted(qnp.ones(2))


def test_arrays_assembled_from_their_one_shard_as_jax():
    # JAX 0.10.2 on one CPU device, recorded: the callback is called once with a
    # slice(None) per axis (a NamedSharding over a one-device mesh too); shapes that do not
    # match, a second per-device array and a global shape that is not the local one are
    # ValueErrors with these messages.
    from quabla.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding
    s = SingleDeviceSharding(quabla.devices()[0])
    seen = []
    a = quabla.make_array_from_callback(
        (2, 3), s, lambda idx: (seen.append(idx), np.arange(6.0).reshape(2, 3))[1])
    assert seen == [(slice(None), slice(None))] and a.tolist() == [[0, 1, 2], [3, 4, 5]]
    mesh = quabla.sharding.Mesh(np.array(quabla.devices()[:1]), ("x",))
    seen.clear()
    b = quabla.make_array_from_callback(
        (4,), NamedSharding(mesh, PartitionSpec("x")),
        lambda idx: (seen.append(idx), np.arange(4.0))[1], dtype=np.float32)
    assert seen == [(slice(None),)] and b.dtype == np.float32
    with pytest.raises(ValueError, match=r"Expected shard shape \(2, 4\) doesn't match"):
        quabla.make_array_from_callback((2, 4), s, lambda idx: np.ones((2, 3)))
    c = quabla.make_array_from_single_device_arrays((2, 3), s, [quabla.numpy.ones((2, 3))])
    assert c.shape == (2, 3)
    with pytest.raises(ValueError, match="Expected 1 per-device arrays"):
        quabla.make_array_from_single_device_arrays((2, 3), s, [a, a])
    d = quabla.make_array_from_process_local_data(s, np.ones((2, 3)))
    assert d.shape == (2, 3) and d.device == quabla.devices()[0]
    with pytest.raises(ValueError, match="global_shape should be None or equal"):
        quabla.make_array_from_process_local_data(s, np.ones((2, 3)), (4, 3))
    with pytest.raises(TypeError, match="expected a quabla.sharding Sharding"):
        quabla.make_array_from_callback((2,), "cpu", lambda idx: np.ones(2))


def test_effects_have_happened_when_a_call_returns():
    # jax.effects_barrier waits for pending callbacks; Quabla's run during the call, so the
    # barrier finds them done (and returns None, as JAX's).
    log = []
    f = quabla.jit(lambda x: (quabla.debug.callback(lambda v: log.append(float(v)), x), x)[1])
    f(np.float32(2.0))
    assert log == [2.0]
    assert quabla.effects_barrier() is None and log == [2.0]
    assert quabla.process_indices() == [0]


def test_typeof_shows_what_jax_shows():
    # JAX 0.10.2 (x64 on here): typeof(ones((2, 3))) is ShapedArray(float64[2,3]) ("float64[2,3]"
    # as str), typeof(1.0) ShapedArray(float64[], weak_type=True), a numpy float32 array's
    # ShapedArray(float32[2]), a traced value's its own type; a string is a TypeError.
    t = quabla.typeof(qnp.ones((2, 3)))
    assert (t.shape, t.dtype, t.ndim, t.size, t.weak_type) == ((2, 3), np.float64, 2, 6, False)
    assert str(t) == "float64[2,3]" and repr(t) == "ShapedArray(float64[2,3])"
    assert repr(quabla.typeof(1.0)) == "ShapedArray(float64[], weak_type=True)"
    assert repr(quabla.typeof(np.ones(2, np.float32))) == "ShapedArray(float32[2])"
    assert quabla.typeof(qnp.ones(2)) == quabla.typeof(qnp.zeros(2))
    seen = []
    quabla.jit(lambda x: (seen.append(quabla.typeof(x)), x)[1])(qnp.ones(2, dtype=qnp.int32))
    assert repr(seen[0]) == "ShapedArray(int32[2])"
    assert repr(quabla.typeof(quabla.ShapeDtypeStruct((2,), np.float32))) == \
        "ShapedArray(float32[2])"
    with pytest.raises(TypeError, match="not a valid JAX type"):
        quabla.typeof("a")
