//! Fused elementwise kernels: one kernel per group of elementwise nodes over one shape,
//! values inside the group living in registers.

use super::{bindings, per_item, per_item_groups, KernelSource};
use crate::wgsl;
use quabla_abi::qir::{Node, Op};
use quabla_abi::{DType, TensorType};

/// The expression of one elementwise node over register values `args`.
pub fn expression(node: &Node, operand_types: &[DType], args: &[String]) -> String {
    let d = operand_types.first().copied().unwrap_or(DType::F32);
    let out = node.results[0].dtype;
    match &node.op {
        Op::Unary(u) => wgsl::unary(*u, d, &args[0]),
        Op::Binary(b) => wgsl::binary(*b, d, &args[0], &args[1]),
        Op::Compare(c) => wgsl::compare(*c, d, &args[0], &args[1]),
        Op::Select => format!("select({}, {}, {})", args[2], args[1], args[0]),
        Op::Convert => wgsl::convert(d, out, &args[0]),
        Op::Bitcast => wgsl::bitcast(out, &args[0]),
        other => unreachable!("`{}` is not elementwise", other.name()),
    }
}

/// One kernel computing `nodes` (elementwise, all of `shape`) element by element. `ids[k]`
/// is the value id of `nodes[k]`'s result; `writes` the ids stored to memory.
pub fn fused(
    nodes: &[&Node],
    ids: &[usize],
    operand_ids: &[Vec<usize>],
    types: &[TensorType],
    writes: &[usize],
) -> KernelSource {
    let mut reads: Vec<usize> = Vec::new();
    for ops in operand_ids {
        for &o in ops {
            if !ids.contains(&o) && !reads.contains(&o) {
                reads.push(o);
            }
        }
    }
    let n = nodes[0].results[0].num_elements();
    let mut body = String::new();
    for (k, &r) in reads.iter().enumerate() {
        let d = types[r].dtype;
        body.push_str(&format!(
            "  let v{r}: {} = {};\n",
            wgsl::reg(d),
            wgsl::load(d, &format!("in{k}[i]"))
        ));
    }
    for ((node, &id), ops) in nodes.iter().zip(ids).zip(operand_ids) {
        let args: Vec<String> = ops.iter().map(|o| format!("v{o}")).collect();
        let dts: Vec<DType> = ops.iter().map(|o| types[*o].dtype).collect();
        body.push_str(&format!(
            "  let v{id}: {} = {};\n",
            wgsl::reg(node.results[0].dtype),
            expression(node, &dts, &args)
        ));
    }
    for (k, &w) in writes.iter().enumerate() {
        body.push_str(&format!(
            "  out{k}[i] = {};\n",
            wgsl::save(types[w].dtype, &format!("v{w}"))
        ));
    }
    let rd: Vec<DType> = reads.iter().map(|r| types[*r].dtype).collect();
    let wd: Vec<DType> = writes.iter().map(|w| types[*w].dtype).collect();
    KernelSource {
        wgsl: per_item(&bindings(&rd, &wd), n, &body),
        reads,
        writes: writes.to_vec(),
        groups: per_item_groups(n),
    }
}
