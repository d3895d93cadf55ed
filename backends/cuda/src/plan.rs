//! A program as steps: constants, kernels (a fused elementwise run, or one other node),
//! aliases (a reshape is the same bytes), dense factorizations (library calls, not
//! kernels), host callbacks (operands read back, the host's function called, its results
//! uploaded), and `cond`/`while` decided on the host with their regions planned alike
//! (nesting is bounded by QIR's validation).

use crate::fusion::{Fusion, Kernel};
use crate::kernels::node_kernel;
use quabla_abi::qir::{LinalgOp, Op, Program};
use quabla_abi::TensorType;

/// One step of a plan.
#[derive(Debug)]
pub enum Step {
    Constant {
        value: usize,
        bytes: Vec<u8>,
    },
    Kernel(Kernel),
    /// `kernel` writes into `target`'s own buffer, which is then `result`'s: a
    /// `dynamic_update_slice` of a value nothing else reads, its update written in place
    /// (`kernel.writes` is empty; the buffer is its parameter after the reads). An
    /// executor copies the target first where something else still holds it (a lent
    /// input), a graph where the target is not a buffer of its own kernels'.
    Update {
        kernel: Kernel,
        target: usize,
        result: usize,
    },
    Alias {
        from: usize,
        to: usize,
    },
    /// A dense factorization (or triangular solve) of `operands`.
    Linalg {
        op: LinalgOp,
        operands: Vec<usize>,
        results: Vec<usize>,
    },
    /// The host's function `callback` on `operands`, in program order.
    HostCallback {
        callback: u64,
        operands: Vec<usize>,
        results: Vec<usize>,
    },
    /// Runs branch `index` (clamped to the last) on `operands`.
    Cond {
        index: usize,
        operands: Vec<usize>,
        branches: Vec<Plan>,
        results: Vec<usize>,
    },
    /// Every branch of a `cond` inside a loop run on `operands`, and `pick` choosing the
    /// results of branch `index` (`speculate.rs`): no wait for the index.
    Speculate {
        index: usize,
        operands: Vec<usize>,
        branches: Vec<Plan>,
        pick: Kernel,
        results: Vec<usize>,
    },
    /// Runs `body` while `cond` says so, on the carry; `in_place` is how a run in place
    /// goes (`in_place.rs`).
    While {
        carry: Vec<usize>,
        cond: Box<Plan>,
        body: Box<Plan>,
        in_place: Box<crate::in_place::InPlaceLoop>,
        results: Vec<usize>,
    },
}

/// A program's steps, with its value types and outputs.
#[derive(Debug)]
pub struct Plan {
    pub types: Vec<TensorType>,
    pub num_inputs: usize,
    pub steps: Vec<Step>,
    pub outputs: Vec<usize>,
    /// Per step, the values released after it ([`Plan::release_after`]), found at the
    /// first run (the steps are final by then).
    release: std::sync::OnceLock<Vec<Vec<usize>>>,
}

impl Step {
    /// The values this step reads from its plan (a region's inner values are its own).
    pub fn reads(&self) -> Vec<usize> {
        match self {
            Step::Constant { .. } => Vec::new(),
            Step::Kernel(k) => k.reads.clone(),
            Step::Update { kernel, target, .. } => {
                kernel.reads.iter().copied().chain([*target]).collect()
            }
            Step::Alias { from, .. } => vec![*from],
            Step::Linalg { operands, .. } | Step::HostCallback { operands, .. } => operands.clone(),
            Step::Cond {
                index, operands, ..
            }
            | Step::Speculate {
                index, operands, ..
            } => std::iter::once(*index)
                .chain(operands.iter().copied())
                .collect(),
            Step::While { carry, .. } => carry.clone(),
        }
    }

    /// The values this step defines.
    pub fn defines(&self) -> Vec<usize> {
        match self {
            Step::Constant { value, .. } => vec![*value],
            Step::Kernel(k) => k.writes.clone(),
            Step::Alias { to, .. } => vec![*to],
            Step::Update { result, .. } => vec![*result],
            Step::Speculate { pick, .. } => pick.writes.clone(),
            Step::Linalg { results, .. }
            | Step::HostCallback { results, .. }
            | Step::Cond { results, .. }
            | Step::While { results, .. } => results.clone(),
        }
    }
}

