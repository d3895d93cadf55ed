"""``scipy.spatial.transform.Rotation`` and ``Slerp`` against JAX 0.10.2 (and so scipy)
on the same rotations (recorded by hand, to 13 decimals): every conversion both ways,
Euler sequences intrinsic, extrinsic and symmetric, gimbal lock, composition, application,
means, interpolation; derivatives through a rotation; the input checks."""

import math

import numpy as np
import pytest

import quabla
import quabla.numpy as jnp
from quabla.scipy.spatial.transform import Rotation, Slerp

from conftest import assert_close

JAX = {
    'quat': [[0.1025978352085, -0.7181848464596, 0.3077935056255, 0.6155870112511], [0.0, 0.0, 0.0, -1.0], [0.5, 0.5, -0.5, -0.5], [0.0, 1.0, 0.0, 0.0]],
    'canon': [[0.1025978352085, -0.7181848464596, 0.3077935056255, 0.6155870112511], [-0.0, -0.0, -0.0, 1.0], [-0.5, -0.5, 0.5, 0.5], [0.0, 1.0, 0.0, 0.0]],
    'sfirst': [[0.6155870112511, 0.1025978352085, -0.7181848464596, 0.3077935056255], [-1.0, 0.0, 0.0, 0.0], [-0.5, 0.5, 0.5, -0.5], [0.0, 0.0, 1.0, 0.0]],
    'matrix': [[[-0.2210526315789, -0.5263157894737, -0.8210526315789], [0.2315789473684, 0.7894736842105, -0.5684210526316], [0.9473684210526, -0.3157894736842, -0.0526315789474]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]], [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]],
    'rotvec': [[0.2363360190289, -1.6543521332026, 0.7090080570868], [-0.0, -0.0, -0.0], [-1.2091995761561, -1.2091995761561, 1.2091995761561], [0.0, 3.1415926535898, 0.0]],
    'rotvecdeg': [[13.5410564372819, -94.7873950609736, 40.6231693118458], [-0.0, -0.0, -0.0], [-69.2820323027551, -69.2820323027551, 69.2820323027551], [0.0, 180.0, 0.0]],
    'mrp': [[0.0635049888951, -0.4445349222655, 0.1905149666852], [-0.0, -0.0, -0.0], [-0.3333333333333, -0.3333333333333, 0.3333333333333], [0.0, 1.0, 0.0]],
    'mag': [1.8153314076324, 0.0, 2.0943951023932, 3.1415926535898],
    'inv': [[-0.1025978352085, 0.7181848464596, -0.3077935056255, 0.6155870112511], [-0.0, -0.0, -0.0, -1.0], [-0.5, -0.5, 0.5, -0.5], [-0.0, -1.0, -0.0, 0.0]],
    'euler xyz': [[-1.7359450042095, -1.2449133695739, 2.3329428673819], [0.0, 0.0, 0.0], [-1.5707963267949, 0.0, 1.5707963267949], [-3.1415926535898, 0.0, -3.1415926535898]],
    'euler ZYX': [[2.3329428673819, -1.2449133695739, -1.7359450042095], [0.0, 0.0, 0.0], [1.5707963267949, 0.0, -1.5707963267949], [-3.1415926535898, 0.0, -3.1415926535898]],
    'euler zxz': [[1.8925468811915, 1.6234522350565, -0.9652516631899], [0.0, 0.0, 0.0], [-3.1415926535898, 1.5707963267949, -1.5707963267949], [-3.1415926535898, -3.1415926535898, 0.0]],
    'euler XYX': [[2.9018495447193, 1.7936899977383, -2.5715521898901], [0.0, 0.0, 0.0], [1.5707963267949, 1.5707963267949, -3.1415926535898], [0.0, -3.1415926535898, 0.0]],
    'euler yzx': [[-1.8337910584758, 0.5542618344523, -0.3805063771124], [0.0, 0.0, 0.0], [-1.5707963267949, 0.0, -1.5707963267949], [-3.1415926535898, 0.0, 0.0]],
    'eulerdeg': [[-99.4623222080256, -71.3282819359921, 133.6677801461304], [0.0, 0.0, 0.0], [-90.0, 0.0, 90.0], [-180.0, 0.0, -180.0]],
    'fromm': [[0.1025978352085, -0.7181848464596, 0.3077935056255, 0.6155870112511], [0.0, 0.0, 0.0, 1.0], [-0.5, -0.5, 0.5, 0.5], [0.0, 1.0, 0.0, 0.0]],
    'fromrv': [[0.1441936462617, -0.0961290975078, 0.4325809387851, 0.884783092283], [5e-06, 1e-05, 0.0, 0.9999999999375], [0.0, 0.0, 0.0, 1.0]],
    'fromrvdeg': [0.2588190451025, 0.0, 0.0, 0.9659258262891],
    'frommrp': [[0.1754385964912, 0.3508771929825, -0.5263157894737, 0.7543859649123], [1.0, 0.0, 0.0, 0.0]],
    'fromeuler xyz': [[0.0381345764749, 0.189307857412, 0.2392983377447, 0.9515485246438], [-0.6688806625632, -0.2154722761265, 0.6798274272232, -0.2097737511344]],
    'fromeuler XYZ': [[0.1276794406958, 0.1448781254174, 0.2685358227516, 0.9437143641475], [0.621302494245, 0.3283486762194, 0.6330724914329, 0.3246376103609]],
    'fromeuler zyz': [[-0.030153689607, 0.1710100716628, 0.3368240888335, 0.9254165783983], [-0.6684690462992, -0.2107674807012, 0.632660875169, 0.3293424057862]],
    'fromeuler ZXZ': [[0.1710100716628, -0.030153689607, 0.3368240888335, 0.9254165783983], [-0.2107674807012, -0.6684690462992, 0.632660875169, 0.3293424057862]],
    'fromeuler1': [[0.2474039592545, 0.0, 0.0, 0.9689124217106], [0.4794255386042, 0.0, 0.0, 0.8775825618904]],
    'fromeuler2': [0.2171174003844, 0.4645213596389, -0.1186117764184, 0.8503006452922],
    'mul': [0.4616902584383, 0.8720815992724, -0.0512989176043, 0.1538967528128],
    'mulmany': [[0.1263157894737, -0.8842105263158, 0.3789473684211, -0.2421052631579], [0.0, 0.0, 0.0, 1.0], [-0.5, -0.5, 0.5, -0.5], [0.0, 0.0, 0.0, -1.0]],
    'apply': [[-3.7368421052632, 0.1052631578947, 0.1578947368421], [-1.0, 0.5, 0.0], [-1.0, 0.0, 0.0], [-2.0, 2.0, -2.0]],
    'applyinv': [[3.0842105263158, 0.1052631578947, -2.1157894736842], [-1.0, 0.5, 0.0], [0.0, -1.0, 0.0], [-2.0, 2.0, -2.0]],
    'apply1': [[-3.7368421052632, 0.1052631578947, 0.1578947368421], [-0.0421052631579, 0.1631578947368, -1.1052631578947], [-0.8210526315789, -0.5684210526316, -0.0526315789474], [-3.1368421052632, 0.9052631578947, 1.1578947368421]],
    'mean': [[0.3203549227106, -0.3620991662249, -0.8753610211303], [0.6588993518161, 0.7490848927553, -0.0687274881117], [0.6806058827775, -0.5547576202857, 0.478559938841]],
    'meanw': [[0.7885152230325, -0.2809527260081, -0.5470916822569], [0.3193926904137, 0.9472624042001, -0.0261198564188], [0.5255778271163, -0.1541411798893, 0.8366650729569]],
    'slerp': [[1.5707963267949, 0.0, 0.0], [0.8530902842365, 0.3871196627141, 0.1776865031587], [-0.0, 0.7853981633974, -0.0], [-0.0566680465318, 0.3921314229577, -0.2834754030365], [0.0, 0.0, -0.5235987755983]],
    'slerp1': [0.291690451983, -0.0669770902227, 0.0, 0.9541649488465],
    'gimbal': [0.1, 1.5707963267949, 0.0],
    'gimbalZ': [0.5, 0.0, 0.0],
}


