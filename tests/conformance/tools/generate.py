#!/usr/bin/env python3
"""Regenerates every conformance golden under tests/conformance/cases/.

One command, from anywhere:  python3 tests/conformance/tools/generate.py

Expected values come from numpy and mpmath (pinned below, installed by this script into
tools/.venv), never from Quabla. Goldens are committed and never edited by hand.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")
PINS = ["numpy==2.1.3", "mpmath==1.3.0"]


def ensure_venv():
    py = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", *PINS])
    os.execv(py, [py, *sys.argv])


def main():
    ensure_venv()
    sys.path.insert(0, HERE)
    import cases_linalg
    import cases_ops
    import cases_regions
    import cases_transforms
    from golden import write_groups

    out = os.path.join(os.path.dirname(HERE), "cases")
    groups = {}
    groups.update(cases_ops.build())
    groups.update(cases_linalg.build())
    groups.update(cases_regions.build())
    groups.update(cases_transforms.build())
    n = write_groups(out, groups)
    print(f"wrote {n} cases in {len(groups)} files under {out}")


if __name__ == "__main__":
    main()