impl Plan {
    /// A plan of `steps` over values of `types` (the first `num_inputs` its inputs).
    pub fn new(
        types: Vec<TensorType>,
        num_inputs: usize,
        steps: Vec<Step>,
        outputs: Vec<usize>,
    ) -> Plan {
        Plan {
            types,
            num_inputs,
            steps,
            outputs,
            release: std::sync::OnceLock::new(),
        }
    }

    /// Per step, the values that no later step reads and that are not outputs: [`run`]
    /// drops them after it, so a value's memory goes back to the executor (on a GPU, to the
    /// stream-ordered pool, behind the kernels already queued on it) once its last reader
    /// is queued, rather than when the program ends. An input nothing reads is released
    /// after the first step; a donated input the caller no longer holds is then freed too.
    pub fn release_after(&self) -> &[Vec<usize>] {
        self.release.get_or_init(|| {
            let n = self.types.len();
            // The last step reading each value, else the step defining it.
            let mut last: Vec<Option<usize>> = vec![None; n];
            last.iter_mut()
                .take(self.num_inputs)
                .for_each(|l| *l = Some(0));
            for (at, s) in self.steps.iter().enumerate() {
                for v in s.defines().into_iter().chain(s.reads()) {
                    if let Some(l) = last.get_mut(v) {
                        *l = Some(at);
                    }
                }
            }
            let mut release = vec![Vec::new(); self.steps.len()];
            for (v, l) in last.into_iter().enumerate() {
                if let Some(at) = l.filter(|_| !self.outputs.contains(&v)) {
                    if let Some(r) = release.get_mut(at) {
                        r.push(v);
                    }
                }
            }
            release
        })
    }

    /// Every kernel of the plan and its regions' plans, depth first.
    pub fn kernels(&self) -> Vec<&Kernel> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            for s in &p.steps {
                match s {
                    Step::Kernel(k) | Step::Update { kernel: k, .. } => out.push(k),
                    Step::Cond { branches, .. } => stack.extend(branches.iter()),
                    Step::Speculate { branches, pick, .. } => {
                        out.push(pick);
                        stack.extend(branches.iter());
                    }
                    Step::While {
                        cond,
                        body,
                        in_place,
                        ..
                    } => {
                        out.push(&in_place.freeze);
                        stack.push(cond);
                        stack.push(body);
                        stack.extend(in_place.body.as_ref());
                    }
                    Step::Constant { .. }
                    | Step::Alias { .. }
                    | Step::Linalg { .. }
                    | Step::HostCallback { .. } => {}
                }
            }
        }
        out
    }
}

/// The plan of `p`, or the name of the first op no kernel covers yet.
pub fn plan(p: &Program, prefix: &str) -> Result<Plan, String> {
    plan_with(p, prefix, crate::one_block::max_elements())
}

/// `plan`, merging consecutive kernels of at most `one_block` elements into one-block
/// kernels (`one_block.rs`; 0 merges none) where `plan` takes the bound from the
/// environment. A program running a loop may be one kernel whole
/// (`device_loop::plan_program`), its `while` loops one kernel each (`device_loop::plan`).
pub fn plan_with(p: &Program, prefix: &str, one_block: usize) -> Result<Plan, String> {
    if let Some(whole) = crate::device_loop::plan_program(p, prefix) {
        return Ok(whole);
    }
    plan_node_by_node(p, prefix, one_block)
}

/// `plan_with`, never making the whole program one device kernel (each `while` may still
/// be one).
pub(crate) fn plan_node_by_node(
    p: &Program,
    prefix: &str,
    one_block: usize,
) -> Result<Plan, String> {
    plan_in(p, prefix, false, one_block)
}

/// `plan`, for a program inside a loop's region where `in_loop`.
fn plan_in(p: &Program, prefix: &str, in_loop: bool, one_block: usize) -> Result<Plan, String> {
    let (mut plan, missing) = steps(p, prefix, true, in_loop, one_block)?;
    if let Some(op) = missing.first() {
        return Err(op.to_string());
    }
    plan.steps = crate::one_block::merge(std::mem::take(&mut plan.steps), one_block, &plan.types);
    Ok(plan)
}

