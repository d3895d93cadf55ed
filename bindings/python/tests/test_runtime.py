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


def test_block_until_ready_returns_the_array_and_works_under_jit():
    x = qnp.arange(4.0)
    y = x * 2.0
    assert y.block_until_ready() is y
    # A traced value has nothing to wait for.
    f = quabla.jit(lambda a: (a + 1.0).block_until_ready() * 3.0)
    np.testing.assert_array_equal(np.asarray(f(x)), [3.0, 6.0, 9.0, 12.0])


def test_copy_to_host_async_then_reads_give_the_values():
    x = qnp.arange(6.0).reshape(2, 3) * 2.0
    assert x.copy_to_host_async() is None
    x.copy_to_host_async()  # a second start while one is pending does nothing
    np.testing.assert_array_equal(np.asarray(x), [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]])
    # The pending copy was taken by that read; later reads copy again.
    assert x.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    # Every dtype's bytes come back through the pending copy.
    for dtype in ("float32", "float64", "int32", "uint32", "bool"):
        y = (qnp.arange(5) % 2).astype(dtype)
        y.copy_to_host_async()
        np.testing.assert_array_equal(np.asarray(y), (np.arange(5) % 2).astype(dtype))
    # A loop's losses: each step's copy started before the next step is queued.
    step = quabla.jit(lambda w: (w * 0.5, qnp.sum(w * w)))
    w, losses, pending = qnp.ones(4), [], None
    for _ in range(3):
        w, loss = step(w)
        loss.copy_to_host_async()
        if pending is not None:
            losses.append(pending.item())
        pending = loss
    losses.append(pending.item())
    assert losses == [4.0, 1.0, 0.25]
    # A traced value has nothing to copy yet.
    f = quabla.jit(lambda a: (a.copy_to_host_async(), a + 1.0)[1])
    np.testing.assert_array_equal(np.asarray(f(qnp.zeros(2))), [1.0, 1.0])


def test_numpy_views_are_read_only_as_jax_s_and_copies_are_writable():
    x = qnp.arange(3.0)
    view = np.asarray(x)
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 5.0
    copy = np.array(x)
    copy[0] = 5.0
    assert copy.tolist() == [5.0, 1.0, 2.0]
    assert np.asarray(x).tolist() == [0.0, 1.0, 2.0]
    as_f32 = np.asarray(x, dtype=np.float32)
    assert as_f32.dtype == np.float32 and as_f32.tolist() == [0.0, 1.0, 2.0]
    assert np.asarray(x, dtype=np.float64).dtype == np.float64


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


