//! Algebraic canonicalisation that cannot change a single bit of any result:
//! `x * 1`, `x / 1`, `x - 0`, `x + (-0.0)` (and `x + 0` for integers) become `x`; reshapes
//! to the same shape, identity transposes and broadcasts, and converts to the same dtype
//! disappear; reshape chains and transpose chains collapse. (`x + 0.0` is kept for floats:
//! `-0.0 + 0.0` is `+0.0`.) An outer product (a `dot_general` whose contraction has one
//! element) transposed to put the rhs's free dims first becomes the swapped product: each
//! element is one product either way, `a * b` or `b * a` (the same bits; only which of two
//! NaN operands' payloads survives may differ). Reverse mode writes every per-example
//! weight gradient this way, and the transpose of a vmapped outer product moved 16 MB
//! through strided copies per layer.

use super::rebuild;
use quabla_abi::qir::{BinaryOp, DotDims, Node, Op, Program, ValueId};
use quabla_abi::TensorType;
use quabla_abi::{DType, HostArray};
use std::collections::HashMap;

/// The value every element of a constant has, as bits, if they are all equal.
fn splat_bits(h: &HostArray) -> Option<u64> {
    let n = h.ty.num_elements();
    if n == 0 {
        return None;
    }
    let first = h.bits_at(0);
    (1..n).all(|i| h.bits_at(i) == first).then_some(first)
}

fn is_one(d: DType, bits: u64) -> bool {
    match d {
        DType::F32 => bits as u32 == 1.0f32.to_bits(),
        DType::F64 => bits == 1.0f64.to_bits(),
        DType::I32 | DType::U32 => bits as u32 == 1,
        DType::Bool => false,
    }
}

/// Zero that is an identity for addition: -0.0 for floats, 0 for integers.
fn is_additive_identity(d: DType, bits: u64) -> bool {
    match d {
        DType::F32 => bits as u32 == (-0.0f32).to_bits(),
        DType::F64 => bits == (-0.0f64).to_bits(),
        DType::I32 | DType::U32 => bits as u32 == 0,
        DType::Bool => false,
    }
}

fn is_zero(d: DType, bits: u64) -> bool {
    match d {
        DType::F32 => bits as u32 == 0,
        DType::F64 => bits == 0,
        DType::I32 | DType::U32 => bits as u32 == 0,
        DType::Bool => false,
    }
}

