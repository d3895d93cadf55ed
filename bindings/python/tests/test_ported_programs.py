"""Whole JAX programs run on Quabla with only their imports changed (issue 20's promise),
against the same programs run by JAX 0.10.2 (tests/goldens/jax_ported_programs.json; the
programs live in tools/programs.py, shared with the recorder)."""

import os
import sys

import quabla
import quabla.numpy as qnp
from conftest import assert_close, dec, golden

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import mlp_classifier_program, stax_program  # noqa: E402

G = golden("jax_ported_programs")


def test_mlp_classifier_from_jax_examples_runs_unchanged():
    # logsumexp from scipy.special, a jitted update over a list of (w, b) tuples of numpy
    # arrays, f"{loss:.3e}" logging, accuracy from argmax and a mean of booleans.
    log, acc, params = mlp_classifier_program(quabla, qnp)
    want = G["mlp_classifier"]
    assert log == want["log"]
    assert abs(acc - want["accuracy"]) < 1e-6
    for (w, b), (ww, wb) in zip(params, want["params"]):
        assert_close(w, dec(ww), rtol=1e-10, atol=1e-12)
        assert_close(b, dec(wb), rtol=1e-10, atol=1e-12)


def test_example_libraries_stax_and_optimizers_run_jax_style_code():
    # serial/parallel/FanOut/FanInSum/Dense/Relu/Tanh/LogSoftmax, glorot-normal weights,
    # optimizers.adam with an exponential_decay schedule, a jitted update with the step as a
    # traced int: JAX's numbers (the schedule divides the int step in float64, as JAX).
    w0, out_shape, losses = stax_program(quabla, qnp)
    want = G["stax"]
    assert list(out_shape) == want["out_shape"]
    assert_close(w0, dec(want["w0"]), rtol=1e-12, atol=1e-14)
    assert_close(losses, want["losses"], rtol=1e-10)
