//! CUDA C for QIR's elementwise ops, with QIR's exact semantics (the CPU plugin's
//! `elementwise.rs` is the reference): wrapping integer arithmetic written through unsigned
//! types (C's signed overflow is undefined), XLA's integer division by zero, IEEE
//! `max`/`min` with NaN and `-0 < +0`, shift counts of 32 or more, saturating float-to-int
//! conversions (PTX's `cvt.rzi` saturates and maps NaN to 0). Kernels are compiled with
//! `--fmad=false`, so every QIR op rounds once, as on the CPU.

use quabla_abi::qir::{BinaryOp, CompareDir, Op, UnaryOp};
use quabla_abi::DType;

/// The C type of a dtype in device memory (bool as one byte, 0 or 1, as the ABI's).
pub fn c_type(d: DType) -> &'static str {
    match d {
        DType::Bool => "unsigned char",
        DType::I32 => "int",
        DType::U32 => "unsigned int",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

/// Device functions the expressions call, emitted once at the top of every kernel source.
pub const PRELUDE: &str = r#"
#define QMAX(T) __device__ __forceinline__ T qmax_##T(T a, T b) { \
  if (a != a || b != b) return a + b; \
  if (a == b) return signbit(a) ? b : a; \
  return a > b ? a : b; }
#define QMIN(T) __device__ __forceinline__ T qmin_##T(T a, T b) { \
  if (a != a || b != b) return a + b; \
  if (a == b) return signbit(a) ? a : b; \
  return a < b ? a : b; }
QMAX(float) QMAX(double) QMIN(float) QMIN(double)
__device__ __forceinline__ float qsign_f(float x) { return (x != x || x == 0.0f) ? x : (x > 0.0f ? 1.0f : -1.0f); }
__device__ __forceinline__ double qsign_d(double x) { return (x != x || x == 0.0) ? x : (x > 0.0 ? 1.0 : -1.0); }
__device__ __forceinline__ float qlogistic_f(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  float e = expf(x); return e / (1.0f + e); }
__device__ __forceinline__ double qlogistic_d(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x); return e / (1.0 + e); }
__device__ __forceinline__ int qdiv_i(int a, int b) {
  if (b == 0) return -1;
  if (b == -1) return (int)(0u - (unsigned int)a);
  return a / b; }
__device__ __forceinline__ unsigned int qdiv_u(unsigned int a, unsigned int b) { return b == 0u ? 0xffffffffu : a / b; }
__device__ __forceinline__ int qrem_i(int a, int b) { return b == 0 ? a : (b == -1 ? 0 : a % b); }
__device__ __forceinline__ unsigned int qrem_u(unsigned int a, unsigned int b) { return b == 0u ? a : a % b; }
/* Integer power by squaring, wrapping; a negative exponent gives 1 for base 1, +-1 for base
   -1 and 0 otherwise (XLA's rule). */
__device__ __forceinline__ unsigned int qpow_bits(unsigned int b, unsigned int e) {
  unsigned int acc = 1u;
  while (e != 0u) { if (e & 1u) acc *= b; b *= b; e >>= 1; }
  return acc; }
__device__ __forceinline__ int qpow_i(int b, int e) {
  if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);
  return (int)qpow_bits((unsigned int)b, (unsigned int)e); }
__device__ __forceinline__ unsigned int qpow_u(unsigned int b, unsigned int e) { return qpow_bits(b, e); }
__device__ __forceinline__ unsigned int qshl(unsigned int a, unsigned int s) { return s >= 32u ? 0u : a << s; }
__device__ __forceinline__ unsigned int qshr(unsigned int a, unsigned int s) { return s >= 32u ? 0u : a >> s; }
__device__ __forceinline__ int qsar(int a, unsigned int s) { return a >> (s >= 31u ? 31u : s); }
__device__ __forceinline__ int qnan_to_zero_i32(double x) { return x != x ? 0 : __double2int_rz(x); }
__device__ __forceinline__ unsigned int qnan_to_zero_u32(double x) { return x != x ? 0u : __double2uint_rz(x); }
/* An element index's term: a dynamic start clamped as QIR's dynamic slices clamp it. */
__device__ __forceinline__ long long qclamp(long long x, long long hi) { return x < 0 ? 0 : (x > hi ? hi : x); }
"#;

