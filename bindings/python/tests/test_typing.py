"""The package's annotations and the extension's stub satisfy mypy (as users' type checkers
will read them)."""

import os
import subprocess
import sys
import textwrap

import pytest


def test_mypy_accepts_the_package_and_user_code(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (cargo xtask test installs it)")
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent("""
        import quabla
        import quabla.numpy as qnp
        from quabla import _quabla

        x: quabla.Array = qnp.ones(3)
        r: _quabla.RawArray = x._raw.unary("sin")
        n: str = r.dtype
        g = quabla.grad(lambda v: qnp.sum(v ** 2))(x)
    """))
    for target in (["-p", "quabla"], [str(user)]):
        r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *target],
                           capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ),
                           timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
