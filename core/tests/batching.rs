//! vmap against a loop over the batch, bit for bit, for every primitive family, regions
//! included, and composed with the AD transforms.

mod common;

use common::{cpu, values};
use quabla::ad::{grad, jacfwd};
use quabla::qir::{GatherDims, Program, ScatterDims};
use quabla::{call_program, vmap, Array, Axes, Result};

type F = fn(&[Array]) -> Result<Vec<Array>>;
/// A named vmap case: function, arguments, in_axes.
type Case = (&'static str, F, Vec<Array>, Vec<Option<usize>>);

fn arr(shape: &[usize], seed: u64) -> Array {
    let n = shape.iter().product();
    Array::from_slice_on(&cpu(), &values(n, seed), shape).unwrap()
}

fn ints(v: &[i32], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn bits(a: &Array) -> Vec<u64> {
    let h = a.to_host().unwrap();
    (0..a.size()).map(|i| h.bits_at(i)).collect()
}

/// `f` applied to each batch element in turn, stacked along axis 0.
fn looped(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    axes: &[Option<usize>],
) -> Vec<Array> {
    let n = args
        .iter()
        .zip(axes)
        .find_map(|(a, ax)| ax.map(|x| a.shape()[x]))
        .unwrap();
    let mut per_out: Vec<Vec<Array>> = Vec::new();
    for i in 0..n {
        let sliced: Vec<Array> = args
            .iter()
            .zip(axes)
            .map(|(a, ax)| match ax {
                Some(x) => {
                    let idx = Array::from_slice_on(a.device(), &[i as i32], &[]).unwrap();
                    a.take(&idx, *x as isize).unwrap()
                }
                None => a.clone(),
            })
            .collect();
        let outs = f(&sliced).unwrap();
        if per_out.is_empty() {
            per_out = vec![Vec::new(); outs.len()];
        }
        for (k, o) in outs.into_iter().enumerate() {
            per_out[k].push(o.expand_dims(0).unwrap());
        }
    }
    per_out
        .iter()
        .map(|v| Array::concatenate(&v.iter().collect::<Vec<_>>(), 0).unwrap())
        .collect()
}

fn check(name: &str, f: F, args: &[Array], axes: &[Option<usize>]) {
    let got = vmap(f, axes, &[])(args).unwrap_or_else(|e| panic!("{name}: {e}"));
    let want = looped(&f, args, axes);
    assert_eq!(got.len(), want.len(), "{name}");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.tensor_type(), w.tensor_type(), "{name}");
        assert_eq!(bits(g), bits(w), "{name}");
    }
}

#[test]
fn elementwise_shape_and_reduction_rules_match_a_loop() {
    let x = arr(&[3, 4, 5], 1);
    let y = arr(&[4, 5], 2);
    let cases: Vec<Case> = vec![
        (
            "unbatched operand",
            |a| Ok(vec![(a[0].sin()? * &a[1])?.maximum(&a[1])?]),
            vec![x.clone(), y.clone()],
            vec![Some(0), None],
        ),
        (
            "axis 1",
            |a| Ok(vec![a[0].exp()?]),
            vec![x.clone()],
            vec![Some(1)],
        ),
        (
            "compare/select/convert",
            |a| {
                Ok(vec![a[0]
                    .gt(&a[1])?
                    .select(&a[0], &a[1])?
                    .astype(quabla::DType::F64)?])
            },
            vec![x.clone(), x.transpose(&[1, 2, 0]).unwrap()],
            vec![Some(0), Some(2)],
        ),
        (
            "broadcast/reshape/transpose",
            |a| {
                Ok(vec![
                    (a[0].reshape(&[5, 4])?.t()? + &a[0].sum(Axes::Some(&[1]), true)?)?,
                ])
            },
            vec![x.clone()],
            vec![Some(0)],
        ),
        (
            "slice/flip/pad",
            |a| {
                Ok(vec![a[0]
                    .slice(&[1, 0], &[4, 5], &[2, 3])?
                    .flip(&[1])?
                    .pad(0.5, &[1, -1], &[0, 2], &[1, 0])?])
            },
            vec![x.clone()],
            vec![Some(0)],
        ),
        (
            "concatenate mixed",
            |a| Ok(vec![Array::concatenate(&[&a[0], &a[1]], 0)?]),
            vec![x.clone(), y.clone()],
            vec![Some(0), None],
        ),
        (
            "reductions",
            |a| {
                Ok(vec![
                    a[0].max(Axes::Some(&[0]), false)?,
                    a[0].prod(Axes::All, false)?,
                    a[0].mean(Axes::Some(&[1]), false)?,
                ])
            },
            vec![x.clone()],
            vec![Some(0)],
        ),
        (
            "cumulative",
            |a| Ok(vec![a[0].cumsum(1, false)?, a[0].cummax(0, true)?]),
            vec![x.clone()],
            vec![Some(0)],
        ),
    ];
    for (name, f, args, axes) in cases {
        check(name, f, &args, &axes);
    }
}

