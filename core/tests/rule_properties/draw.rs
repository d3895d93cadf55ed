//! Random inputs and single-op programs for the rule properties: a seeded generator, the
//! argument kinds a case draws (with gaps that keep finite differences away from kinks),
//! and a builder for small QIR programs.

use quabla::qir::{infer_result_types, Node, Op, Program, ValueId};
use quabla::{call_program, Array, DType, Result, TensorType};
use std::rc::Rc;

/// splitmix64: small, seedable, and the same on every platform.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// Uniform integer in `lo..=hi`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }
    pub fn size(&mut self, lo: usize, hi: usize) -> usize {
        self.int(lo as i64, hi as i64) as usize
    }
    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.size(0, items.len() - 1)]
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.size(0, i));
        }
    }
    /// A random permutation of `0..n`.
    pub fn perm(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        self.shuffle(&mut p);
        p
    }
    /// A random subset of `0..n`, in increasing order.
    pub fn subset(&mut self, n: usize) -> Vec<usize> {
        (0..n).filter(|_| self.coin()).collect()
    }
    pub fn shape(&mut self, rank: usize, lo: usize, hi: usize) -> Vec<usize> {
        (0..rank).map(|_| self.size(lo, hi)).collect()
    }
    /// A shape of rank `rmin..=rmax` with dims in `lo..=hi`.
    pub fn dims(&mut self, rmin: usize, rmax: usize, lo: usize, hi: usize) -> Vec<usize> {
        let rank = self.size(rmin, rmax);
        self.shape(rank, lo, hi)
    }
}

/// Where a real argument's values keep away from, so that central differences of a
/// piecewise function never straddle a kink (the f32 step is 1e-2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Gap {
    None,
    /// `|x| >= 0.5` (denominators, kinks at zero, products that must not vanish).
    FromZero,
    /// At least 0.1 from every integer.
    FromIntegers,
    /// At least 0.1 from every half-integer.
    FromHalves,
    /// All elements distinct, 0.05 apart (ties of max/min excluded).
    Distinct,
}

/// One argument of a case.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A float array of the case's dtype, uniform in `[lo, hi)` away from `gap`.
    Real {
        shape: Vec<usize>,
        lo: f64,
        hi: f64,
        gap: Gap,
    },
    /// Argument `of` (a real one drawn earlier) plus `±[lo, hi)`, elementwise.
    Offset {
        of: usize,
        lo: f64,
        hi: f64,
    },
    /// Argument `of` times `[lo, hi)`, elementwise.
    Scaled {
        of: usize,
        lo: f64,
        hi: f64,
    },
    /// An i32 or u32 array uniform in `lo..=hi`.
    Int {
        dtype: DType,
        shape: Vec<usize>,
        lo: i64,
        hi: i64,
    },
    Bool {
        shape: Vec<usize>,
    },
}

pub fn real(shape: &[usize], lo: f64, hi: f64) -> Arg {
    Arg::Real {
        shape: shape.to_vec(),
        lo,
        hi,
        gap: Gap::None,
    }
}

pub fn real_gap(shape: &[usize], lo: f64, hi: f64, gap: Gap) -> Arg {
    Arg::Real {
        shape: shape.to_vec(),
        lo,
        hi,
        gap,
    }
}

pub fn index(shape: &[usize], lo: i64, hi: i64) -> Arg {
    Arg::Int {
        dtype: DType::I32,
        shape: shape.to_vec(),
        lo,
        hi,
    }
}

fn away(x: f64, gap: Gap) -> f64 {
    let frac = |v: f64| v - v.floor();
    match gap {
        Gap::None | Gap::Distinct => x,
        Gap::FromZero if x.abs() < 0.5 => 0.5_f64.copysign(x) + x,
        Gap::FromIntegers => x.floor() + 0.1 + 0.8 * frac(x),
        Gap::FromHalves => x.round() - 0.4 + 0.8 * frac(x),
        Gap::FromZero => x,
    }
}

impl Arg {
    pub fn tensor_type(&self, dtype: DType, drawn: &[TensorType]) -> TensorType {
        match self {
            Arg::Real { shape, .. } => TensorType::new(dtype, shape.clone()),
            Arg::Offset { of, .. } | Arg::Scaled { of, .. } => drawn[*of].clone(),
            Arg::Int { dtype, shape, .. } => TensorType::new(*dtype, shape.clone()),
            Arg::Bool { shape } => TensorType::new(DType::Bool, shape.clone()),
        }
    }

    /// Draws this argument; `earlier` holds the arguments drawn before it, as f64 values.
    fn draw(&self, rng: &mut Rng, earlier: &[Vec<f64>]) -> Vec<f64> {
        match self {
            Arg::Real { shape, lo, hi, gap } => {
                let n: usize = shape.iter().product();
                if *gap == Gap::Distinct {
                    let mut k: Vec<f64> = (0..n).map(|i| i as f64).collect();
                    rng.shuffle(&mut k);
                    let step = ((hi - lo) / n.max(1) as f64).clamp(0.05, 0.2);
                    k.iter().map(|i| lo + i * step).collect()
                } else {
                    (0..n).map(|_| away(rng.uniform(*lo, *hi), *gap)).collect()
                }
            }
            Arg::Offset { of, lo, hi } => earlier[*of]
                .iter()
                .map(|x| {
                    let d = rng.uniform(*lo, *hi);
                    if rng.coin() {
                        x + d
                    } else {
                        x - d
                    }
                })
                .collect(),
            Arg::Scaled { of, lo, hi } => earlier[*of]
                .iter()
                .map(|x| x * rng.uniform(*lo, *hi))
                .collect(),
            Arg::Int { shape, lo, hi, .. } => {
                let n: usize = shape.iter().product();
                (0..n).map(|_| rng.int(*lo, *hi) as f64).collect()
            }
            Arg::Bool { shape } => {
                let n: usize = shape.iter().product();
                (0..n).map(|_| rng.coin() as u8 as f64).collect()
            }
        }
    }
}

