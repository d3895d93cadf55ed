//! Compiling a validated program into an execution plan: elementwise chains grouped into
//! fused steps, regions compiled once, `while` loops over scalars (and arrays read and
//! updated one element at a time) compiled to native code
//! (the compiled tier), and the step after which each value can be freed.

use crate::tensor::Storage;
use quabla_abi::qir::{Node, Op, Program, ValueId};
use quabla_abi::TensorType;
use std::collections::HashSet;
use std::sync::Arc;

#[cfg(not(target_arch = "wasm32"))]
pub use crate::native::NativeFunction;

/// wasm32 has no compiled tier yet (a wasm emitter of the loop IR is to come), so no plan
/// holds native code there.
#[cfg(target_arch = "wasm32")]
pub enum NativeFunction {}

#[cfg(target_arch = "wasm32")]
impl NativeFunction {
    /// # Safety
    /// Never called: no value of this type exists.
    pub unsafe fn call(&self, _: &[u64], _: &[*mut u8]) -> Vec<u64> {
        match *self {}
    }
    pub fn operands(&self) -> &[quabla_abi::loop_ir::Operand] {
        match *self {}
    }
    pub fn outputs(&self) -> &[quabla_abi::loop_ir::Operand] {
        match *self {}
    }
    pub fn arrays(&self) -> &[quabla_abi::loop_ir::ArrayDecl] {
        match *self {}
    }
    pub fn constant(&self, _: usize) -> Option<Arc<Storage>> {
        match *self {}
    }
    pub fn arena_offset(&self, _: usize) -> Option<usize> {
        match *self {}
    }
    pub fn arena_words(&self) -> usize {
        match *self {}
    }
}

/// Which tier runs a plan's loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The reference: every node interpreted.
    Interpreter,
    /// A program the loop IR covers whole runs as native code ([`compile_whole`]);
    /// otherwise as [`Tier::Loops`].
    Compiled,
    /// `while` nodes the loop IR covers run as native code; everything else is interpreted.
    Loops,
}

impl Tier {
    /// The tier `QUABLA_CPU_JIT` asks for: the interpreter for `0`, compiled loops only for
    /// `loops`, else compiled; and the interpreter wherever native code cannot run (wasm32).
    pub fn from_env() -> Tier {
        let asked = std::env::var("QUABLA_CPU_JIT").unwrap_or_default();
        if asked == "0" || cfg!(target_arch = "wasm32") {
            Tier::Interpreter
        } else if asked == "loops" {
            Tier::Loops
        } else {
            Tier::Compiled
        }
    }
}

/// A chain of elementwise nodes over one shape, run tile by tile with no full-size
/// temporaries for values used only inside the chain.
pub struct FusedGroup {
    /// Node indices, in program order.
    pub nodes: Vec<usize>,
    /// Element count shared by every node of the group.
    pub len: usize,
    /// Values defined in the group that later steps or the outputs need.
    pub exports: Vec<ValueId>,
    /// Where each node's operands come from, in the order of `nodes`.
    pub operands: Vec<Vec<GroupOperand>>,
    /// Position in `nodes` of the node defining each export.
    pub export_positions: Vec<usize>,
    /// After the node at each position, the positions of group-local values no later node
    /// of the group reads and the group does not export: a tile hands their buffers back at
    /// once, so it works in a few buffers that stay in cache instead of one per node.
    pub release_after: Vec<Vec<usize>>,
}

/// An operand of a node in a fused group, resolved when the plan is built so a tile does
/// not search for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GroupOperand {
    /// The result of the group's node at this position (a tile-sized piece).
    Local(usize),
    /// A value computed before the group (read whole or by tile).
    Outer(ValueId),
}

pub enum Step {
    Fused(FusedGroup),
    Node(usize),
}

