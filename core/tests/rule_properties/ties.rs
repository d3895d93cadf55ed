//! JAX's tie conventions, for every operand: `maximum`/`minimum` give each tied operand
//! half the slope, a max/min reduction splits it equally among the tied elements. Checked
//! through both JVP (one operand's tangent at a time) and VJP.

use super::common::cpu;
use super::draw::{program_fn, single, Rng};
use quabla::ad::{jvp, vjp};
use quabla::qir::{BinaryOp, Op, ReduceKind};
use quabla::{Array, DType, Result, TensorType};

fn host(a: &Array) -> Result<Vec<f64>> {
    a.astype(DType::F64)?.to_vec::<f64>()
}

fn array(v: &[f64], shape: &[usize], dt: DType) -> Result<Array> {
    Array::from_slice_on(&cpu(), v, shape)?.astype(dt)
}

/// `a` and `b` with ties on about half the elements (values on a grid of 0.5, so f32
/// represents them exactly and the ties are exact).
fn tied_pair(rng: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let a: Vec<f64> = (0..n).map(|_| rng.int(-4, 4) as f64 * 0.5).collect();
    let b = a
        .iter()
        .map(|&x| {
            if rng.coin() {
                x
            } else {
                x + rng.int(-3, 3) as f64 * 0.5
            }
        })
        .collect();
    (a, b)
}

fn check_binary(op: BinaryOp, dt: DType, rng: &mut Rng) -> Result<()> {
    let n = rng.size(1, 8);
    let (a, b) = tied_pair(rng, n);
    let ty = TensorType::new(dt, vec![n]);
    let p = single(Op::Binary(op), vec![ty.clone(), ty], vec![])
        .ok_or_else(|| quabla::Error::value("binary program refused"))?;
    let f = program_fn(p);
    let args = [array(&a, &[n], dt)?, array(&b, &[n], dt)?];
    let wins = |x: f64, y: f64| match op {
        BinaryOp::Max => x > y,
        _ => x < y,
    };
    let (_, pb) = vjp(&*f, &args)?;
    let grads = pb.call(&[array(&vec![1.0; n], &[n], dt)?])?;
    for operand in 0..2 {
        let (mine, other) = if operand == 0 { (&a, &b) } else { (&b, &a) };
        let want: Vec<f64> = mine
            .iter()
            .zip(other.iter())
            .map(|(&x, &y)| {
                if x == y {
                    0.5
                } else if wins(x, y) {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let mut dirs = [args[0].zeros_like()?, args[1].zeros_like()?];
        dirs[operand] = dirs[operand].ones_like()?;
        let (_, t) = jvp(&*f, &args, &dirs)?;
        for (how, got) in [("jvp", host(&t[0])?), ("vjp", host(&grads[operand])?)] {
            if got != want {
                return Err(quabla::Error::value(format!(
                    "{} operand {operand} at a={a:?} b={b:?} ({how}): {got:?}, expected {want:?}",
                    op.name()
                )));
            }
        }
    }
    Ok(())
}

fn check_reduce(kind: ReduceKind, dt: DType, rng: &mut Rng) -> Result<()> {
    let n = rng.size(1, 8);
    let x: Vec<f64> = (0..n).map(|_| rng.int(-2, 2) as f64).collect();
    let ty = TensorType::new(dt, vec![n]);
    let op = Op::Reduce {
        kind,
        axes: vec![0],
    };
    let f =
        program_fn(single(op, vec![ty], vec![]).ok_or_else(|| quabla::Error::value("refused"))?);
    let best = match kind {
        ReduceKind::Max => x.iter().cloned().fold(f64::MIN, f64::max),
        _ => x.iter().cloned().fold(f64::MAX, f64::min),
    };
    let k = x.iter().filter(|&&v| v == best).count() as f64;
    let want: Vec<f64> = x
        .iter()
        .map(|&v| if v == best { 1.0 / k } else { 0.0 })
        .collect();
    let args = [array(&x, &[n], dt)?];
    let (y, pb) = vjp(&*f, &args)?;
    let got = host(&pb.call(&[y[0].ones_like()?])?[0])?;
    let close = |g: &[f64]| {
        g.iter()
            .zip(&want)
            .all(|(a, b)| (a - b).abs() <= 1e-6 * b.abs())
    };
    if !close(&got) {
        return Err(quabla::Error::value(format!(
            "reduce {} of {x:?} (vjp): {got:?}, expected {want:?}",
            kind.name()
        )));
    }
    // The JVP along each unit direction reads one entry of the gradient.
    for i in 0..n {
        let mut e = vec![0.0; n];
        e[i] = 1.0;
        let (_, t) = jvp(&*f, &args, &[array(&e, &[n], dt)?])?;
        let g = host(&t[0])?[0];
        if (g - want[i]).abs() > 1e-6 * want[i].abs() {
            return Err(quabla::Error::value(format!(
                "reduce {} of {x:?} (jvp along {i}): {g}, expected {}",
                kind.name(),
                want[i]
            )));
        }
    }
    Ok(())
}

#[test]
fn ties_share_the_derivative_among_every_tied_operand() {
    let mut failures = Vec::new();
    for dt in [DType::F64, DType::F32] {
        let mut rng = Rng(0x7135 ^ dt as u64);
        for _ in 0..6 {
            for op in [BinaryOp::Max, BinaryOp::Min] {
                if let Err(e) = check_binary(op, dt, &mut rng) {
                    failures.push(format!("{dt}: {e}"));
                }
            }
            for kind in [ReduceKind::Max, ReduceKind::Min] {
                if let Err(e) = check_reduce(kind, dt, &mut rng) {
                    failures.push(format!("{dt}: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
