"""JAX behaviours ported programs rely on (issue 20), against JAX 0.10.2's recorded
behaviour (goldens/jax_semantics.json, by tools/make_goldens.py): printing and formatting
(item 4), jit's keywords (item 8), pytrees (item 9). Exceptions are compared by type."""

import collections
import warnings
import math
import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import tree_util as tu

from conftest import assert_close, dec, golden

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import custom_rule_programs, nondiff_jvp_program  # noqa: E402

G = golden("jax_semantics")


def raises_as(expected, thunk):
    """`thunk` raises the exception type JAX raised (recorded by name)."""
    with pytest.raises(Exception) as info:
        thunk()
    assert type(info.value).__name__ == expected["raises"], info.value


@pytest.mark.parametrize("case", G["format"], ids=lambda c: f"{c['dtype']}-{c['spec']!r}")
def test_a_0d_array_prints_and_formats_as_jax(case):
    v = float(case["v"]) if case["dtype"].startswith("float") else eval(case["v"])
    x = qnp.asarray(v, dtype=case["dtype"])
    assert str(x) == case["str"]
    assert format(x, case["spec"]) == case["format"]
    assert f"{x}" == case["fstring"]
    f = float(x)
    assert f == case["float"] or (math.isnan(f) and math.isnan(case["float"]))
    assert bool(x) == case["bool"]
    # repr keeps the type, as JAX's does.
    assert repr(x).startswith("Array(") and case["dtype"] in repr(x)


@pytest.mark.parametrize("case", G["print"], ids=lambda c: f"{c['dtype']}-{np.ndim(c['v'])}d")
def test_arrays_print_their_values_as_jax(case):
    x = qnp.asarray(case["v"], dtype=case["dtype"])
    assert str(x) == case["str"]
    assert f"{x}" == case["fstring"]
    if "raises" in case["format_spec"]:
        raises_as(case["format_spec"], lambda: format(x, ".2f"))
    else:
        assert format(x, ".2f") == case["format_spec"]["value"]


@pytest.mark.x64_off
def test_a_format_spec_on_a_traced_array_raises_as_jax():
    seen = {}

    def f(x):
        seen["str"], seen["plain"] = str(x), f"{x}"
        raises_as(G["traced_spec"], lambda: f"{x:.3e}")
        return x

    quabla.jit(f)(1.0)
    assert seen["str"] == seen["plain"] and "float32" in seen["str"]


def test_a_training_loop_logs_with_format_specs():
    # The pattern that crashed three of the ten ported programs.
    loss = qnp.mean((qnp.arange(4.0) - 1.5) ** 2)
    line = f"step {qnp.asarray(3):4d} loss {loss:.3e} ok={bool(loss < 2)}"
    assert line == "step    3 loss 1.250e+00 ok=True"


def _f(x, n, *, scale=1.0):
    return x * n * scale


def test_jit_takes_jax_keywords():
    g = G["jit"]
    raises_as(g["unknown_keyword"], lambda: quabla.jit(_f, foo=1))
    raises_as(g["device_and_backend"], lambda: quabla.jit(_f, device="cpu", backend="cpu"))
    assert float(quabla.jit(_f, static_argnames="n")(2.0, 3)) == g["static_argnames_positional"]
    assert float(quabla.jit(_f, static_argnames="n")(2.0, n=3)) == g["static_argnames_keyword"]
    assert float(quabla.jit(_f, static_argnums=1)(2.0, n=4)) == g["static_argnums_keyword"]
    assert float(quabla.jit(_f, static_argnames=("n", "scale"))(2.0, 3, scale=2.0)) == \
        g["static_kwonly"]
    assert float(quabla.jit(_f, backend="cpu", inline=True, keep_unused=True)(1.0, 2.0)) == \
        g["backend_inline_keep_unused"]
    raises_as(g["unhashable_static"],
              lambda: quabla.jit(_f, static_argnames="n")(1.0, n=[3]))
    donated = quabla.jit(lambda p, q: p + q, donate_argnames="q")
    assert donated(qnp.ones(2), q=qnp.ones(2)).tolist() == g["donate_argnames"]


