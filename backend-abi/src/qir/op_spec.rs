//! The op-spec table: every QIR op's kind, name, family, arity, attribute names and dtype
//! class, in one place.
//!
//! The text form's op names, the capability vocabulary ([`OpKind::name`] is what capability
//! lists hold), [`all_op_names`] and the bindings' name dispatch are all read from here. A
//! backend declares what it implements with an exhaustive `match` over [`OpKind`] (no
//! wildcard arm), so adding a primitive is a compile error in every backend until it is
//! implemented or declined:
//!
//! ```
//! use quabla_abi::qir::{LinalgKind, OpKind};
//! fn implements(kind: OpKind) -> bool {
//!     match kind {
//!         OpKind::Unary(_) | OpKind::Binary(_) | OpKind::Compare | OpKind::Select => true,
//!         OpKind::Linalg(LinalgKind::Cholesky) => false,
//!         // ... one arm per kind; a kind added later does not compile here.
//! #       _ => false,
//!     }
//! }
//! let ops: Vec<&str> = OpKind::backend_ops().filter(|k| implements(*k)).map(|k| k.name()).collect();
//! assert!(ops.contains(&"exp") && !ops.contains(&"cholesky"));
//! ```

use super::ops::{BinaryOp, LinalgOp, Op, UnaryOp};

/// The dense factorizations, without their attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinalgKind {
    Cholesky,
    Lu,
    TriangularSolve,
    Eigh,
    Qr,
    Svd,
}

impl LinalgKind {
    pub const ALL: [LinalgKind; 6] = [
        LinalgKind::Cholesky,
        LinalgKind::Lu,
        LinalgKind::TriangularSolve,
        LinalgKind::Eigh,
        LinalgKind::Qr,
        LinalgKind::Svd,
    ];
}

/// Every QIR op without its attributes: what capability lists and backends' dispatch name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Constant,
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare,
    Select,
    Convert,
    Bitcast,
    Iota,
    BroadcastInDim,
    Reshape,
    Transpose,
    Slice,
    Pad,
    Concatenate,
    Reverse,
    Reduce,
    Cumulative,
    Sort,
    DotGeneral,
    Gather,
    ScatterAdd,
    DynamicSlice,
    DynamicUpdateSlice,
    Cond,
    While,
    HostCallback,
    Linalg(LinalgKind),
    StopGradient,
    CustomJvp,
    CustomVjp,
    CustomVjpLinear,
    Checkpoint,
    Scan,
    BoundedWhile,
    LinearSolve,
    NamedAxis,
}

/// Which part of the primitive set an op belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Constants and iota: no operands.
    Creation,
    /// Computed element by element over one shape (fusible on every backend).
    Elementwise,
    /// Data movement: results are operand elements rearranged.
    Movement,
    Reduction,
    Contraction,
    /// Data-dependent element access (gather, scatter, dynamic slices).
    Indexing,
    /// Ops with regions that backends run (cond, while).
    ControlFlow,
    /// Calls into the host process (`host_callback`): an optional capability.
    Host,
    Linalg,
    /// Exist only between tracing and lowering; no backend ever sees them.
    CoreOnly,
}

/// How many operands an op takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arity {
    Exactly(usize),
    /// Variadic, with at least this many (the rest depend on the operand types or regions).
    AtLeast(usize),
}

/// The dtypes an op accepts for its (first) data operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DTypeClass {
    /// Every dtype.
    Any,
    /// f32, f64, i32, u32.
    Numeric,
    /// f32, f64.
    Float,
    /// i32, u32.
    Integer,
    /// bool, i32, u32 (bitwise).
    Bitwise,
    /// f32, i32, u32 (bit reinterpretation).
    Bits32,
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSpec {
    pub kind: OpKind,
    /// The text form's name, also the capability name.
    pub name: &'static str,
    pub family: Family,
    pub arity: Arity,
    /// The attribute names of the text form, in printed order.
    pub attributes: &'static [&'static str],
    pub dtypes: DTypeClass,
}