/// The plan of a loop's `body` as an in-place run runs it where some carries are windows
/// (`carried`): without the windows' `dynamic_update_slice`s, a window's result being its
/// carry as it came (the freeze kernel writes the window), and each window's update and
/// starts returned after the carries.
fn windowed_body(
    body: &Program,
    prefix: &str,
    carried: &[crate::in_place::Carried],
    one_block: usize,
) -> Result<Plan, String> {
    let (mut plan, missing) = steps(body, prefix, true, true, one_block)?;
    if let Some(op) = missing.first() {
        return Err(op.to_string());
    }
    let first = body.first_result_ids();
    let mut dropped = Vec::new();
    for (j, c) in carried.iter().enumerate() {
        if let crate::in_place::Carried::Window { node, .. } = c {
            dropped.push(first[*node].index());
            if let Some(o) = plan.outputs.get_mut(j) {
                *o = j;
            }
        }
    }
    plan.steps
        .retain(|s| !s.defines().iter().any(|v| dropped.contains(v)));
    plan.outputs.extend(
        carried
            .iter()
            .flat_map(crate::in_place::Carried::window_reads),
    );
    plan.steps = crate::one_block::merge(std::mem::take(&mut plan.steps), one_block, &plan.types);
    Ok(plan)
}

/// Every kernel of `p` itself this compiler covers (for the compile test, which walks the
/// regions on its own), skipping the rest.
pub fn kernels(p: &Program, prefix: &str) -> Result<Vec<Kernel>, String> {
    Ok(steps(p, prefix, false, false, 0)?
        .0
        .steps
        .into_iter()
        .filter_map(|s| match s {
            Step::Kernel(k) | Step::Update { kernel: k, .. } => Some(k),
            _ => None,
        })
        .collect())
}

