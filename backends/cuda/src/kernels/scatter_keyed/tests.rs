//! Scatter-adds by sorted keys on the host emulation, against XLA's rule written out in
//! Rust (windows added in update order, one lying partly outside the operand dropped): the
//! same sums in the same order, so the same bits, at 1 and 4 threads per block.

use crate::emulate::testing::{at_block_sizes, storage};
use crate::emulate::Storage;
use crate::plan::{plan_with, Step};
use quabla_abi::qir::Program;
use std::sync::Arc;

/// Runs `text` on `inputs` at 1 and 4 threads (which must agree), after checking that it
/// plans as the keyed form: a key kernel, the sort's passes and a summing kernel.
fn run(text: &str, inputs: &[Arc<Storage>]) -> Vec<u8> {
    let p = Program::parse(text).unwrap();
    let plan = plan_with(&p, "t", 0).unwrap();
    let kernels = plan.kernels();
    assert!(
        kernels.len() >= 4 && kernels.iter().any(|k| k.name.ends_with("_w")),
        "{:#?}",
        plan.steps
    );
    assert!(plan.steps.iter().all(|s| matches!(s, Step::Kernel(_))));
    at_block_sizes(plan, inputs, &[1, 4])[0].bytes().to_vec()
}

/// Index values with repeats and some outside `[0, n)` (those windows are dropped).
fn index(k: usize, n: usize) -> i32 {
    (k * 7919 % (n + 9)) as i32 - 4
}

/// `windows` windows of `window` rows of a 50 x 6 f32 table added into it at a row index,
/// with repeats, some hanging over the last row or starting below 0 (dropped): one row is
/// an embedding's gradient (the indexed axis inserted), more make each window add into
/// several keys.
fn rows_added_into_a_table(window: usize, windows: usize) {
    let (rows, width) = (50usize, 6usize);
    let table: Vec<f32> = (0..rows * width).map(|k| (k as f32 * 0.37).sin()).collect();
    let idx: Vec<i32> = (0..windows).map(|k| index(k, rows)).collect();
    let upd: Vec<f32> = (0..windows * window * width)
        .map(|k| (k as f32 * 0.011).cos() * 1e3f32.powi((k % 3) as i32 - 1))
        .collect();
    let (upd_ty, dims) = if window == 1 {
        (
            format!("f32[{windows},{width}]"),
            "update_window_dims=[1], inserted_window_dims=[0]",
        )
    } else {
        (
            format!("f32[{windows},{window},{width}]"),
            "update_window_dims=[1, 2], inserted_window_dims=[]",
        )
    };
    let text = format!(
        "program(%0: f32[{rows},{width}], %1: i32[{windows},1], %2: {upd_ty}) {{
  %3 = scatter_add[{dims}, scatter_dims_to_operand_dims=[0]](%0, %1, %2) : f32[{rows},{width}]
  return %3
}}"
    );
    let got = run(
        &text,
        &[
            storage(&table, f32::to_le_bytes),
            storage(&idx, i32::to_le_bytes),
            storage(&upd, f32::to_le_bytes),
        ],
    );
    let mut want = table.clone();
    for (w, &i) in idx.iter().enumerate() {
        if (0..=(rows - window) as i32).contains(&i) {
            for (r, c) in (0..window).flat_map(|r| (0..width).map(move |c| (r, c))) {
                want[(i as usize + r) * width + c] += upd[(w * window + r) * width + c];
            }
        }
    }
    assert_eq!(got, storage(&want, f32::to_le_bytes).bytes());
}

/// An embedding's gradient: 1,000 rows added into the table.
#[test]
fn rows_added_into_a_table_in_update_order() {
    rows_added_into_a_table(1, 1000);
}

/// Windows of 2 rows (wider than one element along the indexed axis), 900 of them.
#[test]
fn windows_wider_along_the_indexed_axis() {
    rows_added_into_a_table(2, 900);
}

