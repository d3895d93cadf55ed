//! Elementwise fusion (`plan.rs` calls it): each run of consecutive elementwise nodes with
//! one element count becomes one CUDA kernel (a grid-stride loop over the flat index, the
//! intermediates in registers), which reads the values defined before the run and writes
//! only those used after it. Reshapes in a run are register copies; one-element nodes
//! join a run of any size (every thread computes them, one stores them). A
//! `broadcast_in_dim` read only by elementwise nodes is not materialized: its readers index
//! its root, so it costs no launch and does not split the run it sits in. A small
//! `dot_general` heads the run of its readers (`kernels::dot_in_run`). Runs follow the
//! order of `schedule.rs`, which puts elementwise nodes of one element count together where
//! the dependencies allow. A run whose one result only a `reduce` reads becomes that
//! reduction's prologue (`Prologue`): no kernel, no memory for it.

use crate::elementwise::{c_type, expression, PRELUDE};
use quabla_abi::qir::{Op, Program};
use quabla_abi::{DType, TensorType};
use std::collections::HashMap;

/// One generated kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The `extern "C"` entry point's name.
    pub name: String,
    /// The whole CUDA C source (prelude included).
    pub source: String,
    /// The kernel function alone (what follows the prelude in `source`).
    pub body: String,
    /// The parameters' dtypes: `reads` then `writes`.
    pub param_types: Vec<DType>,
    /// Values read, in parameter order (pointers), then values written.
    pub reads: Vec<usize>,
    pub writes: Vec<usize>,
    /// Elements of the region's shape: the loop's trip count (its last parameter).
    pub elements: usize,
    /// One block of threads per element, folding cooperatively in a fixed tree order
    /// (`kernels::block_fold`), instead of one thread per element: the launch gives it a
    /// power-of-two block of at most `kernels::FOLD_BLOCK` threads and a block per element.
    pub block_per_element: bool,
    /// Launched as one block (of a power of two of threads, at most `kernels::FOLD_BLOCK`):
    /// a sequence of small kernels made one (`one_block.rs`); `elements` is then the sum of
    /// its parts'.
    pub single_block: bool,
    /// Where the kernel is a `dot_general` that is a (batched) matrix product of row-major
    /// operands, its shape: the GPU runtime may run it on cuBLAS instead (the kernel stays the
    /// fallback, and what the host emulation runs).
    pub gemm: Option<crate::kernels::Gemm>,
    /// How many elementwise nodes the kernel computes (0: a kernel of another node).
    pub fused: usize,
    /// The kernel runs a whole `while` loop (`device_loop.rs`): its work is not its
    /// `elements`.
    pub device_loop: bool,
    /// Pairs `(read, write)` of a fused elementwise kernel where `write` may be computed into
    /// `read`'s memory: `read` is loaded only at the element's own index `i` and `write`
    /// stored there, after every load of the element, with the same dtype and element count
    /// (their pointers without `__restrict__`). The interpreter offers a read's memory where
    /// no later step reads it, and the executor takes it where nothing else holds it
    /// (`plan::Executor::launch_reusing`): a donated argument's memory becomes the output
    /// computed from it (Adam's parameters), and an intermediate's the next one's.
    pub reuses: Vec<(usize, usize)>,
    /// Shared memory (bytes) the kernel's factorizations keep as static arrays
    /// (`kernels::factor::orthogonal`): a kernel merging parts, or a loop kernel calling
    /// several, must stay within a block's static limit.
    pub shared_scratch: usize,
}

impl Kernel {
    /// An error unless `given` pointers are one per value parameter (reads, then writes and
    /// what an update writes in place), as a launch must pass them.
    pub fn check_pointers(&self, given: usize) -> Result<(), quabla_abi::abi::AbiError> {
        if given == self.param_types.len() {
            return Ok(());
        }
        Err(quabla_abi::abi::AbiError::internal(format!(
            "kernel `{}` takes {} pointers, given {given}",
            self.name,
            self.param_types.len()
        )))
    }
}

/// A `broadcast_in_dim` value that is never materialized: the elementwise kernels that read
/// it index its root (the first materialized value of a chain of broadcasts) instead. Per
/// root dimension, the value's dimension it runs along, or `None` where the root has one
/// element along it (coordinate 0).
#[derive(Clone, Debug)]
pub struct Broadcast {
    pub root: usize,
    pub map: Vec<Option<usize>>,
}