/// The steps this compiler can make, and the names of the ops it cannot (yet); regions are
/// planned when `regions` (their small kernels merged as `one_block` says), a `cond`
/// speculated when `in_loop` (a loop's region) allows.
fn steps(
    p: &Program,
    prefix: &str,
    regions: bool,
    in_loop: bool,
    one_block: usize,
) -> Result<(Plan, Vec<&'static str>), String> {
    let fusion = Fusion::new(p);
    let (types, first) = (&fusion.types, &fusion.first);
    let (mut steps, mut missing) = (Vec::new(), Vec::new());
    // Values steps add beyond the program's (a device loop's scratch and constants).
    let mut new_types: Vec<TensorType> = Vec::new();
    // Runs computed inside the reduction that reads them, by the value they compute.
    let mut prologues: std::collections::HashMap<usize, crate::fusion::Prologue> =
        std::collections::HashMap::new();
    let updatable = updatable(p);
    let mut at = 0;
    while at < p.nodes.len() {
        let k = fusion.order[at];
        let node = &p.nodes[k];
        let id = first[k].index();
        let name = format!("{prefix}_{k}");
        if fusion.by_index(at) {
            // Read by index where it is used: no step of its own.
            at += 1;
            continue;
        }
        if node.op.is_elementwise() || fusion.heads_run(at) {
            match fusion.fuse_run(at, &name)? {
                (crate::fusion::Run::Kernel(kernel), end) => {
                    steps.push(Step::Kernel(kernel));
                    at = end;
                }
                (crate::fusion::Run::Prologue { value, prologue }, end) => {
                    prologues.insert(value, prologue);
                    at = end;
                }
            }
            continue;
        }
        let operands: Vec<usize> = node.operands.iter().map(|o| o.index()).collect();
        let results: Vec<usize> = (id..id + node.results.len()).collect();
        match &node.op {
            Op::Constant(h) => steps.push(Step::Constant {
                value: id,
                bytes: h.bytes.clone(),
            }),
            Op::Reshape => steps.push(Step::Alias {
                from: operands[0],
                to: id,
            }),
            // Small matrices on the plugin's own kernels, the rest on cuSOLVER.
            Op::Linalg(op) => steps.push(
                match crate::kernels::factor::kernel(
                    &name,
                    op,
                    &operands,
                    &results,
                    types,
                    crate::kernels::factor::max_order(),
                ) {
                    Some(k) => Step::Kernel(k),
                    None => Step::Linalg {
                        op: *op,
                        operands,
                        results,
                    },
                },
            ),
            Op::HostCallback { callback, .. } => steps.push(Step::HostCallback {
                callback: *callback,
                operands,
                results,
            }),
            Op::Cond { branches } if regions => {
                let branches = branches
                    .iter()
                    .enumerate()
                    .map(|(j, b)| plan_in(b, &format!("{name}b{j}"), in_loop, one_block))
                    .collect::<Result<Vec<_>, _>>()?;
                let speculate = in_loop
                    && branches.iter().all(crate::speculate::device_only)
                    && branches.iter().map(crate::speculate::work).sum::<usize>()
                        <= crate::speculate::MAX_ELEMENTS;
                let (index, operands) = (operands[0], operands[1..].to_vec());
                steps.push(if speculate {
                    Step::Speculate {
                        pick: crate::speculate::pick_kernel(
                            &format!("{name}p"),
                            types[index].dtype,
                            branches.len(),
                            &results,
                            types,
                        ),
                        index,
                        operands,
                        branches,
                        results,
                    }
                } else {
                    Step::Cond {
                        index,
                        operands,
                        branches,
                        results,
                    }
                });
            }
            Op::While { cond, body } if regions => {
                let first_new = types.len() + new_types.len();
                match crate::device_loop::plan(
                    &format!("{name}d"),
                    node,
                    &operands,
                    &results,
                    first_new,
                ) {
                    Ok(d) => {
                        steps.extend(d.steps);
                        new_types.extend(d.new_types);
                    }
                    Err(_) => {
                        let cond = Box::new(plan_in(cond, &format!("{name}c"), true, one_block)?);
                        let carry_types: Vec<TensorType> =
                            operands.iter().map(|&v| types[v].clone()).collect();
                        let body_plan =
                            Box::new(plan_in(body, &format!("{name}w"), true, one_block)?);
                        // Only loops of device work alone run in place: the others need no
                        // second body.
                        let carried = if crate::loops::kernels_only(&cond)
                            && crate::loops::kernels_only(&body_plan)
                        {
                            crate::in_place::carried(body)
                        } else {
                            vec![crate::in_place::Carried::Next; carry_types.len()]
                        };
                        let in_place = crate::in_place::InPlaceLoop::new(
                            &format!("{name}z"),
                            cond.types[cond.outputs[0]].dtype,
                            &carry_types,
                            carried,
                            |carried| windowed_body(body, &format!("{name}v"), carried, one_block),
                        )?;
                        steps.push(Step::While {
                            carry: operands,
                            in_place: Box::new(in_place),
                            cond,
                            body: body_plan,
                            results,
                        })
                    }
                }
            }
            op => {
                if results.iter().all(|&r| types[r].num_elements() == 0) {
                    // Nothing to compute, and the index rules' bounds (an axis's length
                    // less a window's) would not hold on an empty operand.
                    steps.extend(results.iter().map(|&value| Step::Constant {
                        value,
                        bytes: Vec::new(),
                    }));
                    at += 1;
                    continue;
                }
                if let (Op::DynamicUpdateSlice, Some(&target)) = (op, operands.first()) {
                    if updatable[target]
                        && types[operands[1]].num_elements() < types[target].num_elements()
                    {
                        steps.push(Step::Update {
                            kernel: crate::kernels::update_kernel(&name, &operands, types, id),
                            target,
                            result: id,
                        });
                        at += 1;
                        continue;
                    }
                }
                // A long sort or a scatter-add of many windows: several kernels, adding
                // values.
                let first_new = types.len() + new_types.len();
                if let Some((several, added)) =
                    crate::kernels::node_steps(&name, node, &operands, types, id, first_new)
                {
                    steps.extend(several);
                    new_types.extend(added);
                    at += 1;
                    continue;
                }
                match node_kernel(
                    &name,
                    node,
                    &operands,
                    types,
                    id,
                    // Only a `reduce` reading a run's one result finds one
                    // (`Fusion::fuse_run`).
                    operands.first().and_then(|v| prologues.get(v)),
                )? {
                    Some(kernel) => steps.push(Step::Kernel(kernel)),
                    None => missing.push(op.name()),
                }
            }
        }
        at += 1;
    }
    Ok((
        Plan::new(
            [types.as_slice(), &new_types].concat(),
            p.inputs.len(),
            steps,
            fusion.outputs.clone(),
        ),
        missing,
    ))
}

