//! Movement ops as index maps: each output element reads the operand element its
//! coordinates map to (or a pad value).

use super::{flat, Node};
use crate::fusion::Kernel;

/// An index map reading operand 0 at the coordinate expressions `ic`.
fn gather_from_first(n: &Node, ic: &[String]) -> Kernel {
    let value = format!("in{}[{}]", n.operands[0], flat(ic, &n.ty(0).shape));
    n.map(&[n.read(0)], &value)
}

/// Operand axis `j` is output axis `dims[j]` (coordinate 0 where the operand's length is 1).
pub(super) fn broadcast_in_dim(n: &Node, dims: &[usize]) -> Kernel {
    let (src, oc) = (&n.ty(0).shape, n.oc());
    let ic: Vec<String> = dims
        .iter()
        .enumerate()
        .map(|(j, &d)| {
            if src[j] == 1 {
                "0".into()
            } else {
                oc[d].clone()
            }
        })
        .collect();
    gather_from_first(n, &ic)
}

/// Output axis `i` is operand axis `perm[i]`.
pub(super) fn transpose(n: &Node, perm: &[usize]) -> Kernel {
    let oc = n.oc();
    let mut ic = vec![String::new(); perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        ic[p] = oc[i].clone();
    }
    gather_from_first(n, &ic)
}

pub(super) fn slice(n: &Node, start: &[usize], strides: &[usize]) -> Kernel {
    let ic: Vec<String> = (0..n.out.shape.len())
        .map(|k| format!("{}ll + c{k} * {}ll", start[k], strides[k]))
        .collect();
    gather_from_first(n, &ic)
}

pub(super) fn reverse(n: &Node, dims: &[usize]) -> Kernel {
    let (src, oc) = (&n.ty(0).shape, n.oc());
    let ic: Vec<String> = (0..oc.len())
        .map(|k| {
            if dims.contains(&k) {
                format!("{}ll - 1 - c{k}", src[k])
            } else {
                oc[k].clone()
            }
        })
        .collect();
    gather_from_first(n, &ic)
}

/// XLA's pad: an output coordinate maps back through the (possibly negative) low edge and
/// the interior stride; anything that lands between or outside elements is the pad value.
pub(super) fn pad(n: &Node, low: &[i64], interior: &[usize]) -> Kernel {
    let src = &n.ty(0).shape;
    let mut inside = Vec::new();
    let mut ic = Vec::new();
    for k in 0..src.len() {
        let step = interior[k] as i64 + 1;
        let p = format!("(c{k} - ({}ll))", low[k]);
        inside.push(format!(
            "{p} >= 0 && {p} % {step}ll == 0 && {p} / {step}ll < {}ll",
            src[k]
        ));
        ic.push(format!("{p} / {step}ll"));
    }
    let cond = conjunction(&inside);
    let value = format!(
        "({cond}) ? in{}[{}] : in{}[0]",
        n.operands[0],
        flat(&ic, src),
        n.operands[1]
    );
    n.map(&[n.read(0), n.read(1)], &value)
}

/// `a && b && ...`, or true for none.
fn conjunction(terms: &[String]) -> String {
    if terms.is_empty() {
        "1".to_string()
    } else {
        terms.join(" && ")
    }
}

/// The operand whose range along `dim` holds the coordinate, read at the shifted one.
pub(super) fn concatenate(n: &Node, dim: usize) -> Kernel {
    let mut value = String::new();
    let mut offset = 0usize;
    for (j, &v) in n.operands.iter().enumerate() {
        let src = &n.types[v].shape;
        let mut ic = n.oc();
        ic[dim] = format!("(c{dim} - {offset}ll)");
        let pick = format!("in{v}[{}]", flat(&ic, src));
        offset += src[dim];
        value = if j + 1 == n.operands.len() {
            format!("{value}{pick}")
        } else {
            format!("{value}c{dim} < {offset}ll ? {pick} : ")
        };
    }
    n.map(&n.reads(), &value)
}