/// An elementwise run computed inside the kernel of the one `reduce` that reads its result
/// (`kernels::reduce`): a `__device__` function of the flat index, so the reduction computes
/// each element where it reads it and the run costs no launch and no memory.
#[derive(Clone, Debug)]
pub struct Prologue {
    /// The function's name and its source (placed before the kernel that calls it).
    pub name: String,
    pub function: String,
    /// The values it reads, in parameter order after the index, with their dtypes.
    pub reads: Vec<(usize, DType)>,
    /// How many elementwise nodes it computes.
    pub fused: usize,
}

impl Prologue {
    /// The call computing the element at flat index `index` (C), from the kernel's `in<v>`
    /// parameters.
    pub fn call(&self, index: &str) -> String {
        let args: Vec<String> = std::iter::once(format!("({index})"))
            .chain(self.reads.iter().map(|(v, _)| format!("in{v}")))
            .collect();
        format!("{}({})", self.name, args.join(", "))
    }
}

/// A fused run: its kernel, or its prologue where its one result is read by one `reduce`
/// only (that node's kernel computes it).
pub enum Run {
    Kernel(Kernel),
    Prologue { value: usize, prologue: Prologue },
}

/// What planning a program's fused runs needs to know of it.
pub struct Fusion<'a> {
    pub p: &'a Program,
    pub first: Vec<quabla_abi::qir::ValueId>,
    pub types: Vec<TensorType>,
    /// Per value, the index of the last node that reads it, directly or through broadcasts
    /// read by index (0 when none does).
    pub last_use: Vec<usize>,
    pub outputs: Vec<usize>,
    /// The broadcasts read by index, by value.
    pub broadcasts: HashMap<usize, Broadcast>,
    /// The nodes in planning order (`schedule::order`); `last_use` counts positions in it.
    pub order: Vec<usize>,
    /// Per value, the one node reading it (None: read by none or by several).
    pub sole_reader: Vec<Option<usize>>,
    /// Per node, whether it is a product that heads a fused run (`heads_run`).
    pub heads: Vec<bool>,
}

