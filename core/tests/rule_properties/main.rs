//! Property tests over every primitive's rules, generated from the op-spec table: for each
//! op kind, random valid attributes and shapes (drawn by `kinds::draw`, an exhaustive match
//! over `OpKind`), checked for
//! - JVP against central differences in a random direction over every float operand,
//! - VJP against JVP through `<jvp(t), u> = <t, vjp(u)>` (every operand's cotangent),
//! - `vmap` against a loop over the batch, bit for bit, with every combination of batched
//!   and unbatched operands and batch axes at random positions,
//!
//! in f64 and f32. `QUABLA_PROPERTY_SEED` and `QUABLA_PROPERTY_DRAWS` (cases per kind and
//! dtype, default 4) widen a run; a failure names the kind, the case and its seed.

#[path = "../common/mod.rs"]
mod common;
mod draw;
mod indexing;
mod kinds;
mod linalg;
mod regions;
mod round_trips;
mod ties;

use common::cpu;
use draw::{draw_args, Case, Grads, Rng};
use quabla::ad::{jvp, vjp};
use quabla::qir::OpKind;
use quabla::test_util::{check_jvp, check_vjp, check_vjp_by_differences, Tolerance};
use quabla::{vmap, Array, DType, Result};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A seed per (kind, draw), independent of the order kinds are listed in.
fn seed_for(kind: OpKind, k: usize, dt: DType) -> u64 {
    let base = env_or("QUABLA_PROPERTY_SEED", 0x5eed_2026);
    let name = format!("{kind:?}/{k}/{dt}");
    name.bytes().fold(base ^ 0xcbf29ce484222325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Kinds whose attributes combine in many ways draw four times as many cases.
fn weight(kind: OpKind) -> usize {
    match kind {
        OpKind::DotGeneral
        | OpKind::Gather
        | OpKind::ScatterAdd
        | OpKind::Pad
        | OpKind::Scan
        | OpKind::BoundedWhile => 4,
        _ => 1,
    }
}

/// Every kind's cases for `dt`, each with the seed that drew it. A generator that draws
/// nothing valid in 50 tries is itself a failure.
fn cases(dt: DType) -> Vec<(OpKind, u64, Case)> {
    let draws = env_or("QUABLA_PROPERTY_DRAWS", 4) as usize;
    let mut out = Vec::new();
    for kind in OpKind::all() {
        for k in 0..draws * weight(kind) {
            let seed = seed_for(kind, k, dt);
            let mut rng = Rng(seed);
            let case = (0..50).find_map(|_| kinds::draw(kind, k, &mut rng, dt));
            let case = case.unwrap_or_else(|| panic!("{kind:?}: no valid case in 50 draws"));
            out.push((kind, seed, case));
        }
    }
    out
}

fn case_args(case: &Case, seed: u64) -> Result<Vec<Array>> {
    draw_args(&case.args, &mut Rng(seed ^ 0xa5a5), case.dtype, &cpu())
}

fn all_zero(arrays: &[Array]) -> Result<bool> {
    for a in arrays.iter().filter(|a| a.dtype().is_float()) {
        if a.astype(DType::F64)?
            .to_vec::<f64>()?
            .iter()
            .any(|v| *v != 0.0)
        {
            return Ok(false);
        }
    }
    Ok(true)
}

fn check_derivatives(case: &Case, seed: u64) -> Result<()> {
    let args = case_args(case, seed)?;
    let base = Tolerance::for_dtype(case.tol_dtype);
    let tol = Tolerance {
        eps: case.eps.unwrap_or(base.eps),
        rtol: base.rtol * case.tol_scale,
        atol: base.atol * case.tol_scale,
    };
    let f = &*case.f;
    match case.grads {
        Grads::Both => {
            check_jvp(f, &args, tol, seed)?;
            check_vjp(f, &args, tol, seed)
        }
        Grads::JvpOnly => {
            check_jvp(f, &args, tol, seed)?;
            match vjp(f, &args) {
                Err(quabla::Error::Value(_)) => Ok(()),
                Err(e) => Err(quabla::Error::value(format!(
                    "reverse mode should be refused with a ValueError, got {e}"
                ))),
                Ok(_) => Err(quabla::Error::value(
                    "reverse mode is now supported: check its VJP here (Grads::Both)",
                )),
            }
        }
        Grads::VjpOnly => {
            if jvp(f, &args, &args).is_ok() {
                return Err(quabla::Error::value(
                    "forward mode is now supported: check its JVP here (Grads::Both)",
                ));
            }
            check_vjp_by_differences(f, &args, tol, seed)
        }
        Grads::Zero => {
            let dirs: Vec<Array> = args.iter().map(Array::ones_like).collect::<Result<_>>()?;
            let (y, ty) = jvp(f, &args, &dirs)?;
            let (_, pb) = vjp(f, &args)?;
            let cts: Vec<Array> = y.iter().map(Array::ones_like).collect::<Result<_>>()?;
            if all_zero(&ty)? && all_zero(&pb.call(&cts)?)? {
                Ok(())
            } else {
                Err(quabla::Error::value("a tangent or cotangent is not zero"))
            }
        }
    }
}

fn run_all(dt: DType, check: &dyn Fn(&Case, u64) -> Result<()>) {
    let mut failures = Vec::new();
    let cases = cases(dt);
    for (kind, seed, case) in &cases {
        if let Err(e) = check(case, *seed) {
            failures.push(format!("{kind:?} `{}` (seed {seed:#x}): {e}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {dt} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_kind_of_the_table_draws_valid_cases() {
    for dt in [DType::F64, DType::F32] {
        let cases = cases(dt);
        for kind in OpKind::all() {
            assert!(cases.iter().any(|(k, ..)| *k == kind), "{kind:?}");
        }
    }
}

#[test]
fn derivatives_match_finite_differences_and_each_other_in_f64() {
    run_all(DType::F64, &check_derivatives);
}

#[test]
fn derivatives_match_finite_differences_and_each_other_in_f32() {
    run_all(DType::F32, &check_derivatives);
}

fn bits(a: &Array) -> Result<Vec<u64>> {
    let h = a.to_host()?;
    Ok((0..a.size()).map(|i| h.bits_at(i)).collect())
}

/// Bit for bit, or for an inexact case within a few ulps of the output's scale.
fn agree(case: &Case, got: &Array, want: &Array) -> Result<bool> {
    if case.exact || !got.dtype().is_float() {
        return Ok(bits(got)? == bits(want)?);
    }
    let g = got.astype(DType::F64)?.to_vec::<f64>()?;
    let w = want.astype(DType::F64)?.to_vec::<f64>()?;
    let scale = w.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1.0);
    let ulps = if got.dtype() == DType::F32 {
        1e-5
    } else {
        1e-13
    };
    Ok(g.iter()
        .zip(&w)
        .all(|(a, b)| (a.is_nan() && b.is_nan()) || (a - b).abs() <= ulps * scale))
}

/// `samples[b]` stacked along a new axis `ax`.
fn stack(samples: &[Array], ax: usize) -> Result<Array> {
    let parts: Vec<Array> = samples
        .iter()
        .map(|s| s.expand_dims(ax as isize))
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = parts.iter().collect();
    Array::concatenate(&refs, ax as isize)
}

/// vmap of the case's function against a loop over the batch, for the batched subsets
/// `mask` (bit `i`: argument `i` batched).
fn check_vmap_with(case: &Case, seed: u64, mask: u32, rng: &mut Rng) -> Result<()> {
    let size = rng.size(2, 3);
    let samples: Vec<Vec<Array>> = (0..size)
        .map(|b| case_args(case, seed.wrapping_add(b as u64 * 7919)))
        .collect::<Result<_>>()?;
    let n = samples[0].len();
    let mut in_axes = Vec::with_capacity(n);
    let mut batched = Vec::with_capacity(n);
    for i in 0..n {
        if mask >> i & 1 == 1 {
            let ax = rng.size(0, samples[0][i].ndim());
            let column: Vec<Array> = samples.iter().map(|s| s[i].clone()).collect();
            batched.push(stack(&column, ax)?);
            in_axes.push(Some(ax));
        } else {
            batched.push(samples[0][i].clone());
            in_axes.push(None);
        }
    }
    let f = case.f.clone();
    let got = vmap(move |a: &[Array]| f(a), &in_axes, &[])(&batched)?;
    let mut per_out: Vec<Vec<Array>> = Vec::new();
    for sample in &samples {
        let args: Vec<Array> = (0..n)
            .map(|i| {
                if mask >> i & 1 == 1 {
                    sample[i].clone()
                } else {
                    samples[0][i].clone()
                }
            })
            .collect();
        for (k, y) in (case.f)(&args)?.into_iter().enumerate() {
            if per_out.len() <= k {
                per_out.push(Vec::new());
            }
            per_out[k].push(y);
        }
    }
    if got.len() != per_out.len() {
        return Err(quabla::Error::value(format!(
            "vmap gave {} outputs, the loop {}",
            got.len(),
            per_out.len()
        )));
    }
    for (k, (g, column)) in got.iter().zip(&per_out).enumerate() {
        let want = stack(column, 0)?;
        if g.shape() != want.shape() || !agree(case, g, &want)? {
            return Err(quabla::Error::value(format!(
                "output {k} with in_axes {in_axes:?}: vmap gave {:?} {:?}, the loop {:?} {:?}",
                g.shape(),
                g.astype(DType::F64)?.to_vec::<f64>()?,
                want.shape(),
                want.astype(DType::F64)?.to_vec::<f64>()?
            )));
        }
    }
    Ok(())
}

/// Every non-empty subset of batched arguments for up to three arguments, four random ones
/// beyond.
fn check_vmap(case: &Case, seed: u64) -> Result<()> {
    let n = case.args.len() as u32;
    let mut rng = Rng(seed ^ 0x7a7a);
    let masks: Vec<u32> = if n <= 3 {
        (1..1u32 << n).collect()
    } else {
        (0..4)
            .map(|_| 1 + (rng.next_u64() as u32) % ((1 << n) - 1))
            .collect()
    };
    for mask in masks {
        check_vmap_with(case, seed, mask, &mut rng)?;
    }
    Ok(())
}

#[test]
fn vmap_matches_a_loop_bit_for_bit_in_f64() {
    run_all(DType::F64, &check_vmap);
}

#[test]
fn vmap_matches_a_loop_bit_for_bit_in_f32() {
    run_all(DType::F32, &check_vmap);
}

#[test]
fn every_case_and_transform_program_round_trips_through_text_and_binary() {
    for dt in [DType::F64, DType::F32] {
        run_all(dt, &|case: &Case, seed: u64| {
            round_trips::check(case, &case_args(case, seed)?)
        });
    }
}
