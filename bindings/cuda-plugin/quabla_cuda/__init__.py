"""Quabla's CUDA backend plugin. Installing this wheel is all it takes: the `quabla`
package finds the plugin through the `quabla_plugins` entry point, and `device="cuda"` (or
`QUABLA_PLATFORMS=cuda`) selects it. NVRTC comes from the `nvidia-cuda-nvrtc` wheel this one
depends on: `plugin_path()` points the plugin at it (`QUABLA_NVRTC_DIR`, unless already set).

cuBLAS (matrix products) and cuSOLVER (the dense factorizations) are used where the system
has them, or from NVIDIA's wheels: `pip install "quabla-cuda[libs]"` installs them, and
`plugin_path()` loads them from there (in their dependency order, their symbols global), so
that the plugin, which opens them by name, finds them. Without them matrix products run on
the plugin's own kernels and the factorizations are declined (the CPU backend runs them).

    >>> import quabla_cuda, os
    >>> os.path.basename(quabla_cuda.plugin_path()).startswith("libquabla_cuda")
    True
"""

import ctypes
import os
import warnings

__all__ = ["plugin_path"]

# The libraries the plugin opens by name for cuBLAS and cuSOLVER, each after those it needs
# (NVIDIA's wheels set no RUNPATH: a library's dependencies resolve only to ones loaded).
_LIBRARIES = (
    "libnvJitLink.so.13",
    "libcusparse.so.12",
    "libcublasLt.so.13",
    "libcublas.so.13",
    "libcusolver.so.12",
)


def _nvidia_lib_dirs():
    """The library folders of NVIDIA's wheels (`nvidia/<name>/lib`), if any is installed."""
    try:
        import nvidia
    except ImportError:
        return []
    dirs = []
    for root in getattr(nvidia, "__path__", []):
        for sub in sorted(os.listdir(root)):
            lib = os.path.join(root, sub, "lib")
            if os.path.isdir(lib):
                dirs.append(lib)
    return dirs


def _nvrtc_dir():
    """The `nvidia-cuda-nvrtc` wheel's library folder, if installed."""
    for lib in _nvidia_lib_dirs():
        if os.path.isfile(os.path.join(lib, "libnvrtc.so.13")):
            return lib
    return None


def _preload(dirs):
    """Loads the CUDA libraries of `_LIBRARIES` found in `dirs`, in order, with global
    symbols; returns the names loaded. One that is found but does not load is named in a
    warning (the plugin then runs without it and says what it lacks).

    >>> _preload([])
    []
    """
    loaded = []
    for name in _LIBRARIES:
        path = next((os.path.join(d, name) for d in dirs
                     if os.path.isfile(os.path.join(d, name))), None)
        if path is None:
            continue
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            warnings.warn(f"quabla-cuda: {path} did not load ({e}); running without it",
                          RuntimeWarning, stacklevel=3)
            continue
        loaded.append(name)
    return loaded


def plugin_path() -> str:
    """The plugin library shipped in this package (NVRTC's folder made known to it, and
    NVIDIA's cuBLAS and cuSOLVER wheels' libraries loaded where installed)."""
    lib = _nvrtc_dir()
    if lib is not None:
        os.environ.setdefault("QUABLA_NVRTC_DIR", lib)
    _preload(_nvidia_lib_dirs())
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("libquabla_cuda") and name.endswith(".so"):
            return os.path.join(here, name)
    raise FileNotFoundError(f"quabla-cuda: no plugin library in {here}")