/// A window's start along an axis: `start` (an `i32` expression) clamped to `0..=hi` (the
/// axis's length less the window's), as XLA clamps so the window fits. Window writes
/// (`window_store`) clamp with it too, so they land where this op's would.
fn clamped_start(start: &str, hi: usize) -> String {
    format!("(long long)min(max({start}, 0), {hi})")
}

/// A window at the starts (device scalars) clamped so it fits.
pub(super) fn dynamic_slice(n: &Node, sizes: &[usize]) -> Kernel {
    let src = &n.ty(0).shape;
    let ic: Vec<String> = (0..src.len())
        .map(|k| {
            let start = clamped_start(&format!("in{}[0]", n.operands[k + 1]), src[k] - sizes[k]);
            format!("c{k} + {start}")
        })
        .collect();
    let value = format!("in{}[{}]", n.operands[0], flat(&ic, src));
    n.map(&n.reads(), &value)
}

/// The operand, with the update's elements inside the clamped window.
pub(super) fn dynamic_update_slice(n: &Node) -> Kernel {
    let (src, upd) = (&n.ty(0).shape, &n.ty(1).shape);
    let mut starts = String::new();
    let mut inside = Vec::new();
    let mut uc = Vec::new();
    for k in 0..src.len() {
        let hi = src[k] - upd[k];
        starts.push_str(&format!(
            "    long long s{k} = {};\n",
            clamped_start(&format!("in{}[0]", n.operands[k + 2]), hi)
        ));
        inside.push(format!("c{k} >= s{k} && c{k} < s{k} + {}ll", upd[k]));
        uc.push(format!("c{k} - s{k}"));
    }
    let value = format!(
        "({}) ? in{u}[{}] : in{o}[i]",
        conjunction(&inside),
        flat(&uc, upd),
        u = n.operands[1],
        o = n.operands[0]
    );
    n.map_with(&starts, &n.reads(), &value)
}

/// How a window's update is written into an operand of shape `src`: the statements declaring
/// its clamped starts (`{p}s0..`, from the `i32` expressions `starts`), then those storing
/// element `i` of `update` (shape `upd`) into `target`. Names are prefixed with `p`, so
/// several windows can share a kernel. The in-place update below and a loop's freeze
/// kernel (`in_place.rs`) both write windows with it.
pub(crate) fn window_store(
    p: &str,
    starts: &[String],
    src: &[usize],
    upd: &[usize],
    target: &str,
    update: &str,
) -> (String, String) {
    let mut declare = String::new();
    let mut at = Vec::new();
    for (k, start) in starts.iter().enumerate() {
        declare.push_str(&format!(
            "    const long long {p}s{k} = {};\n",
            clamped_start(start, src[k].saturating_sub(upd[k]))
        ));
        at.push(format!("{p}s{k} + {p}u{k}"));
    }
    let store = format!(
        "{}    {target}[{}] = {update}[i];\n",
        super::coordinates(upd, "i", &format!("{p}u")),
        flat(&at, src)
    );
    (declare, store)
}

/// The update's elements written at the clamped starts into the operand's own buffer
/// (`plan.rs` plans it where nothing else reads the operand): a kernel over the update's
/// elements, where `dynamic_update_slice` copies the whole operand. It reads the update and
/// starts; the operand, written in place, is its one parameter after them (so `writes` is
/// empty: the result is the operand's buffer, not a fresh one).
pub(super) fn dynamic_update_window(n: &Node) -> Kernel {
    let starts: Vec<String> = (2..n.operands.len())
        .map(|k| format!("in{}[0]", n.operands[k]))
        .collect();
    let (declare, store) = window_store(
        "",
        &starts,
        &n.ty(0).shape,
        &n.ty(1).shape,
        &format!("out{}", n.result),
        &format!("in{}", n.operands[1]),
    );
    let reads: Vec<(usize, quabla_abi::DType)> = (1..n.operands.len()).map(|k| n.read(k)).collect();
    let mut k = n.kernel(&reads, n.ty(1).num_elements(), &format!("{declare}{store}"));
    k.writes.clear();
    k
}