const fn row(
    kind: OpKind,
    name: &'static str,
    family: Family,
    arity: Arity,
    attributes: &'static [&'static str],
    dtypes: DTypeClass,
) -> OpSpec {
    OpSpec {
        kind,
        name,
        family,
        arity,
        attributes,
        dtypes,
    }
}

fn unary_dtypes(u: UnaryOp) -> DTypeClass {
    use UnaryOp::*;
    match u {
        Neg | Abs | Sign => DTypeClass::Numeric,
        Not => DTypeClass::Bitwise,
        Floor | Ceil | Round | Exp | Exp2 | Expm1 | Log | Log1p | Sqrt | Rsqrt | Cbrt | Sin
        | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf
        | Erfc | ErfInv | Logistic | IsFinite => DTypeClass::Float,
    }
}

fn binary_dtypes(b: BinaryOp) -> DTypeClass {
    use BinaryOp::*;
    match b {
        Add | Sub | Mul | Div | Rem | Pow | Max | Min => DTypeClass::Numeric,
        Atan2 => DTypeClass::Float,
        And | Or | Xor => DTypeClass::Bitwise,
        ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => DTypeClass::Integer,
    }
}

impl OpKind {
    /// Every kind, in table order: constant, the unary ops, the binary ops, the other
    /// backend ops, the factorizations, then the core-level ops.
    pub fn all() -> impl Iterator<Item = OpKind> {
        let head = [OpKind::Constant].into_iter();
        let unary = UnaryOp::ALL.iter().map(|u| OpKind::Unary(*u));
        let binary = BinaryOp::ALL.iter().map(|b| OpKind::Binary(*b));
        use OpKind::*;
        let rest = [
            Compare,
            Select,
            Convert,
            Bitcast,
            Iota,
            BroadcastInDim,
            Reshape,
            Transpose,
            Slice,
            Pad,
            Concatenate,
            Reverse,
            Reduce,
            Cumulative,
            Sort,
            DotGeneral,
            Gather,
            ScatterAdd,
            DynamicSlice,
            DynamicUpdateSlice,
            Cond,
            While,
            HostCallback,
        ];
        let linalg = LinalgKind::ALL.into_iter().map(OpKind::Linalg);
        let core = [
            StopGradient,
            CustomJvp,
            CustomVjp,
            CustomVjpLinear,
            Checkpoint,
            Scan,
            BoundedWhile,
            LinearSolve,
            NamedAxis,
        ];
        head.chain(unary)
            .chain(binary)
            .chain(rest)
            .chain(linalg)
            .chain(core)
    }

    /// The kinds a backend may implement (every kind but the core-level ones).
    pub fn backend_ops() -> impl Iterator<Item = OpKind> {
        OpKind::all().filter(|k| k.spec().family != Family::CoreOnly)
    }

