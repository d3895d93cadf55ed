"""numpy's ``.npy``/``.npz`` files, as ``jax.numpy``: ``save``/``savez``/``savez_compressed``
are numpy's own (they read arrays through ``__array__``); ``load`` gives a Quabla array for
an ``.npy`` file. (``quabla.save``/``quabla.load`` keep pytrees in safetensors files.)"""

from __future__ import annotations

import numpy as np

from .creation import asarray

save = np.save
savez = np.savez
savez_compressed = np.savez_compressed


def load(file, *args, **kwargs):
    """``numpy.load``, with an array read from an ``.npy`` file made a Quabla array (an
    ``.npz`` archive comes back as numpy's lazy ``NpzFile``, as in JAX)."""
    out = np.load(file, *args, **kwargs)
    return asarray(out) if isinstance(out, np.ndarray) else out