impl<'a> Fusion<'a> {
    /// `p` analysed: a broadcast whose every reader is an elementwise node (or another such
    /// broadcast) and that is no output is read by index, never materialized, so that it
    /// costs no kernel and does not split the elementwise run around it.
    pub fn new(p: &'a Program) -> Fusion<'a> {
        let types = p.value_types();
        let first = p.first_result_ids();
        let outputs: Vec<usize> = p.outputs.iter().map(|o| o.index()).collect();
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); types.len()];
        for (k, node) in p.nodes.iter().enumerate() {
            for o in &node.operands {
                readers[o.index()].push(k);
            }
        }
        // Last to first, so that a broadcast's readers are decided before it.
        let mut by_index = vec![false; p.nodes.len()];
        for k in (0..p.nodes.len()).rev() {
            let v = first[k].index();
            by_index[k] = matches!(p.nodes[k].op, Op::BroadcastInDim { .. })
                && !outputs.contains(&v)
                && !readers[v].is_empty()
                && readers[v]
                    .iter()
                    .all(|&r| by_index[r] || p.nodes[r].op.is_elementwise());
        }
        let mut broadcasts: HashMap<usize, Broadcast> = HashMap::new();
        for (k, node) in p.nodes.iter().enumerate() {
            let Op::BroadcastInDim { dims } = &node.op else {
                continue;
            };
            if !by_index[k] {
                continue;
            }
            let o = node.operands[0].index();
            let b = match broadcasts.get(&o) {
                Some(b) => Broadcast {
                    root: b.root,
                    map: b.map.iter().map(|m| m.map(|j| dims[j])).collect(),
                },
                None => Broadcast {
                    root: o,
                    map: types[o]
                        .shape
                        .iter()
                        .enumerate()
                        .map(|(j, &d)| (d != 1).then(|| dims[j]))
                        .collect(),
                },
            };
            broadcasts.insert(first[k].index(), b);
        }
        let free: Vec<bool> = (0..p.nodes.len())
            .map(|k| broadcasts.contains_key(&first[k].index()))
            .collect();
        let heads: Vec<bool> = p
            .nodes
            .iter()
            .enumerate()
            .map(|(k, node)| dot_head(node, first[k].index(), &types).is_some())
            .collect();
        let order = crate::schedule::order(p, &free, &heads);
        // A root is read where its broadcasts' readers run.
        let mut last_use = vec![0usize; types.len()];
        for (at, &k) in order.iter().enumerate() {
            for o in &p.nodes[k].operands {
                let v = o.index();
                last_use[v] = last_use[v].max(at);
                if let Some(b) = broadcasts.get(&v) {
                    last_use[b.root] = last_use[b.root].max(at);
                }
            }
        }
        let sole_reader = readers
            .iter()
            .map(|r| match r.as_slice() {
                [only] => Some(*only),
                _ => None,
            })
            .collect();
        Fusion {
            p,
            first,
            types,
            last_use,
            outputs,
            broadcasts,
            order,
            sole_reader,
            heads,
        }
    }

    /// Whether the node at position `at` of the order is a broadcast read by index (it makes
    /// no step).
    pub fn by_index(&self, at: usize) -> bool {
        self.broadcasts
            .contains_key(&self.first[self.order[at]].index())
    }

    /// The kernel of the elementwise run starting at position `start` of the order
    /// (following elementwise nodes and reshapes of the same element count, or of one
    /// element, passing over broadcasts read by index), and the run's end: it reads the
    /// values defined before the run (broadcasts through their roots) and writes those used
    /// after it or returned.
    pub fn fuse_run(&self, start: usize, name: &str) -> Result<(Run, usize), String> {
        let p = self.p;
        let node = |at: usize| &p.nodes[self.order[at]];
        // The run's element count: its first node's, or the first larger one where the run
        // began with one-element values (those join a run of any size). Nodes of other
        // shapes with as many elements join too: each value is read and written at its flat
        // index `i`, which means the same element of every value of one shape and follows a
        // reshape (row-major either side); broadcasts decode `i` in their own shape.
        let size = |at: usize| node(at).results[0].shape.iter().product::<usize>();
        let mut elements = size(start);
        let mut end = start + 1;
        while end < p.nodes.len() {
            if !self.by_index(end) {
                let (n, s) = (node(end), size(end));
                // Never into an empty run: its kernel is not launched, so a one-element
                // value computed there would never be stored.
                let joins = s == elements || (s == 1 && elements > 0) || (elements == 1 && s > 0);
                let elementwise = n.op.is_elementwise() || matches!(n.op, Op::Reshape);
                if !elementwise || !joins {
                    break;
                }
                if elements == 1 {
                    elements = s;
                }
            }
            end += 1;
        }
        let computed: Vec<usize> = (start..end)
            .filter(|&at| !self.by_index(at))
            .map(|at| self.order[at])
            .collect();
        let defined: Vec<usize> = computed.iter().map(|&j| self.first[j].index()).collect();
        // Parameters: values read element by element, then roots read by index (a head
        // product's operands too).
        let (mut direct, mut roots) = (Vec::new(), Vec::new());
        for &j in &computed {
            for o in &p.nodes[j].operands {
                let v = o.index();
                if matches!(p.nodes[j].op, Op::DotGeneral(_)) {
                    if !roots.contains(&v) {
                        roots.push(v);
                    }
                    continue;
                }
                match self.broadcasts.get(&v) {
                    Some(b) if !defined.contains(&b.root) && !roots.contains(&b.root) => {
                        roots.push(b.root)
                    }
                    Some(_) => {}
                    None if !defined.contains(&v) && !direct.contains(&v) => direct.push(v),
                    None => {}
                }
            }
        }
        let writes: Vec<usize> = defined
            .iter()
            .copied()
            .filter(|&v| self.outputs.contains(&v) || self.last_use[v] >= end)
            .collect();
        // Before `roots` loses the values also loaded element by element.
        let reuses = self.reuses(&direct, &roots, end, &writes);
        roots.retain(|r| !direct.contains(r));
        let reads: Vec<usize> = direct.iter().chain(&roots).copied().collect();
        let statements = self.region_body(&computed, &defined)?;
        if let [v] = writes[..] {
            if self.feeds_one_reduce(v) {
                let prologue = self.prologue(name, v, &reads, &direct, &statements, computed.len());
                return Ok((Run::Prologue { value: v, prologue }, end));
            }
        }
        let body = function(
            name,
            (&reads, &direct),
            &writes,
            &reuses,
            &self.types,
            &statements,
        );
        let kernel = Kernel {
            source: format!("{PRELUDE}\n{body}"),
            body,
            param_types: reads
                .iter()
                .chain(&writes)
                .map(|&v| self.types[v].dtype)
                .collect(),
            name: name.to_string(),
            reads,
            writes,
            elements,
            block_per_element: false,
            single_block: false,
            device_loop: false,
            shared_scratch: 0,
            gemm: None,
            fused: computed.len(),
            reuses,
        };
        Ok((Run::Kernel(kernel), end))
    }

    /// The `(read, write)` pairs of a run ending before position `end` whose write may take
    /// its read's memory ([`Kernel::reuses`]): a read loaded element by element (`direct`;
    /// not also read by index, as a broadcast's root or a product's operand in `indexed`),
    /// read by no node after the run and no output, paired with a value the run stores
    /// (`writes`) of the same dtype and element count (more than one: a one-element value
    /// is loaded at 0 and stored by one thread), each read and write in one pair at most.
    fn reuses(
        &self,
        direct: &[usize],
        indexed: &[usize],
        end: usize,
        writes: &[usize],
    ) -> Vec<(usize, usize)> {
        let elements = |v: usize| self.types[v].shape.iter().product::<usize>();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for &v in direct {
            let free = !indexed.contains(&v)
                && elements(v) > 1
                && self.last_use[v] < end
                && !self.outputs.contains(&v);
            if !free {
                continue;
            }
            let partner = writes.iter().copied().find(|&w| {
                self.types[w].dtype == self.types[v].dtype
                    && elements(w) == elements(v)
                    && !pairs.iter().any(|&(_, x)| x == w)
            });
            if let Some(w) = partner {
                pairs.push((v, w));
            }
        }
        pairs
    }

    /// Whether the node at position `at` is a `dot_general` small enough to head a fused
    /// run (`kernels::dot_in_run`): its kernel then computes its elementwise readers too.
    pub fn heads_run(&self, at: usize) -> bool {
        self.heads[self.order[at]]
    }

    /// Whether `v` is no output and read by one node only, a `reduce` of it.
    fn feeds_one_reduce(&self, v: usize) -> bool {
        !self.outputs.contains(&v)
            && self.sole_reader[v].is_some_and(|r| {
                let node = &self.p.nodes[r];
                matches!(node.op, Op::Reduce { .. }) && node.operands[0].index() == v
            })
    }

    /// The run computing `v` from `reads` (`direct` ones element by element) as a device
    /// function of the flat index `i`.
    fn prologue(
        &self,
        name: &str,
        v: usize,
        reads: &[usize],
        direct: &[usize],
        statements: &str,
        fused: usize,
    ) -> Prologue {
        let fname = format!("{name}_f");
        let params: Vec<String> = std::iter::once("unsigned long long i".to_string())
            .chain(
                reads
                    .iter()
                    .map(|&r| format!("const {}* __restrict__ in{r}", c_type(self.types[r].dtype))),
            )
            .collect();
        let loads: String = direct.iter().map(|&r| load(r, &self.types)).collect();
        let function = format!(
            "__device__ __forceinline__ {} {fname}({}) {{\n{loads}{statements}    return v{v};\n}}\n",
            c_type(self.types[v].dtype),
            params.join(", ")
        );
        Prologue {
            name: fname,
            function,
            reads: reads.iter().map(|&r| (r, self.types[r].dtype)).collect(),
            fused,
        }
    }

    /// The statements computing nodes `computed` into registers `v<id>`, each broadcast
    /// operand loaded by index before its first reader.
    fn region_body(&self, computed: &[usize], defined: &[usize]) -> Result<String, String> {
        let mut body = String::new();
        let mut loaded: Vec<usize> = Vec::new();
        for &j in computed {
            let node = &self.p.nodes[j];
            for o in &node.operands {
                let v = o.index();
                if let Some(b) = self.broadcasts.get(&v) {
                    if !loaded.contains(&v) {
                        loaded.push(v);
                        let ty = c_type(self.types[v].dtype);
                        let from = if defined.contains(&b.root) {
                            // A root computed in the run has its shape (the broadcast is
                            // the identity) or one element (every element's thread holds it):
                            // either way, its register.
                            format!("v{}", b.root)
                        } else {
                            let (root, own) = (&self.types[b.root].shape, &self.types[v].shape);
                            let index = root_index(b, root, own);
                            format!("in{}[{index}]", b.root)
                        };
                        body.push_str(&format!("    {ty} v{v} = {from};\n"));
                    }
                }
            }
            let id = self.first[j].index();
            match &node.op {
                Op::Reshape => {
                    let from = node.operands[0].index();
                    let ty = c_type(node.results[0].dtype);
                    body.push_str(&format!("    {ty} v{id} = v{from};\n"));
                    continue;
                }
                Op::DotGeneral(_) => {
                    let head = dot_head(node, id, &self.types)
                        .ok_or("a product too large to head a fused run")?;
                    body.push_str(&head);
                    continue;
                }
                _ => {}
            }
            let args: Vec<String> = node
                .operands
                .iter()
                .map(|o| format!("v{}", o.index()))
                .collect();
            let ty = self.types[node.operands[0].index()].dtype;
            let out = node.results[0].dtype;
            let e = expression(&node.op, &args, ty, out)?;
            body.push_str(&format!(
                "    {} v{} = {e};\n",
                c_type(out),
                self.first[j].index()
            ));
        }
        Ok(body)
    }
}

