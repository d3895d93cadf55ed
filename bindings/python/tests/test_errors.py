"""Core errors raise by kind: ValueError for argument values, TypeError for shapes and
dtypes (as JAX's primitives), NotImplementedError for an op the device's backend lacks,
quabla.QuablaInternalError for Quabla's own bugs."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import _quabla

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _toy_library():
    name = "libquabla_toy_backend.so"
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / name
        if p.is_file():
            return p
    return None


_TOY_SNIPPET = """
import os, numpy as np, quabla, quabla.numpy as qnp
from quabla import _quabla
_quabla.add_plugin_path(os.environ["TOY_LIBRARY"], fallback=True)
x = quabla.device_put(np.array([0.5, 1.0], np.float32), "toy")
np.testing.assert_allclose(np.asarray(qnp.exp(x)), np.exp([0.5, 1.0]), rtol=1e-6)
try:
    qnp.sin(x)
except NotImplementedError as e:
    print("NotImplementedError:", e)
"""


def test_an_op_the_backend_lacks_raises_not_implemented():
    # In a child process: the toy plugin stays registered in the process that loads it.
    lib = _toy_library()
    if lib is None:
        pytest.skip("the toy example plugin is not built (cargo build -p quabla-toy-backend)")
    env = dict(os.environ, TOY_LIBRARY=os.fspath(lib))
    out = subprocess.run([sys.executable, "-c", _TOY_SNIPPET], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "NotImplementedError: `sin` is not implemented by the `toy` backend" in out.stdout


def test_argument_values_raise_value_error():
    with pytest.raises(ValueError, match="strictly increasing"):
        quabla.odeint(lambda y, t: -y, np.ones(1), np.array([0.0, 1.0, 0.5]))


def test_shapes_and_dtypes_raise_type_error():
    with pytest.raises(TypeError, match="broadcast"):
        qnp.ones(3) + qnp.ones(4)
    with pytest.raises(TypeError, match="float"):
        quabla.grad(lambda x: qnp.sum(x))(qnp.asarray(np.array([1, 2], np.int32)))


def test_internal_errors_are_quabla_errors_and_not_value_or_type_errors():
    assert issubclass(quabla.QuablaInternalError, quabla.QuablaError)
    assert not issubclass(quabla.QuablaInternalError, (ValueError, TypeError))
