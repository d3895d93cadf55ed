//! `while` loops whose carry is updated in place, so that an iteration needs nothing from
//! the host: each iteration computes the predicate of the carry and the body's new carry,
//! then a freeze kernel keeps the new carry where the predicate holds and the old one where
//! it does not. Once the predicate is false the carry no longer changes (the kernels are
//! deterministic, so the predicate stays false), so iterations can be queued ahead without
//! keeping every carry (unlike `loops.rs`'s run-ahead), and only the last predicate of a
//! batch is read back: false means the loop ended somewhere in the batch, with the carry it
//! had then. A carry the body returns as it came is not touched, and one it updates in a
//! window is written in that window alone (`carried.rs`: a scan's `xs` and `ys`). On a GPU
//! an iteration is one CUDA graph launch (`loop_graph.rs`); the host emulation runs the
//! same freeze kernel step by step (`StepLoop`), so CI checks its C.

mod carried;
#[cfg(test)]
mod scan_tests;

pub use carried::{carried, Carried};

use crate::elementwise::c_type;
use crate::fusion::Kernel;
use crate::plan::{run, Executor, Plan};
use quabla_abi::abi::AbiError;
use quabla_abi::{DType, TensorType};

/// The most iterations queued before a predicate is read back: the carry does not grow
/// with it, so only the iterations past the end are wasted (at most as many as ran).
pub const MAX_AHEAD: usize = 256;

/// Whether carries updated in a window are written in place (`QUABLA_CUDA_WINDOWS=0`
/// writes them whole, to compare).
fn windows_enabled() -> bool {
    !std::env::var("QUABLA_CUDA_WINDOWS").is_ok_and(|v| v == "0")
}

/// How the in-place runners (the emulation's [`StepLoop`], a GPU's `LoopGraph`) run a
/// loop: what the freeze kernel does with each carry, the body they run, and the kernel.
#[derive(Debug)]
pub struct InPlaceLoop {
    pub carried: Vec<Carried>,
    /// Where a carry is a window, the body without the windows' `dynamic_update_slice`s,
    /// returning each window's carry as it came (unread) and, after the carries, each
    /// window's update and starts in carry order (`None`: the loop's body as it is).
    pub body: Option<Plan>,
    pub freeze: Kernel,
}

impl InPlaceLoop {
    /// The loop of carry types `carry` whose predicate has dtype `pred`, kernels named
    /// from `name`; `windowed` plans the body without its windows (given it has some).
    pub fn new(
        name: &str,
        pred: DType,
        carry: &[TensorType],
        carried: Vec<Carried>,
        windowed: impl FnOnce(&[Carried]) -> Result<Plan, String>,
    ) -> Result<InPlaceLoop, String> {
        let carried = if windows_enabled() {
            carried
        } else {
            carried
                .into_iter()
                .map(|c| match c {
                    Carried::Window { .. } => Carried::Next,
                    c => c,
                })
                .collect()
        };
        let body = if carried.iter().any(|c| matches!(c, Carried::Window { .. })) {
            Some(windowed(&carried)?)
        } else {
            None
        };
        Ok(InPlaceLoop {
            freeze: freeze_kernel(name, pred, carry, &carried),
            carried,
            body,
        })
    }

    /// The body the runners run: `body`'s plan unless windows changed it.
    pub fn body<'a>(&'a self, body: &'a Plan) -> &'a Plan {
        self.body.as_ref().unwrap_or(body)
    }

    /// The carries the freeze kernel writes into buffers of their own (then copied over the
    /// carry): its `writes`, in order.
    pub fn next(&self) -> impl Iterator<Item = usize> + '_ {
        self.carried
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == Carried::Next)
            .map(|(j, _)| j)
    }

    /// The carries written in a window, in place: the freeze kernel's parameters after
    /// its `writes`, in order.
    pub fn windows(&self) -> impl Iterator<Item = usize> + '_ {
        self.carried
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, Carried::Window { .. }))
            .map(|(j, _)| j)
    }

    /// The freeze kernel's reads, in parameter order: the predicate, the body's results of
    /// each [`Carried::Next`] carry, those carries, then what follows the carries in the
    /// body's results (the windows' updates and starts). `result(j)` is the body's `j`-th
    /// result, `carry(j)` the `j`-th carry.
    pub fn freeze_reads<T>(
        &self,
        pred: T,
        results: usize,
        result: impl Fn(usize) -> Result<T, AbiError>,
        carry: impl Fn(usize) -> Result<T, AbiError>,
    ) -> Result<Vec<T>, AbiError> {
        let n = self.carried.len();
        let mut reads = vec![pred];
        for j in self.next() {
            reads.push(result(j)?);
        }
        for j in self.next() {
            reads.push(carry(j)?);
        }
        for r in n..results {
            reads.push(result(r)?);
        }
        Ok(reads)
    }
}