#[test]
fn pad_with_a_batched_value() {
    let x = arr(&[3, 4], 3);
    let v = arr(&[3], 4);
    let f: F = |a| {
        let attrs = quabla::qir::Op::Pad {
            low: vec![1],
            high: vec![2],
            interior: vec![1],
        };
        let p = Program {
            inputs: vec![a[0].tensor_type().clone(), a[1].tensor_type().clone()],
            nodes: vec![quabla::qir::Node {
                op: attrs,
                operands: vec![quabla::qir::ValueId(0), quabla::qir::ValueId(1)],
                results: vec![quabla::TensorType::new(quabla::DType::F32, vec![10])],
            }],
            outputs: vec![quabla::qir::ValueId(2)],
        };
        call_program(&p, a)
    };
    check("pad value batched", f, &[x, v], &[Some(0), Some(0)]);
}

#[test]
fn dot_general_batches_on_either_side() {
    let a = arr(&[3, 4, 5], 5);
    let b = arr(&[5, 2], 6);
    let bb = arr(&[3, 5, 2], 7);
    let f: F = |x| Ok(vec![x[0].matmul(&x[1])?]);
    check("lhs batched", f, &[a.clone(), b.clone()], &[Some(0), None]);
    check(
        "rhs batched",
        f,
        &[
            a.slice(&[0, 0, 0], &[1, 4, 5], &[1, 1, 1])
                .unwrap()
                .reshape(&[4, 5])
                .unwrap(),
            bb.clone(),
        ],
        &[None, Some(0)],
    );
    check("both batched", f, &[a, bb], &[Some(0), Some(0)]);
}

