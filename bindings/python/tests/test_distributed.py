"""Data parallelism through the MPI plugin: each test starts `mpirun` with a rank script from
`mpi_ranks/`. `cargo xtask test` builds the plugin against OpenMPI and points
QUABLA_TEST_MPI_PLUGIN at it; without it these skip.

Tolerance of the training check (2e-5, absolute plus relative): data-parallel and full-batch
training differ only in how the batch mean is rounded (the mean of two half-batch means, a few
float32 ulps of each gradient); Adam divides each update by the root of its second moment, so
such an error moves an update by about as much relative to the learning rate (1e-2), and 200
steps add at most 200 of them: a few 1e-6 (measured: 1.8e-7). That holds where no gradient
component is zero up to rounding: Adam's first steps move each parameter by about the learning
rate along its gradient's sign, which such a component would take from the rounding, so the
rank scripts avoid symmetric problems. A real error (gradients summed instead of averaged) moves
parameters by 1e-2 or more.
"""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def _mpirun(ranks, script):
    lib = os.environ.get("QUABLA_TEST_MPI_PLUGIN")
    if not lib or not os.path.isfile(lib):
        pytest.skip("no MPI plugin: QUABLA_TEST_MPI_PLUGIN names none (cargo xtask test sets it)")
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun (cargo xtask mpi installs OpenMPI)")
    env = dict(os.environ, QUABLA_PLUGIN_PATH=lib, QUABLA_COLLECTIVE_TIMEOUT="120")
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
           "--mca", "btl_vader_single_copy_mechanism", "none",
           sys.executable, os.path.join(HERE, "mpi_ranks", script)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert text.count("RANK_OK") == ranks, text
    return text


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_collective_and_dtype_matches_numpy(ranks):
    _mpirun(ranks, "collectives.py")


def test_data_parallel_trainer_equals_the_full_batch_run():
    print(_mpirun(2, "trainer.py"))
