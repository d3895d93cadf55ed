"""``scipy.special.hyp1f1`` against mpmath (40 digits, recorded here), including where JAX
0.10.2's alternating series is wrong, and its derivatives in all three arguments through
the bounded series loop."""

import numpy as np

import quabla
import quabla.numpy as qnp
import quabla.scipy.special as sp
from quabla.test_util import check_grads
from conftest import assert_close

HYP1F1 = [(1.0, 2.0, 1.0, 1.7182818284590453), (0.5, 1.5, -2.0, 0.5981440066613041),
          (2.0, 3.0, 30.0, 688683917476.0231), (-1.5, 2.0, 2.0, -0.22541758949919768),
          (3.0, 0.5, -40.0, -3.9246737878755543e-05), (1.0, 1.0, 200.0, 7.225973768125749e+86),
          (0.3, 4.5, -0.7, 0.9568981039230854), (2.5, 1.2, 100.0, 7.535775674275715e+45),
          (-3.0, 2.0, 5.0, 0.7916666666666666), (0.001, 2.0, 3.0, 1.00289800407253),
          (4.0, 7.0, -300.0, 4.3269135802469136e-08)]


def test_hyp1f1_against_mpmath():
    a, b, x, want = map(np.array, zip(*HYP1F1))
    got = sp.hyp1f1(qnp.asarray(a), qnp.asarray(b), qnp.asarray(x))
    assert_close(got, want, rtol=4e-15)
    # JAX 0.10.2 gives -24931.5533 for M(3, 1/2, -40); the value is -3.92e-5 (above).
    # b a non-positive integer: NaN.
    assert np.isnan(np.asarray(sp.hyp1f1(1.0, qnp.asarray([0.0, -2.0]), 1.0))).all()


def test_hyp1f1_derivatives():
    # mpmath's numerical derivatives at (1, 2, 1): d/da 0.84748006387, d/db -0.44710038687;
    # d/dx = (a / b) M(a + 1, b + 1, x) = 1 there.
    g = quabla.grad(sp.hyp1f1, argnums=(0, 1, 2))(1.0, 2.0, 1.0)
    assert_close(g, [0.8474800638725325, -0.4471003868678911, 1.0], rtol=1e-12)
    args = (qnp.asarray([0.5, 2.0]), qnp.asarray([1.5, 3.5]), qnp.asarray([-1.5, 2.0]))
    check_grads(sp.hyp1f1, args, order=1)
    f = quabla.jit(quabla.vmap(sp.hyp1f1))
    assert_close(f(*args), sp.hyp1f1(*args), rtol=0)


HYP2F1 = [(1.0, 2.0, 3.0, 0.5, 1.5451774444795625), (0.5, 1.5, 2.5, -0.9, 0.8134992802192214),
          (2.0, 3.0, 5.0, 0.99, 27.699347904322682), (0.3, 0.7, 1.9, 0.95, 1.2052508930051755),
          (1.5, 2.5, 4.2, -30.0, 0.0181495439405304), (0.5, 0.5, 1.0, 0.997, 2.733223839766785),
          (0.5, 0.5, 1.0, 0.5, 1.1803405990160962), (0.3, 0.2, 1.7, 1.0, 1.0610015965572788),
          (2.5, -1.5, 0.7, -0.4, 3.5436225132819175), (0.25, 0.6, 1.3, 0.9999, 1.38837432067444),
          (-2.0, 3.0, 4.0, 0.7, 0.24400000000000002), (1.2, 0.4, -0.5, 0.3, 0.2151759997887278)]


def test_hyp2f1_against_mpmath():
    cols = list(map(np.array, zip(*HYP2F1)))
    got = sp.hyp2f1(*(qnp.asarray(c) for c in cols[:4]))
    # The series at 0.997 with c - a - b an integer (no connection formula) takes 14,000
    # terms, each from the last by a rounded factor: 7e-14 there, a few ulps elsewhere.
    assert_close(got, cols[4], rtol=1e-13)
    # JAX 0.10.2: -inf at (1.5, 2.5, 4.2, -30) where the value is 0.01815 (above).
    # Not covered: x > 1 (complex), and the logarithmic case past 0.998: NaN.
    out = np.asarray(sp.hyp2f1(1.0, 1.0, 2.0, qnp.asarray([1.0, 2.0, 0.999])))
    assert out[0] == np.inf and np.isnan(out[1:]).all()


def test_hyp2f1_derivatives():
    # mpmath's numerical derivatives at (0.3, 0.7, 1.9, 0.95), on the 1 - x connection
    # branch, and d/dx at (1, 2, 3, 0.5) = (ab/c) 2F1(2, 3; 4; 0.5).
    g = quabla.grad(sp.hyp2f1, argnums=(0, 1, 2, 3))(0.3, 0.7, 1.9, 0.95)
    assert_close(g, [0.8258604563502877, 0.40985148974140895, -0.18685077047624477,
                     0.629661701490474], rtol=1e-10)
    g = quabla.grad(sp.hyp2f1, argnums=(0, 2, 3))(1.0, 2.0, 3.0, 0.5)
    assert_close(g, [0.6944007779125869, -0.261970100673562, 1.8192902220817502], rtol=1e-10)
    check_grads(sp.hyp2f1, tuple(qnp.asarray(v) for v in ([0.5, 1.2], [1.5, 0.4],
                                                          [2.5, 3.1], [-0.9, 0.3])), order=1)