    /// The kind whose text-form name is `name`.
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::all().find(|k| k.name() == name)
    }

    /// The text-form and capability name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// This kind's row of the table.
    pub fn spec(self) -> OpSpec {
        use Arity::{AtLeast, Exactly};
        use DTypeClass::*;
        use Family::*;
        let k = self;
        match self {
            OpKind::Constant => row(k, "constant", Creation, Exactly(0), &["value"], Any),
            OpKind::Unary(u) => row(k, u.name(), Elementwise, Exactly(1), &[], unary_dtypes(u)),
            OpKind::Binary(b) => row(k, b.name(), Elementwise, Exactly(2), &[], binary_dtypes(b)),
            OpKind::Compare => row(k, "compare", Elementwise, Exactly(2), &["dir"], Any),
            OpKind::Select => row(k, "select", Elementwise, Exactly(3), &[], Any),
            OpKind::Convert => row(k, "convert", Elementwise, Exactly(1), &[], Any),
            OpKind::Bitcast => row(k, "bitcast", Elementwise, Exactly(1), &[], Bits32),
            OpKind::Iota => row(k, "iota", Creation, Exactly(0), &["dim"], Numeric),
            OpKind::BroadcastInDim => {
                row(k, "broadcast_in_dim", Movement, Exactly(1), &["dims"], Any)
            }
            OpKind::Reshape => row(k, "reshape", Movement, Exactly(1), &[], Any),
            OpKind::Transpose => row(k, "transpose", Movement, Exactly(1), &["perm"], Any),
            OpKind::Slice => row(
                k,
                "slice",
                Movement,
                Exactly(1),
                &["start", "limit", "strides"],
                Any,
            ),
            OpKind::Pad => row(
                k,
                "pad",
                Movement,
                Exactly(2),
                &["low", "high", "interior"],
                Any,
            ),
            OpKind::Concatenate => row(k, "concatenate", Movement, AtLeast(1), &["dim"], Any),
            OpKind::Reverse => row(k, "reverse", Movement, Exactly(1), &["dims"], Any),
            OpKind::Reduce => row(k, "reduce", Reduction, Exactly(1), &["kind", "axes"], Any),
            OpKind::Cumulative => row(
                k,
                "cumulative",
                Reduction,
                Exactly(1),
                &["kind", "axis", "reverse"],
                Numeric,
            ),
            OpKind::Sort => row(
                k,
                "sort",
                Movement,
                AtLeast(1),
                &["axis", "num_keys", "descending"],
                Any,
            ),
            OpKind::DotGeneral => row(
                k,
                "dot_general",
                Contraction,
                Exactly(2),
                &["lhs_batch", "rhs_batch", "lhs_contract", "rhs_contract"],
                Numeric,
            ),
            OpKind::Gather => row(
                k,
                "gather",
                Indexing,
                Exactly(2),
                &[
                    "offset_dims",
                    "collapsed_slice_dims",
                    "start_index_map",
                    "slice_sizes",
                ],
                Any,
            ),
            OpKind::ScatterAdd => row(
                k,
                "scatter_add",
                Indexing,
                Exactly(3),
                &[
                    "update_window_dims",
                    "inserted_window_dims",
                    "scatter_dims_to_operand_dims",
                ],
                Numeric,
            ),
            OpKind::DynamicSlice => row(k, "dynamic_slice", Indexing, AtLeast(1), &["sizes"], Any),
            OpKind::DynamicUpdateSlice => {
                row(k, "dynamic_update_slice", Indexing, AtLeast(2), &[], Any)
            }
            OpKind::Cond => row(k, "cond", ControlFlow, AtLeast(1), &[], Any),
            OpKind::While => row(k, "while", ControlFlow, AtLeast(0), &[], Any),
            OpKind::HostCallback => row(
                k,
                "host_callback",
                Host,
                AtLeast(0),
                &["callback", "effectful"],
                Any,
            ),
            OpKind::Linalg(l) => {
                let (name, arity, attributes): (_, _, &'static [&'static str]) = match l {
                    LinalgKind::Cholesky => ("cholesky", 1, &[]),
                    LinalgKind::Lu => ("lu", 1, &[]),
                    LinalgKind::TriangularSolve => (
                        "triangular_solve",
                        2,
                        &["left_side", "lower", "transpose_a", "unit_diagonal"],
                    ),
                    LinalgKind::Eigh => ("eigh", 1, &[]),
                    LinalgKind::Qr => ("qr", 1, &["full_matrices"]),
                    LinalgKind::Svd => ("svd", 1, &["full_matrices", "compute_uv"]),
                };
                row(k, name, Linalg, Exactly(arity), attributes, Float)
            }
            OpKind::StopGradient => row(k, "stop_gradient", CoreOnly, Exactly(1), &[], Any),
            OpKind::CustomJvp => row(k, "custom_jvp_call", CoreOnly, AtLeast(0), &[], Any),
            OpKind::CustomVjp => row(k, "custom_vjp_call", CoreOnly, AtLeast(0), &[], Any),
            OpKind::CustomVjpLinear => row(k, "custom_vjp_linear", CoreOnly, AtLeast(0), &[], Any),
            OpKind::Checkpoint => row(k, "checkpoint", CoreOnly, AtLeast(0), &[], Any),
            OpKind::NamedAxis => row(
                k,
                "named_axis",
                CoreOnly,
                AtLeast(0),
                &["axis", "kind"],
                Any,
            ),
            OpKind::Scan => row(
                k,
                "scan",
                CoreOnly,
                AtLeast(0),
                &["length", "reverse", "num_consts", "num_carry", "unroll"],
                Any,
            ),
            OpKind::BoundedWhile => row(
                k,
                "bounded_while",
                CoreOnly,
                AtLeast(0),
                &["max_steps", "checkpoints"],
                Any,
            ),
            OpKind::LinearSolve => row(
                k,
                "linear_solve",
                CoreOnly,
                AtLeast(0),
                &["num_consts", "symmetric"],
                Any,
            ),
        }
    }
}

