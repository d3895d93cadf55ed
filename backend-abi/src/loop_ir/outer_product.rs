//! Inside a loop being lowered, `dot_general` whose contraction has one element (an outer
//! product, `k = 1`) becomes a broadcast multiply, as XLA's algebraic simplifier does:
//! reverse mode writes every weight gradient of a matrix-vector product this way. As a
//! multiply it is an element loop that fuses with the accumulation after it
//! (`dW + outer(delta, h)` is one loop) instead of a matrix-product call per iteration.
//! Outside loops the interpreter keeps the dot: its broadcasts are materialised, and a
//! batched gemm writes a vmapped outer product once (measured: per-example MLP gradients
//! 3x slower as broadcast multiplies).
//!
//! The result is the dot's bit for bit: a one-term sum is its term (the CPU backend's
//! matrix product returns a `-0.0` product as `-0.0`, not `-0.0 + 0.0`; `tests/passes.rs`
//! checks signed zeros, NaN, overflow and underflow against it).

use crate::qir::{BinaryOp, DotDims, Node, Op, Program, ValueId};
use crate::TensorType;

/// Rewrites every one-element-contraction `dot_general` of `p`, regions included.
///
/// ```
/// use quabla_abi::loop_ir::outer_products;
/// use quabla_abi::qir::Program;
/// let p = Program::parse(
///     "program(%0: f32[3,1], %1: f32[1,4]) {
///        %2 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %1) : f32[3,4]
///        return %2
///      }",
/// )
/// .unwrap();
/// let q = outer_products(&p);
/// assert!(q.op_names().contains(&"mul") && !q.op_names().contains(&"dot_general"));
/// ```
pub fn outer_products(p: &Program) -> Program {
    let types = p.value_types();
    let mut out = Builder {
        nodes: Vec::new(),
        next: p.inputs.len() as u32,
    };
    let mut map: Vec<ValueId> = (0..p.inputs.len() as u32).map(ValueId).collect();
    for node in &p.nodes {
        let operands: Vec<ValueId> = node.operands.iter().map(|o| map[o.index()]).collect();
        if let (Op::DotGeneral(d), [l, r]) = (&node.op, operands.as_slice()) {
            let (lt, rt) = (
                &types[node.operands[0].index()],
                &types[node.operands[1].index()],
            );
            if let Some(v) = out.outer_product(d, (*l, lt), (*r, rt), &node.results[0]) {
                map.push(v);
                continue;
            }
        }
        let regions = node.op.regions();
        let op = if regions.is_empty() {
            node.op.clone()
        } else {
            node.op
                .with_regions(regions.into_iter().map(outer_products).collect())
        };
        let first = out.push(op, operands, node.results.clone());
        map.extend((0..node.results.len() as u32).map(|r| ValueId(first.0 + r)));
    }
    Program {
        inputs: p.inputs.clone(),
        outputs: p.outputs.iter().map(|o| map[o.index()]).collect(),
        nodes: out.nodes,
    }
}

/// The rewritten program's nodes and its next free value id.
struct Builder {
    nodes: Vec<Node>,
    next: u32,
}

impl Builder {
    /// Appends a node; returns its first result.
    fn push(&mut self, op: Op, operands: Vec<ValueId>, results: Vec<TensorType>) -> ValueId {
        let first = ValueId(self.next);
        self.next += results.len() as u32;
        self.nodes.push(Node {
            op,
            operands,
            results,
        });
        first
    }

    fn one(&mut self, op: Op, operands: Vec<ValueId>, ty: TensorType) -> ValueId {
        self.push(op, operands, vec![ty])
    }

    /// The nodes computing `dot_general(l, r)` as a multiply, if its contraction has one
    /// element; `None` leaves the dot alone.
    fn outer_product(
        &mut self,
        d: &DotDims,
        l: (ValueId, &TensorType),
        r: (ValueId, &TensorType),
        result: &TensorType,
    ) -> Option<ValueId> {
        let k: usize = d.lhs_contract.iter().map(|&i| l.1.shape[i]).product();
        if k != 1 || !result.dtype.is_numeric() {
            return None;
        }
        let nb = d.lhs_batch.len();
        let l_free = free_dims(l.1.rank(), &d.lhs_batch, &d.lhs_contract);
        let r_free = free_dims(r.1.rank(), &d.rhs_batch, &d.rhs_contract);
        let l_dims: Vec<usize> = (0..nb + l_free.len()).collect();
        let r_dims: Vec<usize> = (0..nb)
            .chain(nb + l_free.len()..nb + l_free.len() + r_free.len())
            .collect();
        let lb = self.spread(l, [&d.lhs_batch, &l_free, &d.lhs_contract], &l_dims, result);
        let rb = self.spread(r, [&d.rhs_batch, &r_free, &d.rhs_contract], &r_dims, result);
        Some(self.one(Op::Binary(BinaryOp::Mul), vec![lb, rb], result.clone()))
    }

    /// One operand moved to the result's shape: its `[batch, free, contract]` dims in that
    /// order (a transpose, unless they are in order), its one-element contracting dims
    /// dropped (a reshape, if it has any), broadcast along the other operand's free dims.
    fn spread(
        &mut self,
        (v, t): (ValueId, &TensorType),
        [batch, free, contract]: [&[usize]; 3],
        dims: &[usize],
        result: &TensorType,
    ) -> ValueId {
        let perm: Vec<usize> = batch.iter().chain(free).chain(contract).copied().collect();
        let moved = TensorType {
            dtype: t.dtype,
            shape: perm.iter().map(|&i| t.shape[i]).collect(),
        };
        let in_order = perm.iter().enumerate().all(|(i, p)| i == *p);
        let moved = if in_order {
            v
        } else {
            self.one(Op::Transpose { perm }, vec![v], moved)
        };
        let kept = TensorType {
            dtype: t.dtype,
            shape: batch.iter().chain(free).map(|&i| t.shape[i]).collect(),
        };
        let kept = if contract.is_empty() {
            moved
        } else {
            self.one(Op::Reshape, vec![moved], kept)
        };
        self.one(
            Op::BroadcastInDim {
                dims: dims.to_vec(),
            },
            vec![kept],
            result.clone(),
        )
    }
}

/// The dims of a rank-`rank` operand that are neither batch nor contracting, in order.
fn free_dims(rank: usize, batch: &[usize], contract: &[usize]) -> Vec<usize> {
    (0..rank)
        .filter(|i| !batch.contains(i) && !contract.contains(i))
        .collect()
}
