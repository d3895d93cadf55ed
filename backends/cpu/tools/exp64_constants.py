"""Prints the constants of `backends/cpu/src/vmath/exp64.rs`, `log64.rs` and `trig64.rs` with
mpmath.

    python3 backends/cpu/tools/exp64_constants.py

The Rust tests measure the kernels against an independent double-double reference; this
script only records where the numbers came from.
"""
import struct

import mpmath as mp

mp.mp.dps = 60


def bits(x: float) -> str:
    return "0x%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]


def reduction() -> None:
    v = mp.log(2)
    # 42 significant bits: k * LN2_HI is exact for every |k| < 2^11.
    e = int(mp.floor(mp.log(v, 2)))
    hi = float(mp.nint(v * mp.mpf(2) ** (41 - e)) / mp.mpf(2) ** (41 - e))
    lo = float(v - mp.mpf(hi))
    print("const LN2_HI: f64 = f64::from_bits(%s);" % bits(hi))
    print("const LN2_LO: f64 = f64::from_bits(%s);" % bits(lo))
    print("const LN2_TAIL: f64 = f64::from_bits(%s);" % bits(float(v - mp.mpf(float(v)))))


def poly(name, f, lo, hi, degree) -> None:
    c, err = mp.chebyfit(f, [mp.mpf(lo), mp.mpf(hi)], degree + 1, error=True)
    print("// %s: chebyfit error %s" % (name, mp.nstr(err, 3)))
    print("const %s: [f64; %d] = [" % (name, degree + 1))
    for x in reversed(c):
        print("    f64::from_bits(%s), // %s" % (bits(float(x)), mp.nstr(x, 17)))
    print("];")


def expm1_q(r):
    # (e^r - 1 - r) / r^2
    return mp.mpf(1) / 2 if r == 0 else (mp.exp(r) - 1 - r) / (r * r)


def tanh_p(z):
    # (tanh(a) - a) / a^3 with z = a^2.
    if z == 0:
        return mp.mpf(-1) / 3
    a = mp.sqrt(z)
    return (mp.tanh(a) - a) / (a * z)


def sinh_p(z):
    # (sinh a - a) / a^3 with z = a^2.
    if z == 0:
        return mp.mpf(1) / 6
    a = mp.sqrt(z)
    return (mp.sinh(a) - a) / (a * z)


def log_p(z):
    # (2 atanh(s) - 2 s) / s^3 with z = s^2.
    if z == 0:
        return mp.mpf(2) / 3
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (s * z)


def sin_s(z):
    # (sin r - r) / r^3 with z = r^2.
    if z == 0:
        return mp.mpf(-1) / 6
    r = mp.sqrt(z)
    return (mp.sin(r) - r) / (r * z)


def cos_c(z):
    # (cos r - 1 + r^2 / 2) / r^4 with z = r^2.
    if z == 0:
        return mp.mpf(1) / 24
    r = mp.sqrt(z)
    return (mp.cos(r) - 1 + z / 2) / (z * z)


if __name__ == "__main__":
    reduction()
    poly("EXPM1_Q", expm1_q, "-0.35", "0.35", 10)
    poly("TANH_P", tanh_p, "0", "0.3025", 10)
    poly("SINH_P", sinh_p, "0", "1", 6)
    # s = f / (2 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: s^2 <= (3 - 2 sqrt 2)^2 < 0.02944.
    poly("LOG_P", log_p, "0", "0.02944", 7)
    # |r| <= pi/4 (and a little) after the reduction by pi/2.
    quarter = (mp.pi / 4 + mp.mpf("1e-9")) ** 2
    poly("SIN_S", sin_s, 0, quarter, 6)
    poly("COS_C", cos_c, 0, quarter, 5)