/// Per value of `p`, whether a `dynamic_update_slice` of it may write into its buffer: it is
/// read by that node alone, is no output, and is an input or has a buffer of its own that a
/// step computed (no constant, uploaded once, no reshape, sharing its operand's bytes). An
/// input is written where it is only where the caller donated it: a lent one is still
/// held, so `Executor::launch_updating` copies it first (and a graph, whose inputs are its
/// own copies or a loop's carry, copies it into a buffer of the result's).
fn updatable(p: &Program) -> Vec<bool> {
    let mut ok = vec![false; p.num_values()];
    ok.iter_mut().take(p.inputs.len()).for_each(|o| *o = true);
    let uses = p.reads();
    for (node, first) in p.nodes.iter().zip(p.first_result_ids()) {
        let own = !matches!(node.op, Op::Constant(_) | Op::Reshape);
        for r in 0..node.results.len() {
            let v = first.index() + r;
            if let Some(o) = ok.get_mut(v) {
                *o = own;
            }
        }
    }
    for o in &p.outputs {
        if let Some(x) = ok.get_mut(o.index()) {
            *x = false;
        }
    }
    ok.iter()
        .zip(&uses)
        .map(|(&own, &u)| own && u == 1)
        .collect()
}

/// Per write of `k`, the position in `k.reads` of the read whose memory it takes in
/// [`Executor::launch_reusing`]: its pair's read, where `alone` says the launch holds that
/// read alone and the read has at least the write's bytes.
pub(crate) fn reused_reads(
    k: &Kernel,
    types: &[TensorType],
    alone: impl Fn(usize) -> bool,
) -> Vec<Option<usize>> {
    k.writes
        .iter()
        .map(|&w| {
            let &(v, _) = k.reuses.iter().find(|&&(_, x)| x == w)?;
            let r = k.reads.iter().position(|&x| x == v)?;
            (alone(r) && types[v].size_bytes() >= types[w].size_bytes()).then_some(r)
        })
        .collect()
}