/// The root's element for element `i` of a value of `shape` that broadcasts it (`b`): the
/// root's coordinates taken from `i`'s along the mapped dimensions, as C.
fn root_index(b: &Broadcast, root_shape: &[usize], shape: &[usize]) -> String {
    let strides = |s: &[usize]| -> Vec<usize> {
        let mut st = vec![1usize; s.len()];
        for d in (0..s.len().saturating_sub(1)).rev() {
            st[d] = st[d + 1] * s[d + 1];
        }
        st
    };
    let (out_strides, root_strides) = (strides(shape), strides(root_shape));
    let terms: Vec<String> = b
        .map
        .iter()
        .enumerate()
        .filter_map(|(k, m)| {
            m.map(|d| {
                format!(
                    "(i / {}ull % {}ull) * {}ull",
                    out_strides[d], shape[d], root_strides[k]
                )
            })
        })
        .collect();
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}

/// The statements of `node` (result `id`) heading a fused run, where it is a `dot_general`
/// small enough (`kernels::dot_in_run`); `types`: the program's value types.
fn dot_head(node: &quabla_abi::qir::Node, id: usize, types: &[TensorType]) -> Option<String> {
    let Op::DotGeneral(d) = &node.op else {
        return None;
    };
    let operand = |k: usize| {
        let v = node.operands[k].index();
        (v, &types[v])
    };
    crate::kernels::dot_in_run(d, operand(0), operand(1), id, &node.results[0])
}

