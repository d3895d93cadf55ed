//! Running a program: each node becomes MLX graph nodes, built lazily in program order;
//! `cond` and `while` are driven from the host, evaluating their predicate (and a loop's
//! carry, so the graph does not grow with the trip count) once per decision. Constants are
//! made MLX arrays once, at compile time.

use crate::elementwise;
use crate::fusion::{self, Group};
use crate::movement;
use crate::reduce;
use crate::shim::{eval, MlxArray};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::{Node, Op, Program};
use quabla_abi::{DType, HostView, TensorType};
use std::sync::Arc;

type Value = Arc<MlxArray>;

/// A program ready to run: its constants made and its regions compiled, recursively (QIR
/// validation bounds the nesting at `qir::MAX_REGION_DEPTH`).
pub struct Block {
    program: Program,
    types: Vec<TensorType>,
    /// Per node: its value when it is a constant.
    constants: Vec<Option<Value>>,
    /// Per node: its compiled regions.
    regions: Vec<Vec<Block>>,
    /// Elementwise runs compiled with `mx::compile` (empty unless asked for), and per node
    /// the group that starts there.
    groups: Vec<Group>,
    group_at: Vec<Option<usize>>,
    /// Stands for a group's results that only the group reads (never read outside it).
    unread: Option<Value>,
}