/// Where a plan's values live and its kernels run (the GPU, or the host emulation).
pub trait Executor {
    type Value: Clone;
    /// The value of constant `value` of `plan` (its bytes given).
    fn constant(
        &self,
        plan: &Plan,
        value: usize,
        bytes: &[u8],
    ) -> Result<Self::Value, quabla_abi::abi::AbiError>;
    /// Runs kernel `k` on `reads`: its results, by value id.
    fn launch(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Self::Value],
    ) -> Result<Vec<(usize, Self::Value)>, quabla_abi::abi::AbiError>;
    /// Runs `k` on `reads`, its `writes` allocated and returned as [`Executor::launch`]
    /// returns them, and its parameters after those written into `updated`'s own memory
    /// (a value held elsewhere too is copied first, so no other holder sees the write): a
    /// loop's freeze kernel writing windows of its carry (`in_place.rs`), a
    /// [`Step::Update`].
    fn launch_updating(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Self::Value],
        updated: &mut [Self::Value],
    ) -> Result<Vec<(usize, Self::Value)>, quabla_abi::abi::AbiError>;
    /// `launch`, with `reads` handed over: each write `w` of a pair `(v, w)` of
    /// `k.reuses` is computed into `v`'s memory where `reads` holds `v` alone (nothing else
    /// can see the write), that memory then being `w`'s; elsewhere `w` gets memory of its
    /// own. The default never reuses.
    fn launch_reusing(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: Vec<Self::Value>,
    ) -> Result<Vec<(usize, Self::Value)>, quabla_abi::abi::AbiError> {
        self.launch(k, types, &reads)
    }
    /// A value's bytes read back (waits for what computes it).
    fn read(&self, v: &Self::Value, ty: &TensorType) -> Result<Vec<u8>, quabla_abi::abi::AbiError>;
    /// A value made of `bytes` (`ty`'s layout).
    fn write(&self, bytes: &[u8]) -> Result<Self::Value, quabla_abi::abi::AbiError>;
    /// The results (of types `results`) of factorization `op` on `operands` (of types
    /// `types`); declined where the executor has no solver (the host emulation).
    fn linalg(
        &self,
        op: &LinalgOp,
        _operands: &[Self::Value],
        _types: &[&TensorType],
        _results: &[TensorType],
    ) -> Result<Vec<Self::Value>, quabla_abi::abi::AbiError> {
        Err(quabla_abi::abi::AbiError::unimplemented(format!(
            "`{}` needs cuSOLVER, which this executor does not have",
            op.name()
        )))
    }
    /// A `while` loop run as a whole (`key` names it for caches: its step's address, stable
    /// while the plan lives), where this executor runs it better than `loops::run_while`
    /// does (in place, as `in_place` says); `None` to leave it to that.
    fn whole_loop(
        &self,
        _key: usize,
        _cond: &Plan,
        _body: &Plan,
        _in_place: &crate::in_place::InPlaceLoop,
        _carry: &[Self::Value],
    ) -> Option<Result<Vec<Self::Value>, quabla_abi::abi::AbiError>> {
        None
    }
    /// A bool or i32 scalar read back (a branch index, a loop's predicate).
    fn scalar(&self, v: &Self::Value, ty: &TensorType) -> Result<i64, quabla_abi::abi::AbiError>;
    /// Several scalars read back (a batch of loop predicates): one wait where the executor
    /// can queue the copies.
    fn scalars(
        &self,
        vs: &[(&Self::Value, &TensorType)],
    ) -> Result<Vec<i64>, quabla_abi::abi::AbiError> {
        vs.iter().map(|(v, ty)| self.scalar(v, ty)).collect()
    }
}

