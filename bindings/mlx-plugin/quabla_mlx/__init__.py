"""Quabla's MLX backend plugin. Installing this wheel is all it takes: the `quabla` package
finds the plugin through the `quabla_plugins` entry point, and `device="mlx"` (or
`QUABLA_PLATFORMS=mlx`) selects it. MLX itself comes from the `mlx-cpu` wheel this one
depends on; the library finds it through its rpath (`$ORIGIN/../mlx/lib`).

    >>> import quabla_mlx, os
    >>> os.path.basename(quabla_mlx.plugin_path()).startswith("libquabla_mlx")
    True
"""

import os

__all__ = ["plugin_path"]


def plugin_path() -> str:
    """The plugin library shipped in this package."""
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("libquabla_mlx") and name.endswith((".so", ".dylib")):
            return os.path.join(here, name)
    raise FileNotFoundError(f"quabla-mlx: no plugin library in {here}")
