//! QIR to loop IR: the scalar subset (every value one element).

use super::{Block, Branch, Function, Inst, Reg};
use crate::qir::{Node, Op, Program};
use crate::{DType, TensorType};
use std::fmt;

/// Why a node stays with the interpreter: the op, or the shape, the loop IR does not cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declined {
    pub op: &'static str,
    pub reason: &'static str,
}

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.op, self.reason)
    }
}

impl std::error::Error for Declined {}

/// Lowers one `while` node of a validated program whose carries, and every value of its
/// regions, have one element. The function's parameters are the carries' initial values and
/// its results their final values.
///
/// ```
/// use quabla_abi::loop_ir::lower_while;
/// use quabla_abi::qir::Program;
///
/// // A while over a vector stays with the interpreter.
/// let p = Program::parse(
///     "program(%0: f32[3]) {
///        %1 = while(%0) : f32[3] {
///          cond(%0: f32[3]) {
///            %1 = constant[value=[false]]() : bool[]
///            return %1
///          }
///          body(%0: f32[3]) {
///            %1 = exp(%0) : f32[3]
///            return %1
///          }
///        }
///        return %1
///      }",
/// )
/// .unwrap();
/// assert!(lower_while(&p.nodes[0]).is_err());
/// ```
pub fn lower_while(node: &Node) -> Result<Function, Declined> {
    let Op::While { cond, body } = &node.op else {
        return Err(decline(&node.op, "only `while` nodes are compiled"));
    };
    let passed_through: Vec<usize> = (0..node.operands.len())
        .filter(|&k| unread_pass_through(cond, body, k))
        .collect();
    let mut l = Lowering { regs: Vec::new() };
    let mut carries: Vec<Option<Reg>> = Vec::with_capacity(node.results.len());
    for (k, t) in node.results.iter().enumerate() {
        let passed = passed_through.contains(&k);
        carries.push(if passed {
            None
        } else {
            Some(l.fresh(t, &node.op)?)
        });
    }
    let params: Vec<Reg> = carries.iter().flatten().copied().collect();
    let mut cond_block = Block::default();
    let test = l.region(cond, &carries, &mut cond_block)?[0]
        .ok_or_else(|| decline(&node.op, "the condition is a carry passed through"))?;
    let mut body_block = Block::default();
    let outs = l.region(body, &carries, &mut body_block)?;
    let next = outs
        .iter()
        .zip(&carries)
        .filter(|(_, c)| c.is_some())
        .map(|(o, _)| o.ok_or_else(|| decline(&node.op, "a result reads a vector carry")))
        .collect::<Result<Vec<Reg>, Declined>>()?;
    let body = Block(vec![Inst::While {
        carries: params.clone(),
        cond: cond_block,
        test,
        body: body_block,
        next,
    }]);
    Ok(Function {
        regs: l.regs,
        params: params.clone(),
        body,
        results: params,
        passed_through,
    })
}

/// Whether carry `k` goes through the loop untouched and unread (a scan's `xs` that the
/// body ignores, say): it then needs no register, whatever its size.
fn unread_pass_through(cond: &Program, body: &Program, k: usize) -> bool {
    let v = crate::qir::ValueId(k as u32);
    let read = |p: &Program| p.nodes.iter().any(|n| n.operands.contains(&v));
    let returned_elsewhere = body
        .outputs
        .iter()
        .enumerate()
        .any(|(j, o)| *o == v && j != k);
    body.outputs.get(k) == Some(&v)
        && !read(cond)
        && !read(body)
        && !cond.outputs.contains(&v)
        && !returned_elsewhere
}

fn decline(op: &Op, reason: &'static str) -> Declined {
    Declined {
        op: op.name(),
        reason,
    }
}

struct Lowering {
    regs: Vec<DType>,
}

impl Lowering {
    fn fresh(&mut self, t: &TensorType, op: &Op) -> Result<Reg, Declined> {
        if t.num_elements() != 1 {
            return Err(decline(op, "a value has more than one element"));
        }
        self.regs.push(t.dtype);
        Ok(Reg((self.regs.len() - 1) as u32))
    }

    /// Lowers a region whose inputs are in `inputs`, appending to `out`; returns the
    /// registers of its outputs. Region nesting is bounded by the decoder's
    /// `MAX_REGION_DEPTH`, so the recursion through `node` is too.
    /// `None` marks an input with no register (a carry passed through unread).
    fn region(
        &mut self,
        p: &Program,
        inputs: &[Option<Reg>],
        out: &mut Block,
    ) -> Result<Vec<Option<Reg>>, Declined> {
        let mut values: Vec<Option<Reg>> = inputs.to_vec();
        for n in &p.nodes {
            let args = n
                .operands
                .iter()
                .map(|o| values[o.index()].ok_or_else(|| decline(&n.op, "it reads a vector")))
                .collect::<Result<Vec<Reg>, Declined>>()?;
            values.extend(self.node(n, &args, out)?.into_iter().map(Some));
        }
        Ok(p.outputs.iter().map(|o| values[o.index()]).collect())
    }

