//! Work counts of the interpreter, process-wide: how many times it ran each unary op (a
//! node run once on its whole array, or once per fused group's run, whatever the size).
//! Tests count work with them instead of timing it: a loop body holding a `sin` that
//! nothing else computes ran as many times as `sin` did. Code compiled by the native tier
//! runs without counting, so a count is exact under `QUABLA_CPU_JIT=0` only.
//!
//! ```
//! use quabla_abi::qir::UnaryOp;
//! let before = quabla_cpu::stats::unary_runs(UnaryOp::Sin);
//! // ... run programs on the CPU backend linked into this process ...
//! let sines = quabla_cpu::stats::unary_runs(UnaryOp::Sin) - before;
//! # assert_eq!(sines, 0);
//! ```

use quabla_abi::qir::{Op, UnaryOp};
use std::sync::atomic::{AtomicU64, Ordering};

static UNARY_RUNS: [AtomicU64; UnaryOp::ALL.len()] =
    [const { AtomicU64::new(0) }; UnaryOp::ALL.len()];

/// Counts one run of `op` (a no-op for ops other than unary ones).
pub(crate) fn count(op: &Op) {
    if let Op::Unary(u) = op {
        // Relaxed: a count, read after the runs it counts have returned.
        UNARY_RUNS[*u as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// How many times this process's interpreter has run a node of unary op `op`.
pub fn unary_runs(op: UnaryOp) -> u64 {
    UNARY_RUNS[op as usize].load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unary_op_has_its_own_count() {
        let before: Vec<u64> = UnaryOp::ALL.iter().map(|u| unary_runs(*u)).collect();
        count(&Op::Unary(UnaryOp::Cbrt));
        count(&Op::Unary(UnaryOp::Cbrt));
        assert!(unary_runs(UnaryOp::Cbrt) >= before[UnaryOp::Cbrt as usize] + 2);
        assert_eq!(UnaryOp::ALL.len(), UNARY_RUNS.len());
        for (k, u) in UnaryOp::ALL.iter().enumerate() {
            assert_eq!(*u as usize, k, "{u:?} indexes its own count");
        }
    }
}
