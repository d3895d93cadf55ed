"""Packs the CUDA plugin library that cargo built (`QUABLA_CUDA_PLUGIN_PREBUILT`, set by
`cargo xtask test`; see README.md) into a platform wheel."""

import os
import shutil

from setuptools import setup
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


class BinaryDistribution(Distribution):
    # The package holds a native library: the wheel is tagged for this platform.
    def has_ext_modules(self):
        return True


prebuilt = os.environ.get("QUABLA_CUDA_PLUGIN_PREBUILT")
target = os.path.join(HERE, "quabla_cuda")
if prebuilt:
    shutil.copy(prebuilt, os.path.join(target, os.path.basename(prebuilt)))
elif not any(f.startswith("libquabla_cuda") for f in os.listdir(target)):
    raise SystemExit(
        "quabla-cuda: set QUABLA_CUDA_PLUGIN_PREBUILT to the plugin library built with "
        "`cargo build --release -p quabla-cuda`")

setup(distclass=BinaryDistribution)
