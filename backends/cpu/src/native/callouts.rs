//! The interpreter's scalar functions, with the C calling convention, for the ops compiled
//! code calls rather than spells out: each symbol wraps the very function `elementwise.rs`
//! maps over slices, so the two tiers cannot drift apart.

use crate::elementwise::{
    self, binary_via_f64, fmax, fmin, int_div, int_rem, int_shift_left, int_shift_right_arithmetic,
    int_shift_right_logical, via_f64, Int, Real,
};
use quabla_abi::qir::{BinaryOp, UnaryOp};
use quabla_abi::DType;

extern "C" fn sign<T: Real>(x: T) -> T {
    elementwise::sign(x)
}
extern "C" fn rem<T: Real>(x: T, y: T) -> T {
    x.rem(y)
}
extern "C" fn max<T: Real>(x: T, y: T) -> T {
    fmax(x, y)
}
extern "C" fn min<T: Real>(x: T, y: T) -> T {
    fmin(x, y)
}
extern "C" fn div<T: Int>(x: T, y: T) -> T {
    int_div(x, y)
}
extern "C" fn irem<T: Int>(x: T, y: T) -> T {
    int_rem(x, y)
}
extern "C" fn pow<T: Int>(x: T, y: T) -> T {
    x.pow(y)
}
extern "C" fn shl<T: Int>(x: T, y: T) -> T {
    int_shift_left(x, y)
}
extern "C" fn shrl<T: Int>(x: T, y: T) -> T {
    int_shift_right_logical(x, y)
}
extern "C" fn shra<T: Int>(x: T, y: T) -> T {
    int_shift_right_arithmetic(x, y)
}

/// The symbol of the f64 function a float op is evaluated with (`via_f64`, `binary_via_f64`).
pub fn f64_symbol(op_name: &str) -> String {
    format!("quabla_f64_{op_name}")
}

/// The symbol of the f32 vector-math kernel of a unary op (`vmath::scalar`).
pub fn f32_kernel_symbol(op_name: &str) -> String {
    format!("quabla_f32_{op_name}")
}

/// The symbol of a same-dtype scalar function (`sign`, float `rem` / `max` / `min`, integer
/// `div` / `rem` / `pow` / shifts).
pub fn typed_symbol(op_name: &str, dtype: DType) -> String {
    format!("quabla_{op_name}_{}", dtype.name())
}

/// Every symbol compiled code may import, with its address.
pub fn symbols() -> Vec<(String, *const u8)> {
    let mut s: Vec<(String, *const u8)> = Vec::new();
    for op in UnaryOp::ALL {
        if let Some(f) = via_f64(*op) {
            s.push((f64_symbol(op.name()), f as *const u8));
        }
        if let Some(f) = crate::vmath::scalar(*op) {
            s.push((f32_kernel_symbol(op.name()), f as *const u8));
        }
    }
    for op in BinaryOp::ALL {
        if let Some(f) = binary_via_f64(*op) {
            s.push((f64_symbol(op.name()), f as *const u8));
        }
    }
    let mut typed = |op: &str, dtype: DType, f: *const u8| s.push((typed_symbol(op, dtype), f));
    typed("sign", DType::F32, sign::<f32> as *const u8);
    typed("sign", DType::F64, sign::<f64> as *const u8);
    typed("rem", DType::F32, rem::<f32> as *const u8);
    typed("rem", DType::F64, rem::<f64> as *const u8);
    typed("max", DType::F32, max::<f32> as *const u8);
    typed("max", DType::F64, max::<f64> as *const u8);
    typed("min", DType::F32, min::<f32> as *const u8);
    typed("min", DType::F64, min::<f64> as *const u8);
    typed("div", DType::I32, div::<i32> as *const u8);
    typed("div", DType::U32, div::<u32> as *const u8);
    typed("rem", DType::I32, irem::<i32> as *const u8);
    typed("rem", DType::U32, irem::<u32> as *const u8);
    typed("pow", DType::I32, pow::<i32> as *const u8);
    typed("pow", DType::U32, pow::<u32> as *const u8);
    typed("shift_left", DType::I32, shl::<i32> as *const u8);
    typed("shift_left", DType::U32, shl::<u32> as *const u8);
    typed("shift_right_logical", DType::I32, shrl::<i32> as *const u8);
    typed("shift_right_logical", DType::U32, shrl::<u32> as *const u8);
    typed(
        "shift_right_arithmetic",
        DType::I32,
        shra::<i32> as *const u8,
    );
    typed(
        "shift_right_arithmetic",
        DType::U32,
        shra::<u32> as *const u8,
    );
    s
}