#[test]
fn indexing_rules_match_a_loop() {
    let x = arr(&[3, 6, 2], 8);
    let idx = ints(&[5, 0, 9, 2, -1, 3], &[3, 2]);
    let f: F = |a| Ok(vec![a[0].take(&a[1], 0)?]);
    check(
        "take: both batched",
        f,
        &[x.clone(), idx.clone()],
        &[Some(0), Some(0)],
    );
    check(
        "take: indices batched",
        f,
        &[
            x.slice(&[0, 0, 0], &[1, 6, 2], &[1, 1, 1])
                .unwrap()
                .reshape(&[6, 2])
                .unwrap(),
            idx.clone(),
        ],
        &[None, Some(0)],
    );
    check(
        "take: operand batched",
        f,
        &[x.clone(), ints(&[1, 4], &[2])],
        &[Some(0), None],
    );
    let scatter: F = |a| {
        let d = ScatterDims {
            update_window_dims: vec![1],
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
        };
        Ok(vec![a[0].scatter_add(
            &a[1].reshape(&[-1, 1])?,
            &a[2],
            d,
        )?])
    };
    check(
        "scatter_add",
        scatter,
        &[x.clone(), idx.clone(), arr(&[3, 2, 2], 9)],
        &[Some(0), Some(0), Some(0)],
    );
    check(
        "scatter_add: shared operand",
        scatter,
        &[arr(&[6, 2], 10), idx.clone(), arr(&[3, 2, 2], 9)],
        &[None, Some(0), Some(0)],
    );
    let ds: F = |a| {
        let (i, j) = (a[1].reshape(&[])?, a[2].reshape(&[])?);
        Ok(vec![a[0].dynamic_slice(&[&i, &j], &[2, 2])?])
    };
    let starts = ints(&[0, 5, 3], &[3]);
    check(
        "dynamic_slice: batched starts",
        ds,
        &[x.clone(), starts.clone(), ints(&[1, -1, 0], &[3])],
        &[Some(0), Some(0), Some(0)],
    );
    check(
        "dynamic_slice: shared starts",
        ds,
        &[x.clone(), ints(&[4], &[]), ints(&[1], &[])],
        &[Some(0), None, None],
    );
    let dus: F = |a| {
        let (i, j) = (a[2].reshape(&[])?, a[3].reshape(&[])?);
        Ok(vec![a[0].dynamic_update_slice(&a[1], &[&i, &j])?])
    };
    check(
        "dynamic_update_slice: batched starts",
        dus,
        &[
            x.clone(),
            arr(&[3, 2, 1], 11),
            starts,
            ints(&[1, 7, 0], &[3]),
        ],
        &[Some(0), Some(0), Some(0), Some(0)],
    );
    let g: F = |a| {
        let d = GatherDims {
            offset_dims: vec![1],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0, 1],
            slice_sizes: vec![1, 2],
        };
        Ok(vec![a[0].gather(&a[1], d)?])
    };
    check(
        "gather: two index dims",
        g,
        &[
            x.slice(&[0, 0, 0], &[3, 6, 2], &[1, 1, 1])
                .unwrap()
                .reshape(&[3, 12])
                .unwrap()
                .reshape(&[3, 6, 2])
                .unwrap()
                .reshape(&[3, 4, 3])
                .unwrap(),
            ints(&[1, 1, 3, 2, 0, 0, 2, 1, 3, 0, 1, 2], &[3, 2, 2]),
        ],
        &[Some(0), Some(0)],
    );
}

const COND: &str = "program(%0: i32[], %1: f32[3]) {
  %2 = cond(%0, %1) : f32[3] {
    branch(%0: f32[3]) {
      %1 = exp(%0) : f32[3]
      return %1
    }
    branch(%0: f32[3]) {
      %1 = sin(%0) : f32[3]
      %2 = mul(%1, %0) : f32[3]
      return %2
    }
  }
  return %2
}
";

/// carry (i, x, n): while i < n { x = x * 1.5 + 1; i += 1 }: a data-dependent trip count.
const WHILE: &str = "program(%0: f32[2], %1: i32[]) {
  %2 = constant[value=[0]]() : i32[]
  %3, %4, %5 = while(%2, %0, %1) : i32[], f32[2], i32[] {
    cond(%0: i32[], %1: f32[2], %2: i32[]) {
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: f32[2], %2: i32[]) {
      %3 = constant[value=[1]]() : i32[]
      %4 = add(%0, %3) : i32[]
      %5 = constant[value=[1.5]]() : f32[]
      %6 = broadcast_in_dim[dims=[]](%5) : f32[2]
      %7 = mul(%1, %6) : f32[2]
      %8 = constant[value=[1.0]]() : f32[]
      %9 = broadcast_in_dim[dims=[]](%8) : f32[2]
      %10 = add(%7, %9) : f32[2]
      return %4, %10, %2
    }
  }
  return %4, %3
}
";

#[test]
fn regions_batch_with_batched_predicates_and_indices() {
    let cond: F = |a| call_program(&Program::parse(COND)?, a);
    let xs = arr(&[4, 3], 12);
    check(
        "cond: shared index",
        cond,
        &[ints(&[1], &[]).reshape(&[]).unwrap(), xs.clone()],
        &[None, Some(0)],
    );
    check(
        "cond: batched index (out of range runs the last)",
        cond,
        &[ints(&[0, 1, 7, -2], &[4]), xs.clone()],
        &[Some(0), Some(0)],
    );
    let w: F = |a| call_program(&Program::parse(WHILE)?, a);
    check(
        "while: shared trip count",
        w,
        &[arr(&[3, 2], 13), ints(&[4], &[]).reshape(&[]).unwrap()],
        &[Some(0), None],
    );
    check(
        "while: per-element trip counts freeze finished carries",
        w,
        &[arr(&[3, 2], 13), ints(&[0, 5, 2], &[3])],
        &[Some(0), Some(0)],
    );
}

