//! Consecutive small kernels of a plan as one kernel of one block: each becomes a
//! `__device__` function, called in order with `__syncthreads()` between (which also makes
//! each one's stores visible to the next). A solver's loop on a small state is dozens of
//! kernels of a few dozen elements per iteration, each launch (or graph node) costing a
//! few microseconds of latency for well under one of work; one block runs them back to back
//! without it. Every generated kernel loops over its elements by the grid's stride, so one
//! block computes what the whole grid would, and a block-per-element fold folds with this
//! block's threads (a power of two up to `kernels::FOLD_BLOCK`, as its own launch would).
//!
//! Values passed between the parts stay in memory (each part's results are still results
//! of the merged kernel); pointers lose `__restrict__`, because a part's read-only input may
//! be another part's output in the same kernel, which the read-only data cache must not
//! serve stale. Constants of the sequence are created before it, aliases after it (inside,
//! an alias's readers are given its source's pointer).

use crate::elementwise::{c_type, PRELUDE};
use crate::fusion::Kernel;
use crate::plan::Step;
use quabla_abi::{DType, TensorType};
use std::collections::HashMap;

/// The most elements a one-thread-per-element kernel may have to join, by default: beyond,
/// one block of at most 256 threads loops too long over what a full grid computes in one
/// pass. On an H200 the neural ODE rows ran as fast with 4,096 as with 1,024 (9.1 and 9.0
/// ms for the gradient, f32): parts past a few passes of the block gain nothing, so the
/// default stays at two passes. `QUABLA_CUDA_ONE_BLOCK=<n>` sets it (0: no kernels are
/// merged).
pub const MAX_ELEMENTS: usize = 512;

