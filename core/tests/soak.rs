//! A long-running process stays flat: 200,000 eager calls over 2,000 shapes, one in ten of
//! them a freshly traced `jit` whose captured constant is new each time (so each is a new
//! program, and its constant arithmetic is folded while tracing), keep resident memory within
//! 10% after warm-up and every cache at its bound. Resident memory is read from
//! `/proc/self/statm` (Linux); elsewhere only the cache bounds are checked.

mod common;
use common::cpu;
use quabla::runtime::cache_capacity;
use quabla::{jit, Array};

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// `x + 2c` where `c = step`: traced (and `2c` folded) when `step % 10 == 0`, eager else.
fn call(x: &Array, step: usize) -> Array {
    if !step.is_multiple_of(10) {
        return (x + step as f64).unwrap();
    }
    let c = Array::from_slice_on(x.device(), &[step as f32], &[]).unwrap();
    let f = jit(move |a: &[Array]| Ok(vec![(&a[0] + &(&c * 2.0)?)?]));
    f.call(std::slice::from_ref(x)).unwrap().remove(0)
}

#[test]
fn eager_and_traced_calls_over_many_programs_keep_memory_flat() {
    let device = cpu();
    let shapes = 2_000;
    let inputs: Vec<Array> = (1..=shapes)
        .map(|n| Array::from_slice_on(&device, &vec![1.0f32; n], &[n]).unwrap())
        .collect();
    let (calls, warm_up) = (200_000, 40_000);
    let mut after_warm_up = None;
    let mut peak = 0;
    for step in 0..calls {
        let y = call(&inputs[step % shapes], step);
        if step.is_multiple_of(9_999) {
            let want = 1.0 + if step.is_multiple_of(10) { 2.0 } else { 1.0 } * step as f32;
            assert_eq!(y.to_vec::<f32>().unwrap()[0], want, "step {step}");
        }
        if step + 1 == warm_up {
            after_warm_up = resident_bytes();
        }
        if step + 1 > warm_up && step.is_multiple_of(1000) {
            peak = peak.max(resident_bytes().unwrap_or(0));
        }
    }
    assert!(
        device.compiled_count() <= cache_capacity(),
        "{} executables cached, more than the bound {}",
        device.compiled_count(),
        cache_capacity()
    );
    if let Some(warm) = after_warm_up {
        println!(
            "resident after warm-up {} MiB, peak after {} MiB, {} executables cached",
            warm >> 20,
            peak >> 20,
            device.compiled_count()
        );
        assert!(
            peak as f64 <= warm as f64 * 1.10,
            "resident memory grew from {warm} to {peak} bytes"
        );
    }
}
