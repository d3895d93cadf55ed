//! WGSL building blocks: element types, and the scalar expression of every elementwise op.
//!
//! WGSL leaves many float edge cases to the implementation (NaN through `max`, `pow` of a
//! negative base, float-to-int of out-of-range values, transcendental accuracy) and some
//! drivers assume finite math, so the helpers below test NaN and infinity on the bits and
//! handle every special value explicitly, matching the CPU backend's reference semantics.

use quabla_abi::float_only_unary;
use quabla_abi::qir::{BinaryOp, CompareDir, UnaryOp};
use quabla_abi::DType;

/// The type a value has inside a kernel.
pub fn reg(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F64 => "f32",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::Bool => "bool",
    }
}

/// The element type of a storage buffer (bool travels as u32 0/1).
pub fn store(d: DType) -> &'static str {
    match d {
        DType::Bool => "u32",
        other => reg(other),
    }
}

/// Turns a storage element into a register value.
pub fn load(d: DType, e: &str) -> String {
    if d == DType::Bool {
        format!("({e} != 0u)")
    } else {
        e.to_string()
    }
}

/// Turns a register value into a storage element.
pub fn save(d: DType, e: &str) -> String {
    if d == DType::Bool {
        format!("select(0u, 1u, {e})")
    } else {
        e.to_string()
    }
}

/// The identity (zero) of a dtype as a register literal.
pub fn zero(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F64 => "0.0",
        DType::I32 => "0i",
        DType::U32 => "0u",
        DType::Bool => "false",
    }
}

/// `x` as a register value of dtype `d`.
pub fn literal_from_u32(d: DType, v: u32) -> String {
    match d {
        DType::F32 | DType::F64 => format!("{v}.0"),
        DType::I32 => format!("{v}i"),
        DType::U32 => format!("{v}u"),
        DType::Bool => (v != 0).to_string(),
    }
}

/// The expression of a unary op on a register value of dtype `d`.
pub fn unary(op: UnaryOp, d: DType, x: &str) -> String {
    use UnaryOp::*;
    match d {
        DType::Bool => match op {
            Not => format!("!({x})"),
            Neg | Abs | Sign | float_only_unary!() => {
                unreachable!("validation admits only `not` on bool, not {op:?}")
            }
        },
        DType::I32 => match op {
            Neg => format!("(-({x}))"),
            Abs => format!("abs({x})"),
            Sign => format!("sign({x})"),
            Not => format!("(~({x}))"),
            float_only_unary!() => unreachable!("validation admits {op:?} on floats only"),
        },
        DType::U32 => match op {
            Neg => format!("(0u - ({x}))"),
            Abs => x.to_string(),
            Sign => format!("select(0u, 1u, ({x}) != 0u)"),
            Not => format!("(~({x}))"),
            float_only_unary!() => unreachable!("validation admits {op:?} on floats only"),
        },
        DType::F32 | DType::F64 => {
            let f = match op {
                Neg => "q_neg",
                Abs => "q_abs",
                Sign => "q_sign",
                Floor => "floor",
                Ceil => "ceil",
                Round => "round",
                Exp => "q_exp",
                Exp2 => "q_exp2",
                Expm1 => "q_expm1",
                Log => "q_log",
                Log1p => "q_log1p",
                Sqrt => "q_sqrt",
                Rsqrt => "q_rsqrt",
                Cbrt => "q_cbrt",
                Sin => "q_sin",
                Cos => "q_cos",
                Tan => "q_tan",
                Asin => "q_asin",
                Acos => "q_acos",
                Atan => "q_atan",
                Sinh => "q_sinh",
                Cosh => "q_cosh",
                Tanh => "q_tanh",
                Asinh => "q_asinh",
                Acosh => "q_acosh",
                Atanh => "q_atanh",
                Erf => "q_erf",
                Erfc => "q_erfc",
                ErfInv => "q_erf_inv",
                Logistic => "q_logistic",
                IsFinite => "q_isfinite",
                Not => unreachable!("validation admits no `not` on floats"),
            };
            format!("{f}({x})")
        }
    }
}

