//! Writes computed into a read's memory (`Kernel::reuses`, `Executor::launch_reusing`):
//! which pairs a fused run offers, and, in the host emulation, that a donated argument's
//! memory becomes the output computed from it while a lent one is left as it was.

use super::plan_with;
use crate::emulate::testing::{elements, storage};
use crate::emulate::Emulated;
use crate::fusion::Kernel;
use quabla_abi::qir::Program;
use std::sync::Arc;

fn kernels(text: &str) -> Vec<Kernel> {
    let p = Program::parse(text).unwrap();
    plan_with(&p, "t", 0)
        .unwrap()
        .kernels()
        .into_iter()
        .cloned()
        .collect()
}

/// Adam's shape of update: `p - g * g`.
const UPDATE: &str = "program(%0: f32[4096], %1: f32[4096]) {
  %2 = mul(%1, %1) : f32[4096]
  %3 = sub(%0, %2) : f32[4096]
  return %3
}";

#[test]
fn a_run_offers_a_read_loaded_at_its_own_index_for_a_write_of_its_dtype_and_size() {
    let k = kernels(UPDATE);
    assert_eq!(k.len(), 1);
    let [(v, w)] = k[0].reuses[..] else {
        panic!("one pair: {:?}", k[0].reuses)
    };
    assert!(v < 2 && w == 3, "{:?}", k[0].reuses);
    // The pair's pointers may be one; the other read's keeps its `__restrict__`.
    assert!(
        k[0].body.contains(&format!("const float* in{v},")),
        "{}",
        k[0].body
    );
    assert!(k[0].body.contains("float* out3,"), "{}", k[0].body);
    assert!(k[0]
        .body
        .contains(&format!("const float* __restrict__ in{}", 1 - v)));
}

#[test]
fn no_pair_where_a_read_is_indexed_returned_or_of_another_dtype_or_size() {
    let cases = [
        // Read by index too, as the root of a broadcast.
        "program(%0: f32[16, 16]) {
  %1 = broadcast_in_dim[dims=[0, 1]](%0) : f32[16, 16]
  %2 = add(%0, %1) : f32[16, 16]
  %3 = exp(%2) : f32[16, 16]
  return %3
}",
        // Returned as well.
        "program(%0: f32[64]) {
  %1 = exp(%0) : f32[64]
  return %1, %0
}",
        // Another dtype.
        "program(%0: f32[64]) {
  %1 = compare[dir=gt](%0, %0) : bool[64]
  return %1
}",
        // One element in a run of 64: every thread loads it at 0, one thread stores.
        "program(%0: f32[], %1: f32[64]) {
  %2 = neg(%0) : f32[]
  %3 = mul(%1, %1) : f32[64]
  return %3, %2
}",
    ];
    for text in cases {
        for k in kernels(text) {
            let bad = k.reuses.iter().any(|&(v, _)| v == 0);
            assert!(!bad, "{text}\n{:?}\n{}", k.reuses, k.body);
        }
    }
}

fn update_inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let p: Vec<f32> = (0..4096).map(|i| (i as f32).sin()).collect();
    let g: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.37).cos()).collect();
    let want = p.iter().zip(&g).map(|(p, g)| p - g * g).collect();
    (p, g, want)
}

#[test]
fn a_donated_argument_becomes_the_output_computed_from_it() {
    let exe = Emulated::new_with(&Program::parse(UPDATE).unwrap(), 0).unwrap();
    let (p, g, want) = update_inputs();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // Lent: both inputs are the caller's still, so the output has memory of its own.
    let lent = [storage(&p, f32::to_le_bytes), storage(&g, f32::to_le_bytes)];
    let out = exe.run(lent.to_vec()).unwrap();
    assert_eq!(bits(&elements(&out[0], f32::from_le_bytes)), bits(&want));
    assert!(lent.iter().all(|x| !Arc::ptr_eq(x, &out[0])));
    assert_eq!(elements(&lent[0], f32::from_le_bytes), p);
    assert_eq!(elements(&lent[1], f32::from_le_bytes), g);
    assert_eq!(exe.reused(), 0);
    // Donated: the run holds them alone, and the output is computed into one of them.
    let donated = [storage(&p, f32::to_le_bytes), storage(&g, f32::to_le_bytes)];
    let at: Vec<*const _> = donated.iter().map(Arc::as_ptr).collect();
    let out = exe.run(Vec::from(donated)).unwrap();
    assert!(at.contains(&Arc::as_ptr(&out[0])), "an input's own memory");
    assert_eq!(bits(&elements(&out[0], f32::from_le_bytes)), bits(&want));
    assert_eq!(exe.reused(), 1);
}

#[test]
fn an_intermediate_is_computed_over_by_the_run_reading_it_last() {
    // The transpose is a kernel of its own; the run after it reads it last.
    let p = Program::parse(
        "program(%0: f32[32, 64]) {
  %1 = transpose[perm=[1, 0]](%0) : f32[64, 32]
  %2 = mul(%1, %1) : f32[64, 32]
  %3 = add(%2, %1) : f32[64, 32]
  return %3
}",
    )
    .unwrap();
    let exe = Emulated::new_with(&p, 0).unwrap();
    let x: Vec<f32> = (0..2048).map(|i| (i as f32 * 0.01).sin()).collect();
    let lent = storage(&x, f32::to_le_bytes);
    let out = exe.run(vec![lent.clone()]).unwrap();
    assert_eq!(exe.reused(), 1, "the transpose's memory holds the result");
    let got = elements(&out[0], f32::from_le_bytes);
    for r in 0..64 {
        for c in 0..32 {
            let t = x[c * 64 + r];
            let want = t * t + t;
            assert_eq!(got[r * 32 + c].to_bits(), want.to_bits(), "({r}, {c})");
        }
    }
    assert_eq!(elements(&lent, f32::from_le_bytes), x);
}
