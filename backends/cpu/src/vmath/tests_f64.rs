//! The f64 kernels against a double-double reference (about 100 bits, by a different method:
//! `exp` and `expm1` as Taylor series summed in double-double after a reduction by `ln 2`),
//! in ulps of the result: within the conformance suite's f64 bounds on samples of every range,
//! exact where the result is exact, NaN payloads kept, and the vector loop equal to the scalar
//! function bit for bit at every length. `worst_errors_over_ten_million_samples` (ignored)
//! prints the measured maxima.

use super::{map_f64, scalar_f64};
use quabla_abi::qir::UnaryOp;
use rayon::prelude::*;
use std::f64::consts::{FRAC_1_SQRT_2, FRAC_PI_2, FRAC_PI_4, SQRT_2};

/// `hi + lo` with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug)]
struct Dd(f64, f64);

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd(s, (a - (s - bb)) + (b - bb))
}

fn quick_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd(s, b - (s - a))
}

impl Dd {
    fn of(x: f64) -> Dd {
        Dd(x, 0.0)
    }

    fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.0, o.0);
        let t = two_sum(self.1, o.1);
        let s = quick_two_sum(s.0, s.1 + t.0);
        quick_two_sum(s.0, s.1 + t.1)
    }

    fn neg(self) -> Dd {
        Dd(-self.0, -self.1)
    }

    fn mul(self, o: Dd) -> Dd {
        let p = self.0 * o.0;
        let e = self.0.mul_add(o.0, -p);
        quick_two_sum(p, e + (self.0 * o.1 + self.1 * o.0))
    }

    fn div(self, o: Dd) -> Dd {
        let q1 = self.0 / o.0;
        let r = self.add(o.mul(Dd::of(-q1)));
        let q2 = r.0 / o.0;
        let r = r.add(o.mul(Dd::of(-q2)));
        quick_two_sum(q1, q2).add(Dd::of(r.0 / o.0))
    }

    /// `self * 2^k`, exact while both parts stay normal.
    fn scale(self, k: i32) -> Dd {
        let p = pow2(k);
        Dd(self.0 * p, self.1 * p)
    }
}

/// `2^k` exactly, subnormal or infinite where it is (`powi` computes `1 / 2^-k`, which
/// overflows below -1023).
fn pow2(k: i32) -> f64 {
    match k {
        ..=-1075 => 0.0,
        -1074..=-1023 => f64::from_bits(1 << (k + 1074)),
        -1022..=1023 => f64::from_bits(((k + 1023) as u64) << 52),
        _ => f64::INFINITY,
    }
}

const LN2: Dd = Dd(std::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);

/// `e^r - 1` for `|r| <= 0.75`: the Taylor series from the linear term, no cancellation.
fn expm1_series(r: Dd) -> Dd {
    let (mut term, mut sum) = (r, r);
    for n in 2..=40 {
        term = term.mul(r).div(Dd::of(n as f64));
        sum = sum.add(term);
    }
    sum
}

/// `(m, k)` with `e^x = m 2^k`, `m` within `[0.7, 1.5]`.
fn exp_parts(x: Dd) -> (Dd, i32) {
    let k = (x.0 / std::f64::consts::LN_2).round();
    let r = x.add(LN2.mul(Dd::of(-k)));
    (Dd::of(1.0).add(expm1_series(r)), k as i32)
}

/// `ln x` by one Newton step from libm's value: `y + (x e^-y - 1)`, in double-double.
fn log_dd(x: Dd) -> Dd {
    let y = x.0.ln();
    let (m, k) = exp_parts(Dd::of(y));
    let x = x.scale(-k / 2).scale(-(k - k / 2));
    Dd::of(y).add(x.add(m.neg()).div(m))
}

/// pi/2 as four f64 parts (mpmath), about 200 bits.
const PIO2: [u64; 4] = [
    0x3ff921fb54442d18,
    0x3c91a62633145c07,
    0xb91f1976b7ed8fbc,
    0x35b4cf98e804177d,
];