def test_static_arguments_by_name_are_python_values_at_trace_time():
    traces = []

    def branchy(x, n):
        traces.append(n)
        return x if n > 2 else -x

    jf = quabla.jit(branchy, static_argnames="n")
    assert float(jf(1.0, n=3)) == 1.0
    assert float(jf(1.0, 3)) == 1.0
    assert float(jf(1.0, n=1)) == -1.0
    # One trace per static value and way of passing it (JAX keys its cache the same way).
    assert traces == [3, 3, 1]


def test_donated_argument_names_mark_their_leaves():
    jf = quabla.jit(lambda p, q: p["w"] + q, donate_argnames="p")
    (_, _), _, donate = jf._entry((), {"q": qnp.ones(2), "p": {"w": qnp.ones(2)}})
    # Keyword leaves come by sorted name: p's one leaf, then q's.
    assert donate == [True, False]


def test_pytree_key_paths_and_prefix_maps_as_jax():
    g = G["pytree"]
    point = collections.namedtuple("Point", ["w", "b"])
    tree = {"a": [1, (2, None)], "b": point(3, 4)}
    with_path, treedef = tu.tree_flatten_with_path(tree)
    assert [tu.keystr(p) for p, _ in with_path] == g["keystr"]
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in with_path] == \
        g["keystr_simple"]
    assert [leaf for _, leaf in with_path] == g["leaves"]
    assert treedef == tu.tree_structure(tree)
    assert repr(tu.tree_map(lambda x, y: (x, y), {"a": 1, "b": 2},
                            {"a": [1, 2], "b": (3,)})) == g["prefix_map"]
    assert repr(tu.tree_map(lambda x, y: x + y, [1, None], [2, None])) == g["none_is_empty"]
    assert repr(tu.tree_map_with_path(lambda p, x: tu.keystr(p), {"a": [1, 2]})) == \
        g["map_with_path"]
    raises_as(g["mismatch_keys"], lambda: tu.tree_map(lambda x, y: x, {"a": 1}, {"b": 1}))
    raises_as(g["mismatch_length"], lambda: tu.tree_map(lambda x, y: x, [1, 2], [1]))
    raises_as(g["mismatch_none"], lambda: tu.tree_map(lambda x, y: x, [1, None], [2, 3]))
    part = tu.Partial(lambda a, b, c=0: a + b + c, 1, c=2)
    assert tu.tree_leaves(part) == g["partial_leaves"]
    assert part(3) == g["partial_call"]


def test_a_partial_crosses_jit_with_its_arrays_traced():
    scale = tu.Partial(lambda a, x: a * x, qnp.asarray(2.0))
    out = quabla.jit(lambda f, x: f(x))(scale, qnp.asarray(3.0))
    assert float(out) == 6.0
    # The bound array is a leaf, so grad reaches it.
    g = quabla.grad(lambda f: f(qnp.asarray(3.0)))(scale)
    assert float(g.args[0]) == 3.0


def test_register_pytree_node_class_and_dataclass_paths():
    @tu.register_pytree_node_class
    class Box:
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi

        def tree_flatten(self):
            return (self.lo, self.hi), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    b = tu.tree_map(lambda v: v * 2, Box(1, 2))
    assert (b.lo, b.hi) == (2, 4)
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path({"box": Box(1, 2)})[0]]
    assert paths == ["['box'][<flat index 0>]", "['box'][<flat index 1>]"]

    import dataclasses

    @tu.register_dataclass
    @dataclasses.dataclass
    class Params:
        w: object
        b: object

    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path([Params(1, 2)])[0]]
    assert paths == ["[0].w", "[0].b"]



