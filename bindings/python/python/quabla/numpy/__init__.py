"""``quabla.numpy``: numpy's API on Quabla arrays (``import quabla.numpy as qnp``).

Functions trace when given traced arrays, so they work inside ``jit``, ``grad`` and ``vmap``.
Default dtypes follow JAX: Python floats are float32, Python ints int32; numpy arrays keep
their dtype, except float64, which needs ``jax_enable_x64`` (``quabla.config``).
"""

from .._src.array import Array
from .._src.dtypes import bool_, float32, float64, int32, uint32
from .._src.dtypes import result_type
from .._src.numpy.creation import (
    arange, array, asarray, empty, empty_like, eye, from_dlpack, full, full_like, identity,
    copy, linspace, ones, ones_like, zeros, zeros_like,
)
from .._src.numpy.elementwise import (
    abs, absolute, acos, acosh, add, allclose, arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
    arctanh, around, array_equal, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_or,
    bitwise_xor, cbrt, ceil, clip, copysign, cos, cosh, deg2rad, divide, equal, exp, exp2, expm1,
    floor, floor_divide, fmod, greater, greater_equal, hypot, isclose, isfinite, isinf, isnan,
    isneginf, isposinf, less, less_equal, log, log1p, log2, log10, logaddexp, logical_and,
    logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, nan_to_num, negative,
    not_equal, power, rad2deg, reciprocal, remainder, round, sign, signbit, sin, sinc, sinh,
    sqrt, square, subtract, tan, tanh, true_divide, where,
)
from .._src.numpy.floating import frexp, ldexp, nextafter, spacing
from .._src.numpy.ufuncs import frompyfunc, ufunc
from .._src.numpy.standard_ufuncs import as_ufuncs as _as_ufuncs
from .._src.numpy.misc import (
    argwhere, convolve, correlate, diff, flatnonzero, interp, meshgrid, nonzero, polyval, take,
    take_along_axis, trapezoid,
)
from .._src.numpy.quantiles import (
    median, nanmedian, nanpercentile, nanquantile, percentile, quantile,
)
from .._src.numpy.setops import (
    intersect1d, isin, setdiff1d, setxor1d, union1d, unique, unique_all, unique_counts,
    unique_inverse, unique_values,
)
from .._src.numpy.nan_reductions import (
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd,
    nansum, nanvar,
)
from .._src.numpy.statistics import (
    average, bincount, corrcoef, cov, digitize, histogram, histogram2d, histogram_bin_edges,
    histogramdd, ptp,
)
from .._src.numpy.polynomial import (
    bartlett, blackman, divmod, ediff1d, gradient, hamming, hanning, heaviside, polyadd,
    poly, polydiv, polyder, polyfit, polyint, polymul, polysub,
)
from .._src.numpy.assorted import (
    array_equiv, array_split, atleast_3d, bitwise_not, choose, column_stack, compress,
    degrees, diagflat, dsplit, dstack, extract, fabs, fill_diagonal, float_power, fmax, fmin,
    gcd, hsplit, indices, invert, lcm, left_shift, logaddexp2, modf, put_along_axis, radians,
    resize, right_shift, rint, rollaxis, tri, trim_zeros, unwrap, vsplit,
)
from .._src.numpy.index_tricks import (
    diag_indices, diag_indices_from, fromfunction, geomspace, index_exp, ix_, logspace,
    mask_indices, mgrid, ogrid, ravel_multi_index, rot90, s_, tril_indices, tril_indices_from,
    triu_indices, triu_indices_from, unravel_index, vander,
)
from .._src.numpy.functional import apply_along_axis, apply_over_axes, vectorize
# numpy.i0 is scipy.special.i0 (the modified Bessel function of order 0), as in JAX.
from .._src.scipy.special_series import i0
from .._src.numpy.in_place_forms import block, place, put
from .._src.numpy.introspection import (
    floating, generic, inexact, integer, iscomplex, iscomplexobj, isreal, isrealobj, isscalar,
    issubdtype, iterable, number, promote_types, signedinteger, unsignedinteger,
)
from .._src.numpy.numpy_files import load, save, savez, savez_compressed
from .._src.numpy.packbits import packbits, unpackbits
from .._src.numpy.odds import (
    angle, array_repr, array_str, bitwise_count, c_, einsum_path, euler_gamma, frombuffer,
    fromfile, fromiter, fromstring, get_printoptions, kaiser, printoptions, r_, set_printoptions,
)
from .._src.numpy.sorting import (
    argpartition, argsort, lexsort, partition, searchsorted, sort,
)
from .._src.numpy.array_api import (
    __array_api_version__, __array_namespace_info__, astype, bitwise_invert,
    bitwise_left_shift, bitwise_right_shift, can_cast, concat, imag, isdtype,
    matrix_transpose, positive, trunc, unstack, vecdot,
)
from .._src.numpy.selection import (
    append, cumulative_prod, cumulative_sum, delete, insert, piecewise, select,
)
from .._src.numpy.products import (
    cross, dot, einsum, inner, kron, matmul, matvec, outer, tensordot, vdot, vecmat,
)
from .._src.numpy.reductions import (
    all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, max, mean, min, prod,
    std, sum, var,
)
from .._src.numpy.shape import (
    atleast_1d, atleast_2d, broadcast_arrays, broadcast_shapes, broadcast_to, concatenate, diag,
    diagonal, expand_dims, flip, fliplr, flipud, hstack, moveaxis, pad, permute_dims, ravel,
    repeat, reshape, roll, split, squeeze, stack, swapaxes, tile, trace, transpose, tril, triu,
    vstack,
)
import numpy as _np

from . import fft, linalg  # noqa: E402

ndarray = Array
pi = float(_np.pi)
e = float(_np.e)
inf = float("inf")
nan = float("nan")
newaxis = None
dtype = _np.dtype
finfo = _np.finfo
iinfo = _np.iinfo
pow = power  # noqa: A001
# numpy's other scalar types, as jax.numpy names them: usable as dtype arguments, which
# Quabla maps to the dtypes it has (int64 -> int32 without x64 ints, float16 -> float32;
# see dtypes.canonicalize).
bool = _np.bool_  # noqa: A001
int8, int16, int64 = _np.int8, _np.int16, _np.int64
uint8, uint16, uint64 = _np.uint8, _np.uint16, _np.uint64
float16 = _np.float16
single, double = _np.float32, _np.float64
float_, int_, uint = _np.float64, _np.int64, _np.uint64
character, flexible, object_ = _np.character, _np.flexible, _np.object_


def conj(x):
    """Quabla has no complex dtypes: the identity."""
    return asarray(x)


conjugate = conj
real = conj


def shape(a):
    return asarray(a).shape


def ndim(a):
    return asarray(a).ndim


def size(a):
    return asarray(a).size


# JAX's ufuncs as ufunc objects (`add.reduce`, `subtract.outer`, `maximum.at`...).
globals().update(_as_ufuncs({name: globals()[name] for name in (
    "add", "subtract", "multiply", "maximum", "minimum", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2",
    "negative")}))
