"""lax.custom_linear_solve and lax.custom_root: values and implicit derivatives against
the direct solve's derivatives, analytic ones and central differences, under jit, vmap
and both modes, and the errors JAX users meet."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax


def _operator(theta):
    """A non-symmetric 2x2 operator and a right-hand side, both depending on theta."""
    a = qnp.stack([qnp.stack([theta, qnp.asarray(1.0, dtype=theta.dtype)]),
                   qnp.stack([qnp.asarray(0.5, dtype=theta.dtype), 2.0 * theta])])
    b = qnp.stack([qnp.asarray(1.0, dtype=theta.dtype), theta * theta])
    return a, b


def _materializing_solve(mv, rhs):
    """An operator-generic solver: the matrix from matvec's columns, then a dense solve."""
    n = rhs.shape[0]
    m = qnp.stack([mv(e) for e in qnp.eye(n, dtype=rhs.dtype)], axis=1)
    return qnp.linalg.solve(m, rhs)


def _jacobi(mv, rhs):
    """Jacobi iterations in a while loop (whose iterations reverse mode cannot enter): the
    diagonal from matvec, iterated to a fixed point."""
    n = rhs.shape[0]
    diag = qnp.stack([mv(e)[i] for i, e in enumerate(qnp.eye(n, dtype=rhs.dtype))])

    def body(state):
        x, k = state
        return x + (rhs - mv(x)) / diag, k + 1

    x, _ = lax.while_loop(lambda s: s[1] < 200, body, (qnp.zeros_like(rhs), 0))
    return x


def _loss(solve, **kw):
    w = qnp.array([0.3, -1.7], dtype=qnp.float64)

    def loss(theta):
        a, b = _operator(theta)
        x = lax.custom_linear_solve(lambda v: a @ v, b, solve, **kw)
        return qnp.sum(w * x)
    return loss


def _direct_loss(theta):
    a, b = _operator(theta)
    return qnp.sum(qnp.array([0.3, -1.7], dtype=qnp.float64) * qnp.linalg.solve(a, b))


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("solve", [_materializing_solve, _jacobi])
def test_linear_solve_gradients_are_the_direct_solves(solve):
    theta = qnp.asarray(1.3, dtype=qnp.float64)
    want = float(quabla.grad(_direct_loss)(theta))
    loss = _loss(solve)
    for g in (quabla.grad(loss), quabla.jit(quabla.grad(loss)),
              quabla.jacfwd(loss), quabla.jit(quabla.jacfwd(loss))):
        assert float(g(theta)) == pytest.approx(want, rel=1e-9, abs=1e-12)
    fd = _central(lambda t: float(_direct_loss(qnp.asarray(t, dtype=qnp.float64))), 1.3)
    assert want == pytest.approx(fd, rel=1e-7)
    assert float(loss(theta)) == pytest.approx(float(_direct_loss(theta)), rel=1e-12)


def test_linear_solve_second_derivative():
    theta = qnp.asarray(0.9, dtype=qnp.float64)
    want = float(quabla.grad(quabla.grad(_direct_loss))(theta))
    got = float(quabla.grad(quabla.grad(_loss(_materializing_solve)))(theta))
    assert got == pytest.approx(want, rel=1e-8)
    got_fwd = float(quabla.jacfwd(quabla.grad(_loss(_materializing_solve)))(theta))
    assert got_fwd == pytest.approx(want, rel=1e-8)


def test_linear_solve_with_transpose_solve_and_symmetric():
    theta = qnp.asarray(1.3, dtype=qnp.float64)
    want = float(quabla.grad(_direct_loss)(theta))
    # A solver that never calls matvec (it closes over the matrix itself) needs
    # transpose_solve for reverse mode, which solves with the transposed matrix.

    def loss(theta):
        a, b = _operator(theta)
        return qnp.sum(qnp.array([0.3, -1.7], dtype=qnp.float64) * lax.custom_linear_solve(
            lambda v: a @ v, b, lambda mv, r: qnp.linalg.solve(a, r),
            transpose_solve=lambda vm, r: qnp.linalg.solve(a.T, r)))
    assert float(quabla.grad(loss)(theta)) == pytest.approx(want, rel=1e-12)

    # Symmetric: an SPD operator, the same solver both ways.
    def spd_loss(theta):
        a = qnp.array([[4.0, 1.0], [1.0, 3.0]], dtype=qnp.float64) * theta
        b = qnp.array([1.0, 2.0], dtype=qnp.float64) * theta ** 3
        x = lax.custom_linear_solve(lambda v: a @ v, b, _materializing_solve, symmetric=True)
        return qnp.sum(x * x)

    def spd_direct(theta):
        a = qnp.array([[4.0, 1.0], [1.0, 3.0]], dtype=qnp.float64) * theta
        x = qnp.linalg.solve(a, qnp.array([1.0, 2.0], dtype=qnp.float64) * theta ** 3)
        return qnp.sum(x * x)
    assert float(quabla.grad(spd_loss)(theta)) == pytest.approx(
        float(quabla.grad(spd_direct)(theta)), rel=1e-12)