@pytest.mark.parametrize("name", sorted(G["errors"]))
def test_exception_types_match_jax(name):
    # Item 7: the same calls raise the same exception classes as in JAX (the messages are
    # Quabla's own).
    case = G["errors"][name]
    raises_as(case, lambda: eval(case["code"], {"xp": qnp, "lib": quabla}))


def _index_env():
    return {"xp": qnp, "x": qnp.arange(5.0, dtype=qnp.float32),
            "m": qnp.arange(12.0, dtype=qnp.float32).reshape(3, 4)}


@pytest.mark.parametrize("name", sorted(G["index"]))
def test_index_modes_as_jax(name):
    # Item 5: reads clamp (or fill), updates at out-of-range indices are dropped by default
    # (or clamped with mode="clip"), negative indices count from the end. The goldens were
    # recorded with x64 on, so integer results compare as int64 and default float arrays as
    # float64: the values must be equal exactly after the cast.
    case = G["index"][name]
    if "raises" in case:
        raises_as(case, lambda: eval(case["code"], _index_env()))
        return
    want = dec(case["value"])
    got = np.asarray(eval(case["code"], _index_env()))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.astype(want.dtype), want)


def test_dropped_updates_under_jit_and_grad():
    x = qnp.arange(5.0)
    bumped = quabla.jit(lambda x, i: x.at[i].add(1.0))(x, qnp.array([1, 9]))
    assert bumped.tolist() == [0.0, 2.0, 2.0, 3.0, 4.0]
    # The set elements get no gradient, the dropped index takes nothing.
    g = quabla.grad(lambda x: x.at[qnp.array([0, 9, 2])].set(5.0).sum())(x)
    assert g.tolist() == [0.0, 1.0, 0.0, 1.0, 1.0]
    # A filled read contributes nothing where it read the fill.
    g = quabla.grad(lambda x: x.at[qnp.array([0, 9])].get(mode="fill", fill_value=0.0).sum())(x)
    assert g.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]


def _f64(v):
    return qnp.asarray(v, dtype=qnp.float64)


def test_custom_rules_run_jax_programs_unchanged():
    # Item 2: JAX's documented fixed point (its rules call the function itself, with a
    # function as a nondiff argument), defjvps, and a custom_vjp over dicts and tuples.
    g = G["custom_rules"]
    newton_sqrt, sin_times, scaled_loss = custom_rule_programs(quabla, qnp)
    pts = [2.0, 9.0, 0.25]
    assert_close([float(newton_sqrt(_f64(a))) for a in pts], g["sqrt"], rtol=1e-12)
    assert_close([float(quabla.grad(newton_sqrt)(_f64(a))) for a in pts], g["sqrt_grad"],
                 rtol=1e-9)
    jg = quabla.jit(quabla.grad(newton_sqrt))
    assert_close([float(jg(_f64(a))) for a in pts], g["sqrt_grad_jit"], rtol=1e-9)
    gx, gy = quabla.grad(sin_times, argnums=(0, 1))(_f64(2.0), _f64(3.0))
    assert_close([float(gx), float(gy)], g["defjvps_grad"], rtol=1e-12)
    _, t = quabla.jvp(sin_times, (_f64(2.0), _f64(3.0)), (_f64(1.0), _f64(0.5)))
    assert_close(float(t), g["defjvps_jvp"], rtol=1e-12)
    grads = quabla.grad(scaled_loss, argnums=(0, 1, 2))(_f64(0.5), _f64(1.5), _f64(-2.0))
    assert_close([float(v) for v in grads], g["pytree_grad"], rtol=1e-12)


def test_custom_jvp_rules_get_nondiff_arguments_first():
    # JAX's order: rule(*nondiff_args, primals, tangents), primals without the nondiff ones.
    loss = nondiff_jvp_program(quabla, qnp)
    x, y = _f64(1.5), _f64(-0.5)
    grads = quabla.grad(loss, argnums=(0, 1))(x, y)
    want = G["custom_rules"]["nondiff_jvp"]
    assert_close([float(v) for v in grads] + [float(loss(x, y))], want, rtol=1e-14)
    jitted = quabla.jit(quabla.grad(loss, argnums=(0, 1)))(x, y)
    assert_close([float(v) for v in jitted], want[:2], rtol=1e-14)


