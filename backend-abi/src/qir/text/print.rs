//! Printing QIR as text, in the canonical form the parser reads back exactly.

use crate::qir::{LinalgOp, Node, Op, Program};
use crate::{DType, HostArray};
use std::fmt::Write;

/// Prints a program in the canonical text form.
pub fn print(p: &Program) -> String {
    let mut out = String::new();
    print_region(&mut out, "program", p, 0);
    out
}

fn print_region(out: &mut String, head: &str, p: &Program, indent: usize) {
    let pad = "  ".repeat(indent);
    let params: Vec<String> = p
        .inputs
        .iter()
        .enumerate()
        .map(|(i, t)| format!("%{i}: {t}"))
        .collect();
    let _ = writeln!(out, "{pad}{head}({}) {{", params.join(", "));
    let mut next = p.inputs.len();
    for node in &p.nodes {
        print_node(out, node, next, indent + 1);
        next += node.results.len();
    }
    let outs: Vec<String> = p.outputs.iter().map(|o| o.to_string()).collect();
    let _ = writeln!(out, "{pad}  return {}", outs.join(", "));
    let _ = writeln!(out, "{pad}}}");
}

fn list<T: ToString>(xs: &[T]) -> String {
    let v: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
    format!("[{}]", v.join(","))
}

fn print_node(out: &mut String, node: &Node, first_id: usize, indent: usize) {
    let pad = "  ".repeat(indent);
    let lhs = if node.results.is_empty() {
        "()".to_string()
    } else {
        (0..node.results.len())
            .map(|i| format!("%{}", first_id + i))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let attrs = attributes(&node.op);
    let attrs = if attrs.is_empty() {
        String::new()
    } else {
        format!("[{}]", attrs.join(", "))
    };
    let operands: Vec<String> = node.operands.iter().map(|o| o.to_string()).collect();
    let types = if node.results.is_empty() {
        "()".to_string()
    } else {
        node.results
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = write!(
        out,
        "{pad}{lhs} = {}{attrs}({}) : {types}",
        node.op.name(),
        operands.join(", ")
    );
    let regions = node.op.regions();
    if regions.is_empty() {
        out.push('\n');
        return;
    }
    out.push_str(" {\n");
    for (name, r) in node.op.region_names().into_iter().zip(regions) {
        print_region(out, name, r, indent + 1);
    }
    let _ = writeln!(out, "{pad}}}");
}

fn attributes(op: &Op) -> Vec<String> {
    match op {
        Op::Constant(a) => vec![format!("value=[{}]", constant_elements(a).join(", "))],
        Op::Compare(d) => vec![format!("dir={}", d.name())],
        Op::Iota { dim } => vec![format!("dim={dim}")],
        Op::BroadcastInDim { dims } => vec![format!("dims={}", list(dims))],
        Op::Transpose { perm } => vec![format!("perm={}", list(perm))],
        Op::Slice {
            start,
            limit,
            strides,
        } => vec![
            format!("start={}", list(start)),
            format!("limit={}", list(limit)),
            format!("strides={}", list(strides)),
        ],
        Op::Pad {
            low,
            high,
            interior,
        } => vec![
            format!("low={}", list(low)),
            format!("high={}", list(high)),
            format!("interior={}", list(interior)),
        ],
        Op::Concatenate { dim } => vec![format!("dim={dim}")],
        Op::Reverse { dims } => vec![format!("dims={}", list(dims))],
        Op::Reduce { kind, axes } => vec![
            format!("kind={}", kind.name()),
            format!("axes={}", list(axes)),
        ],
        Op::Cumulative {
            kind,
            axis,
            reverse,
        } => {
            vec![
                format!("kind={}", kind.name()),
                format!("axis={axis}"),
                format!("reverse={reverse}"),
            ]
        }
        Op::NamedAxis { axis, kind } => {
            vec![format!("axis={axis}"), format!("kind={}", kind.name())]
        }
        Op::HostCallback {
            callback,
            effectful,
        } => vec![
            format!("callback={callback}"),
            format!("effectful={effectful}"),
        ],
        Op::Sort {
            axis,
            num_keys,
            descending,
        } => vec![
            format!("axis={axis}"),
            format!("num_keys={num_keys}"),
            format!("descending={descending}"),
        ],
        Op::DotGeneral(d) => vec![
            format!("lhs_batch={}", list(&d.lhs_batch)),
            format!("rhs_batch={}", list(&d.rhs_batch)),
            format!("lhs_contract={}", list(&d.lhs_contract)),
            format!("rhs_contract={}", list(&d.rhs_contract)),
        ],
        Op::Gather(g) => vec![
            format!("offset_dims={}", list(&g.offset_dims)),
            format!("collapsed_slice_dims={}", list(&g.collapsed_slice_dims)),
            format!("start_index_map={}", list(&g.start_index_map)),
            format!("slice_sizes={}", list(&g.slice_sizes)),
        ],
        Op::ScatterAdd(s) => vec![
            format!("update_window_dims={}", list(&s.update_window_dims)),
            format!("inserted_window_dims={}", list(&s.inserted_window_dims)),
            format!(
                "scatter_dims_to_operand_dims={}",
                list(&s.scatter_dims_to_operand_dims)
            ),
        ],
        Op::DynamicSlice { sizes } => vec![format!("sizes={}", list(sizes))],
        Op::BoundedWhile {
            max_steps,
            checkpoints,
            ..
        } => vec![
            format!("max_steps={max_steps}"),
            format!("checkpoints={checkpoints}"),
        ],
        Op::Scan {
            length,
            reverse,
            num_consts,
            num_carry,
            unroll,
            ..
        } => vec![
            format!("length={length}"),
            format!("reverse={reverse}"),
            format!("num_consts={num_consts}"),
            format!("num_carry={num_carry}"),
            format!("unroll={unroll}"),
        ],
        Op::Linalg(LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
        }) => vec![
            format!("left_side={left_side}"),
            format!("lower={lower}"),
            format!("transpose_a={transpose_a}"),
            format!("unit_diagonal={unit_diagonal}"),
        ],
        Op::Linalg(LinalgOp::Qr { full_matrices }) => {
            vec![format!("full_matrices={full_matrices}")]
        }
        Op::Linalg(LinalgOp::Svd {
            full_matrices,
            compute_uv,
        }) => vec![
            format!("full_matrices={full_matrices}"),
            format!("compute_uv={compute_uv}"),
        ],
        Op::LinearSolve {
            num_consts,
            symmetric,
            ..
        } => vec![
            format!("num_consts={num_consts}"),
            format!("symmetric={symmetric}"),
        ],
        _ => vec![],
    }
}

/// Formats a float exactly: the shortest decimal that reads back to the same bits, `inf`,
/// `-inf`, `nan` for the canonical quiet NaN, and `nan:0x<bits>` for any other NaN.
fn float_text(is_nan: bool, canonical: bool, bits_hex: String, text: String) -> String {
    if is_nan {
        if canonical {
            "nan".into()
        } else {
            format!("nan:0x{bits_hex}")
        }
    } else {
        text
    }
}

fn constant_elements(a: &HostArray) -> Vec<String> {
    let n = a.ty.num_elements();
    (0..n)
        .map(|i| {
            let bits = a.bits_at(i);
            match a.ty.dtype {
                DType::F32 => {
                    let x = f32::from_bits(bits as u32);
                    float_text(
                        x.is_nan(),
                        bits as u32 == f32::NAN.to_bits(),
                        format!("{:08x}", bits),
                        fmt_finite(x as f64, format!("{x:?}")),
                    )
                }
                DType::F64 => {
                    let x = f64::from_bits(bits);
                    float_text(
                        x.is_nan(),
                        bits == f64::NAN.to_bits(),
                        format!("{:016x}", bits),
                        fmt_finite(x, format!("{x:?}")),
                    )
                }
                DType::I32 => (bits as u32 as i32).to_string(),
                DType::U32 => (bits as u32).to_string(),
                DType::Bool => (bits != 0).to_string(),
            }
        })
        .collect()
}

fn fmt_finite(x: f64, debug: String) -> String {
    if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        debug
    }
}
