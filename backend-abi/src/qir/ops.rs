//! The QIR primitive set: every operation a backend implements, with its attributes.
//!
//! Shape and dtype rules live in `shape_rules.rs`; the text syntax of each op in `text/`.

use crate::HostArray;
use serde::{Deserialize, Serialize};

use super::op_spec::Family;
use super::Program;

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $text:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $($variant),* }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The name used in the text form.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text),* }
            }

            /// Parses the text-form name.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)* _ => None }
            }
        }
    };
}

named_enum!(
    /// Elementwise functions of one operand.
    UnaryOp {
        Neg = "neg", Abs = "abs", Sign = "sign", Floor = "floor", Ceil = "ceil",
        Round = "round", Exp = "exp", Exp2 = "exp2", Expm1 = "expm1", Log = "log",
        Log1p = "log1p", Sqrt = "sqrt", Rsqrt = "rsqrt", Cbrt = "cbrt", Sin = "sin",
        Cos = "cos", Tan = "tan", Asin = "asin", Acos = "acos", Atan = "atan",
        Sinh = "sinh", Cosh = "cosh", Tanh = "tanh", Asinh = "asinh", Acosh = "acosh",
        Atanh = "atanh", Erf = "erf", Erfc = "erfc", ErfInv = "erf_inv", Logistic = "logistic",
        IsFinite = "is_finite", Not = "not",
    }
);

named_enum!(
    /// Elementwise functions of two operands of one dtype and shape.
    BinaryOp {
        Add = "add", Sub = "sub", Mul = "mul", Div = "div", Rem = "rem", Pow = "pow",
        Max = "max", Min = "min", Atan2 = "atan2", And = "and", Or = "or", Xor = "xor",
        ShiftLeft = "shift_left", ShiftRightLogical = "shift_right_logical",
        ShiftRightArithmetic = "shift_right_arithmetic",
    }
);

named_enum!(
    /// Comparison directions; NaN compares unequal to everything (so `ne` is true).
    CompareDir { Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge" }
);

named_enum!(
    /// Monoids a `reduce` folds with.
    ReduceKind { Sum = "sum", Prod = "prod", Max = "max", Min = "min", And = "and", Or = "or" }
);

named_enum!(
    /// Monoids a cumulative scan folds with.
    CumulativeKind { Sum = "sum", Prod = "prod", Max = "max", Min = "min" }
);

named_enum!(
    /// What a `named_axis` op computes over a named `vmap` axis: the sum, maximum or
    /// minimum of its operand across the axis (JAX's `psum`, `pmax`, `pmin`), or the
    /// element's position along it (`axis_index`, no operand).
    NamedAxisKind { Sum = "sum", Max = "max", Min = "min", Index = "index" }
);

/// Dimension numbers of a `dot_general`: result dims are batch, lhs free, rhs free.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DotDims {
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
}

/// Dense linear algebra on the last two axes of float arrays, batched over the leading
/// axes (as `jax.lax.linalg`). A backend may decline these through its capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LinalgOp {
    /// The lower Cholesky factor of a symmetric positive definite matrix, read from its
    /// lower triangle (upper triangle of the result zero); NaN everywhere when the matrix is
    /// not numerically positive definite, as JAX.
    Cholesky,
    /// LU with partial pivoting of square matrices: results `(lu, pivots, permutation)`:
    /// `lu` holds unit-lower `L` below the diagonal and `U` on and above it; `pivots`
    /// (i32) are row swaps applied in order (row `i` with row `pivots[i]`); `permutation`
    /// (i32) is their effect, `a[permutation] = L U`.
    Lu,
    /// `op(a) x = b` (`left_side`) or `x op(a) = b`, with `a` triangular (`lower` or upper;
    /// the other triangle is ignored), `op` the transpose when `transpose_a`, and ones
    /// assumed on the diagonal with `unit_diagonal`. Operands `(a, b)`.
    TriangularSolve {
        left_side: bool,
        lower: bool,
        transpose_a: bool,
        unit_diagonal: bool,
    },
    /// Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix read from
    /// its lower triangle: results `(w, v)` with `a v = v diag(w)`.
    Eigh,
    /// Householder QR: results `(q, r)`, reduced (`q` m×k, `r` k×n, k = min(m, n)) or
    /// complete (`q` m×m, `r` m×n).
    Qr { full_matrices: bool },
    /// Singular values (descending) and, with `compute_uv`, vectors: results `(u, s, vt)`
    /// with `a = u diag(s) vt`, reduced or full; just `(s)` otherwise.
    Svd {
        full_matrices: bool,
        compute_uv: bool,
    },
}

