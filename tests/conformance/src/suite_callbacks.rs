//! The host functions the suite's `host_callback` cases call, under fixed ids (from
//! `quabla_abi::host::callbacks::FIXED_IDS`), installed before any case runs.

use quabla_abi::host::callbacks::{register_as, FIXED_IDS};
use quabla_abi::{DType, Element, HostArray, HostView, TensorType};
use std::sync::{Arc, Once};

/// Pure: every operand mapped elementwise to `3 x + 1` in its own dtype (wrapping for
/// integers), one result per operand of its type.
pub const AFFINE: u64 = FIXED_IDS + 1;
/// Effectful: reads its operands and returns nothing.
pub const OBSERVE: u64 = FIXED_IDS + 2;

fn mapped<T: Element>(a: &HostView<'_>, f: impl Fn(T) -> T) -> Result<HostArray, String> {
    let v: Vec<T> = a.to_array().to_vec()?;
    HostArray::from_slice(
        a.ty.shape.clone(),
        &v.into_iter().map(f).collect::<Vec<_>>(),
    )
}

fn affine(args: &[HostView<'_>], _: &[TensorType]) -> Result<Vec<HostArray>, String> {
    args.iter()
        .map(|a| match a.ty.dtype {
            DType::F32 => mapped(a, |x: f32| 3.0 * x + 1.0),
            DType::F64 => mapped(a, |x: f64| 3.0 * x + 1.0),
            DType::I32 => mapped(a, |x: i32| x.wrapping_mul(3).wrapping_add(1)),
            DType::U32 => mapped(a, |x: u32| x.wrapping_mul(3).wrapping_add(1)),
            DType::Bool => Err("the suite's affine callback takes numbers, not bool".into()),
        })
        .collect()
}

/// Registers the suite's host functions (once per process).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The ids are at least FIXED_IDS by construction, so registration cannot fail.
        let _ = register_as(AFFINE, Arc::new(affine));
        let _ = register_as(
            OBSERVE,
            Arc::new(|_: &[HostView<'_>], _: &[TensorType]| Ok(vec![])),
        );
    });
}