def _program():
    seen = {}
    q = jnp.asarray(np.array([[0.1, -0.7, 0.3, 0.6], [0.0, 0.0, 0.0, -2.0],
                              [0.5, 0.5, -0.5, -0.5], [0.0, 0.3, 0.0, 0.0]]))
    r = Rotation.from_quat(q)
    seen["quat"] = r.as_quat()
    seen["canon"] = r.as_quat(canonical=True)
    seen["sfirst"] = r.as_quat(scalar_first=True)
    seen["matrix"] = r.as_matrix()
    seen["rotvec"] = r.as_rotvec()
    seen["rotvecdeg"] = r.as_rotvec(degrees=True)
    seen["mrp"] = r.as_mrp()
    seen["mag"] = r.magnitude()
    seen["inv"] = r.inv().as_quat()
    for seq in ["xyz", "ZYX", "zxz", "XYX", "yzx"]:
        seen["euler " + seq] = r.as_euler(seq)
    seen["eulerdeg"] = r.as_euler("xyz", degrees=True)
    seen["fromm"] = Rotation.from_matrix(r.as_matrix()).as_quat(canonical=True)
    seen["fromrv"] = Rotation.from_rotvec(jnp.asarray(
        np.array([[0.3, -0.2, 0.9], [1e-5, 2e-5, 0.0], [0.0, 0.0, 0.0]]))).as_quat()
    seen["fromrvdeg"] = Rotation.from_rotvec(jnp.asarray([30.0, 0, 0]), degrees=True).as_quat()
    seen["frommrp"] = Rotation.from_mrp(jnp.asarray(
        np.array([[0.1, 0.2, -0.3], [1.0, 0.0, 0.0]]))).as_quat()
    ang = jnp.asarray(np.array([[10.0, 20.0, 30.0], [-45.0, 89.0, 170.0]]))
    for seq in ["xyz", "XYZ", "zyz", "ZXZ"]:
        seen["fromeuler " + seq] = Rotation.from_euler(seq, ang, degrees=True).as_quat()
    seen["fromeuler1"] = Rotation.from_euler("x", jnp.asarray([[0.5], [1.0]])).as_quat()
    seen["fromeuler2"] = Rotation.from_euler("xy", jnp.asarray([0.5, 1.0])).as_quat()
    seen["mul"] = (r[0] * r[2]).as_quat()
    seen["mulmany"] = (r * r).as_quat()
    v = jnp.asarray(np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0], [0.0, 0.0, 1.0],
                              [2.0, 2.0, 2.0]]))
    seen["apply"] = r.apply(v)
    seen["applyinv"] = r.apply(v, inverse=True)
    seen["apply1"] = r[0].apply(v)
    # The mean's quaternion sign is arbitrary: compare matrices.
    seen["mean"] = Rotation.from_quat(q[:3]).mean().as_matrix()
    seen["meanw"] = Rotation.from_quat(q[:3]).mean(jnp.asarray([1.0, 2.0, 0.5])).as_matrix()
    rots = Rotation.from_euler("zxy", jnp.asarray(
        np.array([[90.0, 0, 0], [0, 45, 0], [0, 0, -30]])), degrees=True)
    s = Slerp.init(jnp.asarray([0.0, 1.0, 2.0]), rots)
    seen["slerp"] = s(jnp.asarray([0, 0.5, 1, 1.5, 2])).as_euler("zxy")
    seen["slerp1"] = s(jnp.asarray(1.25)).as_quat()
    # Gimbal lock: the third angle is 0, the first takes the rest.
    seen["gimbal"] = Rotation.from_euler("xyz", jnp.asarray([0.3, math.pi / 2, 0.2])).as_euler(
        "xyz")
    seen["gimbalZ"] = Rotation.from_euler("ZYZ", jnp.asarray([0.3, 0.0, 0.2])).as_euler("ZYZ")
    return seen


