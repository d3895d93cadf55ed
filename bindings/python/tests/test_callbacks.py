"""``pure_callback``, ``debug.callback`` and ``debug.print`` against JAX 0.10.2's behaviour,
recorded by hand: prints happen when the program runs (each run, in loop order), once per
element under ``vmap``, on primal values under ``grad``; ``pure_callback`` has no
derivative and needs a ``vmap_method`` under ``vmap``; a failing callback's exception
reaches the caller."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax
from conftest import assert_close


def sds(x):
    return quabla.ShapeDtypeStruct(x.shape, x.dtype)


def test_pure_callback_eager_jit_pytrees_and_kwargs():
    x = qnp.arange(3.0)
    assert_close(quabla.pure_callback(np.sin, sds(x), x), np.sin(np.arange(3.0)), rtol=0)
    f = quabla.jit(lambda v: quabla.pure_callback(np.sin, sds(v), v) * 2)
    for _ in range(2):
        assert_close(f(x), 2 * np.sin(np.arange(3.0)), rtol=1e-15)

    # JAX: {'a': [0, 2, 4], 'b': (3,)}
    def g(v):
        return quabla.pure_callback(lambda u, s: {"a": u * s, "b": (u.sum(),)},
                                    {"a": sds(v), "b": (quabla.ShapeDtypeStruct((), v.dtype),)},
                                    v, s=2.0)

    out = quabla.jit(g)(x)
    assert_close(out["a"], [0, 2, 4], rtol=0)
    assert_close(out["b"][0], 3.0, rtol=0)
    # The callback sees numpy values: arrays, and numpy scalars for 0-d ones.
    seen = []
    quabla.jit(lambda v: quabla.pure_callback(
        lambda a, b: (seen.append((type(a), type(b))), a)[1], sds(v), v, v.sum()))(x)
    assert seen == [(np.ndarray, np.float64)]


def test_debug_print_runs_with_the_program_in_order(capsys):
    f = quabla.jit(lambda x: (quabla.debug.print("x={x}", x=x), qnp.sin(x))[1])
    f(1.0)
    f(2.0)
    assert capsys.readouterr().out == "x=1.0\nx=2.0\n"

    def body(i, c):
        quabla.debug.print("i={} c={}", i, c)
        return c + 1

    lax.fori_loop(0, 3, body, 0.0)
    quabla.jit(lambda c: lax.fori_loop(0, 3, body, c))(0.0)
    # JAX's output, twice (eagerly, then jitted).
    assert capsys.readouterr().out == "i=0 c=0.0\ni=1 c=1.0\ni=2 c=2.0\n" * 2
    # Without arguments too: printed on every trip of the jitted loop, not once when traced.
    quabla.jit(lambda c: lax.fori_loop(
        0, 3, lambda i, v: (quabla.debug.print("step"), v + 1)[1], c))(0.0)
    quabla.debug.print("eager")
    assert capsys.readouterr().out == "step\n" * 3 + "eager\n"
    # Formats as str.format does on the values; 0-d values take format specs.
    quabla.jit(lambda x: quabla.debug.print("{} and {y:.2f}", x, y=x[1] + 1.14159))(
        qnp.arange(2.0))
    assert capsys.readouterr().out == "[0. 1.] and 2.14\n"


def test_debug_print_under_vmap_and_grad_as_jax(capsys):
    def f(x):
        quabla.debug.print("x={x}", x=x)
        return qnp.sin(x)

    quabla.vmap(f)(qnp.arange(3.0))
    assert capsys.readouterr().out == "x=0.0\nx=1.0\nx=2.0\n"
    quabla.jit(quabla.vmap(f))(qnp.arange(3.0))
    assert capsys.readouterr().out == "x=0.0\nx=1.0\nx=2.0\n"
    g = quabla.grad(f)(1.0)
    assert_close(g, np.cos(1.0), rtol=1e-6)
    assert capsys.readouterr().out == "x=1.0\n"
    quabla.jit(quabla.grad(f))(1.0)
    assert capsys.readouterr().out == "x=1.0\n"
    seen = []
    quabla.jit(lambda x: (quabla.debug.callback(lambda v, k: seen.append((v, k)), x, k=3),
                          x * 2)[1])(qnp.array([1.0, 2.0]))
    assert len(seen) == 1 and seen[0][1] == 3
    assert_close(seen[0][0], [1.0, 2.0], rtol=0)


def test_pure_callback_vmap_methods_as_jax():
    shapes = []

    def h(method):
        def f(x):
            return quabla.pure_callback(lambda v: (shapes.append(v.shape), np.sin(v))[1],
                                        sds(x), x, vmap_method=method)
        return f

    x = qnp.ones((2, 3))
    # JAX: two calls of shape (3,) when sequential, one of (2, 3) with expand_dims.
    assert_close(quabla.vmap(h("sequential"))(x), np.sin(np.ones((2, 3))), rtol=1e-6)
    assert shapes == [(3,), (3,)]
    shapes.clear()
    assert_close(quabla.vmap(h("expand_dims"))(x), np.sin(np.ones((2, 3))), rtol=1e-6)
    assert shapes == [(2, 3)]
    shapes.clear()
    # An unbatched argument gets a leading size-1 axis with expand_dims, the full batch
    # axis with broadcast_all.
    def two(method):
        return lambda a: quabla.pure_callback(lambda u, w: (shapes.append((u.shape, w.shape)),
                                                            u)[1],
                                              sds(a), a, qnp.float32(2.0), vmap_method=method)

    quabla.vmap(two("expand_dims"))(x)
    quabla.vmap(two("broadcast_all"))(x)
    assert shapes == [((2, 3), (1,)), ((2, 3), (2,))]
    with pytest.raises(ValueError, match="vmap_method"):
        quabla.vmap(h(None))(x)
    with pytest.raises(ValueError, match="vmap_method must be"):
        quabla.vmap(h("scatter"))(x)


def test_pure_callback_derivatives_as_jax():
    def f(x):
        return quabla.pure_callback(np.sin, sds(x), x)

    # JAX raises ValueError too ("Pure callbacks do not support JVP").
    with pytest.raises(ValueError, match="no derivative"):
        quabla.grad(lambda x: f(x).sum())(qnp.arange(3.0))

    # JAX's documented pattern: a custom_jvp around the callback.
    @quabla.custom_jvp
    def sin_host(x):
        return f(x)

    @sin_host.defjvp
    def sin_host_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return sin_host(x), quabla.pure_callback(np.cos, sds(x), x) * t

    x = qnp.arange(3.0)
    assert_close(quabla.grad(lambda v: sin_host(v).sum())(x), np.cos(np.arange(3.0)),
                 rtol=1e-6)
    assert_close(quabla.jit(quabla.grad(lambda v: sin_host(v).sum()))(x),
                 np.cos(np.arange(3.0)), rtol=1e-6)


def test_callback_failures_reach_the_caller():
    def boom(v):
        raise ZeroDivisionError("division by zero in the callback")

    x = qnp.arange(3.0)
    # The callback's own exception, raised from the jitted call (JAX wraps it in a
    # JaxRuntimeError).
    with pytest.raises(ZeroDivisionError, match="division by zero in the callback"):
        quabla.jit(lambda v: quabla.pure_callback(boom, sds(v), v))(x)
    with pytest.raises(ZeroDivisionError):
        quabla.pure_callback(boom, sds(x), x)
    with pytest.raises(ValueError, match="shape"):
        quabla.jit(lambda v: quabla.pure_callback(lambda u: np.zeros(4), sds(v), v))(x)
    with pytest.raises(TypeError, match="ShapeDtypeStruct"):
        quabla.pure_callback(np.sin, [3], x)
    with pytest.raises(TypeError, match="format must be a str"):
        quabla.debug.print(3, x)
    # A callback that fails inside a loop stops it: one call, then the error.
    calls = []

    def once(v):
        calls.append(1)
        raise ValueError("stop")

    with pytest.raises(ValueError, match="stop"):
        quabla.jit(lambda v: lax.fori_loop(
            0, 100, lambda i, c: quabla.pure_callback(once, sds(c), c), v))(x)
    assert len(calls) == 1


def test_debug_log_goes_through_logging(caplog):
    import logging

    def body(i, c):
        quabla.debug.log("step {} carry {c:.1f}", i, c=c)
        return c * 2.0

    with caplog.at_level(logging.INFO, logger="quabla.debug"):
        quabla.jit(lambda c: quabla.lax.fori_loop(0, 3, body, c))(1.0)
    assert [r.getMessage() for r in caplog.records if r.name == "quabla.debug"] == [
        "step 0 carry 1.0", "step 1 carry 2.0", "step 2 carry 4.0"]


def test_debug_breakpoint_opens_a_prompt_over_the_frames_with_values(monkeypatch, capsys):
    """jax.debug.breakpoint's CLI: in a jitted function, when it runs, the traced locals are
    numpy values; up/down walk the Python frames that traced it; continue runs on."""
    import io

    def inner(x):
        y = x * 2.0
        quabla.debug.breakpoint()
        return y + 1.0

    def outer(v):
        shift = 7  # a plain Python value, read from the prompt in this frame
        return inner(v + (shift - 7))

    commands = "p y\npp x.tolist()\nup\np shift\nwhere\ndown\nnope\nc\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(commands))
    out = quabla.jit(outer)(qnp.array([1.0, 2.0]))
    assert np.asarray(out).tolist() == [3.0, 5.0]
    text = capsys.readouterr().out
    assert "Entering qdb:" in text
    assert "array([2., 4.]" in text, text  # y, computed by the program
    assert "[1.0, 2.0]" in text
    assert "(qdb) 7\n" in text  # `shift` in the caller's frame
    assert "in outer" in text and "> " in text
    assert "unknown command 'nope'" in text
    # Not reached while tracing; once per run.
    monkeypatch.setattr("sys.stdin", io.StringIO("c\n"))
    quabla.jit(outer)(qnp.array([0.0, 0.0]))
    assert capsys.readouterr().out.count("Entering qdb:") == 1
    with pytest.raises(ValueError, match="backend"):
        quabla.debug.breakpoint(backend="web")