def test_custom_jvp_nondiff_arrays_may_be_traced():
    # A traced array at a nondiff position (a key, a scale) under jit, grad and vmap: it is
    # an input of the op, and differentiating with respect to it gives zero, as JAX's
    # (jax.jit(jax.grad(lambda x, s: g(x, s), argnums=(0, 1)))(2.0, 3.0) == (3.0, 0.0)).
    import functools

    @functools.partial(quabla.custom_jvp, nondiff_argnums=(1,))
    def g(x, s):
        return x * s

    @g.defjvp
    def g_jvp(s, primals, tangents):
        return g(primals[0], s), tangents[0] * s

    both = quabla.jit(quabla.grad(lambda x, s: g(x, s), argnums=(0, 1)))(_f64(2.0), _f64(3.0))
    assert [float(v) for v in both] == [3.0, 0.0]

    @functools.partial(quabla.custom_jvp, nondiff_argnums=(0,))
    def noisy(key, a):
        return a * quabla.random.uniform(key, a.shape)

    @noisy.defjvp
    def noisy_jvp(key, primals, tangents):
        (a,), (da,) = primals, tangents
        return noisy(key, a), 2.0 * da * quabla.random.uniform(key, a.shape)

    key = quabla.random.PRNGKey(0)
    u = np.asarray(quabla.random.uniform(key, (3,)))
    loss = lambda k, a: qnp.sum(noisy(k, a))  # noqa: E731
    assert_close(quabla.jit(quabla.grad(loss, argnums=1))(key, qnp.ones(3)), 2 * u)
    keys = quabla.random.split(key, 2)
    per_key = quabla.vmap(quabla.grad(loss, argnums=1))(keys, qnp.ones((2, 3)))
    assert_close(per_key[1], 2 * np.asarray(quabla.random.uniform(keys[1], (3,))))


def test_a_plain_call_runs_only_the_function():
    calls = collections.Counter()

    @quabla.custom_vjp
    def f(x):
        calls["f"] += 1
        return qnp.sin(x)

    def f_fwd(x):
        calls["fwd"] += 1
        return f(x), qnp.cos(x)

    def f_bwd(c, g):
        calls["bwd"] += 1
        return (g * c,)

    f.defvjp(f_fwd, f_bwd)

    @quabla.custom_jvp
    def h(x):
        calls["h"] += 1
        return qnp.exp(x)

    @h.defjvp
    def h_jvp(p, t):
        calls["h_jvp"] += 1
        return h(p[0]), h(p[0]) * t[0]

    x = qnp.asarray(0.5)
    f(x), h(x)
    assert calls == {"f": 1, "h": 1}
    # Differentiation runs the rules (the function itself is traced for the primal).
    assert float(quabla.grad(f)(x)) == pytest.approx(math.cos(0.5), rel=1e-6)
    assert calls["fwd"] == 1 and calls["bwd"] == 1
    assert float(quabla.grad(h)(x)) == pytest.approx(math.exp(0.5), rel=1e-6)
    assert calls["h_jvp"] == 1