/// `sin r` and `cos r` for `|r| <= 0.8` as Taylor series in double-double.
fn sin_cos_series(r: Dd) -> (Dd, Dd) {
    let z = r.mul(r).neg();
    let (mut s_term, mut sin) = (r, r);
    let (mut c_term, mut cos) = (Dd::of(1.0), Dd::of(1.0));
    for n in 1..=25 {
        let k = 2.0 * n as f64;
        s_term = s_term.mul(z).div(Dd::of(k * (k + 1.0)));
        c_term = c_term.mul(z).div(Dd::of((k - 1.0) * k));
        sin = sin.add(s_term);
        cos = cos.add(c_term);
    }
    (sin, cos)
}

/// `(sin x, cos x)` in double-double, or `None` when `x` lies so close to a multiple of
/// pi/2 that the double-double reduction could not be trusted (random samples never do).
fn sin_cos_dd(x: f64) -> Option<(Dd, Dd)> {
    let n = (x / FRAC_PI_2).round();
    let mut r = Dd::of(x);
    for p in PIO2 {
        r = r.add(Dd::of(f64::from_bits(p)).mul(Dd::of(-n)));
    }
    if r.0.abs() < 1e-9 {
        return None;
    }
    let (s, c) = sin_cos_series(r);
    Some(match (n as i64).rem_euclid(4) {
        0 => (s, c),
        1 => (c, s.neg()),
        2 => (s.neg(), c.neg()),
        _ => (c.neg(), s),
    })
}

/// The reference value of `op` at `x`, as `(m, k)` meaning `m 2^k`; `None` outside the
/// ranges sampled here (the edge tests cover the rest).
fn reference(op: UnaryOp, x: f64) -> Option<(Dd, i32)> {
    let one = Dd::of(1.0);
    Some(match op {
        UnaryOp::Exp if (-708.0..=709.7).contains(&x) => exp_parts(Dd::of(x)),
        UnaryOp::Exp2 if (-1022.0..=1023.9).contains(&x) => exp_parts(LN2.mul(Dd::of(x))),
        UnaryOp::Expm1 if x.abs() <= 0.5 => (expm1_series(Dd::of(x)), 0),
        UnaryOp::Expm1 if (-40.0..=700.0).contains(&x) => {
            let (m, k) = exp_parts(Dd::of(x));
            (m.scale(k).add(one.neg()), 0)
        }
        UnaryOp::Tanh if x.abs() <= 22.0 => {
            let t = if x.abs() <= 0.35 {
                expm1_series(Dd::of(2.0 * x.abs()))
            } else {
                let (m, k) = exp_parts(Dd::of(2.0 * x.abs()));
                m.scale(k).add(one.neg())
            };
            let y = t.div(t.add(Dd::of(2.0)));
            (if x < 0.0 { y.neg() } else { y }, 0)
        }
        UnaryOp::Log if x > 0.0 && x.is_finite() && x != 1.0 => (log_dd(Dd::of(x)), 0),
        // Newton's step on `expm1` from libm's value: no cancellation near 0.
        UnaryOp::Log1p if x.abs() < 0.5 && x != 0.0 => {
            let y = x.ln_1p();
            let e = expm1_series(Dd::of(y));
            (Dd::of(y).add(Dd::of(x).add(e.neg()).div(one.add(e))), 0)
        }
        UnaryOp::Log1p if x > -1.0 && x.is_finite() && x != 0.0 => (log_dd(two_sum(1.0, x)), 0),
        UnaryOp::Sin if x.abs() <= 1608.0 && x != 0.0 => (sin_cos_dd(x)?.0, 0),
        UnaryOp::Cos if x.abs() <= 1608.0 => (sin_cos_dd(x)?.1, 0),
        UnaryOp::Tan if x.abs() <= 1608.0 && x != 0.0 => {
            let (s, c) = sin_cos_dd(x)?;
            (s.div(c), 0)
        }
        // e^|x| - e^-|x| cancels below 0.5: there `expm1` carries it, `(e + e/(e+1)) / 2`.
        UnaryOp::Sinh if x.abs() < 0.5 && x != 0.0 => {
            let e = expm1_series(Dd::of(x));
            (e.add(e.div(e.add(one))).mul(Dd::of(0.5)), 0)
        }
        UnaryOp::Sinh | UnaryOp::Cosh if x.abs() <= 709.0 && x != 0.0 => {
            let (m, k) = exp_parts(Dd::of(x.abs()));
            let e = m.scale(k);
            let inv = one.div(e);
            let y = if op == UnaryOp::Sinh {
                e.add(inv.neg())
            } else {
                e.add(inv)
            };
            let y = y.mul(Dd::of(0.5));
            (
                if op == UnaryOp::Sinh && x < 0.0 {
                    y.neg()
                } else {
                    y
                },
                0,
            )
        }
        UnaryOp::Logistic if x.abs() <= 700.0 => {
            let (m, k) = exp_parts(Dd::of(-x.abs()));
            let e = m.scale(k);
            let d = one.add(e);
            (if x < 0.0 { e.div(d) } else { one.div(d) }, 0)
        }
        _ => return None,
    })
}

