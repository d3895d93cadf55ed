"""stax's convolution, pooling and batch-norm layers, lax's shape helpers, and the rest of
``example_libraries.optimizers``, against JAX 0.10.2 on the same inputs (recorded by hand:
JAX is not a test dependency)."""

import numpy as np
import pytest

import quabla
import quabla.lax as lax
import quabla.numpy as jnp
import quabla.random as random
from quabla.example_libraries import optimizers as o
from quabla.example_libraries import stax

from conftest import assert_close

X = np.linspace(-1, 1, 2 * 6 * 5 * 3).reshape(2, 6, 5, 3) ** 3
X1 = np.linspace(-1, 1, 2 * 4 * 3).reshape(2, 4, 3)
_rng = np.random.RandomState(0)
W = _rng.randn(3, 2, 3, 4)
B = _rng.randn(1, 1, 1, 4)
W1, B1 = _rng.randn(3, 3, 2), _rng.randn(1, 1, 2)

# (name, layer, input, params, JAX's init shape, the first five outputs, their sum)
LAYERS = [
    ("conv_same", stax.Conv(4, (3, 2), padding="SAME"), X, (W, B), (-1, 6, 5, 4),
     [0.309044543164, 2.142233704272, 5.162680874703, -2.765504423978, 0.347111191144],
     -101.86707832715732),
    ("conv_valid_strided", stax.Conv(4, (3, 2), strides=(2, 1)), X, (W, B), (-1, 2, 4, 4),
     [-2.806241084467, 0.295744139423, -0.4720866348, -4.260592481475, -2.444842838619],
     -55.693742401786295),
    ("convT_same", stax.ConvTranspose(4, (3, 2), strides=(2, 2), padding="SAME"), X, (W, B),
     (-1, 12, 10, 4),
     [2.488139007529, -0.535349587023, 2.110353935235, 0.473502035279, 3.185015430912],
     -133.36810440896534),
    ("conv1dT", stax.Conv1DTranspose(2, (3,), strides=(2,)), X1, (W1, B1), (-1, 9, 2),
     [1.623183857945, -2.270812827053, -2.441909430458, 0.660421166808, 3.410786337871],
     22.232720420873374),
    # JAX's windowed shape rule gives size 0 for stax's unknown batch -1.
    ("maxpool", stax.MaxPool((2, 2), strides=(2, 2)), X, (), (0, 3, 2, 3),
     [-0.50985774337, -0.488762913578, -0.468258109939, -0.391971773595, -0.374291563236],
     2.997929154667232),
    ("sumpool_same", stax.SumPool((3, 2), padding="SAME"), X, (), (0, 6, 5, 3),
     [-2.98939818553, -2.88129228281, -2.775847774648, -2.673031184382, -2.572809035351],
     6.267232677963776),
    ("avgpool_same", stax.AvgPool((3, 2), strides=(2, 1), padding="SAME"), X, (), (0, 3, 5, 3),
     [-0.58913309222, -0.566500428309, -0.544470344299, -0.523034471023, -0.502184439316],
     5.643455774802504),
    ("avgpool_nchw", stax.AvgPool((2, 2), spec="NCHW"), X, (), (0, 6, 4, 2),
     [-0.935363193004, -0.903679276848, -0.842474873761, -0.812937648498, -0.755951304709],
     3.552713678800501e-15),
    ("batchnorm", stax.BatchNorm(), X, (np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 0.5])),
     (-1, 6, 5, 3),
     [-2.472698554087, -4.836037302749, -0.930457708119, -2.21970835629, -4.341062407588],
     36.000000000000014),
]


@pytest.mark.parametrize("name,layer,x,params,shape,head,total", LAYERS,
                         ids=[c[0] for c in LAYERS])
def test_layers_match_jax(name, layer, x, params, shape, head, total):
    init, apply = layer
    out_shape, _ = init(random.PRNGKey(0), (-1,) + x.shape[1:])
    assert tuple(out_shape) == shape
    out = np.asarray(apply(params, jnp.asarray(x)))
    assert_close(out.ravel()[:5], head, rtol=0, atol=1e-11)
    assert_close(out.sum(), total, rtol=1e-12, atol=1e-12)


def test_conv_layer_trains_under_grad_in_serial():
    init, apply = stax.serial(stax.Conv(2, (3, 3), padding="SAME"), stax.Relu,
                              stax.AvgPool((2, 2), strides=(2, 2)), stax.Flatten, stax.Dense(1))
    _, params = init(random.PRNGKey(1), (-1, 6, 6, 3))
    x = jnp.asarray(np.linspace(0, 1, 4 * 6 * 6 * 3).reshape(4, 6, 6, 3))
    grads = quabla.grad(lambda p: jnp.sum(apply(p, x) ** 2))(params)
    w_grad = np.asarray(grads[0][0])
    assert w_grad.shape == (3, 3, 3, 2) and np.all(np.isfinite(w_grad))
    # One direction's derivative against a central difference.
    d = np.zeros_like(w_grad)
    d[1, 1, 0, 0] = 1.0

    def loss_at(eps):
        p = [(params[0][0] + eps * jnp.asarray(d), params[0][1])] + list(params[1:])
        return float(jnp.sum(apply(p, x) ** 2))

    fd = (loss_at(1e-6) - loss_at(-1e-6)) / 2e-6
    assert_close(w_grad[1, 1, 0, 0], fd, rtol=1e-6)


