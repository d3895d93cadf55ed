"""Quabla's CUDA backend plugin. Installing this wheel is all it takes: the `quabla`
package finds the plugin through the `quabla_plugins` entry point, and `device="cuda"` (or
`QUABLA_PLATFORMS=cuda`) selects it. NVRTC comes from the `nvidia-cuda-nvrtc` wheel this one
depends on: `plugin_path()` points the plugin at it (`QUABLA_NVRTC_DIR`, unless already set).

    >>> import quabla_cuda, os
    >>> os.path.basename(quabla_cuda.plugin_path()).startswith("libquabla_cuda")
    True
"""

import os

__all__ = ["plugin_path"]


def _nvrtc_dir():
    """The `nvidia-cuda-nvrtc` wheel's library folder, if installed."""
    try:
        import nvidia
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        lib = os.path.join(root, "cu13", "lib")
        if os.path.isfile(os.path.join(lib, "libnvrtc.so.13")):
            return lib
    return None


def plugin_path() -> str:
    """The plugin library shipped in this package (and NVRTC's folder made known to it)."""
    lib = _nvrtc_dir()
    if lib is not None:
        os.environ.setdefault("QUABLA_NVRTC_DIR", lib)
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("libquabla_cuda") and name.endswith(".so"):
            return os.path.join(here, name)
    raise FileNotFoundError(f"quabla-cuda: no plugin library in {here}")
