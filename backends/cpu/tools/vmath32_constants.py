"""Prints the polynomial constants of the f32 kernels in `backends/cpu/src/vmath/inverse.rs`
(`ATAN_A`) and `erf.rs` (`ERF_Q`, `ERFC_P`) with mpmath.

    pip install mpmath && python3 backends/cpu/tools/vmath32_constants.py

The Rust tests measure the kernels against libm (and, when asked, on all 2^32 inputs); this
script only records where the numbers came from.
"""
import mpmath as mp

from exp64_constants import poly

mp.mp.dps = 40

# erfc(x) = t exp(-x^2 + P(t)) with t = K / (K + x); fitted for x in [0, ERFC_CLAMP].
K = 3
ERFC_CLAMP = 11


def atan_a(z):
    # (atan u - u) / u^3 with z = u^2.
    if z == 0:
        return mp.mpf(-1) / 3
    u = mp.sqrt(z)
    return (mp.atan(u) - u) / (u * z)


def erf_q(z):
    # erf(u) / u with z = u^2.
    if z == 0:
        return 2 / mp.sqrt(mp.pi)
    u = mp.sqrt(z)
    return mp.erf(u) / u


def erfc_p(t):
    x = K / t - K
    return mp.log(mp.erfc(x) / t) + x * x


if __name__ == "__main__":
    # |u| <= tan(pi/8) after the reductions by pi/2 and pi/4 (and a little).
    poly("ATAN_A", atan_a, 0, mp.tan(mp.pi / 8) ** 2 * (1 + mp.mpf("1e-6")), 8)
    # |x| <= 1/2: erf(x) = x Q(x^2).
    poly("ERF_Q", erf_q, 0, "0.25", 6)
    poly("ERFC_P", erfc_p, mp.mpf(K) / (K + ERFC_CLAMP), 1, 14)
