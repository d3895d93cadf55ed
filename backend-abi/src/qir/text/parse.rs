//! Parsing the QIR text form. Every malformed input is a [`ParseError`] with a position.

use super::lexer::{lex, Tok, Token};
use crate::qir::*;
use crate::{DType, HostArray, TensorType};
use std::collections::HashMap;

/// A syntax error in QIR text, with the 1-based line and column where it was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("QIR text, line {line}, column {col}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// Parses a whole program (`program(...) { ... }`).
pub fn parse(src: &str) -> Result<Program, ParseError> {
    let toks = lex(src).map_err(|(line, col, message)| ParseError { line, col, message })?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let prog = p.region("program")?;
    p.expect_eof()?;
    Ok(prog)
}

enum Attr {
    Int(i64),
    Ident(String),
    List(Vec<Scalar>),
}

#[derive(Clone)]
enum Scalar {
    Num(String),
    NegInf,
    Inf,
    Nan(Option<String>),
    Bool(bool),
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

type R<T> = Result<T, ParseError>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn error<T>(&self, message: impl Into<String>) -> R<T> {
        let t = &self.toks[self.pos];
        Err(ParseError {
            line: t.line,
            col: t.col,
            message: message.into(),
        })
    }

    fn next(&mut self) -> Tok {
        let t = self.toks[self.pos].tok.clone();
        if t != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Value(s) => format!("`%{s}`"),
            Tok::Number(s) => format!("number `{s}`"),
            Tok::Punct(c) => format!("`{c}`"),
            Tok::Eof => "end of input".into(),
        }
    }

    fn expect_punct(&mut self, c: char) -> R<()> {
        if *self.peek() == Tok::Punct(c) {
            self.pos += 1;
            Ok(())
        } else {
            self.error(format!(
                "expected `{c}`, found {}",
                Self::describe(self.peek())
            ))
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if *self.peek() == Tok::Punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_eof(&self) -> R<()> {
        if *self.peek() != Tok::Eof {
            return self.error(format!(
                "expected end of input, found {}",
                Self::describe(self.peek())
            ));
        }
        Ok(())
    }

    fn ident(&mut self) -> R<String> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.pos += 1;
                Ok(s)
            }
            t => self.error(format!("expected a name, found {}", Self::describe(&t))),
        }
    }

    fn keyword(&mut self, kw: &str) -> R<()> {
        match self.peek() {
            Tok::Ident(s) if s == kw => {
                self.pos += 1;
                Ok(())
            }
            t => self.error(format!("expected `{kw}`, found {}", Self::describe(t))),
        }
    }

    fn usize_tok(&mut self) -> R<usize> {
        match self.peek().clone() {
            Tok::Number(s) => match s.parse::<usize>() {
                Ok(v) => {
                    self.pos += 1;
                    Ok(v)
                }
                Err(_) => self.error(format!("expected a non-negative integer, found `{s}`")),
            },
            t => self.error(format!(
                "expected a non-negative integer, found {}",
                Self::describe(&t)
            )),
        }
    }

    fn tensor_type(&mut self) -> R<TensorType> {
        let name = self.ident()?;
        let dtype: DType = match name.parse() {
            Ok(d) => d,
            Err(m) => {
                self.pos -= 1;
                return self.error(m);
            }
        };
        self.expect_punct('[')?;
        let mut shape = Vec::new();
        if !self.eat_punct(']') {
            loop {
                shape.push(self.usize_tok()?);
                if self.eat_punct(']') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if n.is_none_or(|n| n as u64 > 1 << 40) {
            return self.error("shape has too many elements");
        }
        Ok(TensorType::new(dtype, shape))
    }

    fn define(&self, scope: &mut HashMap<String, ValueId>, name: String, id: usize) -> R<()> {
        if scope.insert(name.clone(), ValueId(id as u32)).is_some() {
            return self.error(format!("value `%{name}` is defined twice"));
        }
        Ok(())
    }

    fn use_value(&mut self, scope: &HashMap<String, ValueId>) -> R<ValueId> {
        match self.peek().clone() {
            Tok::Value(name) => match scope.get(&name) {
                Some(id) => {
                    self.pos += 1;
                    Ok(*id)
                }
                None => self.error(format!(
                    "value `%{name}` is not defined (regions see only their own parameters)"
                )),
            },
            t => self.error(format!(
                "expected a value like `%3`, found {}",
                Self::describe(&t)
            )),
        }
    }

    /// `head(%a: t, ...) { nodes; return ... }`
    fn region(&mut self, head: &str) -> R<Program> {
        self.depth += 1;
        if self.depth > MAX_REGION_DEPTH {
            return self.error(format!("regions nest deeper than {MAX_REGION_DEPTH}"));
        }
        self.keyword(head)?;
        self.expect_punct('(')?;
        let mut scope = HashMap::new();
        let mut prog = Program::default();
        if !self.eat_punct(')') {
            loop {
                let name = match self.next() {
                    Tok::Value(n) => n,
                    t => {
                        self.pos -= 1;
                        return self.error(format!(
                            "expected a parameter like `%0: f32[2]`, found {}",
                            Self::describe(&t)
                        ));
                    }
                };
                self.expect_punct(':')?;
                let t = self.tensor_type()?;
                self.define(&mut scope, name, prog.inputs.len())?;
                prog.inputs.push(t);
                if self.eat_punct(')') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        self.expect_punct('{')?;
        let mut next_id = prog.inputs.len();
        loop {
            if let Tok::Ident(s) = self.peek() {
                if s == "return" {
                    self.pos += 1;
                    break;
                }
            }
            let node = self.node(&mut scope, next_id)?;
            next_id += node.results.len();
            prog.nodes.push(node);
        }
        if !matches!(self.peek(), Tok::Punct('}')) {
            loop {
                prog.outputs.push(self.use_value(&scope)?);
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        self.expect_punct('}')?;
        self.depth -= 1;
        Ok(prog)
    }

    fn node(&mut self, scope: &mut HashMap<String, ValueId>, first_id: usize) -> R<Node> {
        let mut names = Vec::new();
        if self.eat_punct('(') {
            self.expect_punct(')')?;
        } else {
            loop {
                match self.next() {
                    Tok::Value(n) => names.push(n),
                    t => {
                        self.pos -= 1;
                        return self.error(format!(
                            "expected `%name = op(...)` or `return`, found {}",
                            Self::describe(&t)
                        ));
                    }
                }
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        self.expect_punct('=')?;
        let op_pos = self.pos;
        let op_name = self.ident()?;
        let mut attrs: HashMap<String, Attr> = HashMap::new();
        if self.eat_punct('[') {
            loop {
                let key = self.ident()?;
                self.expect_punct('=')?;
                let v = self.attr_value()?;
                if attrs.insert(key.clone(), v).is_some() {
                    return self.error(format!("attribute `{key}` given twice"));
                }
                if self.eat_punct(']') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        self.expect_punct('(')?;
        let mut operands = Vec::new();
        if !self.eat_punct(')') {
            loop {
                operands.push(self.use_value(scope)?);
                if self.eat_punct(')') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        self.expect_punct(':')?;
        let mut results = Vec::new();
        if self.eat_punct('(') {
            self.expect_punct(')')?;
        } else {
            loop {
                results.push(self.tensor_type()?);
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        if results.len() != names.len() {
            return self.error(format!(
                "{} names on the left but {} result types",
                names.len(),
                results.len()
            ));
        }
        let here = self.pos;
        self.pos = op_pos;
        let op = self.build_op(&op_name, &mut attrs, &results)?;
        self.pos = here;
        let op = match op {
            Op::Cond { .. } => {
                self.expect_punct('{')?;
                let mut branches = Vec::new();
                while !self.eat_punct('}') {
                    branches.push(self.region("branch")?);
                }
                Op::Cond { branches }
            }
            op if !op.region_names().is_empty() => {
                self.expect_punct('{')?;
                let mut regions = Vec::new();
                for name in op.region_names() {
                    regions.push(self.region(name)?);
                }
                self.expect_punct('}')?;
                op.with_regions(regions)
            }
            op => op,
        };
        for (i, n) in names.into_iter().enumerate() {
            self.define(scope, n, first_id + i)?;
        }
        Ok(Node {
            op,
            operands,
            results,
        })
    }

    fn scalar(&mut self) -> R<Scalar> {
        let neg = self.eat_punct('-');
        let s = match self.next() {
            Tok::Number(n) if !neg => Scalar::Num(n),
            Tok::Ident(s) if s == "inf" => {
                if neg {
                    Scalar::NegInf
                } else {
                    Scalar::Inf
                }
            }
            Tok::Ident(s) if s == "nan" && !neg => {
                if self.eat_punct(':') {
                    match self.next() {
                        Tok::Number(h) => Scalar::Nan(Some(h)),
                        t => {
                            self.pos -= 1;
                            return self.error(format!(
                                "expected NaN bits like `0x7fc00001`, found {}",
                                Self::describe(&t)
                            ));
                        }
                    }
                } else {
                    Scalar::Nan(None)
                }
            }
            Tok::Ident(s) if (s == "true" || s == "false") && !neg => Scalar::Bool(s == "true"),
            t => {
                self.pos -= 1;
                return self.error(format!("expected a number, found {}", Self::describe(&t)));
            }
        };
        Ok(s)
    }

    fn attr_value(&mut self) -> R<Attr> {
        if self.eat_punct('[') {
            let mut items = Vec::new();
            if !self.eat_punct(']') {
                loop {
                    items.push(self.scalar()?);
                    if self.eat_punct(']') {
                        break;
                    }
                    self.expect_punct(',')?;
                }
            }
            return Ok(Attr::List(items));
        }
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.pos += 1;
                Ok(Attr::Ident(s))
            }
            Tok::Number(n) => match n.parse::<i64>() {
                Ok(v) => {
                    self.pos += 1;
                    Ok(Attr::Int(v))
                }
                Err(_) => self.error(format!("expected an integer attribute, found `{n}`")),
            },
            t => self.error(format!(
                "expected an attribute value, found {}",
                Self::describe(&t)
            )),
        }
    }

    fn build_op(
        &mut self,
        name: &str,
        attrs: &mut HashMap<String, Attr>,
        results: &[TensorType],
    ) -> R<Op> {
        let op = self.build_op_inner(name, attrs, results)?;
        if let Some(k) = attrs.keys().next() {
            return self.error(format!("`{name}` has no attribute `{k}`"));
        }
        Ok(op)
    }

    fn take(&self, attrs: &mut HashMap<String, Attr>, key: &str, op: &str) -> R<Attr> {
        match attrs.remove(key) {
            Some(a) => Ok(a),
            None => self.error(format!("`{op}` needs attribute `{key}`")),
        }
    }

    fn ints(&self, attrs: &mut HashMap<String, Attr>, key: &str, op: &str) -> R<Vec<i64>> {
        match self.take(attrs, key, op)? {
            Attr::List(items) => items
                .iter()
                .map(|s| match s {
                    Scalar::Num(n) => n
                        .parse::<i64>()
                        .or_else(|_| self.error(format!("`{key}` holds integers, found `{n}`"))),
                    _ => self.error(format!("`{key}` holds integers")),
                })
                .collect(),
            _ => self.error(format!("`{key}` must be a list like [0,1]")),
        }
    }

    fn dims(&self, attrs: &mut HashMap<String, Attr>, key: &str, op: &str) -> R<Vec<usize>> {
        self.ints(attrs, key, op)?
            .into_iter()
            .map(|v| {
                usize::try_from(v)
                    .or_else(|_| self.error(format!("`{key}` entries must be >= 0, found {v}")))
            })
            .collect()
    }

    fn int(&self, attrs: &mut HashMap<String, Attr>, key: &str, op: &str) -> R<usize> {
        match self.take(attrs, key, op)? {
            Attr::Int(v) if v >= 0 => Ok(v as usize),
            _ => self.error(format!("`{key}` must be a non-negative integer")),
        }
    }

    /// A non-negative integer of 64 bits on every target (a host callback id; `int` is a
    /// `usize`, 32 bits in the browser).
    fn int64(&self, attrs: &mut HashMap<String, Attr>, key: &str, op: &str) -> R<u64> {
        match self.take(attrs, key, op)? {
            Attr::Int(v) if v >= 0 => Ok(v as u64),
            _ => self.error(format!("`{key}` must be a non-negative integer")),
        }
    }

    fn boolean(&self, attrs: &mut HashMap<String, Attr>, key: &str, op: &str) -> R<bool> {
        match self.word(attrs, key, op)?.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => self.error(format!("`{key}` must be true or false")),
        }
    }

    fn word(&self, attrs: &mut HashMap<String, Attr>, key: &str, op: &str) -> R<String> {
        match self.take(attrs, key, op)? {
            Attr::Ident(s) => Ok(s),
            _ => self.error(format!("`{key}` must be a name")),
        }
    }

    fn build_op_inner(
        &mut self,
        name: &str,
        attrs: &mut HashMap<String, Attr>,
        results: &[TensorType],
    ) -> R<Op> {
        let Some(kind) = OpKind::from_name(name) else {
            return self.error(format!("unknown op `{name}`"));
        };
        Ok(match kind {
            OpKind::Unary(u) => Op::Unary(u),
            OpKind::Binary(b) => Op::Binary(b),
            OpKind::Constant => {
                let ty = match results {
                    [t] => t.clone(),
                    _ => return self.error("constant has exactly one result"),
                };
                let items = match self.take(attrs, "value", name)? {
                    Attr::List(items) => items,
                    _ => return self.error("`value` must be a list"),
                };
                Op::Constant(self.literal(ty, &items)?)
            }
            OpKind::Compare => {
                let d = self.word(attrs, "dir", name)?;
                Op::Compare(match CompareDir::from_name(&d) {
                    Some(d) => d,
                    None => {
                        return self.error(format!(
                            "unknown compare direction `{d}` (eq ne lt le gt ge)"
                        ))
                    }
                })
            }
            OpKind::Select => Op::Select,
            OpKind::Convert => Op::Convert,
            OpKind::Bitcast => Op::Bitcast,
            OpKind::Reshape => Op::Reshape,
            OpKind::DynamicUpdateSlice => Op::DynamicUpdateSlice,
            OpKind::Iota => Op::Iota {
                dim: self.int(attrs, "dim", name)?,
            },
            OpKind::BroadcastInDim => Op::BroadcastInDim {
                dims: self.dims(attrs, "dims", name)?,
            },
            OpKind::Transpose => Op::Transpose {
                perm: self.dims(attrs, "perm", name)?,
            },
            OpKind::Slice => Op::Slice {
                start: self.dims(attrs, "start", name)?,
                limit: self.dims(attrs, "limit", name)?,
                strides: self.dims(attrs, "strides", name)?,
            },
            OpKind::Pad => Op::Pad {
                low: self.ints(attrs, "low", name)?,
                high: self.ints(attrs, "high", name)?,
                interior: self.dims(attrs, "interior", name)?,
            },
            OpKind::Concatenate => Op::Concatenate {
                dim: self.int(attrs, "dim", name)?,
            },
            OpKind::Reverse => Op::Reverse {
                dims: self.dims(attrs, "dims", name)?,
            },
            OpKind::Reduce => {
                let k = self.word(attrs, "kind", name)?;
                let kind = match ReduceKind::from_name(&k) {
                    Some(k) => k,
                    None => {
                        return self.error(format!(
                            "unknown reduce kind `{k}` (sum prod max min and or)"
                        ))
                    }
                };
                Op::Reduce {
                    kind,
                    axes: self.dims(attrs, "axes", name)?,
                }
            }
            OpKind::Cumulative => {
                let k = self.word(attrs, "kind", name)?;
                let kind = match CumulativeKind::from_name(&k) {
                    Some(k) => k,
                    None => {
                        return self
                            .error(format!("unknown cumulative kind `{k}` (sum prod max min)"))
                    }
                };
                let axis = self.int(attrs, "axis", name)?;
                let reverse = match self.word(attrs, "reverse", name)?.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return self.error("`reverse` must be true or false"),
                };
                Op::Cumulative {
                    kind,
                    axis,
                    reverse,
                }
            }
            OpKind::HostCallback => Op::HostCallback {
                callback: self.int64(attrs, "callback", name)?,
                effectful: self.boolean(attrs, "effectful", name)?,
            },
            OpKind::Sort => Op::Sort {
                axis: self.int(attrs, "axis", name)?,
                num_keys: self.int(attrs, "num_keys", name)?,
                descending: self.boolean(attrs, "descending", name)?,
            },
            OpKind::DotGeneral => Op::DotGeneral(DotDims {
                lhs_batch: self.dims(attrs, "lhs_batch", name)?,
                rhs_batch: self.dims(attrs, "rhs_batch", name)?,
                lhs_contract: self.dims(attrs, "lhs_contract", name)?,
                rhs_contract: self.dims(attrs, "rhs_contract", name)?,
            }),
            OpKind::Gather => Op::Gather(GatherDims {
                offset_dims: self.dims(attrs, "offset_dims", name)?,
                collapsed_slice_dims: self.dims(attrs, "collapsed_slice_dims", name)?,
                start_index_map: self.dims(attrs, "start_index_map", name)?,
                slice_sizes: self.dims(attrs, "slice_sizes", name)?,
            }),
            OpKind::ScatterAdd => Op::ScatterAdd(ScatterDims {
                update_window_dims: self.dims(attrs, "update_window_dims", name)?,
                inserted_window_dims: self.dims(attrs, "inserted_window_dims", name)?,
                scatter_dims_to_operand_dims: self.dims(
                    attrs,
                    "scatter_dims_to_operand_dims",
                    name,
                )?,
            }),
            OpKind::DynamicSlice => Op::DynamicSlice {
                sizes: self.dims(attrs, "sizes", name)?,
            },
            OpKind::Cond => Op::Cond { branches: vec![] },
            OpKind::While => Op::While {
                cond: Box::default(),
                body: Box::default(),
            },
            OpKind::BoundedWhile => Op::BoundedWhile {
                cond: Box::default(),
                body: Box::default(),
                max_steps: self.int(attrs, "max_steps", name)?,
                checkpoints: self.int(attrs, "checkpoints", name)?,
            },
            OpKind::StopGradient => Op::StopGradient,
            OpKind::NamedAxis => {
                let k = self.word(attrs, "kind", name)?;
                let Some(kind) = NamedAxisKind::from_name(&k) else {
                    return self
                        .error(format!("unknown named_axis kind `{k}` (sum max min index)"));
                };
                let Ok(axis) = u32::try_from(self.int64(attrs, "axis", name)?) else {
                    return self.error("`axis` must fit in 32 bits");
                };
                Op::NamedAxis { axis, kind }
            }
            OpKind::CustomJvp => Op::CustomJvp {
                call: Box::default(),
                jvp: Box::default(),
            },
            OpKind::CustomVjp => Op::CustomVjp {
                call: Box::default(),
                fwd: Box::default(),
                bwd: Box::default(),
            },
            OpKind::CustomVjpLinear => Op::CustomVjpLinear {
                bwd: Box::default(),
            },
            OpKind::Checkpoint => Op::Checkpoint {
                call: Box::default(),
            },
            OpKind::Linalg(LinalgKind::Cholesky) => Op::Linalg(LinalgOp::Cholesky),
            OpKind::Linalg(LinalgKind::Lu) => Op::Linalg(LinalgOp::Lu),
            OpKind::Linalg(LinalgKind::Eigh) => Op::Linalg(LinalgOp::Eigh),
            OpKind::Linalg(LinalgKind::TriangularSolve) => Op::Linalg(LinalgOp::TriangularSolve {
                left_side: self.boolean(attrs, "left_side", name)?,
                lower: self.boolean(attrs, "lower", name)?,
                transpose_a: self.boolean(attrs, "transpose_a", name)?,
                unit_diagonal: self.boolean(attrs, "unit_diagonal", name)?,
            }),
            OpKind::Linalg(LinalgKind::Qr) => Op::Linalg(LinalgOp::Qr {
                full_matrices: self.boolean(attrs, "full_matrices", name)?,
            }),
            OpKind::Linalg(LinalgKind::Svd) => Op::Linalg(LinalgOp::Svd {
                full_matrices: self.boolean(attrs, "full_matrices", name)?,
                compute_uv: self.boolean(attrs, "compute_uv", name)?,
            }),
            OpKind::LinearSolve => Op::LinearSolve {
                matvec: Box::default(),
                solve: Box::default(),
                transpose_solve: Box::default(),
                num_consts: self.int(attrs, "num_consts", name)?,
                symmetric: self.boolean(attrs, "symmetric", name)?,
            },
            OpKind::Scan => {
                let length = self.int(attrs, "length", name)?;
                let reverse = match self.word(attrs, "reverse", name)?.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return self.error("`reverse` must be true or false"),
                };
                let num_consts = self.int(attrs, "num_consts", name)?;
                let num_carry = self.int(attrs, "num_carry", name)?;
                let unroll = self.int(attrs, "unroll", name)?;
                Op::Scan {
                    body: Box::default(),
                    length,
                    reverse,
                    num_consts,
                    num_carry,
                    unroll,
                }
            }
        })
    }

    fn literal(&self, ty: TensorType, items: &[Scalar]) -> R<HostArray> {
        if items.len() != ty.num_elements() {
            return self.error(format!(
                "constant of type {ty} needs {} values, found {}",
                ty.num_elements(),
                items.len()
            ));
        }
        let mut bytes = Vec::with_capacity(ty.size_bytes());
        for s in items {
            match (ty.dtype, s) {
                (DType::F32, _) => {
                    bytes.extend_from_slice(&self.float_bits(s, 32)?.to_le_bytes()[..4])
                }
                (DType::F64, _) => bytes.extend_from_slice(&self.float_bits(s, 64)?.to_le_bytes()),
                (DType::I32, Scalar::Num(n)) => match n.parse::<i32>() {
                    Ok(v) => bytes.extend_from_slice(&v.to_le_bytes()),
                    Err(_) => return self.error(format!("`{n}` is not an i32")),
                },
                (DType::U32, Scalar::Num(n)) => match n.parse::<u32>() {
                    Ok(v) => bytes.extend_from_slice(&v.to_le_bytes()),
                    Err(_) => return self.error(format!("`{n}` is not a u32")),
                },
                (DType::Bool, Scalar::Bool(b)) => bytes.push(*b as u8),
                (d, _) => return self.error(format!("value does not fit dtype {d}")),
            }
        }
        Ok(HostArray { ty, bytes })
    }

    fn float_bits(&self, s: &Scalar, width: u32) -> R<u64> {
        let (inf, nan) = if width == 32 {
            (f32::INFINITY.to_bits() as u64, f32::NAN.to_bits() as u64)
        } else {
            (f64::INFINITY.to_bits(), f64::NAN.to_bits())
        };
        let sign = if width == 32 { 1u64 << 31 } else { 1u64 << 63 };
        match s {
            Scalar::Inf => Ok(inf),
            Scalar::NegInf => Ok(inf | sign),
            Scalar::Nan(None) => Ok(nan),
            Scalar::Nan(Some(h)) => {
                let digits = h.strip_prefix("0x").unwrap_or("");
                match u64::from_str_radix(digits, 16) {
                    Ok(b) if width == 64 || b <= u32::MAX as u64 => {
                        let is_nan = if width == 32 {
                            f32::from_bits(b as u32).is_nan()
                        } else {
                            f64::from_bits(b).is_nan()
                        };
                        if is_nan {
                            Ok(b)
                        } else {
                            self.error(format!("`{h}` is not the bits of a NaN"))
                        }
                    }
                    _ => self.error(format!("`{h}` is not NaN bits in hex")),
                }
            }
            Scalar::Num(n) => {
                let r = if width == 32 {
                    n.parse::<f32>().map(|v| v.to_bits() as u64)
                } else {
                    n.parse::<f64>().map(|v| v.to_bits())
                };
                r.or_else(|_| self.error(format!("`{n}` is not a number")))
            }
            Scalar::Bool(_) => self.error("expected a number, found a bool"),
        }
    }
}
