"""``scipy.sparse.linalg``'s cg, bicgstab and gmres against numpy's dense solve and JAX
0.10.2's iterates on the same problems (recorded by hand), with the same stopping points
(a loose tolerance, two iterations, GMRES restarted every 3 vectors)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as jnp
import quabla.scipy.sparse.linalg as sl

from conftest import assert_close

_rng = np.random.RandomState(3)
_Q = _rng.randn(12, 12)
SPD = _Q @ _Q.T + 12 * np.eye(12)
GEN = _rng.randn(12, 12) + 6 * np.eye(12)
B = _rng.randn(12)

# (solver, matrix, JAX's first three entries at tol=1e-3, and after maxiter=2)
JAX_ITERATES = [
    ("cg", SPD, [0.005924878232470632, 0.06721539030001943, 0.11775410771752269],
     [0.016021883781957538, 0.07236757171193742, 0.10191856845353181]),
    ("bicgstab", GEN, [0.09717775036866125, 0.1568375618765913, 0.1659169757398837],
     [0.08107470117422445, 0.1600509029969743, 0.15592720831006465]),
    ("gmres", GEN, [0.09711514609744351, 0.15679901286769884, 0.16590562139225354],
     [0.09711514609744351, 0.15679901286769884, 0.16590562139225354]),
]


@pytest.mark.parametrize("name,A,loose,two", JAX_ITERATES, ids=[c[0] for c in JAX_ITERATES])
def test_solvers_match_the_dense_solve_and_jax_iterates(name, A, loose, two):
    solve = getattr(sl, name)
    x, _ = solve(jnp.asarray(A), jnp.asarray(B), tol=1e-12)
    assert_close(x, np.linalg.solve(A, B), rtol=0, atol=1e-10)
    assert_close(solve(jnp.asarray(A), jnp.asarray(B), tol=1e-3)[0][:3], loose, rtol=1e-12)
    # A function as the operator, stopped after two iterations (cycles, for gmres).
    assert_close(solve(lambda v: jnp.asarray(A) @ v, jnp.asarray(B), maxiter=2)[0][:3], two,
                 rtol=1e-12)
    jacobi = jnp.asarray(np.diag(1 / np.diag(A)))
    x, _ = solve(jnp.asarray(A), jnp.asarray(B), tol=1e-10, M=jacobi)
    assert_close(x, np.linalg.solve(A, B), rtol=0, atol=1e-8)


def test_gmres_restarts_and_info():
    x, info = sl.gmres(jnp.asarray(GEN), jnp.asarray(B), tol=1e-3, restart=3)
    assert_close(x[:3], [0.09733695697734955, 0.15657911378914843, 0.16589488916691886],
                 rtol=1e-12)
    assert int(info) == 0
    with pytest.raises(ValueError, match="solve_method"):
        sl.gmres(jnp.asarray(GEN), jnp.asarray(B), solve_method="qr")


def test_pytree_right_hand_sides():
    tree = {"a": jnp.asarray(B[:5]), "c": jnp.asarray(B[5:])}

    def op(t):
        w = jnp.asarray(SPD) @ jnp.concatenate([t["a"], t["c"]])
        return {"a": w[:5], "c": w[5:]}

    x, info = sl.cg(op, tree, tol=1e-12)
    assert info is None
    assert_close(jnp.concatenate([x["a"], x["c"]]), np.linalg.solve(SPD, B), rtol=0,
                 atol=1e-10)
    with pytest.raises(ValueError, match="tree structure"):
        sl.cg(op, tree, x0=(jnp.zeros(5), jnp.zeros(7)))


def test_derivatives_match_the_implicit_ones():
    # d/db |A^-1 b|^2 = 2 A^-T A^-1 b, in reverse and forward mode.
    want = 2 * np.linalg.solve(SPD, np.linalg.solve(SPD, B))
    for name in ("cg", "bicgstab", "gmres"):
        f = lambda b, name=name: jnp.sum(getattr(sl, name)(jnp.asarray(SPD), b, tol=1e-13)[0] ** 2)
        g = quabla.grad(f)(jnp.asarray(B))
        assert_close(g, want, rtol=0, atol=1e-8 * np.abs(want).max())
        e0 = np.eye(12)[0]
        _, t = quabla.jvp(f, (jnp.asarray(B),), (jnp.asarray(e0),))
        assert_close(t, want[0], rtol=1e-8)
    # In A, through a matrix argument: d/dA_ij of sum(x) = -(A^-T 1)_i x_j (cg's rule is
    # implicit, as JAX's: the whole outer product).
    x = np.linalg.solve(SPD, B)
    want_a = -np.outer(np.linalg.solve(SPD.T, np.ones(12)), x)
    ga = quabla.grad(lambda a: jnp.sum(sl.cg(a, jnp.asarray(B), tol=1e-13)[0]))(
        jnp.asarray(SPD))
    assert_close(ga, want_a, rtol=0, atol=1e-8)
    gg = quabla.grad(lambda a: jnp.sum(sl.gmres(a, jnp.asarray(B), tol=1e-13)[0]))(
        jnp.asarray(GEN))
    want_g = -np.outer(np.linalg.solve(GEN.T, np.ones(12)), np.linalg.solve(GEN, B))
    assert_close(gg, want_g, rtol=0, atol=1e-8)


def test_bad_operators():
    with pytest.raises(ValueError, match="square matrix or a function"):
        sl.cg(jnp.ones((3, 2)), jnp.ones(3))
    with pytest.raises(ValueError, match="maxiter"):
        sl.bicgstab(jnp.eye(3), jnp.ones(3), maxiter=-1)