/// `got - m 2^k` in ulps of the exact value (normal results only).
fn ulp_error(got: f64, (m, k): (Dd, i32)) -> f64 {
    let g = got * pow2(-k);
    let ulp = f64::from_bits(m.0.abs().to_bits() & 0x7FF0_0000_0000_0000) * f64::EPSILON;
    ((g - m.0) - m.1) / ulp
}

/// The conformance suite's f64 bound for each kernel, in ulps.
fn bound(op: UnaryOp) -> f64 {
    match op {
        UnaryOp::Exp | UnaryOp::Exp2 => 1.0,
        UnaryOp::Expm1 | UnaryOp::Tanh | UnaryOp::Tan | UnaryOp::Sinh | UnaryOp::Cosh => 2.0,
        UnaryOp::Logistic => 4.0,
        UnaryOp::Log | UnaryOp::Sin | UnaryOp::Cos => 1.0,
        UnaryOp::Log1p => 2.0,
        _ => unreachable!("{op:?} has no f64 kernel"),
    }
}

fn kernel_ops() -> Vec<UnaryOp> {
    UnaryOp::ALL
        .iter()
        .copied()
        .filter(|op| scalar_f64(*op).is_some())
        .collect()
}

/// The kernels held to the suite's bounds: all but `erf_inv`, which is XLA's algorithm
/// (JAX's bits; `tests_erf_inv.rs`).
fn bounded_ops() -> Vec<UnaryOp> {
    let mut ops = kernel_ops();
    ops.retain(|op| *op != UnaryOp::ErfInv);
    ops
}

/// SplitMix64: a fixed, dependency-free stream of samples.
struct Samples(u64);

impl Samples {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * f64::EPSILON / 2.0
    }
}