/// The expression of a binary op on register values of dtype `d`.
pub fn binary(op: BinaryOp, d: DType, a: &str, b: &str) -> String {
    use BinaryOp::*;
    match d {
        DType::Bool => match op {
            And => format!("({a} & {b})"),
            Or => format!("({a} | {b})"),
            Xor => format!("({a} != {b})"),
            Add | Sub | Mul | Div | Rem | Pow | Max | Min | Atan2 | ShiftLeft
            | ShiftRightLogical | ShiftRightArithmetic => {
                unreachable!("validation admits only and/or/xor on bool, not {op:?}")
            }
        },
        DType::F32 | DType::F64 => match op {
            Add => format!("({a} + {b})"),
            Sub => format!("({a} - {b})"),
            Mul => format!("({a} * {b})"),
            Div => format!("({a} / {b})"),
            Rem => format!("q_rem({a}, {b})"),
            Pow => format!("q_pow({a}, {b})"),
            Max => format!("q_max({a}, {b})"),
            Min => format!("q_min({a}, {b})"),
            Atan2 => format!("q_atan2({a}, {b})"),
            And | Or | Xor | ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => {
                unreachable!("validation admits no bitwise op on floats, not {op:?}")
            }
        },
        DType::I32 | DType::U32 => {
            let i = d == DType::I32;
            // Shift amounts as u32: a negative i32 amount is huge, so it shifts everything out.
            let s = if i {
                format!("bitcast<u32>({b})")
            } else {
                b.to_string()
            };
            let (z, ones) = if i {
                ("0i", "-1i")
            } else {
                ("0u", "0xffffffffu")
            };
            match op {
                Add => format!("({a} + {b})"),
                Sub => format!("({a} - {b})"),
                Mul => format!("({a} * {b})"),
                Div => format!("select({a} / {b}, {ones}, {b} == {z})"),
                Rem => format!("select({a} % {b}, {a}, {b} == {z})"),
                Pow => format!("q_ipow_{}({a}, {b})", reg(d)),
                Max => format!("max({a}, {b})"),
                Min => format!("min({a}, {b})"),
                And => format!("({a} & {b})"),
                Or => format!("({a} | {b})"),
                Xor => format!("({a} ^ {b})"),
                ShiftLeft => format!("select({a} << ({s} & 31u), {z}, {s} >= 32u)"),
                ShiftRightLogical if i => format!(
                    "select(bitcast<i32>(bitcast<u32>({a}) >> ({s} & 31u)), 0i, {s} >= 32u)"
                ),
                ShiftRightLogical => format!("select({a} >> ({s} & 31u), 0u, {s} >= 32u)"),
                ShiftRightArithmetic if i => format!("({a} >> min({s}, 31u))"),
                ShiftRightArithmetic => {
                    format!("bitcast<u32>(bitcast<i32>({a}) >> min({s}, 31u))")
                }
                Atan2 => unreachable!("validation admits atan2 on floats only"),
            }
        }
    }
}

/// A comparison of register values of dtype `d`; NaN compares unequal to everything.
pub fn compare(dir: CompareDir, d: DType, a: &str, b: &str) -> String {
    let (a, b) = if d == DType::Bool {
        (
            format!("select(0u, 1u, {a})"),
            format!("select(0u, 1u, {b})"),
        )
    } else {
        (a.to_string(), b.to_string())
    };
    match dir {
        CompareDir::Eq => format!("({a} == {b})"),
        CompareDir::Ne => format!("!({a} == {b})"),
        CompareDir::Lt => format!("({a} < {b})"),
        CompareDir::Le => format!("({a} <= {b})"),
        CompareDir::Gt => format!("({a} > {b})"),
        CompareDir::Ge => format!("({a} >= {b})"),
    }
}

/// Value conversion between register types (float to int truncates and saturates, NaN to 0).
pub fn convert(from: DType, to: DType, x: &str) -> String {
    use DType::*;
    let from = if from == F64 { F32 } else { from };
    let to = if to == F64 { F32 } else { to };
    match (from, to) {
        (a, b) if a == b => x.to_string(),
        (F32, I32) => format!("q_f32_to_i32({x})"),
        (F32, U32) => format!("q_f32_to_u32({x})"),
        (F32, Bool) => format!("!({x} == 0.0)"),
        (I32, F32) | (U32, F32) => format!("f32({x})"),
        (I32, U32) => format!("bitcast<u32>({x})"),
        (U32, I32) => format!("bitcast<i32>({x})"),
        (I32, Bool) => format!("({x} != 0i)"),
        (U32, Bool) => format!("({x} != 0u)"),
        (Bool, _) => format!("select({}, {}, {x})", zero(to), literal_from_u32(to, 1)),
        _ => x.to_string(),
    }
}