/// Rewrites `p` with the identities above; dropped nodes are left for DCE.
///
/// ```
/// use quabla_abi::qir::Program;
/// let p = Program::parse("program(%0: f32[2]) {\n  %1 = constant[value=[1.0]]() : f32[]\n  %2 = broadcast_in_dim[dims=[]](%1) : f32[2]\n  %3 = mul(%0, %2) : f32[2]\n  return %3\n}\n").unwrap();
/// let q = quabla::passes::dce(&quabla::passes::canonicalize(&p));
/// assert!(q.nodes.is_empty());
/// ```
pub fn canonicalize(p: &Program) -> Program {
    let first = p.first_result_ids();
    let mut producer: HashMap<u32, usize> = HashMap::new();
    for (ni, n) in p.nodes.iter().enumerate() {
        for r in 0..n.results.len() as u32 {
            producer.insert(first[ni].0 + r, ni);
        }
    }
    let types = p.value_types();
    let mut alias: HashMap<u32, u32> = HashMap::new();
    let resolve = |alias: &HashMap<u32, u32>, v: u32| alias.get(&v).copied().unwrap_or(v);
    // The splat value of a constant, seen through broadcasts.
    let splat = |v: u32, alias: &HashMap<u32, u32>| -> Option<u64> {
        let mut v = resolve(alias, v);
        loop {
            let node = &p.nodes[*producer.get(&v)?];
            match &node.op {
                Op::Constant(h) => return splat_bits(h),
                Op::BroadcastInDim { .. } => v = resolve(alias, node.operands[0].0),
                _ => return None,
            }
        }
    };
    let mut nodes: Vec<Node> = p.nodes.clone();
    let mut keep = vec![true; p.nodes.len()];
    for (ni, node) in p.nodes.iter().enumerate() {
        let mut ops: Vec<u32> = node.operands.iter().map(|o| resolve(&alias, o.0)).collect();
        // Collapse chains first: reshape(reshape(x)) and transpose(transpose(x)).
        if let [a] = ops.as_slice() {
            if let Some(&pi) = producer.get(a) {
                let prev = &nodes[pi];
                let inner = resolve(&alias, prev.operands.first().map(|o| o.0).unwrap_or(*a));
                match (&node.op, &prev.op) {
                    (Op::Reshape, Op::Reshape) => {
                        nodes[ni].operands = vec![quabla_abi::qir::ValueId(inner)];
                        ops = vec![inner];
                    }
                    (Op::Transpose { perm }, Op::Transpose { perm: first_perm }) => {
                        nodes[ni].op = Op::Transpose {
                            perm: perm.iter().map(|&i| first_perm[i]).collect(),
                        };
                        nodes[ni].operands = vec![quabla_abi::qir::ValueId(inner)];
                        ops = vec![inner];
                    }
                    _ => {}
                }
            }
        }
        if let (Op::Transpose { perm }, [a]) = (&nodes[ni].op, ops.as_slice()) {
            if let Some(&pi) = producer.get(a) {
                if let Some((dims, swapped)) = swapped_outer_product(&nodes[pi], perm, &types) {
                    nodes[ni].op = Op::DotGeneral(dims);
                    ops = swapped.iter().map(|v| resolve(&alias, v.0)).collect();
                    nodes[ni].operands = swapped;
                }
            }
        }
        let out = first[ni].0;
        let ty = node.results.first();
        let same_type = |v: u32| ty == Some(&types[v as usize]);
        let replace_with = match (&nodes[ni].op, ops.as_slice()) {
            (Op::Binary(BinaryOp::Mul), [a, b]) => {
                let d = types[*a as usize].dtype;
                if splat(*b, &alias).is_some_and(|c| is_one(d, c)) {
                    Some(*a)
                } else if splat(*a, &alias).is_some_and(|c| is_one(d, c)) {
                    Some(*b)
                } else {
                    None
                }
            }
            (Op::Binary(BinaryOp::Div), [a, b]) => splat(*b, &alias)
                .is_some_and(|c| is_one(types[*a as usize].dtype, c))
                .then_some(*a),
            (Op::Binary(BinaryOp::Sub), [a, b]) => splat(*b, &alias)
                .is_some_and(|c| is_zero(types[*a as usize].dtype, c))
                .then_some(*a),
            (Op::Binary(BinaryOp::Add), [a, b]) => {
                let d = types[*a as usize].dtype;
                if splat(*b, &alias).is_some_and(|c| is_additive_identity(d, c)) {
                    Some(*a)
                } else if splat(*a, &alias).is_some_and(|c| is_additive_identity(d, c)) {
                    Some(*b)
                } else {
                    None
                }
            }
            (Op::Reshape | Op::Convert | Op::BroadcastInDim { .. }, [a]) if same_type(*a) => {
                Some(*a)
            }
            (Op::Transpose { perm }, [a]) if perm.iter().enumerate().all(|(i, p)| i == *p) => {
                Some(*a)
            }
            _ => None,
        };
        if let Some(v) = replace_with {
            alias.insert(out, v);
            keep[ni] = false;
        }
    }
    let fixed = Program {
        inputs: p.inputs.clone(),
        nodes,
        outputs: p.outputs.clone(),
    };
    let mut out = rebuild(&fixed, &keep, &alias);
    for node in &mut out.nodes {
        let regions = node.op.regions();
        if !regions.is_empty() {
            node.op = node
                .op
                .with_regions(regions.into_iter().map(canonicalize).collect());
        }
    }
    out
}

/// `transpose[perm](dot)` as one `dot_general` with its operands swapped, if `dot` is an
/// outer product (a one-element contraction) and `perm` puts its rhs's free dims before its
/// lhs's (batch dims staying first): the dims and operands of the swapped product.
fn swapped_outer_product(
    dot: &Node,
    perm: &[usize],
    types: &[TensorType],
) -> Option<(DotDims, Vec<ValueId>)> {
    let (Op::DotGeneral(d), [a, b]) = (&dot.op, dot.operands.as_slice()) else {
        return None;
    };
    let (ta, tb) = (&types[a.index()], &types[b.index()]);
    let k: usize = d.lhs_contract.iter().map(|&i| ta.shape[i]).product();
    let (nb, nc) = (d.lhs_batch.len(), d.lhs_contract.len());
    let na = ta.rank().checked_sub(nb + nc)?;
    let nr = tb.rank().checked_sub(nb + nc)?;
    let swap: Vec<usize> = (0..nb)
        .chain(nb + na..nb + na + nr)
        .chain(nb..nb + na)
        .collect();
    (k == 1 && perm == swap.as_slice()).then(|| {
        let dims = DotDims {
            lhs_batch: d.rhs_batch.clone(),
            rhs_batch: d.lhs_batch.clone(),
            lhs_contract: d.rhs_contract.clone(),
            rhs_contract: d.lhs_contract.clone(),
        };
        (dims, vec![*b, *a])
    })
}
