//! The order a program's nodes are planned in: a topological order that keeps elementwise
//! nodes of one element count together where the dependencies allow, so that `fusion.rs`'s
//! runs (of consecutive elementwise nodes and reshapes over one element count) are as long
//! as they can be: a program as traced interleaves independent chains (a forward pass
//! beside its tangent, a gradient's per-layer terms), and each switch of size would
//! otherwise end a kernel.
//!
//! Greedy list scheduling: among the nodes whose operands are computed, first a broadcast
//! read by index (it makes no code) or a constant (its step makes no launch, and a solver's
//! coefficients sit between the arithmetic that reads them: placed there, each would end
//! a kernel), then the earliest elementwise node of the element count of the run being
//! built, then a one-element one (it joins any run), else the earliest node. A product
//! that heads a run (`heads`) starts one. Nodes with effects (ordered host callbacks, or
//! regions holding them) keep their order among themselves.

use quabla_abi::qir::{Op, Program};
use std::collections::{BTreeMap, BTreeSet};

/// The planning order of `p`'s nodes (a permutation of their indices); `free[k]` says node
/// `k` makes no code (a broadcast read by index), `heads[k]` that it heads a fused run (a
/// small product, `fusion::Fusion::heads_run`).
///
/// ```
/// use quabla_abi::qir::Program;
/// let p = Program::parse("program(%0: f32[4], %1: f32[2]) {
///   %2 = exp(%0) : f32[4]
///   %3 = exp(%1) : f32[2]
///   %4 = sin(%2) : f32[4]
///   return %3, %4
/// }").unwrap();
/// // The two f32[4] nodes are planned together.
/// assert_eq!(quabla_cuda::schedule::order(&p, &[false; 3], &[false; 3]), vec![0, 2, 1]);
/// ```
pub fn order(p: &Program, free: &[bool], heads: &[bool]) -> Vec<usize> {
    let n = p.nodes.len();
    let first = p.first_result_ids();
    // The node defining each value (None: an input).
    let mut producer: Vec<Option<usize>> = vec![None; p.inputs.len()];
    for (k, node) in p.nodes.iter().enumerate() {
        producer.resize(first[k].index(), None);
        producer.extend(std::iter::repeat_n(Some(k), node.results.len()));
    }
    let mut waiting = vec![0usize; n];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut last_effect: Option<usize> = None;
    for (k, node) in p.nodes.iter().enumerate() {
        let mut deps: BTreeSet<usize> = node
            .operands
            .iter()
            .filter_map(|o| producer.get(o.index()).copied().flatten())
            .collect();
        if node.op.has_effect() {
            deps.extend(last_effect);
            last_effect = Some(k);
        }
        waiting[k] = deps.len();
        for d in deps {
            readers[d].push(k);
        }
    }
    // Runs are of one element count (`Fusion::fuse_run`), so nodes are grouped by it.
    let size = |k: usize| {
        p.nodes[k]
            .results
            .first()
            .map_or(0, |t| t.shape.iter().product::<usize>())
    };
    let elementwise = |k: usize| {
        (p.nodes[k].op.is_elementwise() || matches!(p.nodes[k].op, Op::Reshape)) && !free[k]
    };
    let (mut ready, mut ready_free) = (BTreeSet::new(), BTreeSet::new());
    let mut ready_by_shape: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let make_ready = |k: usize,
                      ready: &mut BTreeSet<usize>,
                      ready_free: &mut BTreeSet<usize>,
                      by_shape: &mut BTreeMap<usize, BTreeSet<usize>>| {
        if free[k] || matches!(p.nodes[k].op, Op::Constant(_)) {
            ready_free.insert(k);
        } else {
            ready.insert(k);
            if elementwise(k) {
                by_shape.entry(size(k)).or_default().insert(k);
            }
        }
    };
    for k in (0..n).filter(|&k| waiting[k] == 0) {
        make_ready(k, &mut ready, &mut ready_free, &mut ready_by_shape);
    }
    let mut out = Vec::with_capacity(n);
    let mut run: Option<usize> = None;
    while out.len() < n {
        let next = if let Some(&k) = ready_free.iter().next() {
            k
        } else if let Some(&k) = run
            .and_then(|n| ready_by_shape.get(&n))
            .and_then(|set| set.iter().next())
        {
            k
        } else if let Some(&k) = run
            .filter(|&n| n > 0)
            .and_then(|_| ready_by_shape.get(&1))
            .and_then(|set| set.iter().next())
        {
            // A one-element node joins a run of any size.
            k
        } else if let Some(&k) = ready.iter().next() {
            k
        } else {
            // Unreachable for a validated program (operands precede their readers); the
            // remaining nodes in their own order keep the plan whole.
            let placed: BTreeSet<usize> = out.iter().copied().collect();
            out.extend((0..n).filter(|k| !placed.contains(k)));
            break;
        };
        if !ready_free.remove(&next) {
            ready.remove(&next);
            let n = size(next);
            if elementwise(next) {
                if let Some(set) = ready_by_shape.get_mut(&n) {
                    set.remove(&next);
                }
                run = match run {
                    Some(r) if n == 1 && r > 0 => Some(r),
                    _ => Some(n),
                };
            } else {
                // A product heading a run starts one; anything else ends it.
                run = heads[next].then_some(n);
            }
        }
        out.push(next);
        for &r in &readers[next] {
            waiting[r] -= 1;
            if waiting[r] == 0 {
                make_ready(r, &mut ready, &mut ready_free, &mut ready_by_shape);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Program {
        Program::parse(text).unwrap()
    }

    /// Every node comes after the nodes it reads, and each node once.
    fn is_topological(p: &Program, order: &[usize]) -> bool {
        let first = p.first_result_ids();
        let mut done =
            vec![false; p.inputs.len() + p.nodes.iter().map(|n| n.results.len()).sum::<usize>()];
        (0..p.inputs.len()).for_each(|i| done[i] = true);
        let mut seen = vec![false; p.nodes.len()];
        for &k in order {
            if seen[k] || !p.nodes[k].operands.iter().all(|o| done[o.index()]) {
                return false;
            }
            seen[k] = true;
            for r in 0..p.nodes[k].results.len() {
                done[first[k].index() + r] = true;
            }
        }
        seen.iter().all(|&s| s)
    }

    #[test]
    fn a_dependency_is_never_crossed() {
        // %4 (f32[4]) needs the reduction %3 of the f32[4] run: it cannot join %2's run.
        let p = parse(
            "program(%0: f32[4]) {
  %1 = exp(%0) : f32[4]
  %2 = reduce[kind=sum, axes=[0]](%1) : f32[]
  %3 = broadcast_in_dim[dims=[]](%2) : f32[4]
  %4 = mul(%1, %3) : f32[4]
  %5 = sin(%0) : f32[4]
  return %4, %5
}",
        );
        let o = order(&p, &[false; 5], &[false; 5]);
        assert!(is_topological(&p, &o));
        // The independent sin joins exp's run; mul waits for the reduction.
        assert_eq!(o, vec![0, 4, 1, 2, 3]);
    }

    #[test]
    fn effects_keep_their_order_and_free_nodes_go_first() {
        let p = parse(
            "program(%0: f32[2]) {
  %1 = host_callback[callback=2, effectful=true](%0) : f32[2]
  %2 = exp(%0) : f32[2]
  %3 = host_callback[callback=1, effectful=true](%2) : f32[2]
  %4 = broadcast_in_dim[dims=[0]](%0) : f32[2]
  %5 = add(%4, %3) : f32[2]
  return %1, %5
}",
        );
        let o = order(&p, &[false, false, false, true, false], &[false; 5]);
        assert!(is_topological(&p, &o));
        let at = |k: usize| o.iter().position(|&x| x == k).unwrap();
        assert!(at(0) < at(2), "{o:?}");
        assert_eq!(o[0], 3, "the free broadcast first: {o:?}");
    }
}