impl LinalgOp {
    /// The text-form name (from the op-spec table).
    pub fn name(&self) -> &'static str {
        OpKind::Linalg(self.kind()).name()
    }

    /// The attribute-free kind.
    pub fn kind(&self) -> LinalgKind {
        match self {
            LinalgOp::Cholesky => LinalgKind::Cholesky,
            LinalgOp::Lu => LinalgKind::Lu,
            LinalgOp::TriangularSolve { .. } => LinalgKind::TriangularSolve,
            LinalgOp::Eigh => LinalgKind::Eigh,
            LinalgOp::Qr { .. } => LinalgKind::Qr,
            LinalgOp::Svd { .. } => LinalgKind::Svd,
        }
    }
}

impl Op {
    /// The attribute-free kind of this op (its row of the table).
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Constant(_) => OpKind::Constant,
            Op::Unary(u) => OpKind::Unary(*u),
            Op::Binary(b) => OpKind::Binary(*b),
            Op::Compare(_) => OpKind::Compare,
            Op::Select => OpKind::Select,
            Op::Convert => OpKind::Convert,
            Op::Bitcast => OpKind::Bitcast,
            Op::Iota { .. } => OpKind::Iota,
            Op::BroadcastInDim { .. } => OpKind::BroadcastInDim,
            Op::Reshape => OpKind::Reshape,
            Op::Transpose { .. } => OpKind::Transpose,
            Op::Slice { .. } => OpKind::Slice,
            Op::Pad { .. } => OpKind::Pad,
            Op::Concatenate { .. } => OpKind::Concatenate,
            Op::Reverse { .. } => OpKind::Reverse,
            Op::Reduce { .. } => OpKind::Reduce,
            Op::Cumulative { .. } => OpKind::Cumulative,
            Op::Sort { .. } => OpKind::Sort,
            Op::DotGeneral(_) => OpKind::DotGeneral,
            Op::Gather(_) => OpKind::Gather,
            Op::ScatterAdd(_) => OpKind::ScatterAdd,
            Op::DynamicSlice { .. } => OpKind::DynamicSlice,
            Op::DynamicUpdateSlice => OpKind::DynamicUpdateSlice,
            Op::Cond { .. } => OpKind::Cond,
            Op::While { .. } => OpKind::While,
            Op::HostCallback { .. } => OpKind::HostCallback,
            Op::Linalg(l) => OpKind::Linalg(l.kind()),
            Op::StopGradient => OpKind::StopGradient,
            Op::CustomJvp { .. } => OpKind::CustomJvp,
            Op::CustomVjp { .. } => OpKind::CustomVjp,
            Op::CustomVjpLinear { .. } => OpKind::CustomVjpLinear,
            Op::Checkpoint { .. } => OpKind::Checkpoint,
            Op::Scan { .. } => OpKind::Scan,
            Op::BoundedWhile { .. } => OpKind::BoundedWhile,
            Op::LinearSolve { .. } => OpKind::LinearSolve,
            Op::NamedAxis { .. } => OpKind::NamedAxis,
        }
    }
}

