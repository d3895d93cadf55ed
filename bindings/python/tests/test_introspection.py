"""quabla.test_util.check_grads (JAX's algorithm: JVPs against central differences, VJPs
against JVPs by inner products, to any order) and make_jaxpr."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla.test_util import check_grads


def test_check_grads_passes_correct_derivatives_to_second_order():
    x, y = qnp.array([0.5, -1.2, 2.0]), qnp.array(1.5)
    check_grads(lambda a, b: qnp.sin(a) * b + a ** 3, (x, y), order=2)
    check_grads(lambda p: {"s": qnp.sum(p["w"] ** 2), "t": qnp.tanh(p["b"])},
                ({"w": x, "b": y},), order=2, modes=("rev",))
    check_grads(qnp.exp, (x,), order=3, modes=("fwd",))


def _wrong_rule():
    @quabla.custom_jvp
    def f(x):
        return qnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return qnp.sin(x), 1.1 * qnp.cos(x) * t  # 10% off

    return f


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads_catches_a_wrong_rule(modes):
    with pytest.raises(AssertionError, match="JVP|cotangent"):
        check_grads(_wrong_rule(), (qnp.array([0.3, 1.0]),), order=1, modes=modes)


def test_check_grads_catches_a_wrong_second_derivative():
    @quabla.custom_jvp
    def f(x):
        return x ** 3

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # Right first derivative at these points only through a stop_gradient: its own
        # derivative (the second) is then zero, which order=2 must catch.
        return x ** 3, quabla.stop_gradient(3 * x ** 2) * t

    x = (qnp.array([0.7, -0.4]),)
    check_grads(f, x, order=1)
    with pytest.raises(AssertionError):
        check_grads(f, x, order=2)


def test_check_grads_checks_its_arguments():
    with pytest.raises(ValueError, match="order"):
        check_grads(qnp.sin, (qnp.array(1.0),), order=0)
    with pytest.raises(ValueError, match="modes"):
        check_grads(qnp.sin, (qnp.array(1.0),), order=1, modes=("sideways",))


def test_make_jaxpr_shows_the_traced_program():
    j = quabla.make_jaxpr(lambda x, y: qnp.sin(x) * y)(qnp.ones(3), 2.0)
    text = str(j)
    assert text.startswith("program(") and "sin(" in text and "mul(" in text
    assert str(j.jaxpr) == text
    # Static arguments are Python values in the program.
    k = quabla.make_jaxpr(lambda x, n: x ** n, static_argnums=1)(qnp.ones(2), 3)
    assert "mul(" in str(k)
    with pytest.raises(NotImplementedError, match="return_shape"):
        quabla.make_jaxpr(qnp.sin, return_shape=True)


def test_eval_shape_traces_without_values():
    S = quabla.ShapeDtypeStruct
    big = S((100000, 100000), np.float32)  # 40 GB: never allocated
    assert quabla.eval_shape(lambda x: x.T @ x, big) == S((100000, 100000), np.float32)
    out = quabla.eval_shape(
        lambda p, x: {"y": qnp.tanh(x @ p["w"]).sum(0), "n": qnp.argmax(x, axis=1)},
        {"w": S((3, 5), np.float32)}, np.ones((7, 3), np.float32))
    assert out == {"y": S((5,), np.float32), "n": S((7,), np.int32)}
    assert quabla.eval_shape(quabla.grad(lambda x: qnp.sum(x ** 2)), S((4,), np.float64)) == \
        S((4,), np.float64)
    assert quabla.eval_shape(lambda x: (x, x > 0), 3) == (S((), np.int32), S((), np.bool_))
    s = S((2, 3), np.float32)
    assert (s.ndim, s.size, repr(s)) == (2, 6, "ShapeDtypeStruct(shape=(2, 3), dtype=float32)")
    with pytest.raises(TypeError):
        quabla.eval_shape(lambda x: qnp.ones((int(x),)), S((), np.int32))