/// XLA gather dimension numbers. The index vector is always the last dim of the indices;
/// start indices are clamped so each slice lies inside the operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GatherDims {
    pub offset_dims: Vec<usize>,
    pub collapsed_slice_dims: Vec<usize>,
    pub start_index_map: Vec<usize>,
    pub slice_sizes: Vec<usize>,
}

/// XLA scatter dimension numbers. The index vector is always the last dim of the indices;
/// an update window that does not lie wholly inside the operand is dropped.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScatterDims {
    pub update_window_dims: Vec<usize>,
    pub inserted_window_dims: Vec<usize>,
    pub scatter_dims_to_operand_dims: Vec<usize>,
}

/// One QIR operation. The result types live on the node, so ops whose result type is not
/// implied by their operands (`convert`, `reshape`, `iota`, `constant`) need no attribute.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// A literal array; no operands.
    Constant(HostArray),
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(CompareDir),
    /// `select(pred: bool, on_true, on_false)`, all of one shape.
    Select,
    /// Value conversion to the result dtype (float to int truncates and saturates, NaN to 0).
    Convert,
    /// Reinterprets the bits among the 32-bit dtypes (f32, i32, u32).
    Bitcast,
    /// Counts 0, 1, ... along `dim` of the result type.
    Iota {
        dim: usize,
    },
    /// Operand dim `i` becomes result dim `dims[i]`; other result dims repeat.
    BroadcastInDim {
        dims: Vec<usize>,
    },
    /// Row-major reshape to the result shape.
    Reshape,
    /// Result dim `i` is operand dim `perm[i]`.
    Transpose {
        perm: Vec<usize>,
    },
    Slice {
        start: Vec<usize>,
        limit: Vec<usize>,
        strides: Vec<usize>,
    },
    /// `pad(operand, value: scalar)`; negative low/high crop.
    Pad {
        low: Vec<i64>,
        high: Vec<i64>,
        interior: Vec<usize>,
    },
    Concatenate {
        dim: usize,
    },
    Reverse {
        dims: Vec<usize>,
    },
    Reduce {
        kind: ReduceKind,
        axes: Vec<usize>,
    },
    Cumulative {
        kind: CumulativeKind,
        axis: usize,
        reverse: bool,
    },
    /// `sort(operands...)`: every operand (one shape, any dtypes) permuted along `axis` by
    /// one stable sort, ordered lexicographically by the first `num_keys` operands. Floats
    /// order as numpy's: `-0` ties `+0`, every NaN after `+inf`. `descending` reverses the
    /// order of unequal keys and keeps equal keys in their original order (so NaNs come
    /// first), as JAX's `sort(..., descending=True)` of a stable sort.
    Sort {
        axis: usize,
        num_keys: usize,
        descending: bool,
    },
    DotGeneral(DotDims),
    /// `gather(operand, indices: i32)`.
    Gather(GatherDims),
    /// `scatter_add(operand, indices: i32, updates)`.
    ScatterAdd(ScatterDims),
    /// `dynamic_slice(operand, start_0: i32[], ...)`; starts clamp so the slice fits.
    DynamicSlice {
        sizes: Vec<usize>,
    },
    /// `dynamic_update_slice(operand, update, start_0: i32[], ...)`; starts clamp.
    DynamicUpdateSlice,
    /// `cond(index: i32[], operands...)`: runs one branch; an out-of-range index runs the last.
    Cond {
        branches: Vec<Program>,
    },
    /// `while(carry...)`: runs `body` while `cond` returns true.
    While {
        cond: Box<Program>,
        body: Box<Program>,
    },
    /// Calls the host function registered as `callback` (see `host::callbacks`) with the
    /// operands' values; its results have the node's declared types. `effectful` calls
    /// (`debug.print`, `debug.callback`) run even when no result is used, in program order,
    /// and are never merged or folded; the others (`pure_callback`) may be dropped when
    /// unused. An optional capability: a backend that does not list it refuses the program.
    HostCallback {
        callback: u64,
        effectful: bool,
    },
    // Core-level ops below: the core's tracer emits them and lowers them away (by inlining
    // `call`) before a program is compiled. Backends never see them: they are in no
    // capability list, so the plugin kit refuses them by name.
    /// Identity whose derivative is zero.
    StopGradient,
    /// `call` with a user JVP rule `jvp: (args, float-arg tangents) -> (outs, float-out tangents)`.
    CustomJvp {
        call: Box<Program>,
        jvp: Box<Program>,
    },
    /// `call` with a user VJP: `fwd: args -> (outs, residuals)`,
    /// `bwd: (residuals, float-out cotangents) -> float-arg cotangents`.
    CustomVjp {
        call: Box<Program>,
        fwd: Box<Program>,
        bwd: Box<Program>,
    },
    /// The tangent map of a custom VJP inside a JVP program: operands
    /// `(residuals, float-arg tangents)`, transposed by running `bwd`.
    CustomVjpLinear {
        bwd: Box<Program>,
    },
    /// `call`, whose residuals reverse mode recomputes instead of storing (remat).
    Checkpoint {
        call: Box<Program>,
    },
    /// `x = A⁻¹ b` for the linear operator `matvec`, computed by the `solve` region and
    /// differentiated by the implicit function theorem (never through the solver's
    /// iterations), as `jax.lax.custom_linear_solve`. Operands `(consts..., b...)`; every
    /// region takes `(consts..., vector...)`: `matvec` returns `A v`, `solve` returns
    /// `(A⁻¹ v..., info)` and `transpose_solve` `(A⁻ᵀ v..., info)`, `info` an i32 scalar.
    /// Results: `(x..., info)`. With `symmetric`, the transpose reuses `matvec` and `solve`.
    LinearSolve {
        matvec: Box<Program>,
        solve: Box<Program>,
        transpose_solve: Box<Program>,
        num_consts: usize,
        symmetric: bool,
    },
    /// A loop over the leading axis of `xs`: operands `(consts, init carry, xs)`, body
    /// `(consts, carry, x slices) -> (carry, y slices)`, results `(final carry, stacked ys)`.
    Scan {
        body: Box<Program>,
        length: usize,
        reverse: bool,
        num_consts: usize,
        num_carry: usize,
        /// Steps per iteration of the lowered loop (results are identical for any value).
        unroll: usize,
    },
    /// `while(carry...)` that stops after `max_steps` trips at the latest: `cond` and `body`
    /// as in `while`. Reverse mode transposes it over the trips it took (carries kept at
    /// `checkpoints` of them, each segment between two recomputed), so its cost follows
    /// the trips taken, not the bound. Lowered to a `while` with a trip counter.
    BoundedWhile {
        cond: Box<Program>,
        body: Box<Program>,
        max_steps: usize,
        checkpoints: usize,
    },
    /// Dense linear algebra (see [`LinalgOp`]).
    Linalg(LinalgOp),
    /// A collective over the batch axis that an enclosing `vmap` named with the interned
    /// name `axis` (see [`NamedAxisKind`]). A core-level op: that `vmap`'s batching rewrites
    /// it into a reduction over the batch axis (or an iota); anywhere else it is an error.
    /// Last in this enum so the binary form's variant indices of the others stay put.
    NamedAxis {
        axis: u32,
        kind: NamedAxisKind,
    },
}