/// Whether a value of `shape` has one element: such elementwise nodes join a run of any
/// shape (they read only one-element values, loaded at index 0), which saves the launches
/// a solver loop's scalar arithmetic (times, step sizes, error ratios) would otherwise make
/// between its state's runs.
fn one_element(shape: &[usize]) -> bool {
    shape.iter().product::<usize>() == 1
}

/// The statement loading `v` read element by element: at the element's index `i`, or at 0
/// for a one-element value (in a run of its own size both are 0).
fn load(v: usize, types: &[TensorType]) -> String {
    let index = if one_element(&types[v].shape) {
        "0"
    } else {
        "i"
    };
    format!("    {} v{v} = in{v}[{index}];\n", c_type(types[v].dtype))
}

/// The kernel function: `reads` as pointer parameters (those in `direct` loaded element by
/// element at the top), then `writes`, then the element count. The pointers of a pair of
/// `reuses` may be one: they are not `__restrict__`, so the compiler keeps each element's
/// loads before its stores.
fn function(
    name: &str,
    (reads, direct): (&[usize], &[usize]),
    writes: &[usize],
    reuses: &[(usize, usize)],
    types: &[TensorType],
    body: &str,
) -> String {
    let restrict = |shared: bool| if shared { "" } else { "__restrict__ " };
    let mut params: Vec<String> = reads
        .iter()
        .map(|&v| {
            let shared = reuses.iter().any(|&(r, _)| r == v);
            format!(
                "const {}* {}in{v}",
                c_type(types[v].dtype),
                restrict(shared)
            )
        })
        .collect();
    params.extend(writes.iter().map(|&v| {
        let shared = reuses.iter().any(|&(_, w)| w == v);
        format!("{}* {}out{v}", c_type(types[v].dtype), restrict(shared))
    }));
    params.push("unsigned long long n".into());
    let loads: String = direct.iter().map(|&v| load(v, types)).collect();
    let stores: String = writes
        .iter()
        .map(|&v| {
            if one_element(&types[v].shape) {
                // A one-element value of a larger run: every element's thread computes it
                // (a few scalar operations, hoisted out of the loop), one stores it.
                format!("    if (i == 0) out{v}[0] = v{v};\n")
            } else {
                format!("    out{v}[i] = v{v};\n")
            }
        })
        .collect();
    format!(
        "extern \"C\" __global__ void {name}({}) {{\n  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {{\n{loads}{body}{stores}  }}\n}}\n",
        params.join(", ")
    )
}