def test_a_solver_ignoring_its_operator_needs_transpose_solve():
    def loss(theta):
        a, b = _operator(theta)
        return qnp.sum(lax.custom_linear_solve(lambda v: a @ v, b,
                                               lambda mv, r: qnp.linalg.solve(a, r)))
    with pytest.raises(TypeError, match="transpose_solve is required"):
        quabla.grad(loss)(qnp.asarray(1.3, dtype=qnp.float64))


def test_linear_solve_under_vmap_and_pytrees():
    a = qnp.array([[3.0, 1.0], [0.0, 2.0]], dtype=qnp.float64)
    bs = qnp.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], dtype=qnp.float64)
    xs = quabla.vmap(lambda b: lax.custom_linear_solve(lambda v: a @ v, b,
                                                       _materializing_solve))(bs)
    np.testing.assert_allclose(np.asarray(xs), np.linalg.solve(np.asarray(a), np.asarray(bs).T).T,
                               rtol=1e-13)
    # A pair of vectors: a block-diagonal operator over the tuple.
    d = qnp.array([2.0, 5.0], dtype=qnp.float64)

    def mv(v):
        return (v[0] * d, 4.0 * v[1])

    def solve(mv_, r):
        return (r[0] / d, r[1] / 4.0)
    x = lax.custom_linear_solve(mv, (qnp.array([2.0, 5.0], dtype=qnp.float64),
                                     qnp.array([8.0], dtype=qnp.float64)), solve, symmetric=True)
    assert [float(v) for v in x[0]] == [1.0, 1.0] and float(x[1][0]) == 2.0


def test_linear_solve_errors():
    b = qnp.array([1.0, 2.0])
    with pytest.raises(TypeError, match="matvec must return a pytree shaped like"):
        lax.custom_linear_solve(lambda v: (v, v), b, lambda mv, r: r, symmetric=True)
    with pytest.raises(TypeError, match="floating point"):
        lax.custom_linear_solve(lambda v: v, qnp.array([1, 2]), lambda mv, r: r)
    with pytest.raises(TypeError, match=r"must return \(solution, aux\)"):
        lax.custom_linear_solve(lambda v: v, b, lambda mv, r: r, has_aux=True)


def test_linear_solve_has_aux_as_jax():
    """JAX 0.10.2 (x64): f(2) = (8, {res: [0, 0], sq: [1, 4]}), grad -1.5 (aux is not
    differentiated: x.sum() = 6 / a alone)."""
    def f(a):
        def solve(mv, b):
            x = b / a
            return x, {"res": mv(x) - b, "sq": x * x}
        x, aux = lax.custom_linear_solve(lambda v: a * v, qnp.array([2.0, 4.0]), solve,
                                         symmetric=True, has_aux=True)
        return x.sum() + aux["sq"].sum(), aux
    value, aux = f(qnp.asarray(2.0))
    assert float(value) == 8.0
    assert aux["res"].tolist() == [0.0, 0.0] and aux["sq"].tolist() == [1.0, 4.0]
    assert float(quabla.grad(lambda a: f(a)[0])(2.0)) == -1.5
    assert float(quabla.jit(quabla.grad(lambda a: f(a)[0]))(2.0)) == -1.5
    # transpose_solve returns its aux too (discarded), for a non-symmetric operator.
    m = qnp.array([[2.0, 1.0], [0.0, 4.0]])

    def g(s):
        solve = lambda mv, r: (qnp.linalg.solve(m * s, r), 1)  # noqa: E731
        tsolve = lambda vm, r: (qnp.linalg.solve((m * s).T, r), 2)  # noqa: E731
        x, n = lax.custom_linear_solve(lambda v: (m * s) @ v, qnp.array([3.0, 4.0]), solve,
                                       tsolve, has_aux=True)
        return x.sum() * n
    # x = [1, 1] / s and the solve's aux is 1, so d/ds of 2 / s at 1 is -2.
    assert float(g(qnp.asarray(1.0))) == 2.0
    assert abs(float(quabla.grad(g)(1.0)) + 2.0) < 1e-12