fn mlp_loss(a: &[Array]) -> Result<Vec<Array>> {
    let (w1, w2, x, y) = (&a[0], &a[1], &a[2], &a[3]);
    let h = x.matmul(w1)?.tanh()?;
    let out = h.matmul(w2)?;
    let d = (&out - y)?;
    Ok(vec![(&d * &d)?.sum(Axes::All, false)?])
}

#[test]
fn per_example_gradients_equal_a_loop_of_gradients_bit_for_bit() {
    let (w1, w2) = (arr(&[8, 16], 20), arr(&[16, 1], 21));
    let (xs, ys) = (arr(&[5, 8], 22), arr(&[5, 1], 23));
    let g = grad(mlp_loss, &[0, 1]);
    let per_example = vmap(&g, &[None, None, Some(0), Some(0)], &[])(&[
        w1.clone(),
        w2.clone(),
        xs.clone(),
        ys.clone(),
    ])
    .unwrap();
    let want = looped(&g, &[w1, w2, xs, ys], &[None, None, Some(0), Some(0)]);
    for (p, w) in per_example.iter().zip(&want) {
        assert_eq!(p.shape(), w.shape());
        assert_eq!(bits(p), bits(w));
    }
}

#[test]
fn vmap_composes_with_itself_grad_and_jacobians() {
    let x = arr(&[2, 3, 4], 30);
    let f = |a: &[Array]| Ok(vec![(a[0].sin()? * &a[0])?.sum(Axes::All, false)?]);
    let inner = vmap(f, &[Some(0)], &[]);
    let nested = vmap(&inner, &[Some(0)], &[])(std::slice::from_ref(&x)).unwrap();
    let direct = f(std::slice::from_ref(&x)).unwrap();
    assert_eq!(nested[0].shape(), &[2, 3]);
    let total = nested[0]
        .sum(Axes::All, false)
        .unwrap()
        .item::<f32>()
        .unwrap();
    assert!((total - direct[0].item::<f32>().unwrap()).abs() < 1e-4);
    // grad of a vmapped sum equals the elementwise derivative sin(x) + x cos(x).
    let gv = grad(
        |a: &[Array]| Ok(vec![vmap(f, &[Some(0)], &[])(a)?[0].sum(Axes::All, false)?]),
        &[0],
    )(std::slice::from_ref(&x))
    .unwrap();
    let want = (x.sin().unwrap() + &(&x * &x.cos().unwrap()).unwrap()).unwrap();
    let (g, w) = (
        gv[0].to_vec::<f32>().unwrap(),
        want.to_vec::<f32>().unwrap(),
    );
    for (a, b) in g.iter().zip(&w) {
        assert!((a - b).abs() < 1e-5);
    }
    // vmap of a Jacobian: per-example Jacobians of x -> x * x are diagonal 2x.
    let rows = arr(&[3, 2], 31);
    let jac = vmap(
        jacfwd(|a: &[Array]| Ok(vec![(&a[0] * &a[0])?]), &[0]),
        &[Some(0)],
        &[],
    )(std::slice::from_ref(&rows))
    .unwrap();
    assert_eq!(jac[0].shape(), &[3, 2, 2]);
    let j = jac[0].to_vec::<f32>().unwrap();
    let r = rows.to_vec::<f32>().unwrap();
    for b in 0..3 {
        assert_eq!(j[b * 4], 2.0 * r[b * 2]);
        assert_eq!(j[b * 4 + 1], 0.0);
        assert_eq!(j[b * 4 + 3], 2.0 * r[b * 2 + 1]);
    }
}