@pytest.mark.parametrize("shape", sorted(G["linalg"]["cases"]))
def test_solves_broadcast_as_jax(shape):
    # Item 6: numpy 2's solve and JAX's scipy solves against a[5, 3, 3].
    g = G["linalg"]
    case = g["cases"][shape]
    a, low, b = (qnp.asarray(dec(g["a"])), qnp.asarray(dec(g["low"])),
                 qnp.asarray(dec(case["b"])))
    c = quabla.linalg.cholesky(a)
    calls = {
        "solve": lambda: quabla.linalg.solve(a, b),
        "cho_solve": lambda: quabla.linalg.cho_solve((c, True), b),
        "solve_triangular": lambda: quabla.linalg.solve_triangular(low, b, lower=True),
    }
    for name, call in calls.items():
        want = case[name]
        if "raises" in want:
            raises_as(want, call)
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = call()
        # The stacked-vector reading JAX deprecates warns here too.
        stacked = shape == "5x3" and name != "solve"
        assert any(issubclass(w.category, FutureWarning) for w in caught) == stacked
        assert_close(got, dec(want["value"]), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", sorted(G["static_args"]))
def test_non_array_arguments_pass_through_as_jax(name):
    # Item 3: functions, strings and option dicts outside argnums pass through untouched.
    from programs import static_argument_program

    case = G["static_args"][name]
    call = static_argument_program(quabla, qnp)[name]
    if "raises" in case:
        raises_as(case, call)
    else:
        assert_close(call(), dec(case["value"]), rtol=1e-6)


def test_numbers_and_numpy_arrays_outside_argnums_reach_the_function_untouched(x64):
    # Item 3, recorded from JAX 0.10.2 with x64 on: a Python int stays an int (a dict key
    # here), a numpy array stays numpy's, and a Python float stays weakly typed, so a
    # float32 array times it is float32 (it was float64 when the float became an array);
    # numpy's float64 scalar is strongly typed and promotes, as in JAX.
    seen = []

    def f(x, n, table, w, s):
        seen.append((type(n), type(w), type(s)))
        return qnp.sum(x * s) * table[n] + float(w.sum())

    x = qnp.ones(3, dtype=qnp.float32)
    for transform in (quabla.grad, quabla.jacfwd, quabla.jacrev):
        g = transform(f)(x, 3, {3: 2.0}, np.ones(2), 0.5)
        assert_close(g, np.full(3, 1.0), rtol=0)
    assert set(seen) == {(int, np.ndarray, float)}
    value, _ = quabla.value_and_grad(lambda x, s: qnp.sum(x * s))(x, 2.0)
    assert value.dtype == qnp.float32
    assert quabla.jacfwd(lambda x, s: x * s)(x, 2.0).dtype == qnp.float32
    value, _ = quabla.value_and_grad(lambda x, s: qnp.sum(x * s))(x, np.float64(2.0))
    assert value.dtype == qnp.float64
    # Under jit the number is traced first (JAX's tracer too), and the result is the same.
    assert_close(quabla.jit(quabla.grad(lambda x, s: qnp.sum(x * s)))(x, 2.0), np.full(3, 2.0))


@pytest.mark.parametrize("name", sorted(G["python_control_flow"]))
def test_python_control_flow_on_primal_values_as_jax(name):
    # Item 3: outside jit, transformations see concrete primal values; under jit (and
    # vmap) control flow on them fails, with Quabla's ConcretizationTypeError where JAX
    # raises a subclass of its own (TracerBoolConversionError).
    from programs import python_control_flow_program

    case = G["python_control_flow"][name]
    call = python_control_flow_program(quabla, qnp)[name]
    if "raises" in case:
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value).__name__ in case["bases"], info.value
    else:
        assert_close(call(), dec(case["value"]), rtol=2e-6, atol=1e-7)


@pytest.fixture
def x64():
    # The suite's default (conftest.py); named so each test says which mode it relies on.
    assert quabla.config.jax_enable_x64 is True


@pytest.mark.parametrize("code", sorted(G["x64"]["dtypes"]))
def test_x64_default_dtypes_as_jax(x64, code):
    # Item 1: with jax_enable_x64 the default float is float64. Quabla's int32 stands for
    # JAX's default int (int64 with x64), so an int64 result is int32 here.
    want = G["x64"]["dtypes"][code].replace("int64", "int32")
    got = eval(code, {"xp": qnp, "lib": quabla, "i": qnp.arange(3)})
    assert str(got.dtype) == want


