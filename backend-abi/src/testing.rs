//! Hostile inputs for testing a host or a plugin: programs no well-behaved producer writes.
//!
//! The conformance runner feeds these to every plugin's `compile`; a plugin author can do the
//! same in unit tests.

use crate::qir::{encode, Node, Op, Program, ValueId, QIR_VERSION};
use crate::{HostArray, TensorType};

/// `program() { %0 = constant 0 : i32[]; () = cond(%0) { branch() { inner } }; return }`.
fn wrap_in_cond(inner: Program) -> Program {
    let zero = HostArray::from_slice(vec![], &[0i32]).unwrap_or_else(|_| unreachable!());
    Program {
        inputs: vec![],
        nodes: vec![
            Node {
                op: Op::Constant(zero),
                operands: vec![],
                results: vec![TensorType::scalar(crate::DType::I32)],
            },
            Node {
                op: Op::Cond {
                    branches: vec![inner],
                },
                operands: vec![ValueId(0)],
                results: vec![],
            },
        ],
        outputs: vec![],
    }
}

/// The encoded bytes of a valid program of `levels` nested levels (`cond` inside `cond`;
/// 1 is a program without regions), written without ever building it in memory, so a test
/// can make one a million levels deep without overflowing its own stack.
///
/// ```
/// use quabla_abi::{qir, testing::nested_cond_program};
/// assert!(qir::decode(&nested_cond_program(3)).is_ok());
/// let e = qir::decode(&nested_cond_program(100_000)).unwrap_err();
/// assert!(matches!(e, qir::DecodeError::TooDeep { .. }), "{e}");
/// ```
pub fn nested_cond_program(levels: usize) -> Vec<u8> {
    // Encoding is a pure function of the structure, so one level of wrapping adds the same
    // bytes before and after the inner program; find them from the one- and two-level forms.
    let enc = |p: &Program| encode(p, QIR_VERSION).unwrap_or_else(|_| unreachable!());
    let leaf = enc(&Program::default());
    let one = enc(&wrap_in_cond(Program::default()));
    let two = enc(&wrap_in_cond(wrap_in_cond(Program::default())));
    let (head, body) = (&leaf[..8], &leaf[8..]);
    let (one, two) = (&one[8..], &two[8..]);
    let (before, after) = (0..=one.len() - body.len())
        .filter(|&k| &one[k..k + body.len()] == body)
        .map(|k| (&one[..k], &one[k + body.len()..]))
        .find(|(b, a)| [*b, *b, body, *a, *a].concat() == two)
        .unwrap_or_else(|| {
            unreachable!("postcard encodes a wrapper as bytes around its inner program")
        });
    let wraps = levels.saturating_sub(1);
    let mut out = head.to_vec();
    for _ in 0..wraps {
        out.extend_from_slice(before);
    }
    out.extend_from_slice(body);
    for _ in 0..wraps {
        out.extend_from_slice(after);
    }
    out
}