/// The freeze kernel of a loop with predicate type `pred` and carry types `carry`, whose
/// carries are `carried` (one each). Its parameters, positionally: the predicate, the
/// body's results of the [`Carried::Next`] carries (`src`), those carries (`old`), each
/// window's update (`upd`) and starts (`st`); then what it writes: the next carry of each
/// `Next` carry (`next_j = pred ? src_j : old_j`), then each window's carry (its update
/// written at the clamped starts where the predicate holds); then the element count (the
/// largest written). `reads` and `writes` number the parameters (writes index `carry`, as
/// `Executor::launch` allocates them); the windows' carries follow the writes.
pub fn freeze_kernel(name: &str, pred: DType, carry: &[TensorType], carried: &[Carried]) -> Kernel {
    let next: Vec<usize> = (0..carry.len())
        .filter(|&j| carried.get(j).is_none_or(|c| *c == Carried::Next))
        .collect();
    let mut params = vec![format!("const {}* __restrict__ pred", c_type(pred))];
    let mut param_types = vec![pred];
    let (mut starts, mut lines) = (String::new(), String::new());
    let mut elements = 0;
    for (prefix, qualifier) in [("src", "const "), ("old", "const ")] {
        for &j in &next {
            params.push(format!(
                "{qualifier}{}* __restrict__ {prefix}{j}",
                c_type(carry[j].dtype)
            ));
            param_types.push(carry[j].dtype);
        }
    }
    let mut updated = Vec::new();
    for (j, c) in carried.iter().enumerate() {
        let Carried::Window {
            starts: st,
            update_type,
            ..
        } = c
        else {
            continue;
        };
        params.push(format!(
            "const {}* __restrict__ upd{j}",
            c_type(update_type.dtype)
        ));
        param_types.push(update_type.dtype);
        for d in 0..st.len() {
            params.push(format!("const int* __restrict__ st{j}_{d}"));
            param_types.push(DType::I32);
        }
        let st_names: Vec<String> = (0..st.len()).map(|d| format!("st{j}_{d}[0]")).collect();
        let (declare, store) = crate::kernels::window_store(
            &format!("w{j}_"),
            &st_names,
            &carry[j].shape,
            &update_type.shape,
            &format!("win{j}"),
            &format!("upd{j}"),
        );
        starts.push_str(&declare);
        lines.push_str(&format!(
            "    if (go && i < {}ull) {{\n{store}    }}\n",
            update_type.num_elements()
        ));
        elements = elements.max(update_type.num_elements());
        updated.push(j);
    }
    let reads = params.len();
    for &j in &next {
        params.push(format!("{}* __restrict__ next{j}", c_type(carry[j].dtype)));
        param_types.push(carry[j].dtype);
        lines.push_str(&format!(
            "    if (i < {}ull) next{j}[i] = go ? src{j}[i] : old{j}[i];\n",
            carry[j].num_elements()
        ));
        elements = elements.max(carry[j].num_elements());
    }
    for &j in &updated {
        params.push(format!("{}* __restrict__ win{j}", c_type(carry[j].dtype)));
        param_types.push(carry[j].dtype);
    }
    params.push("unsigned long long n".into());
    let body = format!(
        "extern \"C\" __global__ void {name}({}) {{\n  const bool go = pred[0] != 0;\n{starts}  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {{\n{lines}  }}\n}}\n",
        params.join(", ")
    );
    Kernel {
        source: format!("{}\n{body}", crate::elementwise::PRELUDE),
        body,
        param_types,
        name: name.to_string(),
        reads: (0..reads).collect(),
        writes: next,
        elements,
        block_per_element: false,
        single_block: false,
        device_loop: false,
        shared_scratch: 0,
        gemm: None,
        fused: 0,
        reuses: Vec::new(),
    }
}

/// A loop run in place: one iteration at a time, and the last iteration's predicate.
pub trait InPlace {
    /// Queues one iteration (predicate, body, freeze).
    fn iterate(&mut self) -> Result<(), AbiError>;
    /// The predicate the last iteration computed (waits for it).
    fn going(&mut self) -> Result<bool, AbiError>;
}

/// Runs `l` until an iteration's predicate is false, in batches between read-backs as
/// `loops::next_ahead` sizes them (up to `MAX_AHEAD`); the iterations run (those past the
/// end included).
pub fn run_in_place(l: &mut impl InPlace) -> Result<usize, AbiError> {
    let (mut ahead, mut runs, mut batch) = (1usize, 0usize, 0usize);
    loop {
        for _ in 0..ahead {
            l.iterate()?;
            runs += 1;
        }
        if !l.going()? {
            return Ok(runs);
        }
        batch += 1;
        ahead = crate::loops::next_ahead(batch, ahead, MAX_AHEAD);
    }
}

/// An in-place loop on an executor, step by step: the regions' plans run, then the freeze
/// kernel (the host emulation's way, so that CI runs the freeze kernel on every loop).
pub struct StepLoop<'a, E: Executor> {
    pub e: &'a E,
    pub cond: &'a Plan,
    pub body: &'a Plan,
    pub in_place: &'a InPlaceLoop,
    pub carry: Vec<E::Value>,
    pub pred: Option<E::Value>,
}