/// Draws every argument of a case as arrays on `device`.
pub fn draw_args(
    args: &[Arg],
    rng: &mut Rng,
    dtype: DType,
    device: &std::sync::Arc<quabla::Device>,
) -> Result<Vec<Array>> {
    let mut values: Vec<Vec<f64>> = Vec::new();
    let mut types: Vec<TensorType> = Vec::new();
    let mut out = Vec::new();
    for a in args {
        let ty = a.tensor_type(dtype, &types);
        let v = a.draw(rng, &values);
        let arr = Array::from_slice_on(device, &v, &ty.shape)?.astype(ty.dtype)?;
        values.push(v);
        types.push(ty);
        out.push(arr);
    }
    Ok(out)
}

/// What a case's derivatives are checked against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Grads {
    /// JVP against central differences, VJP against JVP.
    Both,
    /// JVP only: reverse mode refuses this op (an unbounded `while`, issue 19).
    JvpOnly,
    /// VJP against central differences (`<u, Δf/2ε> = <vjp(u), t>`); forward mode refuses
    /// the op (`custom_vjp`, as JAX).
    VjpOnly,
    /// Every tangent and cotangent is zero (`stop_gradient`).
    Zero,
}

pub type Func = Rc<dyn Fn(&[Array]) -> Result<Vec<Array>>>;

/// One drawn case of an op: a function using it, its arguments, and how to check it.
pub struct Case {
    pub name: String,
    /// The dtype of the case's real arguments.
    pub dtype: DType,
    pub f: Func,
    pub args: Vec<Arg>,
    pub grads: Grads,
    /// Multiplies the dtype's default tolerances (compositions through a factorization in
    /// f32 are noisier than one elementwise op).
    pub tol_scale: f64,
    /// The dtype whose finite-difference step and tolerances apply (a conversion to f32
    /// is only as smooth as f32).
    pub tol_dtype: DType,
    /// A finite-difference step other than the dtype's default.
    pub eps: Option<f64>,
    /// Whether `vmap` must match the loop bit for bit. Contractions may not: a batched
    /// `dot_general` is a matrix product of another shape, whose kernel may sum in another
    /// order; they are compared to a few ulps instead.
    pub exact: bool,
}

impl Case {
    pub fn new(name: impl Into<String>, dtype: DType, f: Func, args: Vec<Arg>) -> Case {
        Case {
            name: name.into(),
            dtype,
            f,
            args,
            grads: Grads::Both,
            tol_scale: 1.0,
            tol_dtype: dtype,
            eps: None,
            exact: true,
        }
    }
    pub fn inexact(mut self) -> Case {
        self.exact = false;
        self
    }
    pub fn eps(mut self, eps: f64) -> Case {
        self.eps = Some(eps);
        self
    }
    pub fn tol_dtype(mut self, d: DType) -> Case {
        self.tol_dtype = d;
        self
    }
    pub fn grads(mut self, g: Grads) -> Case {
        self.grads = g;
        self
    }
    pub fn tol(mut self, scale: f64) -> Case {
        self.tol_scale = scale;
        self
    }
}

/// Builds small QIR programs node by node, taking result types from the shape rules.
pub struct Builder {
    inputs: Vec<TensorType>,
    types: Vec<TensorType>,
    nodes: Vec<Node>,
}

impl Builder {
    pub fn new(inputs: Vec<TensorType>) -> Builder {
        Builder {
            types: inputs.clone(),
            inputs,
            nodes: vec![],
        }
    }
    /// Appends `op`; `None` if the shape rules refuse it (the generators then draw again).
    pub fn push(
        &mut self,
        op: Op,
        operands: &[ValueId],
        declared: Vec<TensorType>,
    ) -> Option<Vec<ValueId>> {
        let tys: Vec<&TensorType> = operands.iter().map(|v| &self.types[v.0 as usize]).collect();
        let results = infer_result_types(&op, &tys, &declared, &[]).ok()?;
        let first = self.types.len() as u32;
        let ids: Vec<ValueId> = (0..results.len() as u32)
            .map(|k| ValueId(first + k))
            .collect();
        self.types.extend(results.iter().cloned());
        self.nodes.push(Node {
            op,
            operands: operands.to_vec(),
            results,
        });
        Some(ids)
    }
    pub fn finish(self, outputs: Vec<ValueId>) -> Program {
        Program {
            inputs: self.inputs,
            nodes: self.nodes,
            outputs,
        }
    }
}

/// `op` applied to inputs of the given types, every result an output; `None` when the
/// shape rules refuse the combination.
pub fn single(op: Op, inputs: Vec<TensorType>, declared: Vec<TensorType>) -> Option<Program> {
    let ids: Vec<ValueId> = (0..inputs.len() as u32).map(ValueId).collect();
    let mut b = Builder::new(inputs);
    let outs = b.push(op, &ids, declared)?;
    Some(b.finish(outs))
}

/// The function that runs `p` (traced inputs inline it, so every transform applies).
pub fn program_fn(p: Program) -> Func {
    Rc::new(move |a: &[Array]| call_program(&p, a))
}

/// The case running a single-op program over `args`.
pub fn single_case(
    name: impl Into<String>,
    op: Op,
    args: Vec<Arg>,
    dtype: DType,
    declared: Vec<TensorType>,
) -> Option<Case> {
    let mut types = Vec::new();
    for a in &args {
        let t = a.tensor_type(dtype, &types);
        types.push(t);
    }
    let p = single(op, types, declared)?;
    Some(Case::new(name, dtype, program_fn(p), args))
}
