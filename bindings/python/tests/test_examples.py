"""The Python twin of the PINN main job trains (a short run; the full run's numbers are in
the issue notes)."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.mark.x64_off
def test_pinn_example_trains():
    path = os.path.join(ROOT, "examples", "python", "pinn_poisson.py")
    spec = importlib.util.spec_from_file_location("pinn_poisson", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    history, rel = mod.main(steps=150, n=128, log_every=50)
    assert history[-1] < history[0] / 10
    assert 0.0 < rel < 1.5


def _run_pinn_example(device, lib):
    # A process of its own: the MLX plugin joins that process's registry only.
    path = os.path.join(ROOT, "examples", "python", "pinn_poisson.py")
    env = dict(os.environ, QUABLA_PLUGIN_PATH=lib)
    env.pop("JAX_ENABLE_X64", None)
    env.pop("QUABLA_ENABLE_X64", None)
    out = subprocess.run(
        [sys.executable, path, "--steps", "60", "--n", "64", "--device", device],
        env=env, capture_output=True, text=True, timeout=600, check=True).stdout
    losses = [float(m) for m in re.findall(r"step +\d+ +loss (\S+)", out)]
    rel = float(re.search(r"relative L2 error (\S+);", out).group(1))
    return out, losses, rel


def test_pinn_example_trains_on_mlx_as_on_cpu():
    """`--device mlx` trains the same network on the MLX plugin: the losses of the CPU run to
    float32 rounding (the same program runs on both). `cargo xtask test` points
    QUABLA_TEST_MLX_PLUGIN at the plugin it built against MLX."""
    lib = os.environ.get("QUABLA_TEST_MLX_PLUGIN")
    if not lib or not os.path.isfile(lib):
        pytest.skip("no MLX plugin: QUABLA_TEST_MLX_PLUGIN names none (cargo xtask test sets it)")
    out, on_mlx, rel_mlx = _run_pinn_example("mlx", lib)
    assert "PINN Poisson on `mlx`" in out
    _, on_cpu, rel_cpu = _run_pinn_example("cpu", lib)
    assert len(on_mlx) == len(on_cpu) >= 2
    assert on_mlx[-1] < on_mlx[0] / 5
    for a, b in zip(on_mlx, on_cpu):
        assert abs(a - b) <= 1e-4 * abs(b), (on_mlx, on_cpu)
    assert abs(rel_mlx - rel_cpu) <= 1e-3 * rel_cpu
