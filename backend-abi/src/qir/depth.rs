//! The one nesting limit of regions, enforced while programs are read.
//!
//! Decoding, validating, printing and dropping a program all recurse once per region level,
//! and a stack overflow aborts the process (no `catch_unwind` can stop it). So the depth is
//! bounded where hostile input first becomes structure: the text parser counts levels as it
//! reads, and the binary decoder's `Program` deserializer refuses to open one level more than
//! [`MAX_REGION_DEPTH`] before anything below it is built. Validation checks the same limit
//! for programs built in memory, so every later walk over a validated program is bounded.

use super::{Node, Program, ValueId};
use crate::TensorType;
use serde::{Deserialize, Deserializer};
use std::cell::Cell;

/// The most levels of nested programs, the top-level program counted as level 1. The programs
/// the core emits nest a few levels (a loop inside a solver inside a gradient); 64 leaves a
/// wide margin while keeping every recursive walk within a small stack.
pub const MAX_REGION_DEPTH: usize = 64;

thread_local! {
    /// Levels of `Program` being deserialized on this thread, and whether the limit was hit
    /// (postcard drops custom error messages, so the decoder reads the flag instead).
    static DECODING: Cell<(usize, bool)> = const { Cell::new((0, false)) };
}

/// One level of decoding; leaving it (also by an error) pops the level.
struct Level;

impl Level {
    fn enter() -> Option<Level> {
        DECODING.with(|d| {
            let (depth, _) = d.get();
            if depth >= MAX_REGION_DEPTH {
                d.set((depth, true));
                None
            } else {
                d.set((depth + 1, false));
                Some(Level)
            }
        })
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        DECODING.with(|d| {
            let (depth, hit) = d.get();
            d.set((depth.saturating_sub(1), hit));
        });
    }
}

/// Runs a decode and reports whether it stopped at the depth limit.
pub(super) fn decoding<T>(f: impl FnOnce() -> T) -> (T, bool) {
    DECODING.with(|d| d.set((0, false)));
    let out = f();
    let hit = DECODING.with(|d| d.replace((0, false)).1);
    (out, hit)
}

/// The serialized shape of a `Program` (same fields, same order as `Serialize` writes).
#[derive(Deserialize)]
#[serde(rename = "Program")]
struct ProgramFields {
    inputs: Vec<TensorType>,
    nodes: Vec<Node>,
    outputs: Vec<ValueId>,
}

impl<'de> Deserialize<'de> for Program {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Some(_level) = Level::enter() else {
            return Err(serde::de::Error::custom(format!(
                "regions nest deeper than {MAX_REGION_DEPTH}"
            )));
        };
        let ProgramFields {
            inputs,
            nodes,
            outputs,
        } = ProgramFields::deserialize(d)?;
        Ok(Program {
            inputs,
            nodes,
            outputs,
        })
    }
}

/// The levels of nested programs in `p` (1 without regions), walked with an explicit stack
/// so that measuring a program built in memory cannot itself overflow.
pub(super) fn region_levels(p: &Program) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(p, 1usize)];
    while let Some((q, depth)) = todo.pop() {
        deepest = deepest.max(depth);
        for n in &q.nodes {
            todo.extend(n.op.regions().into_iter().map(|r| (r, depth + 1)));
        }
    }
    deepest
}