def test_x64_computes_in_float64_as_jax(x64):
    case = G["x64"]["value"]
    got = eval(case["code"], {"xp": qnp})
    assert got.dtype == np.float64
    assert_close(got, dec(case["value"]), rtol=1e-15)


def test_x64_is_off_by_default_and_switches_back(monkeypatch):
    from quabla._src import config as cfg
    for name in ("QUABLA_ENABLE_X64", "JAX_ENABLE_X64"):
        monkeypatch.delenv(name, raising=False)
    assert cfg.Config().read("jax_enable_x64") is False
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    assert cfg.Config().read("jax_enable_x64") is True
    quabla.config.update("jax_enable_x64", False)
    assert qnp.zeros(2).dtype == np.float32 and (qnp.arange(3) * 0.1).dtype == np.float32
    quabla.config.update("jax_enable_x64", True)
    assert qnp.zeros(2).dtype == np.float64
    with pytest.raises(AttributeError, match="jax_enable_x64"):
        quabla.config.update("jax_no_such_option", True)


def test_a_jitted_function_traces_again_when_x64_switches(x64):
    # JAX keys its traces on jax_enable_x64: `i + 0.1` of int32 `i` is float64 with it on,
    # float32 with it off, under one jit. Before, the first trace served both modes.
    f = quabla.jit(lambda i: i + 0.1)
    i = qnp.arange(3)
    assert f(i).dtype == np.float64
    with quabla.enable_x64(False):
        assert quabla.enable_x64.value is False
        assert f(i).dtype == np.float32 and qnp.zeros(2).dtype == np.float32
    assert quabla.enable_x64.value is True
    assert f(i).dtype == np.float64
    with quabla.enable_x64():  # no value: on, as JAX's boolean flags
        assert f(i).dtype == np.float64
    # The flag comes back even when the block raises.
    with pytest.raises(RuntimeError):
        with quabla.enable_x64(False):
            raise RuntimeError("inside")
    assert quabla.config.jax_enable_x64 is True


@pytest.mark.x64_off
@pytest.mark.parametrize("code", sorted(G["x64"]["off"]))
def test_x64_off_truncates_float64_as_jax(code):
    # Item 1, x64 off: float64 numpy input is float32 silently, an explicitly requested
    # float64 is float32 with JAX's warning (the same text, before JAX's link).
    want = G["x64"]["off"][code]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = eval(code, {"xp": qnp, "lib": quabla, "np": np})
    assert str(got.dtype) == want["dtype"]
    assert [str(w.message) for w in caught] == want["warnings"]


@pytest.mark.x64_off
def test_x64_off_demotes_parameters_odeint_then_accepts():
    # The case: float64 numpy parameters with float32 literals made odeint's strict
    # dtype check fail; with x64 off, as JAX, everything is float32.
    k = qnp.asarray(np.float64(0.5))
    ys = quabla.odeint(lambda y, t, k: -k * y, qnp.asarray(np.array([1.0])), qnp.asarray([0.0, 1.0]), k)
    assert ys.dtype == np.float32
    assert_close(np.asarray(ys)[-1], [np.exp(-0.5)], rtol=1e-5)


def test_rule_flags_jax_code_passes():
    # Item 2: optimize_remat only trades memory in JAX and is accepted (symbolic_zeros has
    # its own tests, test_symbolic_zeros.py).
    @quabla.custom_vjp
    def f(x):
        return qnp.sin(x)

    f.defvjp(lambda x: (f(x), qnp.cos(x)), lambda c, g: (g * c,), symbolic_zeros=False,
             optimize_remat=True)
    assert_close(quabla.grad(f)(_f64(0.3)), math.cos(0.3), rtol=1e-15)

    @quabla.custom_jvp
    def h(x):
        return qnp.exp(x)

    h.defjvp(lambda p, t: (h(p[0]), h(p[0]) * t[0]), symbolic_zeros=False)
    assert_close(quabla.grad(h)(_f64(0.5)), math.exp(0.5), rtol=1e-15)