impl<E: Executor> InPlace for StepLoop<'_, E> {
    fn iterate(&mut self) -> Result<(), AbiError> {
        let pred = run(self.e, self.cond, self.carry.clone())?
            .into_iter()
            .next()
            .ok_or_else(|| AbiError::internal("a while condition gave nothing"))?;
        let body = self.in_place.body(self.body);
        let new = run(self.e, body, self.carry.clone())?;
        let reads = self.in_place.freeze_reads(
            pred.clone(),
            new.len(),
            |j| got(new.get(j)),
            |j| got(self.carry.get(j)),
        )?;
        // What the body returned of the windows' carries is the carries themselves: let go
        // of it, so a window's carry is held by the loop alone and written where it is.
        drop(new);
        let (mut carry, mut windows) = (Vec::new(), Vec::new());
        for (j, v) in std::mem::take(&mut self.carry).into_iter().enumerate() {
            match self.in_place.carried.get(j) {
                Some(Carried::Window { .. }) => {
                    windows.push(v);
                    carry.push(None);
                }
                _ => carry.push(Some(v)),
            }
        }
        let types: Vec<TensorType> = self.cond.types[..self.cond.num_inputs].to_vec();
        let next = self
            .e
            .launch_updating(&self.in_place.freeze, &types, &reads, &mut windows)?;
        drop(reads);
        for (j, v) in next {
            if let Some(c) = carry.get_mut(j) {
                *c = Some(v);
            }
        }
        let mut windows = windows.into_iter();
        self.carry = carry
            .into_iter()
            .map(|c| c.or_else(|| windows.next()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| AbiError::internal("a window's carry went missing"))?;
        self.pred = Some(pred);
        Ok(())
    }

    fn going(&mut self) -> Result<bool, AbiError> {
        let pred = self
            .pred
            .as_ref()
            .ok_or_else(|| AbiError::internal("a loop's predicate read before an iteration"))?;
        let ty = &self.cond.types[self.cond.outputs[0]];
        Ok(self.e.scalar(pred, ty)? != 0)
    }
}

/// The loop `cond`/`body` from `carry`, in place step by step on `e` ([`StepLoop`]), where
/// its regions are device work alone (`loops::kernels_only`); `None` where they are not.
pub fn run_step_by_step<E: Executor>(
    e: &E,
    cond: &Plan,
    body: &Plan,
    in_place: &InPlaceLoop,
    carry: &[E::Value],
) -> Option<Result<Vec<E::Value>, AbiError>> {
    if !(crate::loops::kernels_only(cond) && crate::loops::kernels_only(in_place.body(body))) {
        return None;
    }
    let mut l = StepLoop {
        e,
        cond,
        body,
        in_place,
        carry: carry.to_vec(),
        pred: None,
    };
    Some(run_in_place(&mut l).map(|_| l.carry))
}

/// A value that must be there (the freeze kernel's operands).
fn got<V: Clone>(v: Option<&V>) -> Result<V, AbiError> {
    v.cloned()
        .ok_or_else(|| AbiError::internal("a freeze kernel's operand is missing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter that stops at 10: eight batches of 1, then 2 and 4 hold the stop (14
    /// iterations run).
    struct Counter {
        x: u32,
        going: bool,
    }

    impl InPlace for Counter {
        fn iterate(&mut self) -> Result<(), AbiError> {
            self.going = self.x < 10;
            if self.going {
                self.x += 1;
            }
            Ok(())
        }
        fn going(&mut self) -> Result<bool, AbiError> {
            Ok(self.going)
        }
    }

    #[test]
    fn a_frozen_carry_stops_where_one_at_a_time_does() {
        let mut c = Counter { x: 0, going: true };
        assert_eq!(run_in_place(&mut c).unwrap(), 14);
        assert_eq!(c.x, 10);
        let mut z = Counter { x: 10, going: true };
        assert_eq!(
            run_in_place(&mut z).unwrap(),
            1,
            "zero trips: one iteration, frozen"
        );
        assert_eq!(z.x, 10);
    }

    #[test]
    fn the_freeze_kernel_selects_each_carry_by_the_predicate() {
        let k = freeze_kernel(
            "z",
            DType::Bool,
            &[
                TensorType::new(DType::F32, vec![3]),
                TensorType::new(DType::I32, vec![]),
            ],
            &[],
        );
        assert_eq!((k.reads.len(), k.writes.len(), k.elements), (5, 2, 3));
        assert!(k
            .body
            .contains("if (i < 3ull) next0[i] = go ? src0[i] : old0[i];"));
        assert!(k
            .body
            .contains("if (i < 1ull) next1[i] = go ? src1[i] : old1[i];"));
        assert!(k.body.contains("const unsigned char* __restrict__ pred"));
    }
}