pub struct Plan {
    pub program: Program,
    /// First result id of each node.
    pub first_ids: Vec<ValueId>,
    pub steps: Vec<Step>,
    /// Values that die after each step.
    pub free_after: Vec<Vec<ValueId>>,
    /// Compiled regions of each node (empty for non-region nodes).
    pub regions: Vec<Vec<Plan>>,
    /// The data of each node known before the run, made once (a loop body's constants are
    /// not rebuilt every iteration): constants, and what `fold.rs` computes from them.
    pub constants: Vec<Option<Arc<Storage>>>,
    /// Native code of each node the compiled tier covers.
    pub native: Vec<Option<NativeFunction>>,
    /// Native code for the whole program, with its output types, where the compiled tier
    /// covers all of it ([`compile_whole`]); the other fields then plan nothing.
    pub whole: Option<(NativeFunction, Vec<TensorType>)>,
}

/// The largest value, in elements, of a program compiled whole: beyond it the interpreter's
/// fused tiles (SIMD over rayon's threads) beat single-threaded element loops.
#[cfg(not(target_arch = "wasm32"))]
pub const WHOLE_PROGRAM_ELEMENTS: usize = 1 << 16;

/// Native code for all of `program` if the tier is compiled, the program runs a `while`
/// loop (the straight-line code around it then costs no interpreter step per node: an ODE
/// solve's initial step and read-out, a loop's tape set-up), no value of its own exceeds
/// [`WHOLE_PROGRAM_ELEMENTS`], and the loop IR covers it; `None` plans it node by node.
#[cfg(not(target_arch = "wasm32"))]
fn compile_whole(program: &Program, tier: Tier) -> Option<NativeFunction> {
    let loops = program
        .nodes
        .iter()
        .any(|n| matches!(n.op, Op::While { .. }));
    let small = program
        .value_types()
        .iter()
        .all(|t| t.num_elements() <= WHOLE_PROGRAM_ELEMENTS);
    if tier != Tier::Compiled || !loops || !small {
        return None;
    }
    compile_logged(
        quabla_abi::loop_ir::lower_program(program),
        "program compiled to native code",
        "program planned node by node",
    )
}

/// Native code for a lowered unit, or `None`; `QUABLA_CPU_JIT_LOG=1` says on stderr which
/// it got (`compiled`, or `declined` and why).
#[cfg(not(target_arch = "wasm32"))]
fn compile_logged(
    lowered: Result<quabla_abi::loop_ir::Function, quabla_abi::loop_ir::Declined>,
    compiled: &str,
    declined: &str,
) -> Option<NativeFunction> {
    let code = lowered
        .map_err(|e| e.to_string())
        .and_then(NativeFunction::compile);
    if std::env::var("QUABLA_CPU_JIT_LOG").is_ok_and(|v| v == "1") {
        match &code {
            Ok(_) => eprintln!("quabla-cpu: {compiled}"),
            Err(why) => eprintln!("quabla-cpu: {declined}: {why}"),
        }
    }
    code.ok()
}

#[cfg(target_arch = "wasm32")]
fn compile_whole(_: &Program, _: Tier) -> Option<NativeFunction> {
    None
}

/// Native code for `node` if the tier is compiled and the loop IR covers it (a `while` over
/// scalars, and arrays it reads and updates element by element); `None` keeps the
/// interpreter.
#[cfg(not(target_arch = "wasm32"))]
fn compile_native(node: &Node, tier: Tier) -> Option<NativeFunction> {
    if tier == Tier::Interpreter || !matches!(node.op, Op::While { .. }) {
        return None;
    }
    compile_logged(
        quabla_abi::loop_ir::lower_while(node),
        "while loop compiled to native code",
        "while loop interpreted",
    )
}

#[cfg(target_arch = "wasm32")]
fn compile_native(_: &Node, _: Tier) -> Option<NativeFunction> {
    None
}

/// The element count of the group `node` can join: elementwise nodes, and broadcasts a
/// tile can rebuild from the operand alone ([`repeats_operand`]: `x * 0.9`'s splat of a
/// scalar, `h + b`'s bias row), so the program holds no full-size copy.
fn group_key(node: &Node, types: &[&TensorType]) -> Option<usize> {
    ((node.op.is_elementwise() || repeats_operand(node, types)) && node.results.len() == 1)
        .then(|| node.results[0].num_elements())
}

/// Whether `node` is a broadcast whose result repeats its operand end to end
/// (`movement::repeats_operand`).
fn repeats_operand(node: &Node, types: &[&TensorType]) -> bool {
    let Op::BroadcastInDim { dims } = &node.op else {
        return false;
    };
    crate::movement::repeats_operand(types[node.operands[0].index()], dims, &node.results[0])
}