/// `n` inputs for `op`: uniform over its main range, log-uniform magnitudes from 2^-60
/// (both signs), dense around the points where a kernel changes form, and log-uniform over
/// all positive f64 (the reference skips what lies outside an op's sampled range).
fn inputs(op: UnaryOp, n: usize, seed: u64) -> Vec<f64> {
    let (lo, hi, knots): (f64, f64, &[f64]) = match op {
        UnaryOp::Exp => (-708.0, 709.7, &[0.0, 0.346_573_6, -0.346_573_6]),
        UnaryOp::Exp2 => (-1022.0, 1023.9, &[0.0, 0.5, -0.5]),
        UnaryOp::Expm1 => (-40.0, 700.0, &[0.35, -0.35, 1.04, -1.04]),
        UnaryOp::Tanh => (-22.0, 22.0, &[0.55, -0.55, 0.35]),
        UnaryOp::Logistic => (-700.0, 700.0, &[0.0, 30.0, -30.0]),
        UnaryOp::Sinh | UnaryOp::Cosh => (-709.0, 709.0, &[1.0, -1.0, 0.5]),
        UnaryOp::Log => (0.0, 4.0, &[1.0, SQRT_2, FRAC_1_SQRT_2, 2.0]),
        UnaryOp::Log1p => (
            -0.999,
            10.0,
            &[1e-8, SQRT_2 - 1.0, FRAC_1_SQRT_2 - 1.0, 1.0],
        ),
        UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan => {
            (-1608.0, 1608.0, &[FRAC_PI_4, -FRAC_PI_4, 3.0 * FRAC_PI_4])
        }
        // Where the polynomial in w = -log1p(-x^2) changes: w = 6.25 and w = 16.
        UnaryOp::ErfInv => (-1.0, 1.0, &[0.999_034_3, -0.999_999_943_7]),
        _ => unreachable!("{op:?} has no f64 kernel"),
    };
    let mut s = Samples(seed);
    (0..n)
        .map(|i| match i % 4 {
            // Every binade of the positive numbers, subnormals included.
            3 => 2f64.powf(-1074.0 + 2098.0 * s.unit()),
            0 => lo + (hi - lo) * s.unit(),
            1 => {
                let m = (2f64).powf(-60.0 + 63.0 * s.unit());
                let sign = if s.next() & 1 == 0 { 1.0 } else { -1.0 };
                (sign * m).clamp(lo, hi)
            }
            _ => knots[(s.next() % knots.len() as u64) as usize] * (1.0 + 1e-3 * (s.unit() - 0.5)),
        })
        .collect()
}