/// The bound in force: `QUABLA_CUDA_ONE_BLOCK`, else `MAX_ELEMENTS`.
pub fn max_elements() -> usize {
    std::env::var("QUABLA_CUDA_ONE_BLOCK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_ELEMENTS)
}

/// The most elements a block-per-element fold may have to join (each is a block's fold,
/// run one after another by the one block).
pub const MAX_FOLD_ELEMENTS: usize = 64;

/// The most elements a part may read, all its operands together: the bound on its work,
/// since a kernel of few elements may still sum long rows (a parameter gradient's product
/// or reduction over a batch of thousands), which its own launch spreads over many blocks
/// and one block would make serial. Measured on an H200, before this bound, the PINN step
/// took 1.4 ms with such parts merged against 0.65 ms without (7.0 against 1.24 at 16,384
/// points).
pub const MAX_READ_ELEMENTS: usize = 16_384;

/// The most folds one merged kernel holds: each declares its shared arrays
/// (`kernels::FOLD_BLOCK` partials of up to 8 bytes and flags), and a block has 48 KB of
/// static shared memory.
const MAX_FOLDS: usize = 8;

/// The most pointer parameters of a merged kernel (a launch's parameters fit 4 KB).
const MAX_PARAMS: usize = 256;

/// Whether kernel `k` may be a part of a one-block kernel, under bound `max` (elements of
/// a one-thread-per-element kernel; 0 merges nothing), its values' types `types`.
fn fits(k: &Kernel, max: usize, types: &[TensorType]) -> bool {
    let read: usize = k
        .reads
        .iter()
        .map(|&v| types.get(v).map_or(usize::MAX, TensorType::num_elements))
        .fold(0, usize::saturating_add);
    max > 0
        && !k.single_block
        && read <= MAX_READ_ELEMENTS
        && if k.block_per_element {
            k.elements <= MAX_FOLD_ELEMENTS.min(max)
        } else {
            k.elements <= max
        }
}

/// `steps` (of a plan whose values have types `types`) with each sequence of two or more
/// small kernels (of at most `max` elements, or `MAX_FOLD_ELEMENTS` folds, each reading
/// at most `MAX_READ_ELEMENTS`; constants and aliases between them allowed) made one
/// one-block kernel; `max` 0 merges none.
///
/// ```
/// use quabla_abi::qir::Program;
/// let p = Program::parse("program(%0: f32[8]) {
///   %1 = exp(%0) : f32[8]
///   %2 = reduce[kind=sum, axes=[0]](%1) : f32[]
///   %3 = broadcast_in_dim[dims=[]](%2) : f32[8]
///   %4 = reduce[kind=max, axes=[0]](%1) : f32[]
///   return %2, %3, %4
/// }").unwrap();
/// // Four kernels (exp, the sum, the materialized broadcast, the max) are one launch.
/// let plan = quabla_cuda::plan::plan_with(&p, "k", 1024).unwrap();
/// let ks = plan.kernels();
/// assert_eq!(ks.len(), 1);
/// assert!(ks[0].single_block);
/// assert_eq!(quabla_cuda::plan::plan_with(&p, "k", 0).unwrap().kernels().len(), 4);
/// ```
pub fn merge(steps: Vec<Step>, max: usize, types: &[TensorType]) -> Vec<Step> {
    let fits = |k: &Kernel| fits(k, max, types);
    let mut out = Vec::with_capacity(steps.len());
    let mut group: Vec<Step> = Vec::new();
    for s in steps {
        let joins = match &s {
            Step::Kernel(k) => fits(k) && room_for(&group, k),
            Step::Alias { .. } | Step::Constant { .. } => !group.is_empty(),
            _ => false,
        };
        if !joins {
            flush(&mut group, &mut out);
            if matches!(&s, Step::Kernel(k) if fits(k)) {
                group.push(s);
                continue;
            }
            out.push(s);
            continue;
        }
        group.push(s);
    }
    flush(&mut group, &mut out);
    out
}

/// Whether `k` may join `group` without passing the folds', the parameters' or the
/// factorizations' shared memory bounds.
fn room_for(group: &[Step], k: &Kernel) -> bool {
    let kernels = || {
        group.iter().filter_map(|s| match s {
            Step::Kernel(k) => Some(k),
            _ => None,
        })
    };
    let folds = kernels().filter(|k| k.block_per_element).count() + k.block_per_element as usize;
    let params: usize = kernels()
        .map(|k| k.reads.len() + k.writes.len())
        .sum::<usize>()
        + k.reads.len()
        + k.writes.len();
    let scratch: usize = kernels().map(|k| k.shared_scratch).sum::<usize>() + k.shared_scratch;
    folds <= MAX_FOLDS
        && params <= MAX_PARAMS
        && scratch <= crate::kernels::factor::orthogonal::max_scratch()
}

/// Moves `group` to `out`: as it is with fewer than two kernels, else its constants, the
/// merged kernel, then its aliases.
fn flush(group: &mut Vec<Step>, out: &mut Vec<Step>) {
    let kernels = group
        .iter()
        .filter(|s| matches!(s, Step::Kernel(_)))
        .count();
    if kernels < 2 {
        out.append(group);
        return;
    }
    let steps = std::mem::take(group);
    let merged = one_kernel(&steps);
    let (mut constants, mut aliases) = (Vec::new(), Vec::new());
    for s in steps {
        match s {
            Step::Constant { .. } => constants.push(s),
            Step::Alias { .. } => aliases.push(s),
            _ => {}
        }
    }
    out.extend(constants);
    out.push(Step::Kernel(merged));
    out.extend(aliases);
}

/// The one-block kernel of `steps`' kernels, in order.
fn one_kernel(steps: &[Step]) -> Kernel {
    // The value each alias of the sequence stands for.
    let mut source_of: HashMap<usize, usize> = HashMap::new();
    let mut dtype: HashMap<usize, DType> = HashMap::new();
    let (mut reads, mut writes): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    let (mut functions, mut calls) = (String::new(), String::new());
    let (mut name, mut elements, mut fused, mut scratch) = (None, 0, 0, 0);
    for s in steps {
        let k = match s {
            Step::Alias { from, to } => {
                let root = source_of.get(from).copied().unwrap_or(*from);
                source_of.insert(*to, root);
                continue;
            }
            Step::Kernel(k) => k,
            _ => continue,
        };
        name.get_or_insert_with(|| format!("{}_b", k.name));
        for (&v, &t) in k.reads.iter().chain(&k.writes).zip(&k.param_types) {
            dtype.insert(source_of.get(&v).copied().unwrap_or(v), t);
        }
        let mut args = Vec::new();
        for &v in &k.reads {
            let v = source_of.get(&v).copied().unwrap_or(v);
            if writes.contains(&v) {
                args.push(format!("out{v}"));
            } else {
                if !reads.contains(&v) {
                    reads.push(v);
                }
                args.push(format!("in{v}"));
            }
        }
        args.extend(k.writes.iter().map(|w| format!("out{w}")));
        args.push(format!("{}ull", k.elements));
        calls.push_str(&format!(
            "  {}({});\n  __syncthreads();\n",
            k.name,
            args.join(", ")
        ));
        functions.push_str(&device_function(k));
        writes.extend(&k.writes);
        elements += k.elements;
        fused += k.fused;
        scratch += k.shared_scratch;
    }
    let name = name.unwrap_or_else(|| "one_block".into());
    let type_of = |v: &usize| dtype.get(v).copied().unwrap_or(DType::F32);
    let mut params: Vec<String> = reads
        .iter()
        .map(|v| format!("const {}* in{v}", c_type(type_of(v))))
        .collect();
    params.extend(
        writes
            .iter()
            .map(|v| format!("{}* out{v}", c_type(type_of(v)))),
    );
    params.push("unsigned long long n".into());
    let body = format!(
        "{functions}extern \"C\" __global__ void {name}({}) {{\n{calls}}}\n",
        params.join(", ")
    );
    Kernel {
        source: format!("{PRELUDE}\n{body}"),
        body,
        param_types: reads.iter().chain(&writes).map(type_of).collect(),
        name,
        reads,
        writes,
        elements,
        block_per_element: false,
        single_block: true,
        device_loop: false,
        gemm: None,
        fused,
        reuses: Vec::new(),
        shared_scratch: scratch,
    }
}

/// Kernel `k`'s function as a `__device__` function of the same name and parameters,
/// without `__restrict__` (see the module's comment).
fn device_function(k: &Kernel) -> String {
    k.body
        .replace(
            &format!("extern \"C\" __global__ void {}(", k.name),
            &format!("static __device__ __noinline__ void {}(", k.name),
        )
        .replace("__restrict__ ", "")
}

#[cfg(test)]
mod tests {
    use crate::emulate::{Emulated, Storage};
    use crate::plan::{plan_with, Step};
    use quabla_abi::qir::Program;
    use std::sync::Arc;

    /// A reduction, an alias of its result (a reshape), a run reading the alias by index,
    /// another reduction: one kernel whose third part reads the first part's result through
    /// the alias, and the alias after it for later readers; values as the nodes say (host
    /// emulation), and equal to the plan kernel by kernel.
    const CENTRED: &str = "program(%0: f32[2,4]) {
  %1 = reduce[kind=sum, axes=[1]](%0) : f32[2]
  %2 = reshape(%1) : f32[2,1]
  %3 = broadcast_in_dim[dims=[0,1]](%2) : f32[2,4]
  %4 = sub(%0, %3) : f32[2,4]
  %5 = reduce[kind=max, axes=[0,1]](%4) : f32[]
  return %2, %4, %5
}";

    #[test]
    fn an_alias_inside_a_merged_sequence_reads_its_source() {
        let p = Program::parse(CENTRED).unwrap();
        let merged = plan_with(&p, "t", 1024).unwrap();
        assert!(
            matches!(&merged.steps[..], [Step::Kernel(k), Step::Alias { from: 1, to: 2 }] if k.single_block),
            "{:#?}",
            merged.steps
        );
        let Step::Kernel(k) = &merged.steps[0] else {
            unreachable!()
        };
        assert_eq!(k.reads, vec![0]);
        assert!(k.body.contains("__syncthreads();"), "{}", k.body);
        assert!(!k.body.contains("__restrict__"), "{}", k.body);
        let x: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0, -1.0, 0.5, 8.0, 2.5];
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        let values = |one_block: usize| -> Vec<Vec<f32>> {
            let exe = Emulated::new_with(&p, one_block).unwrap();
            exe.run(vec![Arc::new(Storage::from_bytes(&bytes))])
                .unwrap()
                .iter()
                .map(|s| {
                    s.bytes()
                        .chunks(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect()
                })
                .collect()
        };
        let got = values(1024);
        let sums = [10.0f32, 10.0];
        let centred: Vec<f32> = x.iter().enumerate().map(|(i, v)| v - sums[i / 4]).collect();
        assert_eq!(got[0], sums.to_vec());
        assert_eq!(got[1], centred);
        assert_eq!(got[2], vec![-2.0]);
        assert_eq!(got, values(0), "merged and kernel by kernel agree");
    }

    /// A kernel of few elements that reads many (a sum of long rows) keeps its own launch,
    /// which spreads them over the grid; the light ones after it merge.
    #[test]
    fn a_kernel_reading_more_than_the_bound_is_not_merged() {
        let p = Program::parse(
            "program(%0: f32[500,40]) {
  %1 = reduce[kind=sum, axes=[1]](%0) : f32[500]
  %2 = exp(%1) : f32[500]
  %3 = reduce[kind=max, axes=[0]](%2) : f32[]
  return %2, %3
}",
        )
        .unwrap();
        let q = plan_with(&p, "t", 512).unwrap();
        let merged: Vec<bool> = q.kernels().iter().map(|k| k.single_block).collect();
        assert_eq!(merged, vec![false, true], "{:#?}", q.steps);
    }

    /// Past the bound, or alone, a kernel keeps its own launch.
    #[test]
    fn large_or_lone_kernels_are_not_merged() {
        let p = Program::parse(CENTRED).unwrap();
        let each = plan_with(&p, "t", 4).unwrap();
        assert!(each.kernels().iter().all(|k| !k.single_block));
        let lone = Program::parse(
            "program(%0: f32[8]) {
  %1 = exp(%0) : f32[8]
  return %1
}",
        )
        .unwrap();
        let q = plan_with(&lone, "t", 1024).unwrap();
        assert!(q.kernels().iter().all(|k| !k.single_block));
    }
}
