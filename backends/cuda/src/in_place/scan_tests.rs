//! A scan too large for a device loop, run in place in the host emulation: its `xs` kept,
//! its `ys` written a window at a time into the carry's own memory, bit for bit what the
//! steps give.

use super::{run_in_place, Carried, InPlace, StepLoop};
use crate::emulate::testing::{elements, storage};
use crate::emulate::Emulated;
use crate::plan::{plan_with, Step};
use quabla_abi::qir::Program;
use std::sync::Arc;

/// Elements of the state: its `ys` (6 of them) pass 2^20 elements, so the loop is decided
/// on the host rather than run as one block.
const N: usize = 200_000;

/// `h_t = h_{t-1} / 2 + x_t` for six steps from `h`, with `ys[t] = h_t` and `zs` written at
/// `2t - 3`, clamped into its six rows (0, 0, 1, 3, 5, 5).
fn scan() -> Program {
    let text = "program(%0: f32[6,N], %1: f32[N]) {
  %2 = constant[value=[0]]() : i32[]
  %3 = constant[value=[0.0]]() : f32[]
  %4 = broadcast_in_dim[dims=[]](%3) : f32[6,N]
  %5, %6, %7, %8, %9 = while(%2, %0, %1, %4, %4) : i32[], f32[6,N], f32[N], f32[6,N], f32[6,N] {
    cond(%0: i32[], %1: f32[6,N], %2: f32[N], %3: f32[6,N], %4: f32[6,N]) {
      %5 = constant[value=[6]]() : i32[]
      %6 = compare[dir=lt](%0, %5) : bool[]
      return %6
    }
    body(%0: i32[], %1: f32[6,N], %2: f32[N], %3: f32[6,N], %4: f32[6,N]) {
      %5 = constant[value=[0]]() : i32[]
      %6 = dynamic_slice[sizes=[1,N]](%1, %0, %5) : f32[1,N]
      %7 = reshape(%6) : f32[N]
      %8 = constant[value=[0.5]]() : f32[]
      %9 = broadcast_in_dim[dims=[]](%8) : f32[N]
      %10 = mul(%2, %9) : f32[N]
      %11 = add(%10, %7) : f32[N]
      %12 = reshape(%11) : f32[1,N]
      %13 = dynamic_update_slice(%3, %12, %0, %5) : f32[6,N]
      %14 = constant[value=[2]]() : i32[]
      %15 = mul(%0, %14) : i32[]
      %16 = constant[value=[3]]() : i32[]
      %17 = sub(%15, %16) : i32[]
      %18 = dynamic_update_slice(%4, %12, %17, %5) : f32[6,N]
      %19 = constant[value=[1]]() : i32[]
      %20 = add(%0, %19) : i32[]
      return %20, %1, %11, %13, %18
    }
  }
  return %7, %8, %9
}
";
    Program::parse(&text.replace('N', &N.to_string())).expect("a valid program")
}

fn xs() -> Vec<f32> {
    (0..6 * N)
        .map(|k| ((k * 7919) % 1000) as f32 / 8.0 - 60.0)
        .collect()
}

fn h0() -> Vec<f32> {
    (0..N).map(|k| (k % 17) as f32 - 8.5).collect()
}

/// The states `h_1..h_6` the steps give, rounding each op once as the kernels do.
fn states() -> Vec<Vec<f32>> {
    let (xs, mut h) = (xs(), h0());
    (0..6)
        .map(|t| {
            for (k, v) in h.iter_mut().enumerate() {
                *v = *v * 0.5 + xs[t * N + k];
            }
            h.clone()
        })
        .collect()
}

