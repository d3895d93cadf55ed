//! What an in-place iteration writes of each carry. A lowered `scan` carries its constants
//! and its `xs` unchanged and fills its `ys` one slice per step (`dynamic_update_slice` of
//! the carry at the step's index): copying those whole every iteration, as a freeze of the
//! whole carry does, makes a scan of `T` steps cost `T²` slices. So a carry the body
//! returns as it came is left where it is, and one the body updates in a window is written
//! in that window alone, by the freeze kernel, where the predicate holds.

use quabla_abi::qir::{Op, Program};
use quabla_abi::TensorType;

/// What the freeze kernel does with one carry.
#[derive(Clone, Debug, PartialEq)]
pub enum Carried {
    /// The body's result where the predicate holds, else the carry (through a buffer of
    /// its own, copied over the carry).
    Next,
    /// The body returns the carry as it came: nothing to write.
    Kept,
    /// The body's result is the carry with `update` written at `starts` (clamped as
    /// `dynamic_update_slice` clamps): where the predicate holds, the freeze kernel writes
    /// the update into the carry's own buffer.
    Window {
        /// The `dynamic_update_slice` node of the body computing the result.
        node: usize,
        /// Its update and start values, which the in-place body returns after the carry.
        update: usize,
        starts: Vec<usize>,
        update_type: TensorType,
    },
}

impl Carried {
    /// The values of the body a window reads (none for the other kinds).
    pub fn window_reads(&self) -> Vec<usize> {
        match self {
            Carried::Window { update, starts, .. } => std::iter::once(*update)
                .chain(starts.iter().copied())
                .collect(),
            Carried::Next | Carried::Kept => Vec::new(),
        }
    }
}

/// What an in-place run of a loop with `body` writes of each carry. A window needs the
/// carry's buffer to be read by nothing the freeze kernel reads (no result of the body, and
/// no update or start of a window, is the carry or a reshape of it, which would share its
/// buffer), its `dynamic_update_slice` to be read by nothing but the body's result, and the
/// carry to hold more than its update (else writing it whole is no dearer).
pub fn carried(body: &Program) -> Vec<Carried> {
    let types = body.value_types();
    let first = body.first_result_ids();
    // The node computing each value (every node here has its results in order).
    let mut producer: Vec<Option<usize>> = vec![None; types.len()];
    for (k, node) in body.nodes.iter().enumerate() {
        for r in 0..node.results.len() {
            if let Some(p) = producer.get_mut(first[k].index() + r) {
                *p = Some(k);
            }
        }
    }
    let uses = body.reads();
    // A reshape shares its operand's buffer: the value whose buffer `v` is. Ids fall along
    // the chain, so it ends.
    let root = |mut v: usize| {
        while let Some(k) = producer.get(v).copied().flatten() {
            match (&body.nodes[k].op, body.nodes[k].operands.first()) {
                (Op::Reshape, Some(o)) if o.index() < v => v = o.index(),
                _ => break,
            }
        }
        v
    };
    let mut out: Vec<Carried> = body
        .outputs
        .iter()
        .enumerate()
        .map(|(j, o)| {
            let o = o.index();
            if o == j {
                return Carried::Kept;
            }
            let Some(k) = producer.get(o).copied().flatten() else {
                return Carried::Next;
            };
            let node = &body.nodes[k];
            let operand = types.get(j).map_or(0, |t| t.num_elements());
            match (&node.op, node.operands.as_slice()) {
                (Op::DynamicUpdateSlice, [carry, update, starts @ ..])
                    if carry.index() == j
                        && uses[o] == 1
                        && operand >= 2
                        && types[update.index()].num_elements() < operand =>
                {
                    Carried::Window {
                        node: k,
                        update: update.index(),
                        starts: starts.iter().map(|s| s.index()).collect(),
                        update_type: types[update.index()].clone(),
                    }
                }
                _ => Carried::Next,
            }
        })
        .collect();
    // What the freeze kernel reads: every result of the body (a window's own is not read,
    // but it is no carry either) and every window's update and starts.
    let read: Vec<usize> = body
        .outputs
        .iter()
        .map(|o| o.index())
        .chain(out.iter().flat_map(Carried::window_reads))
        .map(root)
        .collect();
    for (j, c) in out.iter_mut().enumerate() {
        if matches!(c, Carried::Window { .. }) && read.contains(&j) {
            *c = Carried::Next;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carried_of(text: &str) -> Vec<Carried> {
        carried(&Program::parse(text).expect("a valid program"))
    }

    fn is_window(c: &Carried) -> bool {
        matches!(c, Carried::Window { .. })
    }

    #[test]
    fn a_scan_keeps_its_xs_and_writes_its_ys_in_a_window() {
        // (i, xs, ys): y_i = 2 x_i.
        let c = carried_of(
            "program(%0: i32[], %1: f32[8,3], %2: f32[8,3]) {
  %3 = constant[value=[1]]() : i32[]
  %4 = add(%0, %3) : i32[]
  %5 = constant[value=[0]]() : i32[]
  %6 = dynamic_slice[sizes=[1,3]](%1, %0, %5) : f32[1,3]
  %7 = add(%6, %6) : f32[1,3]
  %8 = dynamic_update_slice(%2, %7, %0, %5) : f32[8,3]
  return %4, %1, %8
}
",
        );
        assert_eq!(c[0], Carried::Next);
        assert_eq!(c[1], Carried::Kept);
        match &c[2] {
            Carried::Window {
                node,
                update,
                starts,
                update_type,
            } => {
                assert_eq!((*node, *update, starts.as_slice()), (5, 7, &[0, 5][..]));
                assert_eq!(update_type.shape, vec![1, 3]);
            }
            other => panic!("ys should be a window, not {other:?}"),
        }
    }

    #[test]
    fn a_window_whose_carry_the_freeze_also_reads_is_written_whole() {
        // The carry %1 is also the next %2 (a swap): the freeze kernel would read it while
        // writing its window.
        let swapped = carried_of(
            "program(%0: i32[], %1: f32[8], %2: f32[8]) {
  %3 = constant[value=[2]]() : i32[]
  %4 = constant[value=[1.0,2.0]]() : f32[2]
  %5 = dynamic_update_slice(%1, %4, %3) : f32[8]
  return %0, %5, %1
}
",
        );
        assert!(!swapped.iter().any(is_window), "{swapped:?}");
        // Another carry's next value is a reshape of the carry, sharing its buffer.
        let reshaped = carried_of(
            "program(%0: i32[], %1: f32[2,4], %2: f32[4,2]) {
  %3 = reshape(%1) : f32[4,2]
  %4 = constant[value=[0]]() : i32[]
  %5 = constant[value=[1.0,2.0,3.0,4.0]]() : f32[1,4]
  %6 = dynamic_update_slice(%1, %5, %0, %4) : f32[2,4]
  return %0, %6, %3
}
",
        );
        assert!(!reshaped.iter().any(is_window), "{reshaped:?}");
        // The updated value is also read by another node.
        let read_twice = carried_of(
            "program(%0: i32[], %1: f32[8]) {
  %2 = constant[value=[1.0,2.0]]() : f32[2]
  %3 = dynamic_update_slice(%1, %2, %0) : f32[8]
  %4 = reduce[kind=sum, axes=[0]](%3) : f32[]
  %5 = convert(%4) : i32[]
  return %5, %3
}
",
        );
        assert!(!read_twice.iter().any(is_window), "{read_twice:?}");
    }
}