/// The C expression of an elementwise node: `args` are its operands' expressions, `ty` the
/// dtype of its first operand and `out` the result's.
pub fn expression(op: &Op, args: &[String], ty: DType, out: DType) -> Result<String, String> {
    let a = |k: usize| args[k].as_str();
    Ok(match op {
        Op::Unary(u) => unary(*u, a(0), ty),
        Op::Binary(b) => binary(*b, a(0), a(1), ty),
        Op::Compare(dir) => {
            let c = match dir {
                CompareDir::Eq => "==",
                CompareDir::Ne => "!=",
                CompareDir::Lt => "<",
                CompareDir::Le => "<=",
                CompareDir::Gt => ">",
                CompareDir::Ge => ">=",
            };
            format!("(unsigned char)({} {c} {})", a(0), a(1))
        }
        Op::Select => format!("({} ? {} : {})", a(0), a(1), a(2)),
        Op::Convert => convert(a(0), ty, out),
        Op::Bitcast => bitcast(a(0), ty, out),
        other => return Err(format!("`{}` is not elementwise", other.name())),
    })
}

fn float_fn(f32_name: &str, f64_name: &str, x: &str, ty: DType) -> String {
    match ty {
        DType::F64 => format!("{f64_name}({x})"),
        _ => format!("{f32_name}({x})"),
    }
}

fn unary(op: UnaryOp, x: &str, ty: DType) -> String {
    use UnaryOp::*;
    let f = |a: &str, b: &str| float_fn(a, b, x, ty);
    let is_f64 = ty == DType::F64;
    match (op, ty) {
        (Neg, DType::I32) => format!("(int)(0u - (unsigned int){x})"),
        (Neg, DType::U32) => format!("(0u - {x})"),
        (Neg, _) => format!("(-{x})"),
        (Abs, DType::I32) => format!("({x} < 0 ? (int)(0u - (unsigned int){x}) : {x})"),
        (Abs, DType::U32) => x.to_string(),
        (Abs, _) => f("fabsf", "fabs"),
        (Sign, DType::I32) => format!("(({x} > 0) - ({x} < 0))"),
        (Sign, DType::U32) => format!("(unsigned int)({x} != 0u)"),
        (Sign, _) => f("qsign_f", "qsign_d"),
        (Floor, _) => f("floorf", "floor"),
        (Ceil, _) => f("ceilf", "ceil"),
        (Round, _) => f("rintf", "rint"),
        (Exp, _) => f("expf", "exp"),
        (Exp2, _) => f("exp2f", "exp2"),
        (Expm1, _) => f("expm1f", "expm1"),
        (Log, _) => f("logf", "log"),
        (Log1p, _) => f("log1pf", "log1p"),
        (Sqrt, _) => f("sqrtf", "sqrt"),
        // CUDA's rsqrt is an approximation; the correctly rounded root, then one division.
        (Rsqrt, _) if is_f64 => format!("(1.0 / sqrt({x}))"),
        (Rsqrt, _) => format!("(1.0f / sqrtf({x}))"),
        (Cbrt, _) => f("cbrtf", "cbrt"),
        (Sin, _) => f("sinf", "sin"),
        (Cos, _) => f("cosf", "cos"),
        (Tan, _) => f("tanf", "tan"),
        (Asin, _) => f("asinf", "asin"),
        (Acos, _) => f("acosf", "acos"),
        (Atan, _) => f("atanf", "atan"),
        (Sinh, _) => f("sinhf", "sinh"),
        (Cosh, _) => f("coshf", "cosh"),
        (Tanh, _) => f("tanhf", "tanh"),
        (Asinh, _) => f("asinhf", "asinh"),
        (Acosh, _) => f("acoshf", "acosh"),
        (Atanh, _) => f("atanhf", "atanh"),
        (Erf, _) => f("erff", "erf"),
        (Erfc, _) => f("erfcf", "erfc"),
        // CUDA's own inverse error function (within 2 ulp in f32), not XLA's polynomial.
        (ErfInv, _) => f("erfinvf", "erfinv"),
        (Logistic, _) => f("qlogistic_f", "qlogistic_d"),
        (IsFinite, _) => format!("(unsigned char)isfinite({x})"),
        (Not, DType::Bool) => format!("(unsigned char)!{x}"),
        (Not, _) => format!("(~{x})"),
    }
}

