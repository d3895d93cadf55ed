"""``quabla.experimental``: ``io_callback`` (effects with results, in program order, in
loops and under vmap) and ``ode.odeint`` with JAX's keywords (an analytic solution, mxstep's
bound, hmax refused)."""

import warnings

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax
from quabla.experimental import io_callback
from quabla.experimental.ode import odeint

F32 = quabla.ShapeDtypeStruct((), np.float32)


def test_io_callback_runs_in_order_and_returns_values():
    seen = []

    def record(x):
        seen.append(float(x))
        return np.float32(len(seen))

    def body(i, c):
        return c + io_callback(record, F32, c)

    out = quabla.jit(lambda c: lax.fori_loop(0, 4, body, c))(np.float32(1.0))
    # c: 1 -> 1 + 1 = 2 -> 2 + 2 = 4 -> 4 + 3 = 7 -> 7 + 4 = 11.
    assert float(out) == 11.0 and seen == [1.0, 2.0, 4.0, 7.0]


def test_io_callback_runs_when_its_result_is_unused_and_per_element_under_vmap():
    seen = []

    def record(x):
        seen.append(float(x))
        return np.float32(0.0)

    def f(x):
        io_callback(record, F32, x)
        return x * 2

    assert float(quabla.jit(f)(np.float32(3.0))) == 6.0 and seen == [3.0]
    seen.clear()
    quabla.vmap(f)(qnp.asarray([1.0, 2.0, 3.0]))
    assert seen == [1.0, 2.0, 3.0]


def test_experimental_odeint_takes_jaxs_keywords():
    t = qnp.linspace(0.0, 2.0, 5)
    ys = odeint(lambda y, t, k: -k * y, qnp.asarray(1.5), t, 0.7, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(ys), 1.5 * np.exp(-0.7 * np.asarray(t)), rtol=1e-7)
    # Two steps per interval cannot reach the later times: NaN and a warning, as odeint's.
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        short = odeint(lambda y, t: -50.0 * y + qnp.sin(t), qnp.asarray(1.0), t, mxstep=2)
    assert np.isnan(np.asarray(short)[-1]) and any("max_steps" in str(x.message) for x in w)
    with pytest.raises(NotImplementedError, match="hmax"):
        odeint(lambda y, t: -y, qnp.asarray(1.0), t, hmax=0.1)
