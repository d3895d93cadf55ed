"""The Python twin of the PINN main job trains (a short run; the full run's numbers are in
the issue notes)."""

import importlib.util
import os

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
