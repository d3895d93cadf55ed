//! Scan's tape policy (`QUABLA_SCAN_TAPE`): how much a reverse-mode scan stores. A test
//! binary of its own because it sets the environment variable, which every reverse-mode scan
//! in the same process reads: beside other tests it made them fail at random with its
//! deliberately bad value.

mod common;

use common::cpu;
use quabla::ad::grad;
use quabla::lax::scan;
use quabla::{Array, Axes, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

/// The tape of a scan with a 16-float carry (and x-dependent residuals) of length `t`,
/// under the tape policy `policy` (`QUABLA_SCAN_TAPE`; `None`: the default).
fn tape_bytes(t: usize, policy: Option<&str>) -> Result<usize> {
    let f = move |a: &[Array]| {
        // Built from the argument, so tracing never materialises it.
        let xs = (a[0].broadcast_to(&[t, 16])? * 1e-3)?;
        let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            Ok((vec![(&c[0] * &x[0])?.sin()?], vec![]))
        };
        Ok(vec![
            scan(&step, &a[..1], &[xs], None, false, 1)?.0[0].sum(Axes::All, false)?
        ])
    };
    let x = f64s(&[0.5; 16], &[16]);
    // Tracing the gradient builds the backward pass; the tape is sized there.
    if let Some(p) = policy {
        std::env::set_var("QUABLA_SCAN_TAPE", p);
    }
    let built = quabla::make_program(grad(f, &[0]), &[x]);
    std::env::remove_var("QUABLA_SCAN_TAPE");
    built?;
    Ok(quabla::lax::last_scan_tape_bytes())
}

#[test]
fn checkpointed_reverse_scan_storage_grows_as_sqrt_t() {
    let sizes = [64usize, 1024, 16384];
    let tapes = |policy| -> Vec<usize> {
        sizes
            .iter()
            .map(|&t| tape_bytes(t, policy).unwrap())
            .collect()
    };
    let (ck, full) = (tapes(Some("sqrt")), tapes(Some("full")));
    println!("tape bytes, checkpointed: {ck:?}; full: {full:?}");
    // 16x more steps: sqrt(16) = 4x more storage checkpointed, 16x stored in full.
    let r = ck[2] as f64 / ck[1] as f64;
    assert!(
        (3.0..5.0).contains(&r),
        "checkpointed growth {r} for 16x the steps ({ck:?})"
    );
    assert_eq!(full[2], 16 * full[1]);
    assert!(ck[2] * 20 < full[2], "{ck:?} vs {full:?}");
    // Every step's residuals here are 16 f64 x 16384 steps = 2 MiB at most: the default
    // stores them all, as JAX does.
    assert_eq!(tapes(None), full);
    assert_eq!(tapes(Some("auto")), full);
    // Past 256 MiB of residuals the default checkpoints (only traced: nothing runs).
    let long = 1 << 21;
    let (auto, stored) = (
        tape_bytes(long, None).unwrap(),
        tape_bytes(long, Some("full")).unwrap(),
    );
    assert!(
        stored > 256 << 20 && auto * 100 < stored,
        "{auto} vs {stored}"
    );
    let err = tape_bytes(64, Some("sqrtt")).unwrap_err().to_string();
    assert!(
        err.contains("QUABLA_SCAN_TAPE") && err.contains("`sqrt`"),
        "{err}"
    );
}
