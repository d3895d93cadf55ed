"""Plugin discovery, devices and the package's own metadata."""

import os
import subprocess
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp


def test_the_cpu_plugin_ships_in_the_package():
    plugins = os.path.join(os.path.dirname(quabla.__file__), "plugins")
    assert any(f.startswith("libquabla_cpu") or f.startswith("quabla_cpu")
               for f in os.listdir(plugins))
    assert quabla.default_backend() == "cpu"
    assert quabla.devices() == [quabla.Device("cpu")]
    assert qnp.ones(2).device == quabla.Device("cpu")


def test_device_put_and_block_until_ready():
    x = quabla.device_put({"a": np.arange(3.0)}, quabla.devices()[0])
    assert x["a"].dtype == np.float64 and x["a"].block_until_ready().tolist() == [0.0, 1.0, 2.0]


def run_python(code: str, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          timeout=120)


def test_unknown_platform_is_a_clear_error():
    r = run_python("import quabla.numpy as qnp; qnp.ones(2)", QUABLA_PLATFORMS="nosuchgpu")
    assert r.returncode != 0
    assert "nosuchgpu" in r.stderr and "BackendError" in r.stderr


def test_plugin_path_takes_precedence_and_bad_files_are_reported(tmp_path):
    bad = tmp_path / "libquabla_bogus.so"
    bad.write_bytes(b"not a shared library")
    r = run_python("import quabla; print(quabla._quabla.platforms())",
                   QUABLA_PLUGIN_PATH=str(bad))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith("['bogus'")
    r = run_python("import quabla; quabla.devices('bogus')", QUABLA_PLUGIN_PATH=str(bad))
    assert r.returncode != 0 and "BackendError" in r.stderr


def test_version_and_typing_marker():
    assert quabla.__version__ == "0.1.0"
    root = os.path.dirname(quabla.__file__)
    assert os.path.exists(os.path.join(root, "py.typed"))
    assert os.path.exists(os.path.join(root, "_quabla.pyi"))


def test_concretization_error_is_a_type_error():
    assert issubclass(quabla.ConcretizationTypeError, TypeError)
    with pytest.raises(quabla.ConcretizationTypeError):
        quabla.jit(lambda x: float(x))(qnp.ones(()))
