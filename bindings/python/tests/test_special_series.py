"""``scipy.special``'s ``i0``, ``i0e``, ``i1``, ``i1e``, ``erfcx``, ``exp1``, ``expi`` and
``bernoulli``: values against mpmath at 30 digits (recorded below by hand; scipy's own
``expi`` is off by 2.7e-14 near 40, so mpmath is the reference), to a few float64 ulps on
both sides of every switch between expansions, float32 to its precision; edges (0, inf, NaN,
negative arguments) as scipy; derivatives against their closed forms and finite
differences."""

import math
from fractions import Fraction

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.scipy.special as sp
from quabla.test_util import check_grads
from conftest import assert_close

BESSEL_X = [-60.0, -35.5, -20.0, -19.99, -7.25, -1.0, -1e-08, 0.0, 1e-08, 0.3, 1.0, 2.0, 5.5, 12.0, 19.99, 20.0, 20.01, 33.0, 100.0, 700.0]
I0E = [0.05161154917360984, 0.06719659931338928, 0.08978031188482602, 0.08980306142890937, 0.15095349002867584, 0.46575960759364043, 0.9999999900000001, 1.0, 0.9999999900000001, 0.7575806251825479, 0.46575960759364043, 0.30850832255367105, 0.17448325638192988, 0.11642622121344044, 0.08980306142890937, 0.08978031188482602, 0.0897575796275753, 0.06971462607491771, 0.03994437929909668, 0.015081295651531358]
I1E = [-0.05117963018902872, -0.06624330679735985, -0.08750622218328867, -0.08752724194828622, -0.14011851895630761, -0.20791041534970844, -4.99999995e-09, 0.0, 4.99999995e-09, 0.1123775606398388, 0.20791041534970844, 0.21526928924893765, 0.15770100901675652, 0.11146429929018098, 0.08752724194828622, 0.08750622218328867, 0.0874852175141268, 0.06865008696700392, 0.03974415302513025, 0.015070519444716848]
ERFCX_X = [-26.0, -10.5, -3.0, -0.5, 0.0, 0.25, 1.0, 1.99, 2.0, 2.01, 4.5, 10.0, 30.0, 1000.0, 100000000.0]
ERFCX = [7.657724931490568e+293, 1.520535715003718e+48, 16205.988853999586, 1.952360489182557, 1.0, 0.7703465477309968, 0.427583576155807, 0.2564678367195299, 0.25539567631050575, 0.2543318765608183, 0.12248480427384142, 0.05614099274382259, 0.01879588886141675, 0.0005641893014533876, 5.641895835477562e-09]
EXP1_X = [1e-10, 0.001, 0.25, 0.9, 1.0, 1.01, 1.5, 3.0, 7.5, 20.0, 45.0, 100.0, 700.0]
EXP1 = [22.448635265138925, 6.331539364136149, 1.0442826344437381, 0.26018393932599965, 0.21938393439552029, 0.21574162379448997, 0.10001958240663265, 0.013048381094197037, 6.583089326708023e-05, 9.835525290649882e-11, 6.225690809462384e-22, 3.683597761682032e-46, 1.406518766234033e-307]
EXPI_X = [-50.0, -7.5, -1.0, -1e-05, 1e-10, 0.1, 0.5, 1.0, 5.0, 20.0, 44.9, 45.1, 90.0, 700.0]
EXPI = [-3.783264029550459e-24, -6.583089326708023e-05, -0.21938393439552029, -10.935719800043696, -22.448635264938925, -1.6228128139692766, 0.4542199048631736, 1.8951178163559368, 40.18527535580318, 25615652.664056588, 7.204344248703299e+17, 8.759454973994908e+17, 1.371416869507252e+37, 1.4509787360525608e+301]
DAWSN_X = [-9.0, -3.0, -0.5, 0.0, 1e-08, 0.1, 0.924138873, 1.0, 2.5, 5.0, 6.99, 7.0, 7.01, 12.0, 100.0, 1000000.0]
DAWSN = [-0.05590504672435046, -0.1782710306105583, -0.4244363835020223, 0.0, 1e-08, 0.09933599239785286, 0.5410442246351816, 0.5380795069127684, 0.2230837221674355, 0.10213407442427684, 0.07228646679702402, 0.0721809746582363, 0.07207579342851982, 0.04181287645398826, 0.005000250037509378, 5.0000000000025e-07]
JN_Z = [-7.5, -1.0, 0.0, 0.001, 0.5, 1.0, 2.404825557695773, 5.0, 10.0, 20.0, 30.0]
J0 = [0.2663396578803784, 0.7651976865579666, 1.0, 0.9999997500000156, 0.9384698072408129, 0.7651976865579666, -6.10876525973673e-17, -0.1775967713143383, -0.24593576445134835, 0.16702466434058316, -0.08636798358104021]
J1 = [-0.1352484275797055, -0.4400505857449335, 0.0, 0.0004999999375000026, 0.2422684576748739, 0.4400505857449335, 0.5191474972894667, -0.32757913759146523, 0.04347274616886144, 0.06683312417585005, -0.11875106261662294]
J2 = [-0.23027341052579026, 0.11490348493190047, 0.0, 1.2499998958333365e-07, 0.03060402345868264, 0.11490348493190047, 0.4317548070196804, 0.046565116277752214, 0.2546303136851206, -0.16034135192299814, 0.07845124607326535]
J3 = [0.2580609131934603, -0.019563353982668407, 0.0, 2.0833332031250035e-11, 0.002563729994587244, 0.019563353982668407, 0.19899990535769083, 0.364831230613667, 0.058379379305186815, -0.09890139456044968, 0.129211228759725]