/// Whether each node's results are read by a node computed at run time (one without
/// `known` data) or are outputs of the program.
fn read_by_run(
    program: &Program,
    first_ids: &[ValueId],
    known: &[Option<Arc<Storage>>],
) -> Vec<bool> {
    let mut read = vec![false; program.num_values()];
    for o in &program.outputs {
        read[o.index()] = true;
    }
    for (node, k) in program.nodes.iter().zip(known) {
        if k.is_none() {
            for o in &node.operands {
                read[o.index()] = true;
            }
        }
    }
    program
        .nodes
        .iter()
        .zip(first_ids)
        .map(|(n, first)| (0..n.results.len()).any(|r| read[first.index() + r]))
        .collect()
}

/// The type of every value, inputs first.
fn value_types(program: &Program) -> Vec<&TensorType> {
    program
        .inputs
        .iter()
        .chain(program.nodes.iter().flat_map(|n| &n.results))
        .collect()
}

impl Plan {
    /// The plan of a validated program. Region nesting is bounded by the decoder's
    /// `MAX_REGION_DEPTH`, so the recursion into regions is.
    pub fn new(program: Program, tier: Tier) -> Plan {
        let first_ids = program.first_result_ids();
        if let Some(code) = compile_whole(&program, tier) {
            let n = program.nodes.len();
            return Plan {
                whole: Some((code, program.output_types())),
                first_ids,
                steps: Vec::new(),
                free_after: Vec::new(),
                regions: (0..n).map(|_| Vec::new()).collect(),
                constants: vec![None; n],
                native: (0..n).map(|_| None).collect(),
                program,
            };
        }
        let native: Vec<Option<NativeFunction>> = program
            .nodes
            .iter()
            .map(|n| compile_native(n, tier))
            .collect();
        // A node that runs natively needs no interpreted regions.
        let regions = program
            .nodes
            .iter()
            .zip(&native)
            .map(|(n, code)| match code {
                Some(_) => Vec::new(),
                None => {
                    n.op.regions()
                        .into_iter()
                        .map(|r| Plan::new(r.clone(), tier))
                        .collect()
                }
            })
            .collect();
        let types = value_types(&program);
        let mut constants = crate::fold::known_values(&program, &first_ids);
        // A broadcast a fused step can rebuild per tile stays a node when the run reads it,
        // so the step does not read a whole array of copies.
        let read = read_by_run(&program, &first_ids, &constants);
        for (i, node) in program.nodes.iter().enumerate() {
            if read[i] && repeats_operand(node, &types) {
                constants[i] = None;
            }
        }
        let read = read_by_run(&program, &first_ids, &constants);
        let mut steps = Vec::new();
        let mut open: Option<(usize, Vec<usize>)> = None;
        for (i, node) in program.nodes.iter().enumerate() {
            if constants[i].is_some() {
                // Known before the run: its own step hands out the data, and only where a
                // computed node or the outputs read it.
                if read[i] {
                    steps.push((usize::MAX, vec![i]));
                }
                continue;
            }
            let key = group_key(node, &types);
            if node.operands.is_empty() && key.is_none() {
                // A constant (or iota) depends on nothing, so it runs before the open group
                // rather than splitting it.
                steps.push((usize::MAX, vec![i]));
                continue;
            }
            match (key, &mut open) {
                (Some(k), Some((gk, nodes))) if *gk == k => nodes.push(i),
                (Some(k), _) => {
                    if let Some((len, nodes)) = open.take() {
                        steps.push((len, nodes));
                    }
                    open = Some((k, vec![i]));
                }
                (None, _) => {
                    if let Some((len, nodes)) = open.take() {
                        steps.push((len, nodes));
                    }
                    steps.push((usize::MAX, vec![i]));
                }
            }
        }
        if let Some(g) = open.take() {
            steps.push(g);
        }
        let mut plan = Plan {
            program,
            first_ids,
            steps: Vec::new(),
            free_after: Vec::new(),
            regions,
            constants,
            native,
            whole: None,
        };
        plan.steps = steps
            .into_iter()
            .flat_map(|(len, nodes)| plan.materialize_exported_splats(len, nodes))
            .map(|(len, nodes)| plan.make_step(len, nodes))
            .collect();
        plan.free_after = plan.liveness();
        plan
    }