def test_repeated_indices_combine_in_order_as_jax():
    """``x.at[i].set/mul/min/max`` with an index repeated: JAX 0.10.2 on CPU (recorded by hand)
    lets the last ``set`` win and multiplies, takes the min or the max of every update; an
    average of the updates (the old behaviour) matched none of these."""
    x = qnp.arange(6.0)
    idx = qnp.array([4, 0, 4, 4, 9])
    assert_close(x.at[idx].set(qnp.array([10.0, 11.0, 12.0, 13.0, 14.0])),
                 [11, 1, 2, 3, 13, 5], rtol=0)
    assert_close(x.at[idx].max(qnp.array([10.0, -11.0, 12.0, 3.0, 14.0])),
                 [0, 1, 2, 3, 12, 5], rtol=0)
    z = qnp.zeros(3)
    two = qnp.array([1, 1])
    assert_close(z.at[two].min(qnp.array([-1.0, -5.0])), [0, -5, 0], rtol=0)
    assert_close(qnp.ones(3).at[two].mul(qnp.array([2.0, 3.0])), [1, 6, 1], rtol=0)
    assert np.asarray(qnp.arange(6).at[qnp.array([2, 2])].mul(3)).tolist() == [0, 1, 18, 3, 4, 5]
    # The value placed is the update itself: -0.0 keeps its sign.
    assert np.signbit(np.asarray(z.at[1].set(-0.0))[1])
    # JAX's gradient of a repeated max goes to the winning update; Quabla's product rule
    # for a repeated mul (JAX refuses it: "only implemented if unique_indices=True").
    g = quabla.grad(lambda v: qnp.zeros(4).at[qnp.array([1, 1, 2])].max(v).sum())(
        qnp.array([1.0, 5.0, 2.0]))
    assert_close(g, [0, 1, 1], rtol=0)
    g = quabla.grad(lambda v: qnp.ones(4).at[qnp.array([1, 1, 2])].mul(v).sum())(
        qnp.array([2.0, 5.0, 3.0]))
    assert_close(g, [5, 2, 1], rtol=0)
    # The same under jit and vmap.
    v = qnp.array([[1.0, 5.0, 2.0], [7.0, 1.0, -1.0]])
    f = lambda u: qnp.zeros(4).at[qnp.array([1, 1, 2])].max(u)  # noqa: E731
    assert_close(quabla.vmap(f)(v), [[0, 5, 2, 0], [0, 7, 0, 0]], rtol=0)
    assert_close(quabla.jit(f)(v[0]), [0, 5, 2, 0], rtol=0)


def test_custom_gradient_as_jax():
    # jax.custom_gradient's documented example, then two arguments, jit and vmap.
    @quabla.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)

    assert float(quabla.grad(f)(_f64(3.0))) == 3.0 and float(f(_f64(3.0))) == 9.0

    @quabla.custom_gradient
    def clip_gradient(x, lo):
        return x, lambda g: (qnp.clip(g, lo, -lo), qnp.zeros_like(lo))

    loss = lambda x: clip_gradient(x * 10.0, _f64(-1.0))  # noqa: E731
    assert float(quabla.grad(loss)(_f64(0.5))) == 10.0  # the cotangent 1 is not clipped
    scaled = lambda x: 5.0 * clip_gradient(x, _f64(-1.0))  # noqa: E731
    assert float(quabla.jit(quabla.grad(scaled))(_f64(0.5))) == 1.0  # 5 clipped to 1
    per = quabla.vmap(quabla.grad(f))(qnp.asarray([1.0, 2.0]))
    assert per.tolist() == [1.0, 2.0]

    @quabla.custom_gradient
    def bare(x):
        return qnp.sin(x), lambda g: 2.0 * g  # one argument: a bare cotangent
    assert float(quabla.grad(bare)(_f64(0.3))) == 2.0