fn binary(op: BinaryOp, a: &str, b: &str, ty: DType) -> String {
    use BinaryOp::*;
    let wrapping = |sym: &str| match ty {
        DType::I32 => format!("(int)((unsigned int){a} {sym} (unsigned int){b})"),
        _ => format!("({a} {sym} {b})"),
    };
    let call = |name: &str| format!("{name}({a}, {b})");
    let suffix = match ty {
        DType::I32 => "i",
        DType::U32 => "u",
        DType::F64 => "d",
        _ => "f",
    };
    match (op, ty) {
        (Add, _) => wrapping("+"),
        (Sub, _) => wrapping("-"),
        (Mul, _) => wrapping("*"),
        (Div, DType::I32 | DType::U32) => call(&format!("qdiv_{suffix}")),
        (Div, _) => format!("({a} / {b})"),
        (Rem, DType::I32 | DType::U32) => call(&format!("qrem_{suffix}")),
        (Rem, DType::F64) => call("fmod"),
        (Rem, _) => call("fmodf"),
        (Pow, DType::I32 | DType::U32) => call(&format!("qpow_{suffix}")),
        (Pow, DType::F64) => call("pow"),
        (Pow, _) => call("powf"),
        (Max, DType::F32) => call("qmax_float"),
        (Max, DType::F64) => call("qmax_double"),
        (Min, DType::F32) => call("qmin_float"),
        (Min, DType::F64) => call("qmin_double"),
        (Max, _) => format!("({a} > {b} ? {a} : {b})"),
        (Min, _) => format!("({a} < {b} ? {a} : {b})"),
        (Atan2, DType::F64) => call("atan2"),
        (Atan2, _) => call("atan2f"),
        (And, _) => format!("({a} & {b})"),
        (Or, _) => format!("({a} | {b})"),
        (Xor, _) => format!("({a} ^ {b})"),
        (ShiftLeft, DType::I32) => format!("(int)qshl((unsigned int){a}, (unsigned int){b})"),
        (ShiftLeft, _) => format!("qshl({a}, {b})"),
        (ShiftRightLogical, DType::I32) => {
            format!("(int)qshr((unsigned int){a}, (unsigned int){b})")
        }
        (ShiftRightLogical, _) => format!("qshr({a}, {b})"),
        (ShiftRightArithmetic, DType::I32) => format!("qsar({a}, (unsigned int){b})"),
        (ShiftRightArithmetic, _) => format!("(unsigned int)qsar((int){a}, {b})"),
    }
}

/// QIR's `convert`: float to integer truncates and saturates with NaN to 0 (the `_rz`
/// intrinsics are PTX's saturating `cvt.rzi`); integers wrap; anything to bool is `x != 0`.
/// f64 NaN is tested first: on an H200, `cvt.rzi` of an f64 NaN gave 0x80000000 for both
/// `s32` and `u32` (f32 NaN gave 0), and the emulation's prelude does the same.
fn convert(x: &str, from: DType, to: DType) -> String {
    use DType::*;
    match (from, to) {
        (_, Bool) => format!("(unsigned char)({x} != 0)"),
        (F32, I32) => format!("__float2int_rz({x})"),
        (F32, U32) => format!("__float2uint_rz({x})"),
        (F64, I32) => format!("qnan_to_zero_i32({x})"),
        (F64, U32) => format!("qnan_to_zero_u32({x})"),
        (_, t) => format!("({})({x})", c_type(t)),
    }
}

fn bitcast(x: &str, from: DType, to: DType) -> String {
    use DType::*;
    match (from, to) {
        (F32, I32) => format!("__float_as_int({x})"),
        (F32, U32) => format!("__float_as_uint({x})"),
        (I32, F32) => format!("__int_as_float({x})"),
        (U32, F32) => format!("__uint_as_float({x})"),
        (_, t) => format!("({})({x})", c_type(t)),
    }
}
