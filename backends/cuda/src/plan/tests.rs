//! Values released at their last use (`Plan::release_after`), checked with an executor
//! whose values count how many of them are alive.

use super::{plan_with, run, Executor, Plan, Step};
use crate::fusion::Kernel;
use quabla_abi::abi::AbiError;
use quabla_abi::qir::Program;
use quabla_abi::TensorType;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Values alive now and at most, over the executor's values.
#[derive(Default)]
struct Census {
    live: AtomicUsize,
    peak: AtomicUsize,
}

/// One value: counted alive from creation to drop.
struct Counted(Arc<Census>);

impl Counted {
    fn new(c: &Arc<Census>) -> Arc<Counted> {
        let now = c.live.fetch_add(1, Ordering::SeqCst) + 1;
        c.peak.fetch_max(now, Ordering::SeqCst);
        Arc::new(Counted(c.clone()))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Computes nothing: each kernel gives fresh values for what it writes.
struct Counting(Arc<Census>);

impl Executor for Counting {
    type Value = Arc<Counted>;
    fn constant(&self, _: &Plan, _: usize, _: &[u8]) -> Result<Self::Value, AbiError> {
        Ok(Counted::new(&self.0))
    }
    fn launch(
        &self,
        k: &Kernel,
        _: &[TensorType],
        _: &[Self::Value],
    ) -> Result<Vec<(usize, Self::Value)>, AbiError> {
        Ok(k.writes
            .iter()
            .map(|&v| (v, Counted::new(&self.0)))
            .collect())
    }
    /// Updates in place: no value is made.
    fn launch_updating(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Self::Value],
        _: &mut [Self::Value],
    ) -> Result<Vec<(usize, Self::Value)>, AbiError> {
        self.launch(k, types, reads)
    }
    fn read(&self, _: &Self::Value, _: &TensorType) -> Result<Vec<u8>, AbiError> {
        Err(AbiError::internal("no reads here"))
    }
    fn write(&self, _: &[u8]) -> Result<Self::Value, AbiError> {
        Ok(Counted::new(&self.0))
    }
    fn scalar(&self, _: &Self::Value, _: &TensorType) -> Result<i64, AbiError> {
        Ok(0)
    }
}

/// Eight transposes in a chain (eight kernels), and an input nothing reads.
fn chain() -> Program {
    let mut text = String::from(
        "program(%0: f32[3, 4], %1: f32[2]) {\n  %2 = transpose[perm=[1, 0]](%0) : f32[4, 3]\n",
    );
    for k in 3..10 {
        let (r, c) = if k % 2 == 0 { (4, 3) } else { (3, 4) };
        text.push_str(&format!(
            "  %{k} = transpose[perm=[1, 0]](%{}) : f32[{r}, {c}]\n",
            k - 1
        ));
    }
    text.push_str("  return %9\n}");
    Program::parse(&text).unwrap()
}

#[test]
fn a_chain_holds_only_its_latest_values_and_frees_donated_inputs() {
    let plan = plan_with(&chain(), "t", 0).unwrap();
    assert_eq!(plan.kernels().len(), 8, "{:#?}", plan.steps);
    let census = Arc::new(Census::default());
    let e = Counting(census.clone());
    // Donated: the run holds the inputs alone.
    let inputs = vec![Counted::new(&census), Counted::new(&census)];
    let outs = run(&e, &plan, inputs).unwrap();
    assert_eq!(outs.len(), 1);
    // Each kernel's result exists beside its operand, then the operand goes; the unread
    // input goes after the first step. Holding every value to the end would be ten.
    assert_eq!(census.peak.load(Ordering::SeqCst), 3);
    assert_eq!(
        census.live.load(Ordering::SeqCst),
        1,
        "only the output is left"
    );
    // Lent: the caller's inputs survive the run, the run's own references dropped.
    let lent = vec![Counted::new(&census), Counted::new(&census)];
    let outs2 = run(&e, &plan, lent.clone()).unwrap();
    assert!(lent.iter().all(|v| Arc::strong_count(v) == 1));
    drop((outs, outs2, lent));
    assert_eq!(census.live.load(Ordering::SeqCst), 0);
}

#[test]
fn outputs_and_values_read_later_are_never_released_early() {
    // %1 is read by the last step and is an output; %2 is read twice.
    let p = Program::parse(
        "program(%0: f32[3, 4]) {
  %1 = transpose[perm=[1, 0]](%0) : f32[4, 3]
  %2 = transpose[perm=[1, 0]](%1) : f32[3, 4]
  %3 = reverse[dims=[0]](%2) : f32[3, 4]
  %4 = concatenate[dim=0](%2, %3) : f32[6, 4]
  %5 = transpose[perm=[1, 0]](%4) : f32[4, 6]
  %6 = concatenate[dim=1](%5, %1) : f32[4, 9]
  return %6, %1
}",
    )
    .unwrap();
    let plan = plan_with(&p, "t", 0).unwrap();
    let release = plan.release_after();
    assert_eq!(release.len(), plan.steps.len());
    for (at, released) in release.iter().enumerate() {
        for &v in released {
            assert!(!plan.outputs.contains(&v), "output %{v} released");
            let later = plan.steps[at + 1..].iter().any(|s| s.reads().contains(&v));
            assert!(!later, "%{v} released after step {at} but read later");
        }
    }
    // Every value but the outputs is released somewhere.
    let released: usize = release.iter().map(Vec::len).sum();
    assert_eq!(released + plan.outputs.len(), plan.types.len());
    let census = Arc::new(Census::default());
    let outs = run(
        &Counting(census.clone()),
        &plan,
        vec![Counted::new(&census)],
    )
    .unwrap();
    assert_eq!(outs.len(), 2);
    assert_eq!(census.live.load(Ordering::SeqCst), 2);
}