EPS = np.finfo(np.float64).eps

CASES = [
    ("i0e", BESSEL_X, I0E, 6),
    ("i1e", BESSEL_X, I1E, 6),
    ("erfcx", ERFCX_X, ERFCX, 3),
    ("exp1", EXP1_X, EXP1, 6),
    ("expi", EXPI_X, EXPI, 8),
    ("dawsn", DAWSN_X, DAWSN, 6),
]


@pytest.mark.parametrize("name,xs,want,ulps", CASES, ids=[c[0] for c in CASES])
def test_values_against_mpmath(name, xs, want, ulps):
    got = np.asarray(getattr(sp, name)(np.array(xs, np.float64)))
    assert got.dtype == np.float64
    assert_close(got, want, rtol=ulps * EPS)
    # float32, against the float64 values (checked above) at the float32-rounded inputs.
    x32 = np.array(xs, np.float32)
    got32 = np.asarray(getattr(sp, name)(x32))
    assert got32.dtype == np.float32
    want32 = np.asarray(getattr(sp, name)(x32.astype(np.float64)))
    with np.errstate(over="ignore"):
        finite = np.isfinite(want32.astype(np.float32)) & (np.abs(want32) > 1e-30)
    assert_close(got32[finite], want32[finite], rtol=2e-6)


def test_unscaled_bessel_functions_and_edges():
    x = np.array(BESSEL_X[:-2])
    assert_close(sp.i0(x), np.array(I0E[:-2]) * np.exp(np.abs(x)), rtol=8 * EPS)
    assert_close(sp.i1(x), np.array(I1E[:-2]) * np.exp(np.abs(x)), rtol=8 * EPS)
    # scipy's edges: the scaled functions vanish at +-inf (i1e with the sign), the unscaled
    # ones overflow to +-inf, NaN stays NaN.
    edge = np.array([np.inf, -np.inf, np.nan, 800.0, -800.0])
    assert_close(sp.i0e(edge), [0.0, 0.0, np.nan, 0.014106945005869185, 0.014106945005869185],
                 rtol=8 * EPS)
    assert_close(sp.i1(edge)[[0, 1, 3, 4]], [np.inf, -np.inf, np.inf, -np.inf], rtol=0)
    assert np.signbit(np.asarray(sp.i1e(np.array([-np.inf])))[0])
    assert_close(sp.exp1(np.array([0.0, -1.0, np.inf, np.nan])), [np.inf, np.nan, 0.0, np.nan],
                 rtol=0)
    assert_close(sp.expi(np.array([0.0, np.inf, -np.inf, np.nan])),
                 [-np.inf, np.inf, 0.0, np.nan], rtol=0)
    assert_close(sp.erfcx(np.array([-27.0, np.inf, np.nan])), [np.inf, 0.0, np.nan], rtol=0)


