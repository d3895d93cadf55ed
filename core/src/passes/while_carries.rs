//! Dead loop carries: a `while` carry whose final value nothing reads, which the
//! condition does not read, and which the body reads only to compute that same carry (or
//! other such carries) is dropped, with the work that computed it. Reverse mode leaves
//! such carries behind: the stacked residuals of a tangent that is zero (a `scan` over
//! data that is not differentiated), and loop-invariant values carried through the
//! backward loop unused. XLA's while-loop simplifier removes the same.
//!
//! Every remaining value is computed by the same operations on the same operands, so the
//! bits cannot change.

use super::dce;
use quabla_abi::qir::{Node, Op, Program, ValueId};

/// `p` with the dead carries of every `while` dropped, nested loops included.
///
/// ```
/// use quabla_abi::qir::Program;
/// // Carry %2 is doubled every trip but never read after the loop.
/// let p = Program::parse(
///     "program(%0: i32[], %1: f32[4]) {
///        %2, %3 = while(%0, %1) : i32[], f32[4] {
///          cond(%0: i32[], %1: f32[4]) {
///            %2 = constant[value=[10]]() : i32[]
///            %3 = compare[dir=lt](%0, %2) : bool[]
///            return %3
///          }
///          body(%0: i32[], %1: f32[4]) {
///            %2 = constant[value=[1]]() : i32[]
///            %3 = add(%0, %2) : i32[]
///            %4 = add(%1, %1) : f32[4]
///            return %3, %4
///          }
///        }
///        return %2
///      }",
/// )
/// .unwrap();
/// let q = quabla::passes::while_carries(&p);
/// assert_eq!(q.nodes[0].results.len(), 1);
/// ```
pub fn while_carries(p: &Program) -> Program {
    let mut p = p.clone();
    // Dropping a carry of one loop can free a carry of a loop before it (whose result fed
    // the dropped one) or inside it: repeat until nothing changes. Each round that changes
    // something drops a carry, so the rounds are bounded.
    loop {
        let (next, dropped) = one_round(&p);
        p = next;
        if !dropped {
            return p;
        }
    }
}

/// One sweep over `p`'s nodes from last to first (so a loop's dropped carries free the
/// results of loops before it in the same sweep), then into every region.
fn one_round(p: &Program) -> (Program, bool) {
    let first = p.first_result_ids();
    let mut uses = vec![0usize; p.num_values()];
    for v in p.nodes.iter().flat_map(|n| &n.operands).chain(&p.outputs) {
        uses[v.index()] += 1;
    }
    let mut dropped = false;
    // For each node, the carries it keeps (`None`: all of them, the node unchanged).
    let mut kept: Vec<Option<Vec<bool>>> = vec![None; p.nodes.len()];
    let mut ops: Vec<Op> = p.nodes.iter().map(|n| n.op.clone()).collect();
    for ni in (0..p.nodes.len()).rev() {
        let node = &p.nodes[ni];
        if let Op::While { cond, body } = &node.op {
            let unused: Vec<bool> = (0..node.results.len())
                .map(|k| uses[first[ni].index() + k] == 0)
                .collect();
            if let Some((keep, cond, body)) = drop_dead(cond, body, &unused) {
                for (k, o) in node.operands.iter().enumerate() {
                    if !keep[k] {
                        uses[o.index()] -= 1;
                    }
                }
                ops[ni] = Op::While {
                    cond: Box::new(cond),
                    body: Box::new(body),
                };
                kept[ni] = Some(keep);
                dropped = true;
            }
        }
        let regions = ops[ni].regions();
        if !regions.is_empty() {
            let mut inner = Vec::with_capacity(regions.len());
            for r in regions {
                let (r, d) = one_round(r);
                dropped |= d;
                inner.push(r);
            }
            ops[ni] = ops[ni].with_regions(inner);
        }
    }
    (renumber(p, ops, &kept), dropped)
}

