//! QIR, the program format that crosses the plugin boundary.
//!
//! A [`Program`] has typed inputs, nodes in topological order and outputs. Values are numbered
//! densely: inputs first (`%0..%n`), then each node's results in node order. Regions (the
//! branches of `cond`, the cond/body of `while`) are `Program`s of their own with their own
//! numbering; they capture nothing, every value they use is a parameter.
//!
//! ```
//! use quabla_abi::qir::Program;
//! let text = "program(%0: f32[3]) {\n  %1 = exp(%0) : f32[3]\n  return %1\n}\n";
//! let p = Program::parse(text).unwrap();
//! p.validate().unwrap();
//! assert_eq!(p.to_text(), text);
//! ```

mod binary;
mod depth;
mod op_spec;
mod ops;
mod shape_rules;
mod text;
mod validate;

pub use binary::{decode, encode, DecodeError, QIR_MAGIC, QIR_VERSION, QIR_VERSION_MIN};
pub use depth::MAX_REGION_DEPTH;
pub use op_spec::{all_op_names, Arity, DTypeClass, Family, LinalgKind, OpKind, OpSpec};
pub use ops::*;
pub use shape_rules::infer_result_types;
pub use text::ParseError;

use crate::TensorType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Index of a value in its program's numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ValueId(pub u32);

impl ValueId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ValueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// One operation applied to earlier values, producing `results.len()` new values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub op: Op,
    pub operands: Vec<ValueId>,
    pub results: Vec<TensorType>,
}

/// A QIR program (also the type of nested regions). Its `Deserialize` (in `depth.rs`)
/// refuses nesting deeper than [`MAX_REGION_DEPTH`] while decoding.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Program {
    pub inputs: Vec<TensorType>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<ValueId>,
}

/// Why a program is malformed: where (a path of node indices through regions) and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid QIR at {location}: {message}")]
pub struct ValidationError {
    pub location: String,
    pub message: String,
}

impl Program {
    /// The number of values (inputs plus node results).
    pub fn num_values(&self) -> usize {
        self.inputs.len() + self.nodes.iter().map(|n| n.results.len()).sum::<usize>()
    }

    /// The type of every value, by id. Assumes the program is structurally valid.
    pub fn value_types(&self) -> Vec<TensorType> {
        let mut v = self.inputs.clone();
        for n in &self.nodes {
            v.extend(n.results.iter().cloned());
        }
        v
    }

    /// For each node, the id of its first result.
    pub fn first_result_ids(&self) -> Vec<ValueId> {
        let mut next = self.inputs.len() as u32;
        self.nodes
            .iter()
            .map(|n| {
                let id = ValueId(next);
                next += n.results.len() as u32;
                id
            })
            .collect()
    }

    /// The output types. Assumes the program is structurally valid.
    pub fn output_types(&self) -> Vec<TensorType> {
        let types = self.value_types();
        self.outputs
            .iter()
            .map(|o| types[o.index()].clone())
            .collect()
    }

    /// How many times each value is read, by id: once per operand naming it (in this
    /// program's nodes, not inside their regions) and once per output.
    ///
    /// ```
    /// use quabla_abi::qir::Program;
    /// let p = Program::parse("program(%0: f32[2]) {\n  %1 = add(%0, %0) : f32[2]\n  return %1, %1\n}\n").unwrap();
    /// assert_eq!(p.reads(), vec![2, 2]);
    /// ```
    pub fn reads(&self) -> Vec<usize> {
        let mut reads = vec![0usize; self.num_values()];
        for v in self
            .nodes
            .iter()
            .flat_map(|n| &n.operands)
            .chain(&self.outputs)
        {
            if let Some(r) = reads.get_mut(v.index()) {
                *r += 1;
            }
        }
        reads
    }

    /// Checks the nesting depth, ids, topological order, shapes, dtypes, sizes, attributes
    /// and region signatures.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let levels = depth::region_levels(self);
        if levels > MAX_REGION_DEPTH {
            return Err(ValidationError {
                location: "program".into(),
                message: format!(
                    "regions nest {levels} levels deep, more than the limit of {MAX_REGION_DEPTH}"
                ),
            });
        }
        validate::validate(self, "program").map(|_| ())
    }

    /// Every op name used, regions included (sorted, unique).
    pub fn op_names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        fn walk(p: &Program, out: &mut Vec<&'static str>) {
            for n in &p.nodes {
                out.push(n.op.name());
                for r in n.op.regions() {
                    walk(r, out);
                }
            }
        }
        walk(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The type of the value with the most bytes, regions included (the first of equals);
    /// `None` for a program without values.
    pub fn largest_value_type(&self) -> Option<TensorType> {
        let mut largest: Option<&TensorType> = None;
        let mut todo = vec![self];
        while let Some(p) = todo.pop() {
            let results = p.nodes.iter().flat_map(|n| n.results.iter());
            for t in p.inputs.iter().chain(results) {
                if largest.is_none_or(|l| t.size_bytes() > l.size_bytes()) {
                    largest = Some(t);
                }
            }
            todo.extend(p.nodes.iter().flat_map(|n| n.op.regions()));
        }
        largest.cloned()
    }

    /// Every dtype used by any value, regions included (sorted, unique).
    pub fn dtypes(&self) -> Vec<crate::DType> {
        let mut out = Vec::new();
        fn walk(p: &Program, out: &mut Vec<crate::DType>) {
            out.extend(p.inputs.iter().map(|t| t.dtype));
            for n in &p.nodes {
                out.extend(n.results.iter().map(|t| t.dtype));
                for r in n.op.regions() {
                    walk(r, out);
                }
            }
        }
        walk(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The readable text form (see the module docs); [`Program::parse`] reads it back exactly.
    pub fn to_text(&self) -> String {
        text::print(self)
    }

    /// Parses the text form. Errors carry the line and column.
    pub fn parse(src: &str) -> Result<Program, ParseError> {
        text::parse(src)
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}