def _newton(f, x0):
    """Newton's method in a while loop: never differentiated by custom_root."""
    def body(state):
        x, k = state
        return x - f(x) / quabla.grad(f)(x), k + 1
    return lax.while_loop(lambda s: s[1] < 40, body, (x0, 0))[0]


def _sqrt(a):
    return lax.custom_root(lambda x: x * x - a, qnp.ones_like(a), _newton,
                           lambda g, y: y / g(1.0))


def test_custom_root_derivatives_are_the_analytic_ones():
    a = qnp.asarray(4.0, dtype=qnp.float64)
    assert float(_sqrt(a)) == pytest.approx(2.0, rel=1e-14)
    for g in (quabla.grad(_sqrt), quabla.jit(quabla.grad(_sqrt)), quabla.jacfwd(_sqrt)):
        assert float(g(a)) == pytest.approx(0.25, rel=1e-9)  # 1 / (2 sqrt(a))
    # d2/da2 sqrt(a) = -a^(-3/2) / 4
    assert float(quabla.grad(quabla.grad(_sqrt))(a)) == pytest.approx(-1 / 32, rel=1e-7)
    many = qnp.array([1.0, 2.25, 9.0], dtype=qnp.float64)
    np.testing.assert_allclose(np.asarray(quabla.vmap(_sqrt)(many)), [1.0, 1.5, 3.0],
                               rtol=1e-14)
    np.testing.assert_allclose(np.asarray(quabla.vmap(quabla.grad(_sqrt))(many)),
                               0.5 / np.sqrt([1.0, 2.25, 9.0]), rtol=1e-9)


def test_custom_root_of_a_vector_system_against_central_differences():
    m = np.array([[3.0, 0.5, 0.0], [0.2, 2.0, 0.1], [0.0, 0.4, 4.0]])

    def root(theta):
        def f(x):
            return qnp.asarray(m) @ x + 0.1 * x ** 3 - theta

        def solve(f_, x0):
            x = x0
            for _ in range(30):
                x = x - qnp.linalg.solve(quabla.jacfwd(f_)(x), f_(x))
            return x
        return lax.custom_root(f, qnp.zeros(3, dtype=qnp.float64), solve,
                               lambda g, y: y)
    theta = qnp.array([1.0, -2.0, 0.5], dtype=qnp.float64)
    x = np.asarray(root(theta))
    np.testing.assert_allclose(m @ x + 0.1 * x ** 3, np.asarray(theta), atol=1e-13)
    jac = np.asarray(quabla.jacrev(root)(theta))
    jac_fwd = np.asarray(quabla.jacfwd(root)(theta))
    fd = np.stack([(np.asarray(root(theta + h)) - np.asarray(root(theta - h))) / 2e-6
                   for h in 1e-6 * np.eye(3)], axis=1)
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jac_fwd, jac, rtol=1e-9, atol=1e-12)
    # The implicit function theorem: dx/dtheta = (m + 0.3 diag(x^2))^-1.
    np.testing.assert_allclose(jac, np.linalg.inv(m + 0.3 * np.diag(x ** 2)), rtol=1e-8)


def test_custom_root_errors():
    with pytest.raises(TypeError, match="f must return a pytree shaped like"):
        lax.custom_root(lambda x: (x, x), 1.0, lambda f, x0: x0, lambda g, y: y)
    with pytest.raises(TypeError, match="tangent_solve must be callable"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x0: x0, None)
    with pytest.raises(TypeError, match=r"must return \(solution, aux\)"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x0: x0, lambda g, y: y, has_aux=True)


def test_custom_root_has_aux_as_jax():
    """JAX 0.10.2 (x64): g(4) = 22, grad 0.5 with that (deliberately halved) tangent_solve;
    Quabla solves the tangent system itself, so its gradient is the exact 0.25: the aux
    (10 r) is not differentiated in either."""
    def g(a):
        def solve(fn, x0):
            x = x0
            for _ in range(20):
                x = x - fn(x) / (2 * x)
            return x, x * 10
        r, aux = lax.custom_root(lambda x: x * x - a, 1.0, solve, lambda gr, y: y / 2.0,
                                 has_aux=True)
        return r + aux
    assert abs(float(g(qnp.asarray(4.0))) - 22.0) < 1e-12
    assert abs(float(quabla.grad(g)(4.0)) - 0.25) < 1e-9