@pytest.fixture(scope="module")
def seen():
    # Module-scoped, so before the per-test x64 fixture: switch float64 on here.
    before = quabla.config.jax_enable_x64
    quabla.config.update("jax_enable_x64", True)
    try:
        return _program()
    finally:
        quabla.config.update("jax_enable_x64", before)


@pytest.mark.parametrize("tag", list(JAX))
def test_matches_jax(seen, tag):
    assert_close(np.asarray(seen[tag]), JAX[tag], rtol=0, atol=1e-12)


def test_shapes_identity_random_and_concatenate():
    r = Rotation.from_quat(jnp.asarray(np.eye(4)))
    assert len(r) == 4 and not r.single and r[1].single
    with pytest.raises(TypeError, match="no len"):
        len(r[0])
    with pytest.raises(TypeError, match="subscriptable"):
        r[0][0]
    assert_close(Rotation.identity().as_matrix(), np.eye(3), rtol=0)
    assert Rotation.identity(3).quat.shape == (3, 4)
    rr = Rotation.random(quabla.random.PRNGKey(0), 5)
    assert_close(jnp.sum(rr.quat ** 2, axis=-1), np.ones(5), rtol=1e-14)
    assert Rotation.concatenate([r, r[0]]).quat.shape == (5, 4)
    # A rotation passes through jit as a pytree.
    twice = quabla.jit(lambda rot: (rot * rot).as_matrix())(Rotation.from_euler("z", 0.3))
    assert_close(twice, Rotation.from_euler("z", 0.6).as_matrix(), rtol=0, atol=1e-15)


def test_derivatives_through_conversions():
    # d/dt of the angle of exp(t a) is |a|: the magnitude of from_rotvec(t a).
    a = np.array([0.3, -0.4, 1.2])
    g = quabla.grad(lambda t: Rotation.from_rotvec(t * jnp.asarray(a)).magnitude())(
        jnp.asarray(0.7))
    assert_close(g, np.linalg.norm(a), rtol=1e-14)
    # Rotating e_x about z by theta: d/dtheta of the y component is cos(theta).
    dy = quabla.grad(lambda th: Rotation.from_euler("z", th).apply(
        jnp.asarray([1.0, 0.0, 0.0]))[1])(jnp.asarray(0.4))
    assert_close(dy, math.cos(0.4), rtol=1e-14)


def test_input_checks():
    with pytest.raises(ValueError, match="consecutive"):
        Rotation.from_euler("xxy", jnp.zeros(3))
    with pytest.raises(ValueError, match="from"):
        Rotation.from_euler("xYz", jnp.zeros(3))
    with pytest.raises(ValueError, match="Expected 3 axes"):
        Rotation.identity().as_euler("xy")
    with pytest.raises(ValueError, match="angles"):
        Rotation.from_euler("x", jnp.asarray([0.5, 1.0]))
    with pytest.raises(ValueError, match="quat"):
        Rotation.from_quat(jnp.zeros(3))
    with pytest.raises(ValueError, match="at least 2"):
        Slerp.init(jnp.asarray([0.0]), Rotation.identity(1))
