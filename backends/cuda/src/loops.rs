//! `while` loops decided on the host, run ahead of their predicates: reading a predicate
//! back waits for the device, so where the loop's regions are device work alone (kernels and
//! library calls: pure, so an extra iteration computes values nobody reads and has no other
//! effect, and always finishes), a batch of iterations is queued before the batch's
//! predicates are read back together; the loop's result is the carry at the first false
//! predicate, exactly what one iteration at a time gives. Batches double from one to
//! `MAX_AHEAD` after eight batches of one (`next_ahead`: a short loop wastes at most as many
//! iterations as it ran, and none in its first eight), bounded by the memory the batch's
//! carries hold.

use crate::plan::{run, Executor, Plan, Step};
use quabla_abi::abi::AbiError;

/// The most iterations queued ahead of a predicate's read-back.
pub const MAX_AHEAD: usize = 64;

/// The most bytes of carries a batch may hold at once.
const AHEAD_BYTES: usize = 256 << 20;

/// Whether `p` only queues device work (kernels and library calls: no host call, whose
/// effects must not run past the loop's end, and no nested region, whose own loops could run
/// long on values past it).
pub(crate) fn kernels_only(p: &Plan) -> bool {
    p.steps.iter().all(|s| match s {
        // A factorization is library calls and kernels on the stream, bounded work on any
        // input (garbage past the loop's end included); a speculated cond is kernels.
        Step::Constant { .. }
        | Step::Kernel(_)
        | Step::Update { .. }
        | Step::Alias { .. }
        | Step::Linalg { .. }
        | Step::Speculate { .. } => true,
        // A host call has effects.
        Step::HostCallback { .. } | Step::Cond { .. } | Step::While { .. } => false,
    })
}

/// How many batches of one iteration a loop starts with before batches double: most loops of
/// solvers end within a few iterations, each of many kernels, where doubling from the start
/// would run about as many iterations past the end as before it; a long loop pays a few
/// more read-backs.
pub const FIRST_SINGLE_BATCHES: usize = 8;

/// The size of batch `batch` (counted from 0) after one of `ahead` iterations: one at a
/// time for the first `FIRST_SINGLE_BATCHES`, then doubling up to `limit`.
///
/// ```
/// use quabla_cuda::loops::next_ahead;
/// assert_eq!(next_ahead(3, 1, 64), 1);
/// assert_eq!(next_ahead(8, 1, 64), 2);
/// assert_eq!(next_ahead(12, 64, 64), 64);
/// ```
pub fn next_ahead(batch: usize, ahead: usize, limit: usize) -> usize {
    if batch < FIRST_SINGLE_BATCHES {
        1
    } else {
        (ahead * 2).min(limit).max(1)
    }
}

/// Whether loops may run ahead (`QUABLA_CUDA_RUN_AHEAD=0` turns it off, to compare).
fn enabled() -> bool {
    !std::env::var("QUABLA_CUDA_RUN_AHEAD").is_ok_and(|v| v == "0")
}

