"""``quabla.scipy.signal``: direct convolutions and ``detrend``, as ``jax.scipy.signal``."""

from .._src.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, fftconvolve,
)
from .._src.scipy.signal_detrend import detrend  # noqa: F401

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]