impl Block {
    /// Prepares `program`; `fuse` compiles its elementwise runs (and its regions').
    pub fn new(program: &Program, fuse: bool) -> Result<Block, AbiError> {
        let mut constants = Vec::with_capacity(program.nodes.len());
        let mut regions = Vec::with_capacity(program.nodes.len());
        for node in &program.nodes {
            constants.push(match &node.op {
                Op::Constant(h) => Some(Arc::new(MlxArray::from_bytes(
                    h.ty.dtype,
                    &h.ty.shape,
                    &h.bytes,
                )?)),
                _ => None,
            });
            regions.push(
                node.op
                    .regions()
                    .into_iter()
                    .map(|r| Block::new(r, fuse))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        let types = program.value_types();
        let groups = if fuse {
            fusion::groups(program, &types)?
        } else {
            Vec::new()
        };
        let mut group_at = vec![None; program.nodes.len()];
        for (g, group) in groups.iter().enumerate() {
            group_at[group.nodes.start] = Some(g);
        }
        let unread = match groups.is_empty() {
            true => None,
            false => Some(Arc::new(elementwise::scalar(DType::Bool, 0.0)?)),
        };
        Ok(Block {
            types,
            program: program.clone(),
            constants,
            regions,
            groups,
            group_at,
            unread,
        })
    }

    pub fn output_types(&self) -> Vec<TensorType> {
        self.program.output_types()
    }

    /// Runs the program on `inputs`, returning its outputs (not yet evaluated).
    pub fn run(&self, inputs: Vec<Value>) -> Result<Vec<Value>, AbiError> {
        let mut values: Vec<Value> = inputs;
        let mut i = 0;
        while i < self.program.nodes.len() {
            if let Some(g) = self.group_at[i] {
                i = self.run_group(&self.groups[g], &mut values)?;
                continue;
            }
            let node = &self.program.nodes[i];
            let outs = self.node(i, node, &values)?;
            if outs.len() != node.results.len() {
                return Err(AbiError::internal(format!(
                    "`{}` gave {} results for {}",
                    node.op.name(),
                    outs.len(),
                    node.results.len()
                )));
            }
            values.extend(outs);
            i += 1;
        }
        Ok(self
            .program
            .outputs
            .iter()
            .map(|o| values[o.index()].clone())
            .collect())
    }

    /// Runs a compiled group, appending a value for each of its results; returns the index
    /// of the node after it.
    fn run_group(&self, group: &Group, values: &mut Vec<Value>) -> Result<usize, AbiError> {
        let outs = group.call(values)?;
        let unread = self
            .unread
            .as_ref()
            .ok_or_else(|| AbiError::internal("a group without its stand-in value"))?;
        let mut given = group.outputs().iter().zip(outs).peekable();
        for _ in group.nodes.clone() {
            let id = values.len();
            match given.next_if(|(o, _)| o.index() == id) {
                Some((_, v)) => values.push(Arc::new(v)),
                None => values.push(unread.clone()),
            }
        }
        Ok(group.nodes.end)
    }

    fn node(&self, i: usize, node: &Node, values: &[Value]) -> Result<Vec<Value>, AbiError> {
        // A host call may have no results, so it is made before `out` is read.
        if let Op::HostCallback { callback, .. } = &node.op {
            return self.host_call(*callback, node, values);
        }
        let x = |k: usize| -> &MlxArray { &values[node.operands[k].index()] };
        let ty = |k: usize| -> &TensorType { &self.types[node.operands[k].index()] };
        let out = &node.results[0];
        let one = |r: Result<MlxArray, AbiError>| r.map(|a| vec![Arc::new(a)]);
        match &node.op {
            Op::Constant(_) => Ok(vec![self.constants[i]
                .clone()
                .ok_or_else(|| AbiError::internal("a constant that was not made"))?]),
            Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Select | Op::Convert => {
                let xs: Vec<&MlxArray> = (0..node.operands.len()).map(x).collect();
                let tys: Vec<&TensorType> = (0..node.operands.len()).map(ty).collect();
                one(elementwise::apply(&node.op, &xs, &tys, out))
            }
            Op::Bitcast => one(x(0).view(out.dtype)),
            Op::Iota { dim } => one(movement::iota(*dim, out)),
            Op::BroadcastInDim { dims } => {
                one(movement::broadcast_in_dim(x(0), &ty(0).shape, dims, out))
            }
            Op::Reshape => one(x(0).reshape(&out.shape)),
            Op::Transpose { perm } => one(x(0).transpose(perm)),
            Op::Slice {
                start,
                limit,
                strides,
            } => one(slice(x(0), ty(0), start, limit, strides, out)),
            Op::Pad {
                low,
                high,
                interior,
            } => one(movement::pad(x(0), x(1), ty(0), low, high, interior)),
            Op::Concatenate { dim } => {
                let parts: Vec<&MlxArray> = (0..node.operands.len()).map(x).collect();
                one(MlxArray::concatenate(&parts, *dim))
            }
            Op::Reverse { dims } => {
                let mut r = x(0).view(out.dtype)?;
                for &d in dims {
                    r = r.flip(d)?;
                }
                Ok(vec![Arc::new(r)])
            }
            Op::Reduce { kind, axes } => one(reduce::reduce(x(0), *kind, axes, ty(0), out)),
            Op::Cumulative {
                kind,
                axis,
                reverse,
            } => one(reduce::cumulative(x(0), *kind, *axis, *reverse, out)),
            Op::DotGeneral(d) => one(reduce::dot_general(x(0), x(1), ty(0), ty(1), d, out)),
            Op::Gather(d) => one(movement::gather(x(0), x(1), ty(0), &ty(1).shape, d, out)),
            Op::ScatterAdd(d) => one(movement::scatter_add(
                x(0),
                x(1),
                x(2),
                ty(0),
                &ty(1).shape,
                &ty(2).shape,
                d,
            )),
            Op::DynamicSlice { sizes } => {
                let starts: Vec<&MlxArray> = (1..node.operands.len()).map(x).collect();
                one(movement::dynamic_slice(x(0), &starts, ty(0), sizes))
            }
            Op::DynamicUpdateSlice => {
                let starts: Vec<&MlxArray> = (2..node.operands.len()).map(x).collect();
                one(movement::dynamic_update_slice(
                    x(0),
                    x(1),
                    &starts,
                    ty(0),
                    &ty(1).shape,
                ))
            }
            Op::Cond { .. } => self.cond(i, node, values),
            Op::While { .. } => self.while_loop(i, node, values),
            Op::Sort {
                axis,
                num_keys,
                descending,
            } => {
                let all: Vec<&MlxArray> = (0..node.operands.len()).map(x).collect();
                if out.shape[*axis] < 2 {
                    return Ok(node
                        .operands
                        .iter()
                        .map(|v| values[v.index()].clone())
                        .collect());
                }
                let perm = MlxArray::sort_permutation(&all[..*num_keys], *axis, *descending)?;
                all.iter()
                    .map(|a| a.take_along_axis(&perm, *axis).map(Arc::new))
                    .collect()
            }
            Op::Linalg(op) => {
                let args: Vec<&MlxArray> = (0..node.operands.len()).map(x).collect();
                let types: Vec<&TensorType> = (0..node.operands.len()).map(ty).collect();
                Ok(crate::linalg::linalg(*op, &args, &types, &node.results)?
                    .into_iter()
                    .map(Arc::new)
                    .collect())
            }
            Op::HostCallback { .. } => Err(AbiError::internal("host calls are made above")),
            Op::StopGradient
            | Op::CustomJvp { .. }
            | Op::CustomVjp { .. }
            | Op::CustomVjpLinear { .. }
            | Op::Checkpoint { .. }
            | Op::NamedAxis { .. }
            | Op::Scan { .. }
            | Op::BoundedWhile { .. }
            | Op::LinearSolve { .. } => Err(declined(node)),
        }
    }

    /// The operands' values read back to the host, the host function called, its results
    /// made MLX arrays (the call runs on the executing thread, holding MLX's lock).
    fn host_call(
        &self,
        callback: u64,
        node: &Node,
        values: &[Value],
    ) -> Result<Vec<Value>, AbiError> {
        let types: Vec<&TensorType> = node
            .operands
            .iter()
            .map(|o| &self.types[o.index()])
            .collect();
        let bytes = node
            .operands
            .iter()
            .zip(&types)
            .map(|(o, t)| values[o.index()].to_bytes(t.size_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        let views: Vec<HostView<'_>> = types
            .iter()
            .zip(&bytes)
            .map(|(t, b)| HostView {
                ty: (*t).clone(),
                bytes: b,
            })
            .collect();
        quabla_abi::plugin::call_host(callback, &views, &node.results)?
            .iter()
            .map(|h| MlxArray::from_bytes(h.ty.dtype, &h.ty.shape, &h.bytes).map(Arc::new))
            .collect()
    }

    fn cond(&self, i: usize, node: &Node, values: &[Value]) -> Result<Vec<Value>, AbiError> {
        let branches = &self.regions[i];
        let index = read_scalar(
            &values[node.operands[0].index()],
            &self.types[node.operands[0].index()],
        )?;
        // An out-of-range index runs the last branch.
        let b = usize::try_from(index)
            .ok()
            .filter(|&b| b < branches.len())
            .unwrap_or(branches.len() - 1);
        let args = node.operands[1..]
            .iter()
            .map(|v| values[v.index()].clone())
            .collect();
        branches[b].run(args)
    }

    fn while_loop(&self, i: usize, node: &Node, values: &[Value]) -> Result<Vec<Value>, AbiError> {
        let [cond, body] = &self.regions[i][..] else {
            return Err(AbiError::internal("a while without two regions"));
        };
        let mut carry: Vec<Value> = node
            .operands
            .iter()
            .map(|v| values[v.index()].clone())
            .collect();
        let pred_ty = TensorType::new(DType::Bool, vec![]);
        loop {
            let go = cond.run(carry.clone())?;
            let go = go
                .first()
                .ok_or_else(|| AbiError::internal("a while condition returned nothing"))?;
            if read_scalar(go, &pred_ty)? == 0 {
                return Ok(carry);
            }
            carry = body.run(carry)?;
            // Compute the carry now: left lazy, the graph would grow by a body per trip.
            eval(&carry.iter().map(|c| &**c).collect::<Vec<_>>())?;
        }
    }
}

fn declined(node: &Node) -> AbiError {
    AbiError::unimplemented(format!(
        "the MLX plugin does not run `{}` (it is not in its capabilities)",
        node.op.name()
    ))
}

/// A strided slice; MLX wants `stop` past the last element taken, which `limit` already is.
fn slice(
    x: &MlxArray,
    ty: &TensorType,
    start: &[usize],
    limit: &[usize],
    strides: &[usize],
    out: &TensorType,
) -> Result<MlxArray, AbiError> {
    if out.num_elements() == 0 {
        return crate::elementwise::scalar(ty.dtype, 0.0)?.broadcast_to(&out.shape);
    }
    x.slice(start, limit, strides)
}

/// Reads a bool or i32 scalar back to the host.
fn read_scalar(a: &MlxArray, ty: &TensorType) -> Result<i64, AbiError> {
    let bytes = a.to_bytes(ty.size_bytes())?;
    Ok(match bytes.len() {
        1 => bytes[0] as i64,
        4 => i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as i64,
        n => return Err(AbiError::internal(format!("a {n}-byte predicate"))),
    })
}