/// Every program of `p`'s tree (itself, then its regions, depth first), with a name for
/// its kernels. Iterative: nesting is bounded by validation, but no recursion is needed.
pub fn programs(p: &Program) -> Vec<(String, &Program)> {
    let mut out = Vec::new();
    let mut stack = vec![("k".to_string(), p)];
    while let Some((name, q)) = stack.pop() {
        for (i, node) in q.nodes.iter().enumerate() {
            for (r, region) in node.op.regions().into_iter().enumerate().rev() {
                stack.push((format!("{name}_n{i}r{r}"), region));
            }
        }
        out.push((name, q));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain over one shape is one kernel that reads the values from before it and writes
    /// only what is used after it; a reduction ends the chain, and a new shape starts another.
    #[test]
    fn runs_of_one_shape_fuse_and_write_only_escaping_values() {
        let p = Program::parse(
            "program(%0: f32[8], %1: f32[8]) {
  %2 = mul(%0, %1) : f32[8]
  %3 = exp(%2) : f32[8]
  %4 = compare[dir=gt](%3, %1) : bool[8]
  %5 = select(%4, %3, %0) : f32[8]
  %6 = reduce[kind=sum, axes=[0]](%5) : f32[]
  %7 = neg(%6) : f32[]
  return %5, %7
}
",
        )
        .unwrap();
        // The fused run, the reduction's own kernel, then the next run.
        let ks = crate::plan::kernels(&p, "t").unwrap();
        assert_eq!(ks.len(), 3);
        assert_eq!(
            (ks[0].reads.clone(), ks[0].writes.clone()),
            (vec![0, 1], vec![5])
        );
        assert_eq!(ks[0].elements, 8);
        assert_eq!(
            (ks[2].reads.clone(), ks[2].writes.clone()),
            (vec![6], vec![7])
        );
        assert_eq!(ks[2].elements, 1);
        assert!(ks[0].source.contains("extern \"C\" __global__ void t_0("));
        assert!(ks[0].source.contains("float v3 = expf(v2);"));
        assert!(!ks[0].source.contains("out3["), "an intermediate is stored");
    }

    /// A broadcast read only by elementwise nodes (through another broadcast too) costs no
    /// kernel and does not split the run around it: its reader indexes the root. One read by
    /// another kind of node (here a reduction) is materialized.
    #[test]
    fn broadcasts_read_by_elementwise_nodes_are_indexed_not_materialized() {
        let p = Program::parse(
            "program(%0: f32[3], %1: f32[2,3], %2: f32[]) {
  %3 = exp(%1) : f32[2,3]
  %4 = broadcast_in_dim[dims=[1]](%0) : f32[2,3]
  %5 = broadcast_in_dim[dims=[]](%2) : f32[1,3]
  %6 = broadcast_in_dim[dims=[0,1]](%5) : f32[2,3]
  %7 = mul(%3, %4) : f32[2,3]
  %8 = add(%7, %6) : f32[2,3]
  %9 = broadcast_in_dim[dims=[0]](%0) : f32[3,2]
  %10 = reduce[kind=sum, axes=[0]](%9) : f32[2]
  return %8, %10
}
",
        )
        .unwrap();
        let ks = crate::plan::kernels(&p, "t").unwrap();
        // The fused run (exp, mul, add), the materialized broadcast, the reduction.
        assert_eq!(ks.len(), 3, "{ks:#?}");
        let run = &ks[0];
        assert_eq!(run.fused, 3);
        assert_eq!(
            (run.reads.clone(), run.writes.clone()),
            (vec![1, 0, 2], vec![8])
        );
        // %4 reads %0 along the run's second dimension; %6 reads the scalar %2 (through %5).
        assert!(
            run.body
                .contains("float v4 = in0[(i / 1ull % 3ull) * 1ull];"),
            "{}",
            run.body
        );
        assert!(run.body.contains("float v6 = in2[0];"), "{}", run.body);
        assert!(run.body.contains("float v1 = in1[i];") && !run.body.contains("in0[i]"));
        assert_eq!(ks[1].fused, 0);
        assert_eq!(ks[1].writes, vec![9]);
    }

    /// A run whose one result only a reduction reads is computed inside that reduction's
    /// kernel (no kernel of its own); a run whose result is also returned keeps its kernel.
    #[test]
    fn a_run_read_only_by_a_reduction_is_its_prologue() {
        let p = Program::parse(
            "program(%0: f32[100], %1: f32[], %2: f32[7]) {
  %3 = broadcast_in_dim[dims=[]](%1) : f32[100]
  %4 = mul(%0, %3) : f32[100]
  %5 = exp(%4) : f32[100]
  %6 = reduce[kind=sum, axes=[0]](%5) : f32[]
  %7 = sin(%2) : f32[7]
  %8 = reduce[kind=max, axes=[0]](%7) : f32[]
  return %6, %7, %8
}",
        )
        .unwrap();
        let ks = crate::plan::kernels(&p, "t").unwrap();
        // The sum with its prologue (mul and exp), the sin run (returned), the max.
        assert_eq!(ks.len(), 3, "{ks:#?}");
        let sum = ks.iter().find(|k| k.writes == vec![6]).unwrap();
        assert_eq!((sum.fused, sum.reads.clone()), (2, vec![0, 1]));
        assert!(
            sum.body.contains("__device__ __forceinline__ float t_1_f("),
            "{}",
            sum.body
        );
        assert!(sum.body.contains("(double)t_1_f(((r0)"), "{}", sum.body);
        let max = ks.iter().find(|k| k.writes == vec![8]).unwrap();
        assert_eq!((max.fused, max.reads.clone()), (0, vec![7]));
    }

    /// f32 values as an emulated buffer.
    fn f32s(v: &[f32]) -> std::sync::Arc<crate::emulate::Storage> {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::sync::Arc::new(crate::emulate::Storage::from_bytes(&bytes))
    }

    /// An emulated buffer's f32 values.
    fn read_f32s(s: &crate::emulate::Storage) -> Vec<f32> {
        s.bytes()
            .chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// A solver step's shape: scalar arithmetic on a step size (with constants between)
    /// feeding a state update. The one-element nodes join the state's run, constants
    /// included, as one kernel that stores the returned scalars from one thread.
    const SOLVER_STEP: &str = "program(%0: f32[8], %1: f32[8], %2: f32[]) {
  %3 = constant[value=[0.5]]() : f32[]
  %4 = mul(%2, %3) : f32[]
  %5 = broadcast_in_dim[dims=[]](%4) : f32[8]
  %6 = mul(%1, %5) : f32[8]
  %7 = add(%0, %6) : f32[8]
  %8 = constant[value=[2.0]]() : f32[]
  %9 = mul(%4, %8) : f32[]
  %10 = neg(%9) : f32[]
  return %7, %9, %10
}";

    #[test]
    fn one_element_nodes_join_a_larger_run() {
        let p = Program::parse(SOLVER_STEP).unwrap();
        let ks = crate::plan::kernels(&p, "t").unwrap();
        assert_eq!(ks.len(), 1, "{ks:#?}");
        let run = &ks[0];
        assert_eq!((run.fused, run.elements), (5, 8));
        assert_eq!(
            (run.reads.clone(), run.writes.clone()),
            // The schedule places the scalar chain first, the constants before all.
            (vec![2, 3, 8, 1, 0], vec![9, 10, 7])
        );
        assert!(run.body.contains("float v2 = in2[0];"), "{}", run.body);
        assert!(run.body.contains("float v1 = in1[i];"), "{}", run.body);
        assert!(
            run.body.contains("if (i == 0) out9[0] = v9;"),
            "{}",
            run.body
        );
        assert!(run.body.contains("float v5 = v4;"), "{}", run.body);
    }

    /// An empty run takes no one-element node: its kernel never runs, so they would never
    /// be stored.
    #[test]
    fn one_element_nodes_never_join_an_empty_run() {
        let p = Program::parse(
            "program(%0: f32[0], %1: f32[]) {
  %2 = exp(%0) : f32[0]
  %3 = neg(%1) : f32[]
  return %2, %3
}",
        )
        .unwrap();
        let ks = crate::plan::kernels(&p, "t").unwrap();
        let runs: Vec<(usize, usize)> = ks.iter().map(|k| (k.fused, k.elements)).collect();
        assert_eq!(runs, vec![(1, 0), (1, 1)]);
    }

    /// The same program run by the host emulation: the scalars stored once are right, and
    /// the state update read them in every element.
    #[test]
    fn a_joined_run_computes_what_the_nodes_say() {
        let p = Program::parse(SOLVER_STEP).unwrap();
        let exe = crate::emulate::Emulated::new(&p).unwrap();
        let y: Vec<f32> = (0..8).map(|k| k as f32).collect();
        let k: Vec<f32> = (0..8).map(|k| 1.0 - k as f32 / 4.0).collect();
        let out = exe.run(vec![f32s(&y), f32s(&k), f32s(&[0.25])]).unwrap();
        let want: Vec<f32> = y.iter().zip(&k).map(|(y, k)| y + k * 0.125).collect();
        assert_eq!(read_f32s(&out[0]), want);
        assert_eq!(read_f32s(&out[1]), vec![0.25]);
        assert_eq!(read_f32s(&out[2]), vec![-0.25]);
    }

    /// An MLP layer on one state: the small product heads the run of its readers (through
    /// a reshape, with the bias broadcast), so the layer is one kernel; values from the
    /// host emulation against the sums written out here.
    #[test]
    fn a_small_product_heads_the_run_of_its_readers() {
        let p = Program::parse(
            "program(%0: f32[1,3], %1: f32[3,4], %2: f32[4]) {
  %3 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %1) : f32[1,4]
  %4 = reshape(%3) : f32[4]
  %5 = add(%4, %2) : f32[4]
  %6 = tanh(%5) : f32[4]
  return %6
}",
        )
        .unwrap();
        let ks = crate::plan::kernels(&p, "t").unwrap();
        assert_eq!(ks.len(), 1, "{ks:#?}");
        assert_eq!((ks[0].fused, ks[0].elements), (4, 4));
        assert!(
            ks[0].gemm.is_none(),
            "a head product is the run's, not cuBLAS's"
        );
        assert_eq!(
            (ks[0].reads.clone(), ks[0].writes.clone()),
            (vec![2, 0, 1], vec![6])
        );
        let exe = crate::emulate::Emulated::new(&p).unwrap();
        let (x, w, b) = (
            [0.5f32, -1.0, 2.0],
            [
                0.1f32, 0.2, 0.3, 0.4, -0.5, 0.6, -0.7, 0.8, 0.9, -1.0, 1.1, -1.2,
            ],
            [0.0f32, 0.1, -0.2, 0.3],
        );
        let out = exe.run(vec![f32s(&x), f32s(&w), f32s(&b)]).unwrap();
        let got = read_f32s(&out[0]);
        for (j, g) in got.iter().enumerate() {
            // The plugin sums an f32 product in f64, in order, then rounds.
            let dot: f64 = (0..3).map(|k| x[k] as f64 * w[k * 4 + j] as f64).sum();
            let want = ((dot as f32) + b[j]).tanh();
            assert!((g - want).abs() <= 2.0 * f32::EPSILON, "{j}: {g} vs {want}");
        }
    }

    /// A product past `kernels::IN_RUN_MAX_TERMS` keeps its own kernel (and cuBLAS).
    #[test]
    fn a_large_product_keeps_its_kernel() {
        let p = Program::parse(
            "program(%0: f32[300], %1: f32[300]) {
  %2 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[], rhs_contract=[]](%0, %1) : f32[300,300]
  %3 = exp(%2) : f32[300,300]
  return %3
}",
        )
        .unwrap();
        let ks = crate::plan::kernels(&p, "t").unwrap();
        assert_eq!(ks.len(), 2, "{ks:#?}");
        assert_eq!((ks[0].fused, ks[1].fused), (0, 1));
    }

    /// Regions are walked without recursion, each program named by its path.
    #[test]
    fn programs_of_a_tree() {
        let p = Program::parse(
            "program(%0: i32[], %1: f32[]) {
  %2, %3 = while(%0, %1) : i32[], f32[] {
    cond(%0: i32[], %1: f32[]) {
      %2 = constant[value=[3]]() : i32[]
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: f32[]) {
      %2 = constant[value=[1]]() : i32[]
      %3 = add(%0, %2) : i32[]
      %4 = sin(%1) : f32[]
      return %3, %4
    }
    }
  return %2, %3
}
",
        )
        .unwrap();
        let names: Vec<String> = programs(&p).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["k", "k_n0r0", "k_n0r1"]);
        let body = programs(&p)[2].1;
        let ks = crate::plan::kernels(body, "b").unwrap();
        assert_eq!(ks.len(), 1, "add and sin share the scalar shape");
        assert_eq!(ks[0].writes, vec![3, 4]);
    }
}