    /// A nested region: every input and output has a register.
    fn scalar_region(
        &mut self,
        p: &Program,
        inputs: &[Reg],
        out: &mut Block,
        op: &Op,
    ) -> Result<Vec<Reg>, Declined> {
        let ins: Vec<Option<Reg>> = inputs.iter().copied().map(Some).collect();
        self.region(p, &ins, out)?
            .into_iter()
            .map(|r| r.ok_or_else(|| decline(op, "a region returns a vector")))
            .collect()
    }

    /// Lowers one node over the registers `args`; returns its results' registers.
    fn node(&mut self, n: &Node, args: &[Reg], out: &mut Block) -> Result<Vec<Reg>, Declined> {
        let mut results = Vec::with_capacity(n.results.len());
        for t in &n.results {
            results.push(self.fresh(t, &n.op)?);
        }
        let dst = results.first().copied();
        let one = |dst: Option<Reg>| dst.ok_or_else(|| decline(&n.op, "a node with no result"));
        let inst = match &n.op {
            Op::Constant(h) => Inst::Const {
                dst: one(dst)?,
                bits: h.bits_at(0),
            },
            // The one element of an iota is index 0, whose bits are zero in every dtype.
            Op::Iota { .. } => Inst::Const {
                dst: one(dst)?,
                bits: 0,
            },
            Op::Unary(op) => Inst::Unary {
                dst: one(dst)?,
                op: *op,
                x: args[0],
            },
            Op::Binary(op) => Inst::Binary {
                dst: one(dst)?,
                op: *op,
                a: args[0],
                b: args[1],
            },
            Op::Compare(dir) => Inst::Compare {
                dst: one(dst)?,
                dir: *dir,
                a: args[0],
                b: args[1],
            },
            Op::Select => Inst::Select {
                dst: one(dst)?,
                pred: args[0],
                on_true: args[1],
                on_false: args[2],
            },
            Op::Convert => Inst::Convert {
                dst: one(dst)?,
                x: args[0],
            },
            Op::Bitcast => Inst::Bitcast {
                dst: one(dst)?,
                x: args[0],
            },
            // With one element in and out, these move nothing.
            Op::Reshape
            | Op::BroadcastInDim { .. }
            | Op::Transpose { .. }
            | Op::Reverse { .. }
            | Op::Slice { .. }
            | Op::DynamicSlice { .. } => Inst::Copy {
                dst: one(dst)?,
                src: args[0],
            },
            // The update covers the whole one-element operand.
            Op::DynamicUpdateSlice => Inst::Copy {
                dst: one(dst)?,
                src: args[1],
            },
            Op::While { cond, body } => {
                let carries: Vec<Reg> = results.clone();
                for (c, a) in carries.iter().zip(args) {
                    out.0.push(Inst::Copy { dst: *c, src: *a });
                }
                let mut cond_block = Block::default();
                let test = self.scalar_region(cond, &carries, &mut cond_block, &n.op)?[0];
                let mut body_block = Block::default();
                let next = self.scalar_region(body, &carries, &mut body_block, &n.op)?;
                Inst::While {
                    carries,
                    cond: cond_block,
                    test,
                    body: body_block,
                    next,
                }
            }
            Op::Cond { branches } => {
                let mut arms = Vec::with_capacity(branches.len());
                for b in branches {
                    let mut block = Block::default();
                    let rs = self.scalar_region(b, &args[1..], &mut block, &n.op)?;
                    arms.push(Branch { block, results: rs });
                }
                Inst::Switch {
                    index: args[0],
                    branches: arms,
                    results: results.clone(),
                }
            }
            Op::Pad { .. }
            | Op::Concatenate { .. }
            | Op::Reduce { .. }
            | Op::Cumulative { .. }
            | Op::DotGeneral(_)
            | Op::Gather(_)
            | Op::ScatterAdd(_)
            | Op::Linalg(_) => return Err(decline(&n.op, "not in the scalar loop IR yet")),
            Op::StopGradient
            | Op::CustomJvp { .. }
            | Op::CustomVjp { .. }
            | Op::CustomVjpLinear { .. }
            | Op::Checkpoint { .. }
            | Op::Scan { .. }
            | Op::LinearSolve { .. } => {
                return Err(decline(&n.op, "a core-level op never reaches a backend"))
            }
        };
        out.0.push(inst);
        Ok(results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(src: &str) -> Result<Function, Declined> {
        let p = Program::parse(src).expect("test program parses");
        lower_while(&p.nodes[p.nodes.len() - 1])
    }

    #[test]
    fn a_scalar_counting_loop_lowers_to_one_while_over_its_carries() {
        let f = lower(
            "program(%0: i32[], %1: f32[]) {
               %2, %3 = while(%0, %1) : i32[], f32[] {
                 cond(%0: i32[], %1: f32[]) {
                   %2 = constant[value=[10]]() : i32[]
                   %3 = compare[dir=lt](%0, %2) : bool[]
                   return %3
                 }
                 body(%0: i32[], %1: f32[]) {
                   %2 = constant[value=[1]]() : i32[]
                   %3 = add(%0, %2) : i32[]
                   %4 = reshape(%1) : f32[1]
                   %5 = reshape(%4) : f32[]
                   return %3, %5
                 }
               }
               return %2, %3
             }",
        )
        .unwrap();
        assert_eq!(f.params, vec![Reg(0), Reg(1)]);
        assert_eq!(f.regs[..2], [DType::I32, DType::F32]);
        assert!(f.passed_through.is_empty());
        let [Inst::While {
            carries,
            test,
            next,
            body,
            ..
        }] = &f.body.0[..]
        else {
            panic!("unexpected body {:?}", f.body);
        };
        assert_eq!(carries, &f.results);
        assert_eq!(f.dtype(*test), DType::Bool);
        // The carried f32 passes through two reshapes: copies, so its next value is the
        // second copy's register.
        assert_eq!(body.0.len(), 4);
        assert_eq!(f.dtype(next[1]), DType::F32);
    }

    /// A `fori_loop` lowered from a scan over `iota`: the index vector rides along unread.
    #[test]
    fn an_unread_vector_carry_passes_through_and_a_read_one_declines() {
        let src = |body: &str| {
            format!(
                "program(%0: f64[], %1: i32[100]) {{
                   %2 = constant[value=[0]]() : i32[]
                   %3, %4, %5 = while(%2, %0, %1) : i32[], f64[], i32[100] {{
                     cond(%0: i32[], %1: f64[], %2: i32[100]) {{
                       %3 = constant[value=[100]]() : i32[]
                       %4 = compare[dir=lt](%0, %3) : bool[]
                       return %4
                     }}
                     body(%0: i32[], %1: f64[], %2: i32[100]) {{
                       %3 = constant[value=[1]]() : i32[]
                       %4 = add(%0, %3) : i32[]
                       {body}
                     }}
                   }}
                   return %4
                 }}"
            )
        };
        let f = lower(&src("%5 = exp(%1) : f64[]\n return %4, %5, %2")).unwrap();
        assert_eq!(f.passed_through, vec![2]);
        assert_eq!(f.params.len(), 2);
        let e = lower(&src("%5 = dynamic_slice[sizes=[1]](%2, %0) : i32[1]
             %6 = reshape(%5) : i32[]
             %7 = convert(%6) : f64[]
             return %4, %7, %2"))
        .unwrap_err();
        assert_eq!(
            (e.op, e.reason),
            ("while", "a value has more than one element")
        );
    }

    #[test]
    fn a_vector_inside_the_body_declines_naming_the_op() {
        let e = lower(
            "program(%0: f64[]) {
               %1 = while(%0) : f64[] {
                 cond(%0: f64[]) {
                   %1 = constant[value=[false]]() : bool[]
                   return %1
                 }
                 body(%0: f64[]) {
                   %1 = broadcast_in_dim[dims=[]](%0) : f64[4]
                   %2 = reduce[kind=sum, axes=[0]](%1) : f64[]
                   return %2
                 }
               }
               return %1
             }",
        )
        .unwrap_err();
        assert_eq!(e.op, "broadcast_in_dim");
        let e = lower(
            "program(%0: f64[1]) {
               %1 = while(%0) : f64[1] {
                 cond(%0: f64[1]) {
                   %1 = constant[value=[false]]() : bool[]
                   return %1
                 }
                 body(%0: f64[1]) {
                   %1 = reduce[kind=sum, axes=[0]](%0) : f64[]
                   %2 = reshape(%1) : f64[1]
                   return %2
                 }
               }
               return %1
             }",
        )
        .unwrap_err();
        assert_eq!(e.op, "reduce");
    }

    #[test]
    fn a_cond_inside_the_body_becomes_a_switch_over_its_branches() {
        let f = lower(
            "program(%0: i32[]) {
               %1 = while(%0) : i32[] {
                 cond(%0: i32[]) {
                   %1 = constant[value=[5]]() : i32[]
                   %2 = compare[dir=lt](%0, %1) : bool[]
                   return %2
                 }
                 body(%0: i32[]) {
                   %1 = cond(%0, %0) : i32[] {
                     branch(%0: i32[]) {
                       return %0
                     }
                     branch(%0: i32[]) {
                       %1 = constant[value=[2]]() : i32[]
                       %2 = add(%0, %1) : i32[]
                       return %2
                     }
                   }
                   %2 = constant[value=[1]]() : i32[]
                   %3 = add(%1, %2) : i32[]
                   return %3
                 }
               }
               return %1
             }",
        )
        .unwrap();
        let Inst::While { body, .. } = &f.body.0[0] else {
            panic!("{:?}", f.body)
        };
        let Inst::Switch { branches, .. } = &body.0[0] else {
            panic!("{body:?}")
        };
        assert_eq!(branches.len(), 2);
        assert_eq!(branches[0].block.0.len(), 0);
        assert_eq!(branches[1].block.0.len(), 2);
    }
}
