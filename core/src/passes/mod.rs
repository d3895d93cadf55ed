//! Program passes run before differentiation and before lowering to a backend. Each pass
//! keeps results bit for bit: nothing here reassociates or changes rounding.

mod canonicalize;
mod cse;
mod dce;
mod fold;
mod lower;
mod while_carries;

pub use canonicalize::canonicalize;
pub use cse::cse;
pub use dce::dce;
pub use fold::fold_constants;
pub use lower::{lower, CUSTOM_VJP_FORWARD};
pub use while_carries::while_carries;

use quabla_abi::qir::Program;

/// The passes every traced program goes through: canonicalisation, CSE, then DCE. With
/// `QUABLA_DUMP_IR=<folder>` set, the program before and after is written there as text.
///
/// ```no_run
/// # use quabla::Array;
/// let x = Array::from_slice(&[1.0f32], &[1])?;
/// let p = quabla::make_program(|a: &[Array]| Ok(vec![(&a[0].sin()? + &a[0].sin()?)?]), &[x])?;
/// let q = quabla::passes::optimize(&p); // one sin after CSE
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn optimize(p: &Program) -> Program {
    let out = dce(&cse(&canonicalize(p)));
    dump("traced", p);
    dump("optimized", &out);
    out
}

/// Writes `p` to `$QUABLA_DUMP_IR/<n>-<stage>.qir` when that variable is set.
///
/// ```no_run
/// # use quabla::Array;
/// let x = Array::from_slice(&[1.0f32], &[1])?;
/// let p = quabla::make_program(|a: &[Array]| Ok(vec![a[0].exp()?]), &[x])?;
/// quabla::passes::dump("mine", &p); // written only under QUABLA_DUMP_IR
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn dump(stage: &str, p: &Program) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    if let Some(dir) = std::env::var_os("QUABLA_DUMP_IR") {
        let dir = std::path::PathBuf::from(dir);
        let n = N.fetch_add(1, Ordering::Relaxed);
        // Dumps are a debugging aid: failing to write one must not fail the program.
        let _ = std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(dir.join(format!("{n:05}-{stage}.qir")), p.to_text()));
    }
}

/// Renumbers `p` keeping the nodes `keep` (in order), with `alias` mapping values of dropped
/// nodes to the kept values that replace them.
pub(crate) fn rebuild(
    p: &Program,
    keep: &[bool],
    alias: &std::collections::HashMap<u32, u32>,
) -> Program {
    let first = p.first_result_ids();
    let mut map: Vec<Option<u32>> = vec![None; p.num_values()];
    for (i, m) in map.iter_mut().enumerate().take(p.inputs.len()) {
        *m = Some(i as u32);
    }
    let resolve = |map: &Vec<Option<u32>>, v: u32| -> u32 {
        let v = alias.get(&v).copied().unwrap_or(v);
        map[v as usize].expect("kept nodes only use kept values")
    };
    let mut next = p.inputs.len() as u32;
    let mut nodes = Vec::new();
    for (ni, node) in p.nodes.iter().enumerate() {
        if !keep[ni] {
            continue;
        }
        let operands = node
            .operands
            .iter()
            .map(|o| quabla_abi::qir::ValueId(resolve(&map, o.0)))
            .collect();
        for r in 0..node.results.len() {
            map[first[ni].index() + r] = Some(next);
            next += 1;
        }
        nodes.push(quabla_abi::qir::Node {
            op: node.op.clone(),
            operands,
            results: node.results.clone(),
        });
    }
    let outputs = p
        .outputs
        .iter()
        .map(|o| quabla_abi::qir::ValueId(resolve(&map, o.0)))
        .collect();
    Program {
        inputs: p.inputs.clone(),
        nodes,
        outputs,
    }
}