/// `-x` updated twice, in a window of rows then of a patch: each update of a value nothing
/// else reads writes it in place; `also_returned` returns `-x` too, which must then stay.
fn updated(also_returned: bool) -> Program {
    let outputs = if also_returned { "%5, %6" } else { "%7" };
    Program::parse(&format!(
        "program(%0: f32[64,40], %1: f32[3,40], %2: f32[2,5], %3: i32[], %4: i32[]) {{
  %5 = neg(%0) : f32[64,40]
  %6 = dynamic_update_slice(%5, %1, %3, %4) : f32[64,40]
  %7 = dynamic_update_slice(%6, %2, %4, %3) : f32[64,40]
  return {outputs}
}}"
    ))
    .unwrap()
}

fn updates(plan: &crate::plan::Plan) -> Vec<(usize, usize, usize)> {
    plan.steps
        .iter()
        .filter_map(|s| match s {
            Step::Update {
                kernel,
                target,
                result,
            } => Some((*target, *result, kernel.elements)),
            _ => None,
        })
        .collect()
}

#[test]
fn an_update_of_a_value_nothing_else_reads_is_written_in_place() {
    let plan = plan_with(&updated(false), "t", 0).unwrap();
    // Each writes its update's elements into its target's buffer; neither copies 2,560.
    assert_eq!(
        updates(&plan),
        [(5, 6, 120), (6, 7, 10)],
        "{:#?}",
        plan.steps
    );
    let update_kernels = plan.kernels().into_iter().filter(|k| k.writes.is_empty());
    assert_eq!(update_kernels.count(), 2);
    // No value is made for them: the negation's is the only one beside the inputs.
    let census = Arc::new(Census::default());
    let inputs = (0..5).map(|_| Counted::new(&census)).collect();
    let outs = run(&Counting(census.clone()), &plan, inputs).unwrap();
    assert_eq!(census.peak.load(Ordering::SeqCst), 6);
    drop(outs);
    // In a CUDA graph the updates share the negation's buffer.
    let a = crate::graph_buffers::assign(&plan).expect("kernels alone");
    crate::graph_buffers::check(&plan, &a).unwrap();
    assert_eq!(a.of_value[5], a.of_value[7]);
    assert_eq!(a.sizes, [64 * 40 * 4]);
}

#[test]
fn an_update_of_a_value_read_again_is_an_ordinary_kernel() {
    // The negation is returned as well, and the first update read by the second too: both
    // are ordinary kernels.
    let plan = plan_with(&updated(true), "t", 0).unwrap();
    assert!(updates(&plan).is_empty(), "{:#?}", plan.steps);
}

#[test]
fn an_update_of_an_input_is_in_place_where_donated_and_copied_where_lent() {
    use crate::emulate::testing::{elements, storage};
    let p = Program::parse(
        "program(%0: f32[8], %1: f32[2], %2: i32[]) {
  %3 = dynamic_update_slice(%0, %1, %2) : f32[8]
  return %3
}",
    )
    .unwrap();
    let plan = plan_with(&p, "t", 0).unwrap();
    assert_eq!(updates(&plan), [(0, 3, 2)]);
    // A graph gives the result a buffer of its own: its inputs are copies it reads again.
    let a = crate::graph_buffers::assign(&plan).expect("kernels alone");
    crate::graph_buffers::check(&plan, &a).unwrap();
    assert!(a.of_value[0].is_none() && a.of_value[3].is_some());
    let exe = crate::emulate::Emulated::new(&p).unwrap();
    let x: Vec<f32> = (0..8).map(|k| k as f32).collect();
    let want = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -1.0, -2.0];
    let args = |x| {
        vec![
            x,
            storage(&[-1.0f32, -2.0], f32::to_le_bytes),
            // Clamped from 9 to 6.
            storage(&[9i32], i32::to_le_bytes),
        ]
    };
    // Lent: the caller's value is left as it was.
    let lent = storage(&x, f32::to_le_bytes);
    let out = exe.run(args(lent.clone())).unwrap();
    assert_eq!(elements(&out[0], f32::from_le_bytes), want);
    assert_eq!(elements(&lent, f32::from_le_bytes), x);
    assert!(!Arc::ptr_eq(&out[0], &lent));
    // Donated: written where it is.
    let donated = storage(&x, f32::to_le_bytes);
    let at = Arc::as_ptr(&donated);
    let out = exe.run(args(donated)).unwrap();
    assert_eq!(Arc::as_ptr(&out[0]), at, "the input's own memory");
    assert_eq!(elements(&out[0], f32::from_le_bytes), want);
}