def test_save_and_load_round_trip(tmp_path):
    import dataclasses
    from quabla.tree_util import register_dataclass

    tree = {"params": [qnp.asarray(np.arange(6.0).reshape(2, 3)), qnp.ones(2, np.float32)],
            "step": qnp.asarray(np.int32(7)), "mask": qnp.asarray(np.array([True, False])),
            "none": None, "pair": (qnp.zeros((), np.uint32), 2.5)}
    p = tmp_path / "ckpt.safetensors"
    quabla.save(p, tree)
    back = quabla.load(p)
    assert set(back) == set(tree) and back["none"] is None
    assert isinstance(back["params"], list) and isinstance(back["pair"], tuple)
    for a, b in zip(quabla.tree_util.tree_leaves(tree), quabla.tree_util.tree_leaves(back)):
        a = np.asarray(qnp.asarray(a))  # Python numbers are stored as their default dtype
        assert np.asarray(b).dtype == a.dtype and np.asarray(b).tobytes() == a.tobytes()

    @register_dataclass
    @dataclasses.dataclass
    class Params:
        w: object
        b: object

    quabla.save(p, Params(qnp.ones(3), qnp.zeros(1)))
    assert set(quabla.load(p)) == {"w", "b"}
    typed = quabla.load(p, like=Params(qnp.zeros(3), qnp.zeros(1)))
    assert isinstance(typed, Params) and typed.w.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="shape"):
        quabla.load(p, like=Params(qnp.zeros(4), qnp.zeros(1)))
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x01\x00\x00\x00\x00\x00\x00\x00{")
    with pytest.raises(ValueError, match="not a valid safetensors"):
        quabla.load(bad)


def test_load_reads_files_written_by_the_safetensors_format_spec(tmp_path):
    """A file assembled by hand from the format's spec (8-byte little-endian header length,
    JSON header, raw data) loads, so files from other tools do too."""
    import json
    import struct
    data = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32).tobytes()
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 2],
                               "data_offsets": [0, len(data)]}}).encode()
    p = tmp_path / "spec.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + data)
    out = quabla.load(p)
    assert out["w"].tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_entry_point_plugins_are_found(tmp_path):
    """A plugin wheel declares `[project.entry-points.quabla_plugins]`; its target (a path, or
    a function returning one) is searched after QUABLA_PLUGIN_PATH."""
    lib = tmp_path / "libquabla_fromwheel.so"
    lib.write_bytes(b"not a shared library")
    (tmp_path / "fakeplugin.py").write_text(f"def path():\n    return {str(lib)!r}\n")
    dist = tmp_path / "fakeplugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[quabla_plugins]\nfromwheel = fakeplugin:path\n")
    r = run_python("import quabla; print(quabla._quabla.platforms())",
                   PYTHONPATH=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "'fromwheel'" in r.stdout and r.stdout.index("'cpu'") < r.stdout.index("'fromwheel'")


def _run_beside_mlx(code: str) -> None:
    """Runs `code` in a process of its own with the MLX plugin beside the CPU one (`cargo
    xtask test` names it in QUABLA_TEST_MLX_PLUGIN); it must print `ok`."""
    lib = os.environ.get("QUABLA_TEST_MLX_PLUGIN")
    if not lib or not os.path.isfile(lib):
        pytest.skip("no second platform: QUABLA_TEST_MLX_PLUGIN names no MLX plugin")
    env = dict(os.environ, QUABLA_PLUGIN_PATH=lib)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_jit_with_a_device_makes_numpy_arguments_there():
    """As `jax.jit(f, device=d)` places uncommitted arguments on `d`: numpy arrays and
    Python numbers passed to a jit bound to another platform are made there (they used to
    land on the default device and meet the jit's arrays on another). Run in a process of
    its own with the MLX plugin (`cargo xtask test` names it in QUABLA_TEST_MLX_PLUGIN)."""
    code = (
        "import numpy as np, quabla\n"
        "f = quabla.jit(lambda x, s: x * s, device='mlx')\n"
        "y = f(np.arange(3.0, dtype=np.float32), 2.0)\n"
        "assert y.device.platform == 'mlx', y.device\n"
        "assert np.asarray(y).tolist() == [0.0, 2.0, 4.0], y\n"
        "z = quabla.jit(lambda x: x + 1)(np.ones(2, np.float32))\n"
        "assert z.device.platform == quabla.default_backend(), z.device\n"
        "print('ok')\n")
    _run_beside_mlx(code)


def test_default_device_scopes_and_config_on_one_platform():
    with quabla.default_device(quabla.devices("cpu")[0]):
        assert qnp.ones(2).device.platform == "cpu"
        assert quabla.default_backend() == "cpu"
    with quabla.default_device(None):  # JAX's "no override"
        assert qnp.ones(2).device.platform == quabla.default_backend()
    with pytest.raises(TypeError, match="Device or a platform name"):
        with quabla.default_device(3):
            pass
    with pytest.raises(quabla._quabla.BackendError):
        with quabla.default_device("no_such_platform"):
            pass
    quabla.config.update("jax_default_device", "cpu")
    try:
        assert quabla.config.jax_default_device == "cpu"
        assert qnp.zeros(1).device.platform == "cpu"
    finally:
        quabla.config.update("jax_default_device", None)


def test_default_device_moves_new_arrays_and_jit_arguments():
    """`with quabla.default_device(d)` (innermost first, this thread, over the config
    option) on two platforms: the MLX plugin beside the CPU one, in a process of its own
    (`cargo xtask test` names it in QUABLA_TEST_MLX_PLUGIN)."""
    code = (
        "import threading, numpy as np, quabla, quabla.numpy as qnp\n"
        "first = qnp.ones(2).device.platform\n"
        "other = 'cpu' if first == 'mlx' else 'mlx'\n"
        "with quabla.default_device(other):\n"
        "    assert qnp.ones(2).device.platform == other\n"
        "    y = quabla.jit(lambda x: x * 2.0)(np.arange(3.0, dtype=np.float32))\n"
        "    assert y.device.platform == other and np.asarray(y).tolist() == [0, 2, 4]\n"
        "    seen = []\n"
        "    t = threading.Thread(target=lambda: seen.append(qnp.ones(1).device.platform))\n"
        "    t.start(); t.join()\n"
        "    assert seen == [first], seen  # a scope is its thread's\n"
        "    with quabla.default_device(quabla.Device(first)):\n"
        "        assert qnp.ones(2).device.platform == first\n"
        "    assert qnp.zeros(2).device.platform == other\n"
        "assert qnp.ones(2).device.platform == first\n"
        "quabla.config.update('jax_default_device', other)\n"
        "assert qnp.ones(2).device.platform == other\n"
        "with quabla.default_device(first):\n"
        "    assert qnp.ones(2).device.platform == first\n"
        "quabla.config.update('jax_default_device', None)\n"
        "assert qnp.ones(2).device.platform == first\n"
        "print('ok')\n")
    _run_beside_mlx(code)