/// A pattern matching the unary ops defined on floats only (class [`DTypeClass::Float`] in
/// the table), for backends' exhaustive matches over [`UnaryOp`] on other dtypes: a unary op
/// added later matches neither this nor the other arms, so such a match stops compiling.
///
/// ```
/// use quabla_abi::qir::UnaryOp;
/// fn on_ints(op: UnaryOp) -> &'static str {
///     match op {
///         UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Not => "int kernel",
///         quabla_abi::float_only_unary!() => "refused by validation",
///     }
/// }
/// assert_eq!(on_ints(UnaryOp::Exp), "refused by validation");
/// ```
#[macro_export]
macro_rules! float_only_unary {
    () => {
        $crate::qir::UnaryOp::Floor
            | $crate::qir::UnaryOp::Ceil
            | $crate::qir::UnaryOp::Round
            | $crate::qir::UnaryOp::Exp
            | $crate::qir::UnaryOp::Exp2
            | $crate::qir::UnaryOp::Expm1
            | $crate::qir::UnaryOp::Log
            | $crate::qir::UnaryOp::Log1p
            | $crate::qir::UnaryOp::Sqrt
            | $crate::qir::UnaryOp::Rsqrt
            | $crate::qir::UnaryOp::Cbrt
            | $crate::qir::UnaryOp::Sin
            | $crate::qir::UnaryOp::Cos
            | $crate::qir::UnaryOp::Tan
            | $crate::qir::UnaryOp::Asin
            | $crate::qir::UnaryOp::Acos
            | $crate::qir::UnaryOp::Atan
            | $crate::qir::UnaryOp::Sinh
            | $crate::qir::UnaryOp::Cosh
            | $crate::qir::UnaryOp::Tanh
            | $crate::qir::UnaryOp::Asinh
            | $crate::qir::UnaryOp::Acosh
            | $crate::qir::UnaryOp::Atanh
            | $crate::qir::UnaryOp::Erf
            | $crate::qir::UnaryOp::Erfc
            | $crate::qir::UnaryOp::ErfInv
            | $crate::qir::UnaryOp::Logistic
            | $crate::qir::UnaryOp::IsFinite
    };
}

/// Names of every op a backend may implement, as capability lists use them.
pub fn all_op_names() -> Vec<&'static str> {
    OpKind::backend_ops().map(OpKind::name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for k in OpKind::all() {
            assert!(seen.insert(k.name()), "`{}` twice", k.name());
            assert_eq!(OpKind::from_name(k.name()), Some(k));
            assert_eq!(k.spec().kind, k);
        }
        assert_eq!(
            seen.len(),
            1 + UnaryOp::ALL.len() + BinaryOp::ALL.len() + 23 + 6 + 9
        );
        assert_eq!(OpKind::from_name("frobnicate"), None);
    }

    #[test]
    fn the_float_only_pattern_is_the_tables_float_class() {
        for u in UnaryOp::ALL {
            let in_pattern = matches!(*u, crate::float_only_unary!());
            assert_eq!(in_pattern, unary_dtypes(*u) == DTypeClass::Float, "{u:?}");
        }
    }

    #[test]
    fn core_only_kinds_are_exactly_the_ops_lowered_before_compilation() {
        let core: Vec<&str> = OpKind::all()
            .filter(|k| k.spec().family == Family::CoreOnly)
            .map(OpKind::name)
            .collect();
        assert_eq!(
            core,
            [
                "stop_gradient",
                "custom_jvp_call",
                "custom_vjp_call",
                "custom_vjp_linear",
                "checkpoint",
                "scan",
                "bounded_while",
                "linear_solve",
                "named_axis"
            ]
        );
        assert!(!all_op_names().contains(&"scan"));
        assert!(!all_op_names().contains(&"bounded_while"));
        assert!(all_op_names().contains(&"svd"));
    }
}