/// The carry once `cond` is false, starting from `carry`; the number of body runs made
/// (those past the end included) with it.
pub fn run_while<E: Executor>(
    e: &E,
    cond: &Plan,
    body: &Plan,
    carry: Vec<E::Value>,
) -> Result<(Vec<E::Value>, usize), AbiError> {
    let carry_bytes: usize = cond.types[..cond.num_inputs]
        .iter()
        .map(|t| t.size_bytes())
        .sum();
    let limit = if enabled() && kernels_only(cond) && kernels_only(body) {
        (AHEAD_BYTES / carry_bytes.max(1)).clamp(1, MAX_AHEAD)
    } else {
        1
    };
    let predicate = |c: &[E::Value]| -> Result<E::Value, AbiError> {
        run(e, cond, c.to_vec())?
            .into_iter()
            .next()
            .ok_or_else(|| AbiError::internal("a while condition gave nothing"))
    };
    let predicate_type = &cond.types[cond.outputs[0]];
    let (mut c, mut ahead, mut runs, mut batch) = (carry, 1usize, 0usize, 0usize);
    if limit == 1 {
        // One at a time: the body never runs past the end.
        loop {
            if e.scalar(&predicate(&c)?, predicate_type)? == 0 {
                return Ok((c, runs));
            }
            c = run(e, body, c)?;
            runs += 1;
        }
    }
    loop {
        // carries[j] is the carry j iterations on; goes[j] says whether to run from it.
        let mut carries = vec![c];
        let mut goes = Vec::with_capacity(ahead);
        for j in 0..ahead {
            goes.push(predicate(&carries[j])?);
            carries.push(run(e, body, carries[j].clone())?);
            runs += 1;
        }
        let read: Vec<(&E::Value, &quabla_abi::TensorType)> =
            goes.iter().map(|g| (g, predicate_type)).collect();
        let go = e.scalars(&read)?;
        if let Some(stop) = go.iter().position(|&g| g == 0) {
            return Ok((carries.swap_remove(stop), runs));
        }
        c = carries
            .pop()
            .ok_or_else(|| AbiError::internal("a batch of loop iterations ran none"))?;
        batch += 1;
        ahead = next_ahead(batch, ahead, limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fusion::Kernel;
    use quabla_abi::{DType, TensorType};

    /// Values are host integers; kernel `inc` adds one, `lt<N>` says whether below N.
    struct Counter;

    fn kernel(name: &str) -> Kernel {
        Kernel {
            name: name.into(),
            source: String::new(),
            body: String::new(),
            param_types: vec![],
            reads: vec![0],
            writes: vec![1],
            elements: 1,
            block_per_element: false,
            single_block: false,
            device_loop: false,
            shared_scratch: 0,
            gemm: None,
            fused: 1,
            reuses: Vec::new(),
        }
    }

    fn region(name: &str, out: DType) -> Plan {
        Plan::new(
            vec![
                TensorType::new(DType::I32, vec![]),
                TensorType::new(out, vec![]),
            ],
            1,
            vec![Step::Kernel(kernel(name))],
            vec![1],
        )
    }

    impl Executor for Counter {
        type Value = i64;
        fn constant(&self, _: &Plan, _: usize, _: &[u8]) -> Result<i64, AbiError> {
            Err(AbiError::internal("no constants here"))
        }
        fn launch(
            &self,
            k: &Kernel,
            _: &[TensorType],
            reads: &[i64],
        ) -> Result<Vec<(usize, i64)>, AbiError> {
            let x = reads[0];
            let out = match k.name.strip_prefix("lt") {
                Some(n) => (x < n.parse::<i64>().unwrap_or(0)) as i64,
                None => x + 1,
            };
            Ok(vec![(1, out)])
        }
        fn launch_updating(
            &self,
            k: &Kernel,
            types: &[TensorType],
            reads: &[i64],
            _: &mut [i64],
        ) -> Result<Vec<(usize, i64)>, AbiError> {
            self.launch(k, types, reads)
        }
        fn scalar(&self, v: &i64, _: &TensorType) -> Result<i64, AbiError> {
            Ok(*v)
        }
        fn read(&self, _: &i64, _: &TensorType) -> Result<Vec<u8>, AbiError> {
            Err(AbiError::internal("no reads here"))
        }
        fn write(&self, _: &[u8]) -> Result<i64, AbiError> {
            Err(AbiError::internal("no writes here"))
        }
    }

    /// The carry at the first false predicate, for trip counts around the batch sizes, and
    /// the body runs made: eight batches of 1, then 2, 4, ... up to MAX_AHEAD.
    #[test]
    fn running_ahead_stops_where_one_at_a_time_does() {
        let body = region("inc", DType::I32);
        for trips in [0i64, 1, 2, 3, 6, 7, 8, 63, 64, 200, 1000] {
            let e = Counter;
            let cond = region(&format!("lt{trips}"), DType::Bool);
            let (out, runs) = run_while(&e, &cond, &body, vec![0]).unwrap();
            assert_eq!(out, vec![trips], "{trips} trips");
            // Batches 1 (eight times), 2, 4, ..., then MAX_AHEAD each, until one holds the stop.
            let (mut queued, mut ahead, mut batch) = (0usize, 1usize, 0usize);
            while queued <= trips as usize {
                queued += ahead;
                batch += 1;
                ahead = if batch < 8 {
                    1
                } else {
                    (ahead * 2).min(MAX_AHEAD)
                };
            }
            assert_eq!(runs, queued, "{trips} trips");
            assert!(runs <= 2 * trips as usize + 1 && runs < trips as usize + MAX_AHEAD + 1);
        }
    }

    /// A region that is not kernels alone runs one iteration at a time.
    #[test]
    fn nested_regions_run_one_iteration_at_a_time() {
        let mut body = region("inc", DType::I32);
        body.steps.push(Step::While {
            carry: vec![1],
            cond: Box::new(region("lt0", DType::Bool)),
            body: Box::new(region("inc", DType::I32)),
            in_place: Box::new(crate::in_place::InPlaceLoop {
                carried: vec![crate::in_place::Carried::Next],
                body: None,
                freeze: kernel("z"),
            }),
            results: vec![1],
        });
        let e = Counter;
        let (out, runs) = run_while(&e, &region("lt5", DType::Bool), &body, vec![0]).unwrap();
        assert_eq!((out, runs), (vec![5], 5));
    }
}