/// Runs `plan` on `inputs` with `e`; regions recurse, as deep as QIR's validation lets
/// programs nest.
pub fn run<E: Executor>(
    e: &E,
    plan: &Plan,
    inputs: Vec<E::Value>,
) -> Result<Vec<E::Value>, quabla_abi::abi::AbiError> {
    use quabla_abi::abi::AbiError;
    let mut values: Vec<Option<E::Value>> = vec![None; plan.types.len()];
    for (k, v) in inputs.into_iter().enumerate().take(plan.num_inputs) {
        values[k] = Some(v);
    }
    let get = |values: &[Option<E::Value>], v: usize| {
        values[v]
            .clone()
            .ok_or_else(|| AbiError::internal(format!("%{v} read before it was computed")))
    };
    let all = |values: &[Option<E::Value>], vs: &[usize]| {
        vs.iter()
            .map(|&v| get(values, v))
            .collect::<Result<Vec<_>, _>>()
    };
    let release = plan.release_after();
    for (at, step) in plan.steps.iter().enumerate() {
        match step {
            Step::Constant { value, bytes } => {
                values[*value] = Some(e.constant(plan, *value, bytes)?)
            }
            Step::Alias { from, to } => values[*to] = Some(get(&values, *from)?),
            Step::Update {
                kernel,
                target,
                result,
            } => {
                let reads = all(&values, &kernel.reads)?;
                // Taken, not cloned: nothing else reads the target (`updatable`), so the
                // executor writes it where it is unless another holder has it too.
                let mut target = [values[*target].take().ok_or_else(|| {
                    AbiError::internal(format!("%{target} read before it was computed"))
                })?];
                e.launch_updating(kernel, &plan.types, &reads, &mut target)?;
                let [updated] = target;
                values[*result] = Some(updated);
            }
            Step::Kernel(k) if !k.reuses.is_empty() => {
                let reads = all(&values, &k.reads)?;
                // A read no later step needs is handed over with `reads`, so that the
                // executor may write into it where it was the run's alone.
                for &(v, _) in &k.reuses {
                    if release[at].contains(&v) {
                        values[v] = None;
                    }
                }
                for (v, out) in e.launch_reusing(k, &plan.types, reads)? {
                    values[v] = Some(out);
                }
            }
            Step::Kernel(k) => {
                let reads = all(&values, &k.reads)?;
                for (v, out) in e.launch(k, &plan.types, &reads)? {
                    values[v] = Some(out);
                }
            }
            Step::Linalg {
                op,
                operands,
                results,
            } => {
                let types: Vec<&TensorType> = operands.iter().map(|&v| &plan.types[v]).collect();
                let result_types: Vec<TensorType> =
                    results.iter().map(|&r| plan.types[r].clone()).collect();
                let outs = e.linalg(op, &all(&values, operands)?, &types, &result_types)?;
                store(&mut values, results, outs)?;
            }
            Step::HostCallback {
                callback,
                operands,
                results,
            } => {
                let outs = host_callback(
                    e,
                    plan,
                    *callback,
                    &all(&values, operands)?,
                    operands,
                    results,
                )?;
                store(&mut values, results, outs)?;
            }
            Step::Cond {
                index,
                operands,
                branches,
                results,
            } => {
                let i = e.scalar(&get(&values, *index)?, &plan.types[*index])?;
                // An out-of-range index runs the last branch.
                let b = usize::try_from(i)
                    .ok()
                    .filter(|&b| b < branches.len())
                    .unwrap_or(branches.len() - 1);
                let outs = run(e, &branches[b], all(&values, operands)?)?;
                for (&r, v) in results.iter().zip(outs) {
                    values[r] = Some(v);
                }
            }
            Step::Speculate {
                index,
                operands,
                branches,
                pick,
                results: _,
            } => {
                let mut reads = vec![get(&values, *index)?];
                for b in branches {
                    reads.extend(run(e, b, all(&values, operands)?)?);
                }
                for (v, out) in e.launch(pick, &plan.types, &reads)? {
                    values[v] = Some(out);
                }
            }
            Step::While {
                carry,
                cond,
                body,
                in_place,
                results,
            } => {
                let carry = all(&values, carry)?;
                let key = step as *const Step as usize;
                let c = match e.whole_loop(key, cond, body, in_place, &carry) {
                    Some(done) => done?,
                    None => crate::loops::run_while(e, cond, body, carry)?.0,
                };
                for (&r, v) in results.iter().zip(c) {
                    values[r] = Some(v);
                }
            }
        }
        for &v in &release[at] {
            values[v] = None;
        }
    }
    all(&values, &plan.outputs)
}

/// `outs` stored as the values `results`, which they must match in number.
fn store<V>(
    values: &mut [Option<V>],
    results: &[usize],
    outs: Vec<V>,
) -> Result<(), quabla_abi::abi::AbiError> {
    if outs.len() != results.len() {
        return Err(quabla_abi::abi::AbiError::internal(format!(
            "a step gave {} results for {}",
            outs.len(),
            results.len()
        )));
    }
    for (&r, v) in results.iter().zip(outs) {
        values[r] = Some(v);
    }
    Ok(())
}

/// The host's function `callback` on `reads` (the values `operands` of `plan`): their bytes
/// read back, the function called through the plugin kit, its results written back.
fn host_callback<E: Executor>(
    e: &E,
    plan: &Plan,
    callback: u64,
    reads: &[E::Value],
    operands: &[usize],
    results: &[usize],
) -> Result<Vec<E::Value>, quabla_abi::abi::AbiError> {
    let bytes = reads
        .iter()
        .zip(operands)
        .map(|(v, &o)| e.read(v, &plan.types[o]))
        .collect::<Result<Vec<_>, _>>()?;
    let views: Vec<quabla_abi::HostView<'_>> = operands
        .iter()
        .zip(&bytes)
        .map(|(&o, b)| quabla_abi::HostView {
            ty: plan.types[o].clone(),
            bytes: b,
        })
        .collect();
    let types: Vec<TensorType> = results.iter().map(|&r| plan.types[r].clone()).collect();
    quabla_abi::plugin::call_host(callback, &views, &types)?
        .iter()
        .map(|h| e.write(h.view().bytes))
        .collect()
}

#[cfg(test)]
mod reuse_tests;
#[cfg(test)]
mod tests;