#[test]
fn a_scans_xs_are_kept_and_its_ys_written_in_windows() {
    let plan = plan_with(&scan(), "k", crate::one_block::max_elements()).unwrap();
    let Some(Step::While { body, in_place, .. }) =
        plan.steps.iter().find(|s| matches!(s, Step::While { .. }))
    else {
        panic!("the scan should be a loop decided on the host: {plan:#?}");
    };
    let kinds: Vec<&str> = in_place
        .carried
        .iter()
        .map(|c| match c {
            Carried::Next => "next",
            Carried::Kept => "kept",
            Carried::Window { .. } => "window",
        })
        .collect();
    assert_eq!(kinds, ["next", "kept", "next", "window", "window"]);
    // Per iteration the freeze writes a state and two rows, not two 6-row carries.
    assert_eq!(in_place.freeze.elements, N);
    let windowed = in_place.body.as_ref().expect("a body without its windows");
    // The windows' dynamic_update_slices (%13, %18) are not run.
    let computes =
        |p: &crate::plan::Plan, v: usize| p.steps.iter().any(|s| s.defines().contains(&v));
    assert!(computes(body, 13) && computes(body, 18));
    assert!(!computes(windowed, 13) && !computes(windowed, 18));
    let h = states();
    let outs = Emulated::new(&scan())
        .unwrap()
        .run(vec![
            storage(&xs(), f32::to_le_bytes),
            storage(&h0(), f32::to_le_bytes),
        ])
        .unwrap();
    let got: Vec<Vec<f32>> = outs
        .iter()
        .map(|o| elements(o, f32::from_le_bytes))
        .collect();
    assert_eq!(got[0], h[5], "the state");
    assert_eq!(got[1], h.concat(), "ys: h_t at row t");
    let zeros = vec![0.0; N];
    let zs = [&h[1], &h[2], &zeros, &h[3], &zeros, &h[5]];
    for (r, want) in zs.iter().enumerate() {
        assert_eq!(&got[2][r * N..(r + 1) * N], &want[..], "zs row {r}");
    }
}

#[test]
fn a_window_carry_held_by_the_loop_alone_is_never_copied() {
    let p = scan();
    let exe = Emulated::new(&p).unwrap();
    // The same planning names the same kernels, so this plan's regions run on `exe`.
    let plan = plan_with(&p, "k", crate::one_block::max_elements()).unwrap();
    let Some(Step::While {
        cond,
        body,
        in_place,
        ..
    }) = plan.steps.iter().find(|s| matches!(s, Step::While { .. }))
    else {
        panic!("a loop decided on the host");
    };
    let zeros = || storage(&vec![0.0f32; 6 * N], f32::to_le_bytes);
    let (ys, zs) = (zeros(), zeros());
    let at = [Arc::as_ptr(&ys), Arc::as_ptr(&zs)];
    let mut l = StepLoop {
        e: &exe,
        cond,
        body,
        in_place,
        carry: vec![
            storage(&[0i32], i32::to_le_bytes),
            storage(&xs(), f32::to_le_bytes),
            storage(&h0(), f32::to_le_bytes),
            ys,
            zs,
        ],
        pred: None,
    };
    let runs = run_in_place(&mut l).unwrap();
    assert!(runs >= 7, "six steps and the one that stops: {runs}");
    assert!(!l.going().unwrap());
    assert_eq!(
        [Arc::as_ptr(&l.carry[3]), Arc::as_ptr(&l.carry[4])],
        at,
        "written where they were"
    );
    assert_eq!(elements(&l.carry[3], f32::from_le_bytes), states().concat());
}

/// A loop writing row `i` of its carry with what `through` makes of row `i`.
fn row_update(through: &str) -> Program {
    let text = "program(%0: f32[6,N]) {
  %1 = constant[value=[0]]() : i32[]
  %2, %3 = while(%1, %0) : i32[], f32[6,N] {
    cond(%0: i32[], %1: f32[6,N]) {
      %2 = constant[value=[6]]() : i32[]
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: f32[6,N]) {
      %2 = constant[value=[0]]() : i32[]
      %3 = dynamic_slice[sizes=[1,N]](%1, %0, %2) : f32[1,N]
      %4 = THROUGH(%3) : f32[1,N]
      %5 = dynamic_update_slice(%1, %4, %0, %2) : f32[6,N]
      %6 = constant[value=[1]]() : i32[]
      %7 = add(%0, %6) : i32[]
      return %7, %5
    }
  }
  return %3
}
";
    Program::parse(
        &text
            .replace('N', &N.to_string())
            .replace("THROUGH", through),
    )
    .expect("a valid program")
}

#[test]
fn only_a_loop_of_device_work_plans_a_second_body() {
    let in_place_of = |p: &Program| {
        let plan = plan_with(p, "k", crate::one_block::max_elements()).unwrap();
        match plan
            .steps
            .into_iter()
            .find(|s| matches!(s, Step::While { .. }))
        {
            Some(Step::While { in_place, .. }) => in_place,
            _ => panic!("a loop decided on the host"),
        }
    };
    let device = in_place_of(&row_update("exp"));
    assert!(matches!(device.carried[1], Carried::Window { .. }));
    assert!(device.body.is_some());
    // A host call each step: the loop runs through `loops::run_while`, never in place.
    let host = in_place_of(&row_update("host_callback[callback=7, effectful=false]"));
    assert_eq!(host.carried, [Carried::Next, Carried::Next]);
    assert!(host.body.is_none());
}