/// The worst error of `op` over the inputs, with its input.
fn worst(op: UnaryOp, x: &[f64]) -> (f64, f64) {
    let y = map_f64(op, x).expect("a kernel");
    x.par_iter()
        .zip(y.par_iter())
        .filter_map(|(&x, &y)| reference(op, x).map(|r| (ulp_error(y, r).abs(), x)))
        .reduce(|| (0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
}

#[test]
fn every_kernel_is_within_the_suite_bound() {
    for op in bounded_ops() {
        let (err, at) = worst(op, &inputs(op, 60_000, 7));
        assert!(
            err < bound(op),
            "{op:?}({at:e}): {err} ulp, bound {}",
            bound(op)
        );
    }
}

#[test]
#[ignore = "about a minute: run with --ignored for the note"]
fn worst_errors_over_ten_million_samples() {
    for op in bounded_ops() {
        let (err, at) = worst(op, &inputs(op, 10_000_000, 11));
        println!("{op:?}: worst {err:.3} ulp at {at:e} (bound {})", bound(op));
    }
}

#[test]
fn exact_results_are_exact() {
    let exp = scalar_f64(UnaryOp::Exp).expect("exp");
    let exp2 = scalar_f64(UnaryOp::Exp2).expect("exp2");
    let expm1 = scalar_f64(UnaryOp::Expm1).expect("expm1");
    let tanh = scalar_f64(UnaryOp::Tanh).expect("tanh");
    let logistic = scalar_f64(UnaryOp::Logistic).expect("logistic");
    let same = |got: f64, want: f64, what: &str| {
        assert_eq!(got.to_bits(), want.to_bits(), "{what}: {got:e} != {want:e}")
    };
    for k in -1074..=1023 {
        same(exp2(k as f64), pow2(k), &format!("exp2({k})"));
    }
    same(exp2(1024.0), f64::INFINITY, "exp2(1024)");
    same(exp2(-1075.0), 0.0, "exp2(-1075), a tie to even");
    same(exp2(-1074.5), f64::from_bits(1), "exp2(-1074.5)");
    for (f, name) in [(exp, "exp"), (exp2, "exp2")] {
        same(f(0.0), 1.0, name);
        same(f(-0.0), 1.0, name);
        same(f(f64::INFINITY), f64::INFINITY, name);
        same(f(f64::NEG_INFINITY), 0.0, name);
    }
    same(exp(709.78), 709.78f64.exp(), "exp(709.78)");
    same(exp(709.79), f64::INFINITY, "exp(709.79)");
    same(exp(-746.0), 0.0, "exp(-746)");
    same(expm1(0.0), 0.0, "expm1(0)");
    same(expm1(-0.0), -0.0, "expm1(-0)");
    same(expm1(f64::NEG_INFINITY), -1.0, "expm1(-inf)");
    same(expm1(-40.0), -1.0, "expm1(-40)");
    same(expm1(f64::INFINITY), f64::INFINITY, "expm1(inf)");
    same(expm1(709.79), f64::INFINITY, "expm1(709.79)");
    same(expm1(1e-300), 1e-300, "expm1(1e-300)");
    same(tanh(0.0), 0.0, "tanh(0)");
    same(tanh(-0.0), -0.0, "tanh(-0)");
    same(tanh(f64::INFINITY), 1.0, "tanh(inf)");
    same(tanh(f64::NEG_INFINITY), -1.0, "tanh(-inf)");
    same(tanh(-30.0), -1.0, "tanh(-30)");
    same(
        tanh(f64::from_bits(3)),
        f64::from_bits(3),
        "tanh(subnormal)",
    );
    same(logistic(0.0), 0.5, "logistic(0)");
    same(logistic(-0.0), 0.5, "logistic(-0)");
    same(logistic(f64::INFINITY), 1.0, "logistic(inf)");
    same(logistic(f64::NEG_INFINITY), 0.0, "logistic(-inf)");
    let log = scalar_f64(UnaryOp::Log).expect("log");
    let log1p = scalar_f64(UnaryOp::Log1p).expect("log1p");
    same(log(1.0), 0.0, "log(1)");
    same(log(0.0), f64::NEG_INFINITY, "log(0)");
    same(log(-0.0), f64::NEG_INFINITY, "log(-0)");
    same(log(f64::INFINITY), f64::INFINITY, "log(inf)");
    same(log(-1.0), f64::NAN, "log(-1), the one quiet NaN");
    same(log(f64::NEG_INFINITY), f64::NAN, "log(-inf)");
    same(
        log(f64::from_bits(1)),
        -744.4400719213812,
        "log(smallest subnormal)",
    );
    same(log1p(0.0), 0.0, "log1p(0)");
    same(log1p(-0.0), -0.0, "log1p(-0)");
    same(log1p(-1.0), f64::NEG_INFINITY, "log1p(-1)");
    same(log1p(-2.0), f64::NAN, "log1p(-2)");
    same(log1p(f64::INFINITY), f64::INFINITY, "log1p(inf)");
    same(log1p(1e-300), 1e-300, "log1p(1e-300)");
    same(log1p(f64::MAX), 709.782712893384, "log1p(MAX)");
    let sin = scalar_f64(UnaryOp::Sin).expect("sin");
    let cos = scalar_f64(UnaryOp::Cos).expect("cos");
    same(sin(0.0), 0.0, "sin(0)");
    same(sin(-0.0), -0.0, "sin(-0)");
    same(cos(0.0), 1.0, "cos(0)");
    same(cos(-0.0), 1.0, "cos(-0)");
    same(sin(f64::INFINITY), f64::NAN, "sin(inf)");
    same(cos(f64::NEG_INFINITY), f64::NAN, "cos(-inf)");
    let tan = scalar_f64(UnaryOp::Tan).expect("tan");
    let sinh = scalar_f64(UnaryOp::Sinh).expect("sinh");
    let cosh = scalar_f64(UnaryOp::Cosh).expect("cosh");
    same(cosh(0.0), 1.0, "cosh(0)");
    same(cosh(-0.0), 1.0, "cosh(-0)");
    same(sinh(-0.0), -0.0, "sinh(-0)");
    same(sinh(1e-300), 1e-300, "sinh(1e-300)");
    same(cosh(f64::NEG_INFINITY), f64::INFINITY, "cosh(-inf)");
    same(sinh(f64::NEG_INFINITY), f64::NEG_INFINITY, "sinh(-inf)");
    same(cosh(711.0), f64::INFINITY, "cosh(711)");
    same(sinh(-711.0), f64::NEG_INFINITY, "sinh(-711)");
    // Past e^x's overflow, still finite: within one step of libm.
    let steps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
    for x in [709.9, 710.2, 710.47] {
        assert!(steps(cosh(x), x.cosh()) <= 1, "cosh({x})");
        assert!(steps(sinh(-x), (-x).sinh()) <= 1, "sinh(-{x})");
    }
    same(sin(f64::from_bits(5)), f64::from_bits(5), "sin(subnormal)");
    same(tan(-0.0), -0.0, "tan(-0)");
    same(tan(f64::INFINITY), f64::NAN, "tan(inf)");
    same(tan(f64::from_bits(5)), f64::from_bits(5), "tan(subnormal)");
    for big in [1608.5, -1e6, 1e300] {
        same(
            tan(big),
            f64::tan(big),
            "tan beyond the fast path is libm's",
        );
        same(
            sin(big),
            f64::sin(big),
            "sin beyond the fast path is libm's",
        );
        same(
            cos(big),
            f64::cos(big),
            "cos beyond the fast path is libm's",
        );
    }
    for op in kernel_ops() {
        let f = scalar_f64(op).expect("a kernel");
        for nan in [f64::NAN, -f64::NAN, f64::from_bits(0x7FF4_0000_0000_0001)] {
            same(f(nan), nan, &format!("{op:?}(NaN) keeps its payload"));
        }
    }
}

/// Results below the normal range round once more when scaled; libm (glibc's exp is within
/// 0.51 ulp) stands in for the reference there.
#[test]
fn subnormal_results_are_within_one_step_of_libm() {
    let exp = scalar_f64(UnaryOp::Exp).expect("exp");
    let logistic = scalar_f64(UnaryOp::Logistic).expect("logistic");
    let steps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
    let mut s = Samples(3);
    for _ in 0..20_000 {
        let x = -708.0 - 37.2 * s.unit();
        assert!(steps(exp(x), x.exp()) <= 1, "exp({x:e})");
        assert!(steps(logistic(x), x.exp()) <= 1, "logistic({x:e})");
    }
}

/// Next to every multiple of pi/2 the fast path covers (the doubles nearest `n pi/2` and
/// two steps either side), where the reduced argument is smallest: within one step of
/// libm (two for `tan`, as its bound), whose reduction is exact there.
#[test]
fn sin_cos_and_tan_next_to_multiples_of_half_pi_match_libm() {
    let sin = scalar_f64(UnaryOp::Sin).expect("sin");
    let cos = scalar_f64(UnaryOp::Cos).expect("cos");
    let tan = scalar_f64(UnaryOp::Tan).expect("tan");
    let steps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
    for n in 1..=1023u32 {
        let x0 = f64::from(n) * FRAC_PI_2;
        for d in -2i64..=2 {
            let x = f64::from_bits((x0.to_bits() as i64 + d) as u64);
            assert!(
                steps(sin(x), x.sin()) <= 1,
                "sin({x:e}): {:e} vs {:e}",
                sin(x),
                x.sin()
            );
            assert!(
                steps(cos(x), x.cos()) <= 1,
                "cos({x:e}): {:e} vs {:e}",
                cos(x),
                x.cos()
            );
            assert!(
                steps(tan(x), x.tan()) <= 2,
                "tan({x:e}): {:e} vs {:e}",
                tan(x),
                x.tan()
            );
        }
    }
}

#[test]
fn vector_loop_gives_the_scalar_bits_at_every_length() {
    for op in kernel_ops() {
        let f = scalar_f64(op).expect("a kernel");
        let mut x = inputs(op, 200, 5);
        x.extend([
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            800.0,
            -800.0,
            f64::MIN_POSITIVE,
            -1e-310,
        ]);
        for n in 0..x.len() {
            let y = map_f64(op, &x[..n]).expect("a kernel");
            for (a, b) in x[..n].iter().zip(&y) {
                assert_eq!(b.to_bits(), f(*a).to_bits(), "{op:?}({a:e}) at length {n}");
            }
        }
    }
}

#[test]
fn map_and_scalar_cover_the_same_ops() {
    for op in UnaryOp::ALL {
        assert_eq!(
            map_f64(*op, &[]).is_some(),
            scalar_f64(*op).is_some(),
            "{op:?}"
        );
    }
}
