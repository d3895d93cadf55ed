//! The loop IR: the backend-neutral level between QIR and machine code that compiled tiers
//! emit from, so a backend writes an emitter, not a compiler.
//!
//! This first level covers *scalar control flow*: programs in which every value has one
//! element (a `fori_loop` over scalars, a bisection, a step-size controller). Every value is
//! a typed register, every elementwise op one instruction, `while` and `cond` structured
//! control flow. The semantics of every instruction are those of the QIR op it comes from,
//! exactly: an emitter must give the reference interpreter's bits (integer division by zero,
//! NaN in `max`, saturating float-to-integer conversion and the rest are spelled out on the
//! QIR ops and in the CPU backend's `elementwise.rs`).
//!
//! ```
//! use quabla_abi::loop_ir::lower_while;
//! use quabla_abi::qir::Program;
//!
//! // x <- 0.5 x until x < 1e-3: every value a scalar, so the whole loop lowers.
//! let p = Program::parse(
//!     "program(%0: f64[]) {
//!        %1 = while(%0) : f64[] {
//!          cond(%0: f64[]) {
//!            %1 = constant[value=[0.001]]() : f64[]
//!            %2 = compare[dir=lt](%1, %0) : bool[]
//!            return %2
//!          }
//!          body(%0: f64[]) {
//!            %1 = constant[value=[0.5]]() : f64[]
//!            %2 = mul(%0, %1) : f64[]
//!            return %2
//!          }
//!        }
//!        return %1
//!      }",
//! )
//! .unwrap();
//! let f = lower_while(&p.nodes[0]).unwrap();
//! assert_eq!(f.params.len(), 1);
//! assert_eq!(f.results.len(), 1);
//! ```

mod lower;

pub use lower::{lower_while, Declined};

use crate::qir::{BinaryOp, CompareDir, UnaryOp};
use crate::DType;

/// A register: one scalar of the dtype `Function::regs` gives it. Registers are variables,
/// not SSA values: a `While` writes its carries every iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg(pub u32);

impl Reg {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One instruction. Operands and results of elementwise instructions follow the QIR op of
/// the same name; `dst`'s dtype is the QIR result's.
#[derive(Clone, Debug, PartialEq)]
pub enum Inst {
    /// `dst = bits`: the value's little-endian bits, zero-extended (bool: 0 or 1).
    Const {
        dst: Reg,
        bits: u64,
    },
    Unary {
        dst: Reg,
        op: UnaryOp,
        x: Reg,
    },
    Binary {
        dst: Reg,
        op: BinaryOp,
        a: Reg,
        b: Reg,
    },
    Compare {
        dst: Reg,
        dir: CompareDir,
        a: Reg,
        b: Reg,
    },
    Select {
        dst: Reg,
        pred: Reg,
        on_true: Reg,
        on_false: Reg,
    },
    /// QIR `convert` from `x`'s dtype to `dst`'s.
    Convert {
        dst: Reg,
        x: Reg,
    },
    /// QIR `bitcast` among the 32-bit dtypes.
    Bitcast {
        dst: Reg,
        x: Reg,
    },
    /// `dst = src` (the one-element movement ops: reshape, broadcast, transpose, ...).
    Copy {
        dst: Reg,
        src: Reg,
    },
    /// Runs `cond`; while its `test` register is true, runs `body` and then sets every
    /// `carries[k] = next[k]` at once (all `next` read before any carry is written).
    While {
        carries: Vec<Reg>,
        cond: Block,
        test: Reg,
        body: Block,
        next: Vec<Reg>,
    },
    /// Runs the branch `index` selects (an out-of-range index, negative too, runs the last,
    /// as QIR `cond`), then `results[k] = branch.results[k]`.
    Switch {
        index: Reg,
        branches: Vec<Branch>,
        results: Vec<Reg>,
    },
}

/// Straight-line code with nested control flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block(pub Vec<Inst>);

/// One arm of a `Switch`: its code and the registers holding its results.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub block: Block,
    pub results: Vec<Reg>,
}

/// A compiled unit: its parameters arrive in `params`, `body` runs, `results` are returned.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The dtype of every register, by index.
    pub regs: Vec<DType>,
    pub params: Vec<Reg>,
    pub body: Block,
    pub results: Vec<Reg>,
    /// Operands of the lowered node that do not enter the function: their results are the
    /// operands themselves (carries the loop passes through without reading, of any size).
    /// `params` and `results` stand for the other operands, in order.
    pub passed_through: Vec<usize>,
}

impl Function {
    /// The dtype of `r`.
    pub fn dtype(&self, r: Reg) -> DType {
        self.regs[r.index()]
    }
}