def test_derivatives_are_the_closed_forms():
    x = qnp.array([-3.0, -0.5, 0.25, 1.5, 2.5, 25.0])
    d = quabla.vmap(quabla.grad(sp.i0e))(x)
    assert_close(d, np.asarray(sp.i1e(x)) - np.sign(np.asarray(x)) * np.asarray(sp.i0e(x)),
                 rtol=1e-14)
    assert float(quabla.grad(sp.i1e)(0.0)) == 0.5
    assert_close(quabla.grad(sp.i0)(1.5), sp.i1(1.5), rtol=1e-14)
    p = qnp.array([0.5, 1.0, 3.0, 50.0])
    assert_close(quabla.vmap(quabla.grad(sp.exp1))(p), -np.exp(-np.asarray(p)) / np.asarray(p),
                 rtol=1e-14)
    assert_close(quabla.vmap(quabla.grad(sp.expi))(p), np.exp(np.asarray(p)) / np.asarray(p),
                 rtol=1e-14)
    e = qnp.array([-2.0, 0.5, 3.0])
    want = 2 * np.asarray(e) * np.asarray(sp.erfcx(e)) - 2 / math.sqrt(math.pi)
    assert_close(quabla.vmap(quabla.grad(sp.erfcx))(e), want, rtol=1e-13)
    for f, args in [(sp.i0e, (-1.3,)), (sp.i1e, (0.7,)), (sp.i1, (2.2,)), (sp.erfcx, (1.2,)),
                    (sp.exp1, (2.5,)), (sp.expi, (-1.5,))]:
        check_grads(f, args, order=2, modes=("fwd", "rev"))
    assert_close(quabla.jit(sp.expi)(qnp.array([0.5, 50.0])), [EXPI[6], sp.expi(50.0)],
                 rtol=8 * EPS)


def test_bernoulli_numbers():
    def exact(n):
        b = [Fraction(1)]
        for m in range(1, n + 1):
            b.append(-sum(Fraction(math.comb(m + 1, k)) * b[k] for k in range(m)) / (m + 1))
        return [float(v) for v in b]

    got = sp.bernoulli(12)
    assert_close(got, [1, -0.5, 1 / 6, 0, -1 / 30, 0, 1 / 42, 0, -1 / 30, 0, 5 / 66, 0,
                       -691 / 2730], rtol=1e-15)
    assert_close(sp.bernoulli(30), exact(30), rtol=1e-15)
    assert_close(sp.bernoulli(0), [1.0], rtol=0)
    with pytest.raises(ValueError, match="non-negative"):
        sp.bernoulli(-1)
    with pytest.raises(ValueError, match="non-negative"):
        sp.bernoulli(2.5)


def test_bessel_jn_against_mpmath():
    z = np.array(JN_Z)
    want = np.array([J0, J1, J2, J3])
    # The default n_iter (50) covers |z| up to about 20, as JAX's rule of thumb says; at 30
    # a larger one is needed.
    got = np.asarray(sp.bessel_jn(z[:-1], v=3))
    assert got.shape == (4, z.size - 1)
    assert_close(got, want[:, :-1], rtol=0, atol=4 * EPS)
    assert_close(sp.bessel_jn(z, v=3, n_iter=120), want, rtol=0, atol=4 * EPS)
    # J_k(0): 1 for k = 0, else 0 (JAX's gives NaN there).
    assert_close(sp.bessel_jn(np.array([0.0]), v=2)[:, 0], [1.0, 0.0, 0.0], rtol=0)
    # Its derivative: J0' = -J1, and J1' = J0 - J1 / z.
    x = qnp.array([0.5, 3.0, 11.0])
    d0 = quabla.vmap(quabla.grad(lambda t: sp.bessel_jn(t, v=1)[0]))(x)
    d1 = quabla.vmap(quabla.grad(lambda t: sp.bessel_jn(t, v=1)[1]))(x)
    j = np.asarray(sp.bessel_jn(x, v=1))
    assert_close(d0, -j[1], rtol=1e-12)
    assert_close(d1, j[0] - j[1] / np.asarray(x), rtol=1e-12)
    with pytest.raises(ValueError, match="non-negative integer"):
        sp.bessel_jn(x, v=-1)
    with pytest.raises(ValueError, match="positive integer"):
        sp.bessel_jn(x, v=1, n_iter=0)


def test_dawsn_derivative_and_symmetry():
    x = qnp.array([-4.0, -0.3, 0.0, 2.0, 7.0, 9.0])
    d = quabla.vmap(quabla.grad(sp.dawsn))(x)
    assert_close(d, 1 - 2 * np.asarray(x) * np.asarray(sp.dawsn(x)), rtol=1e-13, atol=1e-16)
    assert_close(sp.dawsn(-x), -np.asarray(sp.dawsn(x)), rtol=0)
    check_grads(sp.dawsn, (1.3,), order=2, modes=("fwd", "rev"))