impl Op {
    /// The text-form name, also used in capability lists and error messages (from the
    /// op-spec table).
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// True for the core-level ops that must be lowered before compilation.
    pub fn is_core_only(&self) -> bool {
        self.kind().spec().family == Family::CoreOnly
    }

    /// The names of the regions, in order, as the text form labels them.
    pub fn region_names(&self) -> Vec<&'static str> {
        match self {
            Op::Cond { branches } => vec!["branch"; branches.len()],
            Op::While { .. } | Op::BoundedWhile { .. } => vec!["cond", "body"],
            Op::CustomJvp { .. } => vec!["call", "jvp"],
            Op::CustomVjp { .. } => vec!["call", "fwd", "bwd"],
            Op::CustomVjpLinear { .. } => vec!["bwd"],
            Op::Checkpoint { .. } => vec!["call"],
            Op::Scan { .. } => vec!["body"],
            Op::LinearSolve { .. } => vec!["matvec", "solve", "transpose_solve"],
            _ => vec![],
        }
    }

    /// True for ops computed element by element over one shape (fusible on every backend).
    pub fn is_elementwise(&self) -> bool {
        self.kind().spec().family == Family::Elementwise
    }

    /// True when running this op does something besides computing its results: an
    /// effectful `host_callback`, or a region op with one anywhere inside. Such an op is
    /// never dropped, merged, folded or moved. The regions are walked with a stack, not
    /// recursion.
    ///
    /// ```
    /// use quabla_abi::qir::Op;
    /// assert!(Op::HostCallback { callback: 1, effectful: true }.has_effect());
    /// assert!(!Op::HostCallback { callback: 1, effectful: false }.has_effect());
    /// ```
    pub fn has_effect(&self) -> bool {
        let mut pending: Vec<&Op> = vec![self];
        while let Some(op) = pending.pop() {
            if let Op::HostCallback {
                effectful: true, ..
            } = op
            {
                return true;
            }
            for region in op.regions() {
                pending.extend(region.nodes.iter().map(|n| &n.op));
            }
        }
        false
    }

    /// Nested regions, in order.
    pub fn regions(&self) -> Vec<&Program> {
        match self {
            Op::Cond { branches } => branches.iter().collect(),
            Op::While { cond, body } | Op::BoundedWhile { cond, body, .. } => vec![cond, body],
            Op::CustomJvp { call, jvp } => vec![call, jvp],
            Op::CustomVjp { call, fwd, bwd } => vec![call, fwd, bwd],
            Op::CustomVjpLinear { bwd } => vec![bwd],
            Op::Checkpoint { call } => vec![call],
            Op::Scan { body, .. } => vec![body],
            Op::LinearSolve {
                matvec,
                solve,
                transpose_solve,
                ..
            } => vec![matvec, solve, transpose_solve],
            _ => vec![],
        }
    }

    /// The same op with its regions replaced (in the order of [`Op::regions`]).
    pub fn with_regions(&self, regions: Vec<Program>) -> Op {
        if let Op::Cond { .. } = self {
            return Op::Cond { branches: regions };
        }
        let mut it = regions.into_iter().map(Box::new);
        let mut next = || it.next().unwrap_or_default();
        match self {
            Op::While { .. } => Op::While {
                cond: next(),
                body: next(),
            },
            Op::BoundedWhile {
                max_steps,
                checkpoints,
                ..
            } => Op::BoundedWhile {
                cond: next(),
                body: next(),
                max_steps: *max_steps,
                checkpoints: *checkpoints,
            },
            Op::CustomJvp { .. } => Op::CustomJvp {
                call: next(),
                jvp: next(),
            },
            Op::CustomVjp { .. } => Op::CustomVjp {
                call: next(),
                fwd: next(),
                bwd: next(),
            },
            Op::CustomVjpLinear { .. } => Op::CustomVjpLinear { bwd: next() },
            Op::Checkpoint { .. } => Op::Checkpoint { call: next() },
            Op::Scan {
                length,
                reverse,
                num_consts,
                num_carry,
                unroll,
                ..
            } => Op::Scan {
                body: next(),
                length: *length,
                reverse: *reverse,
                num_consts: *num_consts,
                num_carry: *num_carry,
                unroll: *unroll,
            },
            Op::LinearSolve {
                num_consts,
                symmetric,
                ..
            } => Op::LinearSolve {
                matvec: next(),
                solve: next(),
                transpose_solve: next(),
                num_consts: *num_consts,
                symmetric: *symmetric,
            },
            op => op.clone(),
        }
    }
}