    /// Whether a step other than the nodes `inside` (or the program's outputs) reads `v`.
    fn used_outside(&self, v: ValueId, inside: &HashSet<usize>) -> bool {
        self.program.outputs.contains(&v)
            || self
                .program
                .nodes
                .iter()
                .enumerate()
                .any(|(j, n)| !inside.contains(&j) && n.operands.contains(&v))
    }

    /// A splat that later steps read whole (a scalar broadcast fed to a matmul, say) is
    /// built once before the group: assembled from tiles it would cost as many buffers as
    /// tiles, every time a loop body runs.
    fn materialize_exported_splats(
        &self,
        len: usize,
        nodes: Vec<usize>,
    ) -> Vec<(usize, Vec<usize>)> {
        if len == usize::MAX {
            return vec![(len, nodes)];
        }
        let inside: HashSet<usize> = nodes.iter().copied().collect();
        let defined_inside = |v: ValueId| nodes.iter().any(|&i| self.first_ids[i] == v);
        let (before, rest): (Vec<usize>, Vec<usize>) = nodes.iter().partition(|&&i| {
            let node = &self.program.nodes[i];
            matches!(node.op, Op::BroadcastInDim { .. })
                && !defined_inside(node.operands[0])
                && self.used_outside(self.first_ids[i], &inside)
        });
        let mut steps: Vec<(usize, Vec<usize>)> =
            before.into_iter().map(|i| (usize::MAX, vec![i])).collect();
        if !rest.is_empty() {
            steps.push((len, rest));
        }
        steps
    }

    fn make_step(&self, len: usize, nodes: Vec<usize>) -> Step {
        if len == usize::MAX {
            return Step::Node(nodes[0]);
        }
        let inside: HashSet<usize> = nodes.iter().copied().collect();
        let defined: Vec<ValueId> = nodes.iter().map(|&i| self.first_ids[i]).collect();
        let position = |v: ValueId| defined.iter().position(|d| *d == v);
        let export_positions: Vec<usize> = (0..nodes.len())
            .filter(|&k| self.used_outside(defined[k], &inside))
            .collect();
        let operands: Vec<Vec<GroupOperand>> = nodes
            .iter()
            .map(|&i| {
                self.program.nodes[i]
                    .operands
                    .iter()
                    .map(|&o| position(o).map_or(GroupOperand::Outer(o), GroupOperand::Local))
                    .collect()
            })
            .collect();
        let mut last_read: Vec<Option<usize>> = vec![None; nodes.len()];
        for (pos, ops) in operands.iter().enumerate() {
            for o in ops {
                if let GroupOperand::Local(k) = o {
                    last_read[*k] = Some(pos);
                }
            }
        }
        let mut release_after = vec![Vec::new(); nodes.len()];
        for (k, last) in last_read.into_iter().enumerate() {
            if !export_positions.contains(&k) {
                // A value nothing reads is released right after it is made.
                release_after[last.unwrap_or(k)].push(k);
            }
        }
        Step::Fused(FusedGroup {
            exports: export_positions.iter().map(|&k| defined[k]).collect(),
            nodes,
            len,
            operands,
            export_positions,
            release_after,
        })
    }

    fn step_nodes(&self, s: &Step) -> Vec<usize> {
        match s {
            Step::Fused(g) => g.nodes.clone(),
            Step::Node(i) => vec![*i],
        }
    }

    fn liveness(&self) -> Vec<Vec<ValueId>> {
        let n = self.program.num_values();
        let mut last = vec![None; n];
        for (si, s) in self.steps.iter().enumerate() {
            for ni in self.step_nodes(s) {
                for o in &self.program.nodes[ni].operands {
                    last[o.index()] = Some(si);
                }
            }
        }
        for o in &self.program.outputs {
            last[o.index()] = None;
        }
        let mut free = vec![Vec::new(); self.steps.len()];
        for (v, l) in last.into_iter().enumerate() {
            if let Some(si) = l {
                free[si].push(ValueId(v as u32));
            }
        }
        free
    }
}