#[test]
fn out_axes_and_bad_in_axes() {
    let x = arr(&[2, 3], 40);
    let f: F = |a| Ok(vec![a[0].exp()?, a[1].clone()]);
    let r = vmap(f, &[Some(0), None], &[Some(1), Some(0)])(&[x.clone(), arr(&[4], 41)]).unwrap();
    assert_eq!(r[0].shape(), &[3, 2]);
    assert_eq!(r[1].shape(), &[2, 4]);
    assert!(vmap(f, &[Some(2), None], &[])(&[x.clone(), x.clone()]).is_err());
    // out_axes None: an unbatched output comes back as it is, a batched one is refused (JAX
    // raises ValueError there too).
    let y = arr(&[4], 41);
    let r = vmap(f, &[Some(0), None], &[Some(0), None])(&[x.clone(), y.clone()]).unwrap();
    assert_eq!(r[1].to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    let e = vmap(f, &[Some(0), None], &[None, None])(&[x.clone(), y]).unwrap_err();
    assert!(
        matches!(&e, quabla::Error::Value(m) if m.contains("out_axes[0] is None")),
        "{e}"
    );
    assert!(vmap(f, &[Some(0), Some(1)], &[])(&[x.clone(), x]).is_err());
}

#[test]
fn forward_mode_goes_through_cond_and_while_and_reverse_mode_through_while_is_refused() {
    use quabla::ad::{jvp, vjp};
    let x = arr(&[3], 50);
    let t = arr(&[3], 51);
    // cond branch 1: sin(x) * x, derivative (cos(x) x + sin(x)) t.
    let cond = |a: &[Array]| call_program(&Program::parse(COND)?, a);
    let one = ints(&[1], &[]).reshape(&[]).unwrap();
    let (y, ty) = jvp(cond, &[one.clone(), x.clone()], &[one.clone(), t.clone()]).unwrap();
    let (xs, ts) = (x.to_vec::<f32>().unwrap(), t.to_vec::<f32>().unwrap());
    let (ys, tys) = (
        y[0].to_vec::<f32>().unwrap(),
        ty[0].to_vec::<f32>().unwrap(),
    );
    for i in 0..3 {
        assert!((ys[i] - xs[i].sin() * xs[i]).abs() < 1e-6);
        assert!((tys[i] - (xs[i].cos() * xs[i] + xs[i].sin()) * ts[i]).abs() < 1e-5);
    }
    // while: x -> 1.5^n x + (1.5^n - 1) / 0.5, so d/dx = 1.5^n.
    let w = |a: &[Array]| call_program(&Program::parse(WHILE)?, a);
    let n = ints(&[3], &[]).reshape(&[]).unwrap();
    let x2 = arr(&[2], 52);
    let t2 = arr(&[2], 53);
    let (_, tw) = jvp(w, &[x2.clone(), n.clone()], &[t2.clone(), n.clone()]).unwrap();
    let want: Vec<f32> = t2
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| v * 1.5f32.powi(3))
        .collect();
    for (g, w) in tw[0].to_vec::<f32>().unwrap().iter().zip(&want) {
        assert!((g - w).abs() <= 1e-6 * w.abs(), "{g} vs {w}");
    }
    match vjp(w, &[x2, n]) {
        Err(quabla::Error::Value(m)) => assert!(m.contains("while") && m.contains("scan"), "{m}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("reverse mode through while must be refused"),
    }
}

#[test]
fn a_batched_cond_guards_each_branch_by_whether_any_element_takes_it() {
    // The mechanism that lets a vmapped bounded loop stop paying for finished elements: each
    // branch sits behind an unbatched cond on `any(index == k)`; values stay per element.
    let f = |a: &[Array]| {
        quabla::lax::cond(
            &a[0].gt(0.0)?,
            &|x: &[Array]| Ok(vec![x[0].sin()?]),
            &|x: &[Array]| Ok(vec![x[0].neg()?]),
            a,
        )
    };
    let xs = Array::from_slice_on(&cpu(), &[-1.0f64, 2.0, -3.0], &[3]).unwrap();
    let v = vmap(f, &[Some(0)], &[Some(0)]);
    let text = quabla::make_program(&v, std::slice::from_ref(&xs))
        .unwrap()
        .to_text();
    assert_eq!(text.matches("cond").count(), 2, "{text}");
    assert!(text.contains("reduce[kind=or"), "{text}");
    let out = v(std::slice::from_ref(&xs)).unwrap()[0]
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(out, [1.0, 2f64.sin(), 3.0]);
}
