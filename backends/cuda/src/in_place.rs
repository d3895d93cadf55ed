//! `while` loops whose carry is updated in place, so that an iteration needs nothing from
//! the host: each iteration computes the predicate of the carry and the body's new carry,
//! then a freeze kernel keeps the new carry where the predicate holds and the old one where
//! it does not. Once the predicate is false the carry no longer changes (the kernels are
//! deterministic, so the predicate stays false), so iterations can be queued ahead without
//! keeping every carry (unlike `loops.rs`'s run-ahead), and only the last predicate of a
//! batch is read back: false means the loop ended somewhere in the batch, with the carry it
//! had then. On a GPU an iteration is one CUDA graph launch (`loop_graph.rs`); the host
//! emulation runs the same freeze kernel step by step (`StepLoop`), so CI checks its C.

use crate::elementwise::c_type;
use crate::fusion::Kernel;
use crate::plan::{run, Executor, Plan};
use quabla_abi::abi::AbiError;
use quabla_abi::{DType, TensorType};

/// The most iterations queued before a predicate is read back: the carry does not grow
/// with it, so only the iterations past the end are wasted (at most as many as ran).
pub const MAX_AHEAD: usize = 256;

/// The freeze kernel of a loop with predicate type `pred` and carry types `carry`. Its
/// parameters, positionally: the predicate, the body's results (`src`), the carry (`old`),
/// then the next carry it writes (`next_j = pred ? src_j : old_j`), then the element count
/// (the largest carry's). `reads` and `writes` number the parameters (writes index `carry`,
/// as `Executor::launch` allocates them).
pub fn freeze_kernel(name: &str, pred: DType, carry: &[TensorType]) -> Kernel {
    let n = carry.len();
    let mut params = vec![format!("const {}* __restrict__ pred", c_type(pred))];
    let mut lines = String::new();
    for (j, t) in carry.iter().enumerate() {
        params.push(format!("const {}* __restrict__ src{j}", c_type(t.dtype)));
    }
    for (j, t) in carry.iter().enumerate() {
        params.push(format!("const {}* __restrict__ old{j}", c_type(t.dtype)));
    }
    for (j, t) in carry.iter().enumerate() {
        params.push(format!("{}* __restrict__ next{j}", c_type(t.dtype)));
        lines.push_str(&format!(
            "    if (i < {}ull) next{j}[i] = go ? src{j}[i] : old{j}[i];\n",
            t.num_elements()
        ));
    }
    params.push("unsigned long long n".into());
    let body = format!(
        "extern \"C\" __global__ void {name}({}) {{\n  const bool go = pred[0] != 0;\n  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {{\n{lines}  }}\n}}\n",
        params.join(", ")
    );
    let mut param_types = vec![pred];
    for _ in 0..3 {
        param_types.extend(carry.iter().map(|t| t.dtype));
    }
    Kernel {
        source: format!("{}\n{body}", crate::elementwise::PRELUDE),
        body,
        param_types,
        name: name.to_string(),
        reads: (0..1 + 2 * n).collect(),
        writes: (0..n).collect(),
        elements: carry.iter().map(|t| t.num_elements()).max().unwrap_or(0),
        block_per_element: false,
        single_block: false,
        device_loop: false,
        gemm: None,
        fused: 0,
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

/// An in-place loop on any executor, step by step: the regions' plans run, then the freeze
/// kernel (the host emulation's way, so that CI runs the freeze kernel on every loop).
pub struct StepLoop<'a, E: Executor> {
    pub e: &'a E,
    pub cond: &'a Plan,
    pub body: &'a Plan,
    pub freeze: &'a Kernel,
    pub carry: Vec<E::Value>,
    pub pred: Option<E::Value>,
}

impl<E: Executor> InPlace for StepLoop<'_, E> {
    fn iterate(&mut self) -> Result<(), AbiError> {
        let pred = run(self.e, self.cond, self.carry.clone())?
            .into_iter()
            .next()
            .ok_or_else(|| AbiError::internal("a while condition gave nothing"))?;
        let new = run(self.e, self.body, self.carry.clone())?;
        let mut reads = vec![pred.clone()];
        reads.extend(new);
        reads.extend(self.carry.iter().cloned());
        let types: Vec<TensorType> = self.cond.types[..self.cond.num_inputs].to_vec();
        let mut next = self.e.launch(self.freeze, &types, &reads)?;
        next.sort_by_key(|(j, _)| *j);
        self.carry = next.into_iter().map(|(_, v)| v).collect();
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
