//! The readable text form of QIR: a printer and a parser that round-trip exactly.
//!
//! ```text
//! program(%0: f32[2], %1: i32[]) {
//!   %2 = exp(%0) : f32[2]
//!   %3 = reduce[kind=sum, axes=[0]](%2) : f32[]
//!   return %3
//! }
//! ```
//! Regions follow the result types in braces: `branch(...) { ... }` for each `cond` branch,
//! `cond(...) { ... } body(...) { ... }` for `while`.

mod lexer;
mod parse;
mod print;

pub use parse::{parse, ParseError};
pub use print::print;
