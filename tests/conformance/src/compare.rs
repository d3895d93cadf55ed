//! Comparing an output with its golden, per dtype and tolerance.

use crate::case::Tolerance;
use quabla_abi::{DType, HostArray};

/// The worst error seen over one output, for the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Errors {
    pub max_ulp: u64,
    pub max_rel: f64,
}

/// Maps float bits onto a line where adjacent floats differ by 1 (and -0 meets +0).
fn ordered(bits: u64, width: u32) -> i128 {
    let sign = 1u64 << (width - 1);
    let mag = (bits & (sign - 1)) as i128;
    if bits & sign != 0 {
        -mag
    } else {
        mag
    }
}

fn as_f64(a: &HostArray, i: usize) -> f64 {
    let b = a.bits_at(i);
    match a.dtype() {
        DType::F32 => f32::from_bits(b as u32) as f64,
        DType::F64 => f64::from_bits(b),
        DType::I32 => b as u32 as i32 as f64,
        DType::U32 => b as u32 as f64,
        DType::Bool => b as f64,
    }
}

fn is_nan(a: &HostArray, i: usize) -> bool {
    a.dtype().is_float() && as_f64(a, i).is_nan()
}

/// Checks `got` against `want`; returns the errors seen, or a message naming the first
/// element out of tolerance.
pub fn compare(got: &HostArray, want: &HostArray, tol: &Tolerance) -> Result<Errors, String> {
    if got.ty != want.ty {
        return Err(format!("type {} but expected {}", got.ty, want.ty));
    }
    let mut errs = Errors::default();
    let width = want.dtype().size_bytes() as u32 * 8;
    for i in 0..want.ty.num_elements() {
        let (g, w) = (got.bits_at(i), want.bits_at(i));
        if g == w || (is_nan(got, i) && is_nan(want, i)) {
            continue;
        }
        let (gf, wf) = (as_f64(got, i), as_f64(want, i));
        let rel = if wf != 0.0 {
            ((gf - wf) / wf).abs()
        } else {
            (gf - wf).abs()
        };
        if rel.is_finite() {
            errs.max_rel = errs.max_rel.max(rel);
        }
        let ok = match tol {
            Tolerance::Ulp { ulp } => {
                if !want.dtype().is_float() || *ulp == 0 || is_nan(got, i) || is_nan(want, i) {
                    false
                } else {
                    let d = (ordered(g, width) - ordered(w, width)).unsigned_abs() as u64;
                    errs.max_ulp = errs.max_ulp.max(d);
                    d <= *ulp
                }
            }
            Tolerance::Close { rtol, atol } => (gf - wf).abs() <= atol + rtol * wf.abs(),
        };
        if !ok {
            return Err(format!("element {i}: got {gf:e} (bits {g:x}), expected {wf:e} (bits {w:x}), tolerance {tol:?}"));
        }
    }
    Ok(errs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> HostArray {
        HostArray::from_f32(vec![v.len()], v)
    }

    #[test]
    fn exact_means_identical_bits_except_nan_payloads() {
        let exact = Tolerance::Ulp { ulp: 0 };
        assert!(compare(
            &f32s(&[1.0, f32::NAN]),
            &f32s(&[1.0, f32::from_bits(0x7fc0_0001)]),
            &exact
        )
        .is_ok());
        assert!(compare(&f32s(&[-0.0]), &f32s(&[0.0]), &exact).is_err());
        let next = f32::from_bits(1.0f32.to_bits() + 1);
        assert!(compare(&f32s(&[next]), &f32s(&[1.0]), &exact).is_err());
        assert!(compare(&f32s(&[f32::NAN]), &f32s(&[1.0]), &exact).is_err());
    }

    #[test]
    fn ulp_bounds_count_representable_steps_across_zero() {
        let one = Tolerance::Ulp { ulp: 1 };
        let next = f32::from_bits(1.0f32.to_bits() + 1);
        let e = compare(&f32s(&[next]), &f32s(&[1.0]), &one).unwrap();
        assert_eq!(e.max_ulp, 1);
        let two_up = f32::from_bits(1.0f32.to_bits() + 2);
        assert!(compare(&f32s(&[two_up]), &f32s(&[1.0]), &one).is_err());
        let tiny = f32::from_bits(1);
        assert!(compare(&f32s(&[tiny]), &f32s(&[-0.0]), &one).is_ok());
        assert!(compare(
            &f32s(&[f32::INFINITY]),
            &f32s(&[f32::MAX]),
            &Tolerance::Ulp { ulp: 0 }
        )
        .is_err());
    }

    #[test]
    fn close_uses_absolute_plus_relative_error() {
        let tol = Tolerance::Close {
            rtol: 1e-3,
            atol: 1e-6,
        };
        assert!(compare(&f32s(&[1.0005]), &f32s(&[1.0]), &tol).is_ok());
        assert!(compare(&f32s(&[1.01]), &f32s(&[1.0]), &tol).is_err());
        let ints = HostArray::from_slice(vec![1], &[3i32]).unwrap();
        let other = HostArray::from_slice(vec![1], &[4i32]).unwrap();
        assert!(compare(&ints, &other, &Tolerance::Ulp { ulp: 5 }).is_err());
    }
}