/// Two indexed axes named in reverse order (`scatter_dims_to_operand_dims=[1, 0]`), a
/// window covering the first two of four elements along the unindexed axis, in f64, and
/// the same in i32, whose sums wrap.
#[test]
fn two_indexed_axes_and_a_partial_window() {
    let (a, b, c, windows) = (9usize, 13usize, 4usize, 700usize);
    // idx[w] = (coordinate along axis 1, coordinate along axis 0).
    let idx: Vec<i32> = (0..windows)
        .flat_map(|w| [index(w, b), index(w * 31 + 5, a)])
        .collect();
    let program = |t: &str| {
        format!(
            "program(%0: {t}[{a},{b},{c}], %1: i32[{windows},2], %2: {t}[{windows},2]) {{
  %3 = scatter_add[update_window_dims=[1], inserted_window_dims=[0, 1], scatter_dims_to_operand_dims=[1, 0]](%0, %1, %2) : {t}[{a},{b},{c}]
  return %3
}}"
        )
    };
    // XLA's rule, in update order.
    let reference = |base: &mut dyn FnMut(usize, usize)| {
        for w in 0..windows {
            let (j, i) = (idx[2 * w], idx[2 * w + 1]);
            if (0..a as i32).contains(&i) && (0..b as i32).contains(&j) {
                for k in 0..2 {
                    base((i as usize * b + j as usize) * c + k, w * 2 + k);
                }
            }
        }
    };
    let x: Vec<f64> = (0..a * b * c).map(|k| (k as f64).sqrt()).collect();
    let u: Vec<f64> = (0..windows * 2).map(|k| 1.0 / (k as f64 + 0.5)).collect();
    let got = run(
        &program("f64"),
        &[
            storage(&x, f64::to_le_bytes),
            storage(&idx, i32::to_le_bytes),
            storage(&u, f64::to_le_bytes),
        ],
    );
    let mut want = x.clone();
    reference(&mut |to, from| want[to] += u[from]);
    assert_eq!(got, storage(&want, f64::to_le_bytes).bytes());
    let xi: Vec<i32> = (0..a * b * c).map(|k| i32::MAX - k as i32).collect();
    let ui: Vec<i32> = (0..windows * 2).map(|k| (k as i32) * 1_000_003).collect();
    let got = run(
        &program("i32"),
        &[
            storage(&xi, i32::to_le_bytes),
            storage(&idx, i32::to_le_bytes),
            storage(&ui, i32::to_le_bytes),
        ],
    );
    let mut want = xi.clone();
    reference(&mut |to, from| want[to] = want[to].wrapping_add(ui[from]));
    assert_eq!(got, storage(&want, i32::to_le_bytes).bytes());
}

/// Patches of 3 x 2 over both axes of a 20 x 30 grid with a free third axis, indexed by a
/// 2-d batch of 24 x 25 index vectors, in f64: each window has six entries, and patches
/// overlap heavily.
#[test]
fn patches_over_two_indexed_axes() {
    let (a, b, c, (p, q)) = (20usize, 30usize, 3usize, (24usize, 25usize));
    let idx: Vec<i32> = (0..p * q)
        .flat_map(|w| [index(w, a - 2), index(w * 31 + 5, b - 1)])
        .collect();
    let x: Vec<f64> = (0..a * b * c).map(|k| (k as f64).sqrt()).collect();
    let u: Vec<f64> = (0..p * q * 6 * c).map(|k| 1.0 / (k as f64 + 0.5)).collect();
    let text = format!(
        "program(%0: f64[{a},{b},{c}], %1: i32[{p},{q},2], %2: f64[{p},{q},3,2,{c}]) {{
  %3 = scatter_add[update_window_dims=[2, 3, 4], inserted_window_dims=[], scatter_dims_to_operand_dims=[0, 1]](%0, %1, %2) : f64[{a},{b},{c}]
  return %3
}}"
    );
    let got = run(
        &text,
        &[
            storage(&x, f64::to_le_bytes),
            storage(&idx, i32::to_le_bytes),
            storage(&u, f64::to_le_bytes),
        ],
    );
    let mut want = x.clone();
    for w in 0..p * q {
        let (i, j) = (idx[2 * w], idx[2 * w + 1]);
        if (0..=a as i32 - 3).contains(&i) && (0..=b as i32 - 2).contains(&j) {
            for (r, s, k) in
                (0..3).flat_map(|r| (0..2).flat_map(move |s| (0..c).map(move |k| (r, s, k))))
            {
                let to = ((i as usize + r) * b + j as usize + s) * c + k;
                want[to] += u[((w * 3 + r) * 2 + s) * c + k];
            }
        }
    }
    assert_eq!(got, storage(&want, f64::to_le_bytes).bytes());
}

/// Few windows keep the one-kernel scan.
#[test]
fn few_windows_keep_the_scan() {
    let kernels = |text: &str| {
        plan_with(&Program::parse(text).unwrap(), "t", 0)
            .unwrap()
            .kernels()
            .len()
    };
    assert_eq!(
        kernels("program(%0: f32[50,6], %1: i32[200,1], %2: f32[200,6]) {
  %3 = scatter_add[update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0]](%0, %1, %2) : f32[50,6]
  return %3
}"),
        1
    );
    assert_eq!(
        kernels("program(%0: f32[50,6], %1: i32[256,1], %2: f32[256,2,6]) {
  %3 = scatter_add[update_window_dims=[1, 2], inserted_window_dims=[], scatter_dims_to_operand_dims=[0]](%0, %1, %2) : f32[50,6]
  return %3
}"),
        1
    );
}