/// Bit reinterpretation among the 32-bit types.
pub fn bitcast(to: DType, x: &str) -> String {
    format!("bitcast<{}>({x})", reg(to))
}

/// The helper functions `code` refers to, each once, callees before callers.
pub fn helpers_for(code: &str) -> String {
    let mut needed = vec![false; HELPERS.len()];
    let mut stack: Vec<usize> = (0..HELPERS.len())
        .filter(|&i| code.contains(&format!("{}(", HELPERS[i].0)))
        .collect();
    while let Some(i) = stack.pop() {
        if needed[i] {
            continue;
        }
        needed[i] = true;
        for (j, (name, _)) in HELPERS.iter().enumerate() {
            if !needed[j] && HELPERS[i].1.contains(&format!("{name}(")) {
                stack.push(j);
            }
        }
    }
    let mut out = String::new();
    for (i, (_, src)) in HELPERS.iter().enumerate() {
        if needed[i] {
            out.push_str(src);
            out.push('\n');
        }
    }
    out
}

/// (name, WGSL source). Builtin transcendentals differ between devices and are often far
/// from correctly rounded (WGSL allows exp 3 + 2|x| ulp; lavapipe's asin was off by 2e-4),
/// so exp and log are Cephes' f32 algorithms (about 1 ulp, subnormals kept), sin/cos/tan use
/// an exact Payne-Hanek reduction and Cephes' polynomials, asin/acos/atan are Cephes', and
/// the rest are built from those with formulas that avoid cancellation. Only `sqrt`,
/// division, `floor`/`ceil`/`round`, `frexp` and `ldexp` are the device's own.
const HELPERS: &[(&str, &str)] = &[
    // Through a `var`: a constant expression may not be inf or NaN (Tint, the browser's
    // compiler, rejects the bitcast outright; naga accepts it).
    ("q_bits_nan", "fn q_bits_nan() -> f32 { var b = 0x7fc00000u; return bitcast<f32>(b); }"),
    ("q_bits_inf", "fn q_bits_inf() -> f32 { var b = 0x7f800000u; return bitcast<f32>(b); }"),
    ("q_isnan", "fn q_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }"),
    ("q_isinf", "fn q_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }"),
    ("q_isfinite", "fn q_isfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }"),
    ("q_signbit", "fn q_signbit(x: f32) -> bool { return (bitcast<u32>(x) >> 31u) == 1u; }"),
    ("q_copysign", "fn q_copysign(m: f32, s: f32) -> f32 { return bitcast<f32>((bitcast<u32>(m) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u)); }"),
    ("q_neg", "fn q_neg(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ 0x80000000u); }"),
    ("q_abs", "fn q_abs(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }"),
    ("q_sign", "fn q_sign(x: f32) -> f32 {
  if (q_isnan(x) || x == 0.0) { return x; }
  return select(1.0, -1.0, q_signbit(x));
}"),
    ("q_max", "fn q_max(a: f32, b: f32) -> f32 {
  if (q_isnan(a) || q_isnan(b)) { return q_bits_nan(); }
  if (a > b) { return a; }
  if (b > a || q_signbit(a)) { return b; }
  return a;
}"),
    ("q_min", "fn q_min(a: f32, b: f32) -> f32 {
  if (q_isnan(a) || q_isnan(b)) { return q_bits_nan(); }
  if (a < b || (a == b && q_signbit(a))) { return a; }
  return b;
}"),
    ("q_f32_to_i32", "fn q_f32_to_i32(x: f32) -> i32 {
  if (q_isnan(x)) { return 0i; }
  if (x >= 2147483648.0) { return 2147483647i; }
  if (x <= -2147483648.0) { return -2147483647i - 1i; }
  return i32(x);
}"),
    ("q_f32_to_u32", "fn q_f32_to_u32(x: f32) -> u32 {
  if (q_isnan(x) || x <= 0.0) { return 0u; }
  if (x >= 4294967296.0) { return 0xffffffffu; }
  return u32(x);
}"),
    ("q_sqrt", "fn q_sqrt(x: f32) -> f32 {
  if (q_isnan(x) || x < 0.0) { return q_bits_nan(); }
  if (x == 0.0 || q_isinf(x)) { return x; }
  return sqrt(x);
}"),
    ("q_rsqrt", "fn q_rsqrt(x: f32) -> f32 { return 1.0 / q_sqrt(x); }"),
    ("q_exp", "fn q_exp(x: f32) -> f32 {
  // Cephes' expf (about 1 ulp): x = n ln2 + r with ln2 in two parts, a degree-6 polynomial
  // on r, then 2^n applied in two steps so subnormal results are not flushed.
  if (q_isnan(x)) { return x; }
  if (x > 88.72284) { return q_bits_inf(); }
  if (x < -103.97208) { return 0.0; }
  let n = floor(1.44269504088896341 * x + 0.5);
  var r = x - n * 0.693359375;
  r = r - n * -2.12194440e-4;
  let z = r * r;
  let p = ((((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r
    + 4.1665795894e-2) * r + 1.6666665459e-1) * r + 5.0000001201e-1) * z + r) + 1.0;
  return q_ldexp(p, i32(n));
}"),
    ("q_exp2", "fn q_exp2(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  if (x >= 128.0) { return q_bits_inf(); }
  if (x < -150.0) { return 0.0; }
  let n = round(x);
  return q_ldexp(q_exp((x - n) * 0.6931471805599453), i32(n));
}"),
    ("q_ldexp", "fn q_ldexp(p: f32, k: i32) -> f32 {
  // In two steps where the result is subnormal or near overflow: some devices flush or
  // saturate a single ldexp there.
  if (k < -120) { return ldexp(p, k + 64) * 5.421010862427522e-20; }
  if (k > 127) { return ldexp(p, k - 1) * 2.0; }
  return ldexp(p, k);
}"),
    ("q_log", "fn q_log(x: f32) -> f32 {
  // Cephes' logf (about 1 ulp); subnormals are scaled into the normal range first.
  if (q_isnan(x) || x < 0.0) { return q_bits_nan(); }
  if (x == 0.0) { return -q_bits_inf(); }
  if (q_isinf(x)) { return x; }
  let tiny = x < 1.17549435e-38;
  let fr = frexp(select(x, x * 16777216.0, tiny));
  var e = f32(fr.exp) - select(0.0, 24.0, tiny);
  var t = fr.fract - 1.0;
  if (fr.fract < 0.707106781186547524) {
    e = e - 1.0;
    t = fr.fract + fr.fract - 1.0;
  }
  let z = t * t;
  var y = ((((((((7.0376836292e-2 * t - 1.1514610310e-1) * t + 1.1676998740e-1) * t
    - 1.2420140846e-1) * t + 1.4249322787e-1) * t - 1.6668057665e-1) * t + 2.0000714765e-1) * t
    - 2.4999993993e-1) * t + 3.3333331174e-1) * t * z;
  y = y + -2.12194440e-4 * e;
  y = y - 0.5 * z;
  return (t + y) + 0.693359375 * e;
}"),
    ("q_expm1", "fn q_expm1(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  if (x > 88.72284) { return q_bits_inf(); }
  if (x < -17.0) { return -1.0; }
  if (abs(x) < 0.5) {
    return x * (1.0 + x / 2.0 * (1.0 + x / 3.0 * (1.0 + x / 4.0 * (1.0 + x / 5.0 * (1.0 + x / 6.0
      * (1.0 + x / 7.0 * (1.0 + x / 8.0 * (1.0 + x / 9.0))))))));
  }
  return q_exp(x) - 1.0;
}"),
    ("q_log1p", "fn q_log1p(x: f32) -> f32 {
  if (q_isnan(x) || x < -1.0) { return q_bits_nan(); }
  if (x == -1.0) { return -q_bits_inf(); }
  if (q_isinf(x)) { return x; }
  // Near 0, 2 atanh(s) with s = x / (2 + x) as a series: no cancellation to protect (some
  // drivers reassociate float math, which breaks the usual (x - (u - 1)) / u correction).
  // Elsewhere 1 + x loses nothing that matters (and is exact for x in [-1, -0.5]).
  if (abs(x) < 0.5) {
    let t = x / (2.0 + x);
    let z = t * t;
    let p = 1.0 / 3.0 + z * (1.0 / 5.0 + z * (1.0 / 7.0 + z * (1.0 / 9.0 + z * (1.0 / 11.0
      + z * (1.0 / 13.0 + z * (1.0 / 15.0 + z * (1.0 / 17.0 + z * (1.0 / 19.0 + z / 21.0))))))));
    return 2.0 * (t + t * z * p);
  }
  return q_log(1.0 + x);
}"),
    ("q_cbrt", "fn q_cbrt(x: f32) -> f32 {
  if (q_isnan(x) || q_isinf(x) || x == 0.0) { return x; }
  // Subnormals are scaled up by 2^24 first: some devices flush them to zero in log2.
  let tiny = abs(x) < 1.1754944e-38;
  let a = select(abs(x), abs(x) * 16777216.0, tiny);
  var y = exp2(log2(a) / 3.0);
  y = y - (y * y * y - a) / (3.0 * y * y);
  return q_copysign(select(y, y * 0.00390625, tiny), x);
}"),
    ("q_mul_wide", "fn q_mul_wide(a: u32, b: u32) -> vec2<u32> {
  // The 64-bit product of two u32 as (low, high) words, from 16-bit halves.
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let lh = al * bh;
  let hl = ah * bl;
  let mid = ((al * bl) >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return vec2<u32>(a * b, ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u));
}"),
    ("q_reduce_pio2", "struct QReduced { r: f32, q: u32 }
// Bits of 2/pi, most significant first.
var<private> q_two_over_pi: array<u32, 8> = array<u32, 8>(0xa2f9836eu, 0x4e441529u,
  0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u);
fn q_reduce_pio2(ax: f32) -> QReduced {
  // Payne-Hanek: |x| = (q + f) pi/2 with |f| <= 1/2, exact for every finite f32. The
  // mantissa times four words of 2/pi (those that matter modulo 4) as a 160-bit integer,
  // then the 64 bits below the two quadrant bits.
  if (ax <= 0.7853982) { return QReduced(ax, 0u); }
  let bits = bitcast<u32>(ax);
  let e = i32(bits >> 23u) - 150;
  let m = (bits & 0x7fffffu) | 0x800000u;
  let k0 = select(0, (e - 2) / 32, e >= 2);
  var n = array<u32, 5>(0u, 0u, 0u, 0u, 0u);
  for (var j = 0; j < 4; j++) {
    let p = q_mul_wide(m, q_two_over_pi[k0 + j]);
    let w = 3 - j;
    let s0 = n[w] + p.x;
    var carry = select(0u, 1u, s0 < p.x);
    n[w] = s0;
    let s1 = n[w + 1] + p.y;
    let c1 = select(0u, 1u, s1 < p.y);
    let s2 = s1 + carry;
    carry = c1 + select(0u, 1u, s2 < carry);
    n[w + 1] = s2;
    for (var t = w + 2; t < 5 && carry != 0u; t++) {
      let s3 = n[t] + carry;
      carry = select(0u, 1u, s3 < carry);
      n[t] = s3;
    }
  }
  let sh = u32(129 - e + 32 * k0 - 63);
  let w = sh / 32u;
  let b = sh % 32u;
  var lo = n[w];
  var hi = n[w + 1u];
  if (b != 0u) {
    lo = (n[w] >> b) | (n[w + 1u] << (32u - b));
    hi = (n[w + 1u] >> b) | (n[w + 2u] << (32u - b));
  }
  var q = hi >> 30u;
  var fh = hi & 0x3fffffffu;
  var fl = lo;
  var neg = false;
  if (fh >= 0x20000000u) {
    fh = 0x40000000u - fh - select(0u, 1u, fl != 0u);
    fl = 0u - fl;
    q = q + 1u;
    neg = true;
  }
  let f = f32(fh) * 9.313225746154785e-10 + f32(fl) * 2.168404344971009e-19;
  let r = f * 1.5707963267948966;
  return QReduced(select(r, -r, neg), q & 3u);
}"),
    ("q_sin_poly", "fn q_sin_poly(r: f32) -> f32 {
  let z = r * r;
  return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}"),
    ("q_cos_poly", "fn q_cos_poly(r: f32) -> f32 {
  let z = r * r;
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z
    - 0.5 * z + 1.0;
}"),
    ("q_sin", "fn q_sin(x: f32) -> f32 {
  if (q_isnan(x) || q_isinf(x)) { return q_bits_nan(); }
  let red = q_reduce_pio2(abs(x));
  var v = q_sin_poly(red.r);
  if ((red.q & 1u) == 1u) { v = q_cos_poly(red.r); }
  if (red.q >= 2u) { v = -v; }
  return select(v, -v, q_signbit(x));
}"),
    ("q_cos", "fn q_cos(x: f32) -> f32 {
  if (q_isnan(x) || q_isinf(x)) { return q_bits_nan(); }
  let red = q_reduce_pio2(abs(x));
  let c = q_cos_poly(red.r);
  let s = q_sin_poly(red.r);
  switch red.q {
    case 0u: { return c; }
    case 1u: { return -s; }
    case 2u: { return -c; }
    default: { return s; }
  }
}"),
    ("q_tan", "fn q_tan(x: f32) -> f32 {
  if (q_isnan(x) || q_isinf(x)) { return q_bits_nan(); }
  let red = q_reduce_pio2(abs(x));
  let s = q_sin_poly(red.r);
  let c = q_cos_poly(red.r);
  let v = select(s / c, -c / s, (red.q & 1u) == 1u);
  return select(v, -v, q_signbit(x));
}"),
    ("q_asin", "fn q_asin(x: f32) -> f32 {
  if (q_isnan(x) || abs(x) > 1.0) { return q_bits_nan(); }
  let a = abs(x);
  var z = a * a;
  var t = a;
  if (a > 0.5) {
    z = 0.5 * (1.0 - a);
    t = sqrt(z);
  }
  var r = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z
    + 7.4953002686e-2) * z + 1.6666752422e-1) * z * t + t;
  if (a > 0.5) { r = 1.5707963267948966 - (r + r); }
  return q_copysign(r, x);
}"),
    ("q_acos", "fn q_acos(x: f32) -> f32 {
  if (q_isnan(x) || abs(x) > 1.0) { return q_bits_nan(); }
  if (x < -0.5) { return 3.1415926535897932 - 2.0 * q_asin(sqrt(0.5 * (1.0 + x))); }
  if (x > 0.5) { return 2.0 * q_asin(sqrt(0.5 * (1.0 - x))); }
  return 1.5707963267948966 - q_asin(x);
}"),
    ("q_atan_pos", "fn q_atan_pos(a: f32) -> f32 {
  // Cephes' atanf on a >= 0 (infinity included).
  var y0 = 0.0;
  var t = a;
  if (a > 2.414213562373095) {
    y0 = 1.5707963267948966;
    t = -1.0 / a;
  } else if (a > 0.4142135623730950) {
    y0 = 0.7853981633974483;
    t = (a - 1.0) / (a + 1.0);
  }
  let z = t * t;
  return y0 + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
    - 3.33329491539e-1) * z * t + t);
}"),
    ("q_atan", "fn q_atan(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  return q_copysign(q_atan_pos(abs(x)), x);
}"),
    ("q_atan2", "fn q_atan2(y: f32, x: f32) -> f32 {
  if (q_isnan(x) || q_isnan(y)) { return q_bits_nan(); }
  let pi = 3.1415926535897932;
  if (y == 0.0) {
    if (q_signbit(x)) { return q_copysign(pi, y); }
    return y;
  }
  if (x == 0.0) { return q_copysign(pi / 2.0, y); }
  if (q_isinf(x)) {
    if (q_isinf(y)) { return q_copysign(select(pi / 4.0, 3.0 * pi / 4.0, x < 0.0), y); }
    return q_copysign(select(0.0, pi, x < 0.0), y);
  }
  if (q_isinf(y)) { return q_copysign(pi / 2.0, y); }
  let ax = abs(x);
  let ay = abs(y);
  var a: f32;
  if (ay <= ax) { a = q_atan_pos(ay / ax); } else { a = pi / 2.0 - q_atan_pos(ax / ay); }
  if (x < 0.0) { a = pi - a; }
  return q_copysign(a, y);
}"),
    ("q_sinh", "fn q_sinh(x: f32) -> f32 {
  if (q_isnan(x) || q_isinf(x)) { return x; }
  let a = abs(x);
  var r: f32;
  if (a < 1.0) {
    let t = q_expm1(a);
    r = 0.5 * (t + t / (t + 1.0));
  } else if (a < 88.0) {
    let e = q_exp(a);
    r = 0.5 * (e - 1.0 / e);
  } else {
    let e = q_exp(0.5 * a);
    r = (0.5 * e) * e;
  }
  return q_copysign(r, x);
}"),
    ("q_cosh", "fn q_cosh(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  let a = abs(x);
  if (a < 88.0) {
    let e = q_exp(a);
    return 0.5 * (e + 1.0 / e);
  }
  let e = q_exp(0.5 * a);
  return (0.5 * e) * e;
}"),
    ("q_tanh", "fn q_tanh(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  let a = abs(x);
  if (a < 0.000244140625) { return x; }
  if (a > 9.1) { return q_copysign(1.0, x); }
  let t = q_expm1(2.0 * a);
  return q_copysign(t / (t + 2.0), x);
}"),
    ("q_asinh", "fn q_asinh(x: f32) -> f32 {
  if (q_isnan(x) || q_isinf(x)) { return x; }
  let a = abs(x);
  var r: f32;
  if (a > 1.0e18) {
    r = q_log(a) + 0.6931472;
  } else {
    r = q_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a)));
  }
  return q_copysign(r, x);
}"),
    ("q_acosh", "fn q_acosh(x: f32) -> f32 {
  if (q_isnan(x) || x < 1.0) { return q_bits_nan(); }
  if (q_isinf(x)) { return x; }
  if (x > 1.0e18) { return q_log(x) + 0.6931472; }
  let t = x - 1.0;
  return q_log1p(t + sqrt(2.0 * t + t * t));
}"),
    ("q_atanh", "fn q_atanh(x: f32) -> f32 {
  if (q_isnan(x) || abs(x) > 1.0) { return q_bits_nan(); }
  let a = abs(x);
  if (a < 0.000244140625) { return x; }
  if (a == 1.0) { return q_copysign(q_bits_inf(), x); }
  return q_copysign(0.5 * q_log1p(2.0 * a / (1.0 - a)), x);
}"),
    ("q_logistic", "fn q_logistic(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  if (x >= 0.0) { return 1.0 / (1.0 + q_exp(-x)); }
  let e = q_exp(x);
  return e / (1.0 + e);
}"),
    ("q_erfc_pos", "fn q_erfc_pos(z: f32) -> f32 {
  // Numerical Recipes' erfcc (relative error below 1.2e-7), with exp(-z^2) split exactly
  // through fma so that large z keep their accuracy.
  if (z > 10.06) { return 0.0; }
  let t = 1.0 / (1.0 + 0.5 * z);
  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806
    + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  let zz = z * z;
  let lo = fma(z, z, -zz);
  // exp(-zz) gets an exact argument; adding p first would round it (16 ulp at z = 5).
  return t * q_exp(p) * q_exp(-zz) * (1.0 - lo);
}"),
    ("q_erf", "fn q_erf(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  let a = abs(x);
  if (a < 0.5) {
    let s = x * x;
    return x * 1.1283792 * (1.0 + s * (-1.0 / 3.0 + s * (1.0 / 10.0 + s * (-1.0 / 42.0
      + s * (1.0 / 216.0 + s * (-1.0 / 1320.0 + s * (1.0 / 9360.0)))))));
  }
  return q_copysign(1.0 - q_erfc_pos(a), x);
}"),
    ("q_erfc", "fn q_erfc(x: f32) -> f32 {
  if (q_isnan(x)) { return x; }
  if (abs(x) < 0.5) { return 1.0 - q_erf(x); }
  if (x > 0.0) { return q_erfc_pos(x); }
  return 2.0 - q_erfc_pos(-x);
}"),
    ("q_erf_inv", "fn q_erf_inv(x: f32) -> f32 {
  // Giles' single-precision polynomials in w = -log1p(-x^2), as XLA's ErfInv32 (the CPU
  // backend gives XLA's bits; here the log1p is this library's, so a few ulps apart).
  if (q_isnan(x) || abs(x) > 1.0) { return q_bits_nan(); }
  if (abs(x) == 1.0) { return q_copysign(q_bits_inf(), x); }
  let w = -q_log1p(-x * x);
  var p: f32;
  if (w < 5.0) {
    let t = w - 2.5;
    p = fma(2.81022636e-08, t, 3.43273939e-07);
    p = fma(t, p, -3.5233877e-06);
    p = fma(t, p, -4.39150654e-06);
    p = fma(t, p, 0.00021858087);
    p = fma(t, p, -0.00125372503);
    p = fma(t, p, -0.00417768164);
    p = fma(t, p, 0.246640727);
    p = fma(t, p, 1.50140941);
  } else {
    let t = sqrt(w) - 3.0;
    p = fma(-0.000200214257, t, 0.000100950558);
    p = fma(t, p, 0.00134934322);
    p = fma(t, p, -0.00367342844);
    p = fma(t, p, 0.00573950773);
    p = fma(t, p, -0.0076224613);
    p = fma(t, p, 0.00943887047);
    p = fma(t, p, 1.00167406);
    p = fma(t, p, 2.83297682);
  }
  return p * x;
}"),
    ("q_rem", "fn q_rem(x: f32, y: f32) -> f32 {
  // Exact fmod: subtract y scaled by powers of two, each subtraction exact.
  if (q_isnan(x) || q_isnan(y) || q_isinf(x) || y == 0.0) { return q_bits_nan(); }
  let ay = abs(y);
  var r = abs(x);
  if (q_isinf(y) || r < ay) { return x; }
  let ey = frexp(ay).exp;
  for (var i = 0; i < 300 && r >= ay; i++) {
    var t = ldexp(ay, frexp(r).exp - ey);
    if (t > r) { t = t * 0.5; }
    r = r - t;
  }
  return q_copysign(r, x);
}"),
    ("q_is_odd_int", "fn q_is_odd_int(y: f32) -> bool {
  return abs(y) < 16777216.0 && floor(y) == y && (i32(y) & 1i) == 1i;
}"),
    ("q_pow", "fn q_pow(x: f32, y: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (q_isnan(x) || q_isnan(y)) { return q_bits_nan(); }
  let ax = abs(x);
  if (q_isinf(y)) {
    if (ax == 1.0) { return 1.0; }
    return select(0.0, q_bits_inf(), (ax > 1.0) == (y > 0.0));
  }
  let odd = q_is_odd_int(y);
  if (x == 0.0 || q_isinf(x)) {
    // 0^y and inf^y: magnitude 0 or inf, sign of x for odd integer y.
    let big = (x == 0.0) == (y < 0.0);
    let m = select(0.0, q_bits_inf(), big);
    return select(m, q_copysign(m, x), odd);
  }
  if (x < 0.0 && floor(y) != y) { return q_bits_nan(); }
  // log2 of the mantissa and the exponent apart, so that the product y * log2|x| keeps
  // the bits a plain log2 would lose for large exponents.
  let fr = frexp(ax);
  let lm = q_log(fr.fract) * 1.4426950408889634;
  let e = f32(fr.exp);
  let whole = y * e;
  let wi = round(whole);
  let rest = fma(y, e, -wi) + y * lm;
  let k = wi + round(rest);
  if (k > 129.0) { return select(q_bits_inf(), -q_bits_inf(), x < 0.0 && odd); }
  if (k < -151.0) { return select(0.0, -0.0, x < 0.0 && odd); }
  let r = q_ldexp(q_exp((rest - round(rest)) * 0.6931471805599453), i32(k));
  return select(r, -r, x < 0.0 && odd);
}"),
    ("q_ipow_i32", "fn q_ipow_i32(x: i32, e: i32) -> i32 {
  if (e < 0i) {
    if (x == 1i) { return 1i; }
    if (x == -1i) { return select(-1i, 1i, (e & 1i) == 0i); }
    return 0i;
  }
  var acc = 1i;
  var b = x;
  var k = bitcast<u32>(e);
  loop {
    if (k == 0u) { break; }
    if ((k & 1u) == 1u) { acc = acc * b; }
    b = b * b;
    k = k >> 1u;
  }
  return acc;
}"),
    ("q_ipow_u32", "fn q_ipow_u32(x: u32, e: u32) -> u32 {
  var acc = 1u;
  var b = x;
  var k = e;
  loop {
    if (k == 0u) { break; }
    if ((k & 1u) == 1u) { acc = acc * b; }
    b = b * b;
    k = k >> 1u;
  }
  return acc;
}"),
];