/// The carries of a loop (`cond`, `body`) that stay, and its regions without the others,
/// if any can go: those whose results are `unused` after the loop, not read by `cond`,
/// and read in `body` only towards outputs that also go. `None` if every carry stays, or
/// every one would go (a loop with no carries is left to DCE, which drops it whole).
fn drop_dead(
    cond: &Program,
    body: &Program,
    unused: &[bool],
) -> Option<(Vec<bool>, Program, Program)> {
    let read_by_cond = reads(cond);
    let mut gone: Vec<bool> = unused
        .iter()
        .zip(&read_by_cond)
        .map(|(u, r)| *u && !*r)
        .collect();
    loop {
        let live = reads(&keep_outputs(body, &gone));
        let mut changed = false;
        for (k, g) in gone.iter_mut().enumerate() {
            if *g && live[k] {
                *g = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let n = gone.iter().filter(|g| **g).count();
    if n == 0 || n == gone.len() {
        return None;
    }
    let body = without_inputs(&keep_outputs(body, &gone), &gone)?;
    let cond = without_inputs(cond, &gone)?;
    Some((gone.iter().map(|g| !g).collect(), cond, body))
}

/// `body` returning only the outputs not `gone`, its dead code removed.
fn keep_outputs(body: &Program, gone: &[bool]) -> Program {
    dce(&Program {
        inputs: body.inputs.clone(),
        nodes: body.nodes.clone(),
        outputs: body
            .outputs
            .iter()
            .zip(gone)
            .filter(|(_, g)| !**g)
            .map(|(o, _)| *o)
            .collect(),
    })
}

/// Which of `p`'s inputs a node or an output reads.
fn reads(p: &Program) -> Vec<bool> {
    let mut read = vec![false; p.inputs.len()];
    for v in p.nodes.iter().flat_map(|n| &n.operands).chain(&p.outputs) {
        if let Some(r) = read.get_mut(v.index()) {
            *r = true;
        }
    }
    read
}

/// `p` without the inputs `drop` names (none of which it reads), renumbered; `None` if it
/// reads one.
fn without_inputs(p: &Program, drop: &[bool]) -> Option<Program> {
    let mut map: Vec<Option<ValueId>> = vec![None; p.num_values()];
    let mut next = 0u32;
    for (i, m) in map.iter_mut().enumerate().take(p.inputs.len()) {
        if !drop[i] {
            *m = Some(ValueId(next));
            next += 1;
        }
    }
    let mut nodes = Vec::with_capacity(p.nodes.len());
    let first = p.first_result_ids();
    for (ni, node) in p.nodes.iter().enumerate() {
        let operands = node
            .operands
            .iter()
            .map(|o| map[o.index()])
            .collect::<Option<Vec<_>>>()?;
        for r in 0..node.results.len() {
            map[first[ni].index() + r] = Some(ValueId(next));
            next += 1;
        }
        nodes.push(Node {
            op: node.op.clone(),
            operands,
            results: node.results.clone(),
        });
    }
    Some(Program {
        inputs: p
            .inputs
            .iter()
            .zip(drop)
            .filter(|(_, d)| !**d)
            .map(|(t, _)| t.clone())
            .collect(),
        nodes,
        outputs: p
            .outputs
            .iter()
            .map(|o| map[o.index()])
            .collect::<Option<Vec<_>>>()?,
    })
}

/// `p` with each node's op replaced by `ops[i]`, and the loops with `kept[i]` keeping
/// only those operands and results; values renumbered. A dropped result is read nowhere
/// (that is why it was dropped), so it maps to nothing.
fn renumber(p: &Program, ops: Vec<Op>, kept: &[Option<Vec<bool>>]) -> Program {
    let first = p.first_result_ids();
    let mut map: Vec<ValueId> = (0..p.inputs.len() as u32).map(ValueId).collect();
    map.resize(p.num_values(), ValueId(u32::MAX));
    let mut next = p.inputs.len() as u32;
    let mut nodes = Vec::with_capacity(p.nodes.len());
    for ((ni, node), op) in p.nodes.iter().enumerate().zip(ops) {
        let keep = |k: usize| kept[ni].as_ref().is_none_or(|keep| keep[k]);
        let mut results = Vec::with_capacity(node.results.len());
        for (k, t) in node.results.iter().enumerate() {
            if keep(k) {
                map[first[ni].index() + k] = ValueId(next);
                next += 1;
                results.push(t.clone());
            }
        }
        let operands = node
            .operands
            .iter()
            .enumerate()
            .filter(|(k, _)| !matches!(node.op, Op::While { .. }) || keep(*k))
            .map(|(_, o)| map[o.index()])
            .collect();
        nodes.push(Node {
            op,
            operands,
            results,
        });
    }
    Program {
        inputs: p.inputs.clone(),
        nodes,
        outputs: p.outputs.iter().map(|o| map[o.index()]).collect(),
    }
}