SHAPES = [
    ("conv_general_permutations", (("NHWC", "HWIO", "NHWC"),),
     ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))),
    ("conv_general_permutations", (("NCHW", "OIHW", "NCHW"),),
     ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))),
    ("conv_general_permutations", (("NWC", "WIO", "NCW"),), ((0, 2, 1), (2, 1, 0), (0, 1, 2))),
    ("conv_shape_tuple", ((2, 3, 10, 9), (4, 3, 3, 2), (1, 2), "SAME"), (2, 4, 10, 5)),
    ("conv_shape_tuple", ((2, 3, 10, 9), (4, 3, 3, 2), (2, 1), [(1, 0), (2, 2)]),
     (2, 4, 5, 12)),
    ("conv_shape_tuple", ((6, 3, 10), (4, 3, 3), (1,), "VALID", 2), (3, 4, 8)),
    ("conv_general_shape_tuple", ((-1, 28, 28, 1), (3, 3, 1, 8), (1, 1), "SAME",
                                  ("NHWC", "HWIO", "NHWC")), (-1, 28, 28, 8)),
    ("conv_general_shape_tuple", ((5, 28, 27, 2), (3, 4, 2, 8), (2, 3), "VALID",
                                  ("NHWC", "HWIO", "NCHW")), (5, 8, 13, 8)),
    ("conv_transpose_shape_tuple", ((-1, 7, 7, 4), (3, 3, 8, 4), (2, 2), "SAME",
                                    ("NHWC", "HWOI", "NHWC")), (-1, 14, 14, 8)),
    ("conv_transpose_shape_tuple", ((3, 5, 6, 4), (3, 2, 4, 8), (2, 3), "VALID",
                                    ("NHWC", "HWIO", "NHWC")), (3, 11, 18, 8)),
    ("conv_transpose_shape_tuple", ((3, 5, 6, 4), (3, 2, 4, 8), (1, 2), [(1, 1), (0, 2)],
                                    ("NHWC", "HWIO", "NHWC")), (3, 5, 12, 8)),
    ("reduce_window_shape_tuple", ((-1, 28, 28, 3), (1, 2, 2, 1), (1, 2, 2, 1),
                                   [(0, 0)] * 4), (0, 14, 14, 3)),
    ("reduce_window_shape_tuple", ((4, 9, 7), (1, 3, 2), (1, 2, 1), [(0, 0), (1, 1), (0, 1)],
                                   (1, 2, 1), (1, 1, 2)), (4, 9, 6)),
]


@pytest.mark.parametrize("name,args,want", SHAPES)
def test_lax_shape_helpers_match_jax(name, args, want):
    assert getattr(lax, name)(*args) == want


def test_lax_shape_helpers_errors():
    with pytest.raises(TypeError):
        lax.conv_general_permutations("NHWC")
    with pytest.raises(ValueError, match="Negative padding"):
        lax.conv_shape_tuple((1, 1, 2), (1, 1, 1), (1,), [(-2, -1)])


def _grads(p, k):
    return {"w": p["w"] * (k + 1.0) - 0.3, "b": p["b"] ** 2 - 0.1 * k}


# Four steps from the same start: JAX's parameters, to the last bit.
TRAJECTORIES = [
    ("rmsprop_momentum", lambda: o.rmsprop_momentum(0.05),
     [-0.1739557007306829, -0.7537844437691701, -0.19419250107436967, -0.1101092111349771,
      0.12282045168135161, -0.27601825684908976], 0.1233929983116477),
    ("sm3", lambda: o.sm3(0.1),
     [0.9176154493730575, -1.919608243083648, 0.44803079998527606, 0.2808824498341084,
      0.040058102130895445, -1.419853145932031], 0.6399053512195477),
    ("sm3_schedule", lambda: o.sm3(o.exponential_decay(0.1, 2, 0.5), momentum=0.5),
     [0.8357476693394025, -1.8389941002724515, 0.39483208819017257, 0.26453609369177783,
      0.08263738131373542, -1.3396270459183572], 0.5839457997915782),
]


@pytest.mark.parametrize("name,make,w,b", TRAJECTORIES, ids=[t[0] for t in TRAJECTORIES])
def test_optimizer_trajectories_match_jax(name, make, w, b):
    init, update, get = make()
    s = init({"w": jnp.asarray(np.array([[1.0, -2.0, 0.5], [0.3, 0.0, -1.5]])),
              "b": jnp.asarray(np.array(0.7))})
    for k in range(4):
        s = update(k, _grads(get(s), k), s)
    p = get(s)
    assert_close(p["w"], np.array(w).reshape(2, 3), rtol=0, atol=0)
    assert np.shape(p["b"]) == () and float(p["b"]) == b


def test_norms_clipping_and_state_packing():
    g = {"a": jnp.asarray(np.array([3.0, 4.0])), "c": jnp.asarray(np.array(12.0))}
    assert float(o.l2_norm(g)) == 13.0
    clipped = o.clip_grads(g, 6.5)
    assert_close(clipped["a"], [1.5, 2.0], rtol=1e-15)
    assert_close(clipped["c"], 6.0, rtol=1e-15)
    assert_close(o.clip_grads(g, 20.0)["a"], [3.0, 4.0], rtol=0)
    init, update, get = o.adam(0.1)
    s = update(0, g, init(g))
    marked = o.unpack_optimizer_state(s)
    assert isinstance(marked["a"], o.JoinPoint) and len(marked["a"].subtree) == 3
    back = o.pack_optimizer_state(marked)
    assert back.tree_def == s.tree_def
    for x, y in zip(quabla.tree_util.tree_leaves(back.packed_state),
                    quabla.tree_util.tree_leaves(s.packed_state)):
        assert_close(x, y, rtol=0)
    with pytest.raises(TypeError, match="JoinPoint"):
        o.pack_optimizer_state({"a": 1.0})
    named = o.Optimizer(*o.sgd(0.1))
    assert_close(named.params_fn(named.update_fn(0, g, named.init_fn(g)))["c"], 10.8,
                 rtol=1e-15)
