//! A loop body must not allocate each iteration: counted with an allocator that tallies this
//! thread's allocations, large ones (buffers) apart. The interpreter may allocate bookkeeping
//! per iteration but takes its buffers from the pool; a compiled loop allocates nothing at
//! all. The bodies are the workloads' shapes: a tanh RNN with a matrix product, a scan tape,
//! conjugate gradients on a 5-point Laplacian and Dormand-Prince steps with step-size control.

use crate::exec::run;
use crate::plan::{Plan, Tier};
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::Program;
use quabla_abi::{DType, TensorType};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Allocations of at least this many bytes count as buffers: every array of the test
/// programs is larger, the interpreter's bookkeeping (a value table of a few hundred
/// entries, argument lists) smaller.
const BUFFER_BYTES: usize = 8192;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static BUFFERS: Cell<usize> = const { Cell::new(0) };
    static ALL: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNTING.try_with(|c| {
            if c.get() {
                let _ = ALL.try_with(|a| a.set(a.get() + 1));
                if layout.size() >= BUFFER_BYTES {
                    let _ = BUFFERS.try_with(|b| b.set(b.get() + 1));
                }
            }
        });
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A 1024-wide tanh RNN scanned over `steps` rows of `xs`, stacking every state.
fn rnn(steps: usize) -> Program {
    let t = steps;
    Program::parse(&format!(
        "program(%0: f64[1024,1024], %1: f64[1024], %2: f64[{t},1024]) {{
  %3 = constant[value=[0]]() : i32[]
  %4 = broadcast_in_dim[dims=[]](%3) : i32[]
  %5 = convert(%2) : f64[{t},1024]
  %6, %7, %8, %9 = while(%4, %1, %2, %5) : i32[], f64[1024], f64[{t},1024], f64[{t},1024] {{
cond(%0: i32[], %1: f64[1024], %2: f64[{t},1024], %3: f64[{t},1024]) {{
  %4 = constant[value=[{t}]]() : i32[]
  %5 = compare[dir=lt](%0, %4) : bool[]
  return %5
}}
body(%0: i32[], %1: f64[1024], %2: f64[{t},1024], %3: f64[{t},1024]) {{
  %4 = constant[value=[0]]() : i32[]
  %5 = dynamic_slice[sizes=[1,1024]](%2, %0, %4) : f64[1,1024]
  %6 = reshape(%5) : f64[1024]
  %7 = reshape(%1) : f64[1024,1]
  %8 = constant[value=[0.001]]() : f64[]
  %9 = broadcast_in_dim[dims=[]](%8) : f64[1024,1024]
  %10 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%9, %7) : f64[1024,1]
  %11 = reshape(%10) : f64[1024]
  %12 = add(%11, %6) : f64[1024]
  %13 = tanh(%12) : f64[1024]
  %14 = reduce[kind=sum, axes=[0]](%13) : f64[]
  %15 = broadcast_in_dim[dims=[]](%14) : f64[1024]
  %16 = mul(%13, %15) : f64[1024]
  %17 = reshape(%16) : f64[1,1024]
  %18 = dynamic_update_slice(%3, %17, %0, %4) : f64[{t},1024]
  %19 = constant[value=[1]]() : i32[]
  %20 = add(%0, %19) : i32[]
  return %20, %13, %2, %18
}}
  }}
  return %7, %9
}}
"
    ))
    .expect("test program parses")
}

fn f64_tensor(shape: Vec<usize>, fill: f64) -> Tensor {
    let n = shape.iter().product();
    Tensor::new(
        TensorType::new(DType::F64, shape),
        Storage::F64((0..n).map(|i| fill * ((i % 7) as f64 - 3.0)).collect()),
    )
}

/// Buffers allocated by a run of `steps` iterations.
fn buffers_for(steps: usize) -> usize {
    let p = rnn(steps);
    p.validate().expect("test program is valid");
    let plan = Plan::new(p, Tier::Interpreter);
    let inputs = vec![
        f64_tensor(vec![1024, 1024], 0.01),
        f64_tensor(vec![1024], 0.1),
        f64_tensor(vec![steps, 1024], 0.2),
    ];
    counted(&plan, inputs).0
}

/// `(buffers, allocations)` of a second run of `plan` (the first warms this thread's
/// free lists), on a one-thread pool so every allocation happens on the counted thread.
fn counted(plan: &Plan, inputs: Vec<Tensor>) -> (usize, usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    pool.install(|| {
        drop(run(plan, inputs.clone()));
        BUFFERS.with(|b| b.set(0));
        ALL.with(|a| a.set(0));
        COUNTING.with(|c| c.set(true));
        let out = run(plan, inputs);
        COUNTING.with(|c| c.set(false));
        drop(out);
        (BUFFERS.with(|b| b.get()), ALL.with(|a| a.get()))
    })
}

/// `h <- tanh(0.5 h + x_t)` over `steps` rows of `xs` of `w` units, every state kept in
/// a tape: the shape of a scan body without a matrix product (gemm allocates its
/// packing buffers on every call, in either tier).
fn recurrence(steps: usize, w: usize) -> Program {
    let t = steps;
    Program::parse(&format!(
        "program(%0: f64[{w}], %1: f64[{t},{w}]) {{
  %2 = constant[value=[0]]() : i32[]
  %3, %4, %5 = while(%2, %0, %1) : i32[], f64[{w}], f64[{t},{w}] {{
cond(%0: i32[], %1: f64[{w}], %2: f64[{t},{w}]) {{
  %3 = constant[value=[{t}]]() : i32[]
  %4 = compare[dir=lt](%0, %3) : bool[]
  return %4
}}
body(%0: i32[], %1: f64[{w}], %2: f64[{t},{w}]) {{
  %3 = constant[value=[0]]() : i32[]
  %4 = dynamic_slice[sizes=[1,{w}]](%2, %0, %3) : f64[1,{w}]
  %5 = reshape(%4) : f64[{w}]
  %6 = constant[value=[0.5]]() : f64[]
  %7 = broadcast_in_dim[dims=[]](%6) : f64[{w}]
  %8 = mul(%1, %7) : f64[{w}]
  %9 = add(%8, %5) : f64[{w}]
  %10 = tanh(%9) : f64[{w}]
  %11 = reshape(%10) : f64[1,{w}]
  %12 = dynamic_update_slice(%2, %11, %0, %3) : f64[{t},{w}]
  %13 = constant[value=[1]]() : i32[]
  %14 = add(%0, %13) : i32[]
  return %14, %10, %12
}}
  }}
  return %4, %5
}}
"
    ))
    .expect("test program parses")
}

/// Allocations of every size (buffers and bookkeeping alike) by a compiled run of the
/// recurrence over `steps` iterations.
fn allocations_compiled(steps: usize) -> usize {
    let p = recurrence(steps, 64);
    p.validate().expect("test program is valid");
    let plan = Plan::new(p, Tier::Compiled);
    assert!(
        plan.native[1].is_some() || plan.whole.is_some(),
        "the recurrence compiles"
    );
    let inputs = vec![f64_tensor(vec![64], 0.1), f64_tensor(vec![steps, 64], 0.2)];
    counted(&plan, inputs).1
}

/// A compiled loop's iterations allocate nothing at all: as many allocations for 4
/// iterations as for 64 (the body's arrays belong to the call, made once).
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn compiled_loop_iterations_allocate_nothing() {
    let (short, long) = (allocations_compiled(4), allocations_compiled(64));
    assert_eq!(
        short, long,
        "allocations: {short} for 4 iterations, {long} for 64: a compiled iteration allocates"
    );
}

#[test]
fn loop_iterations_reuse_buffers() {
    let (short, long) = (buffers_for(4), buffers_for(64));
    assert_eq!(
        short, long,
        "buffers allocated: {short} for 4 iterations, {long} for 64: a loop body allocates"
    );
}

/// Conjugate gradients on the 5-point Laplacian of an `n` x `n` grid (a padded array read
/// through four shifted windows), `steps` iterations from `x = 0` with carries
/// `(i, x, r, p, r.r)`.
fn conjugate_gradients(steps: usize, n: usize) -> Program {
    let (m, k) = (n + 2, n + 1);
    let g = format!("f64[{n},{n}]");
    let carries = format!("%0: i32[], %1: {g}, %2: {g}, %3: {g}, %4: f64[]");
    let src = format!(
        "program(%0: {g}) {{
  %1 = constant[value=[0]]() : i32[]
  %2 = constant[value=[0]]() : f64[]
  %3 = broadcast_in_dim[dims=[]](%2) : {g}
  %4 = mul(%0, %0) : {g}
  %5 = reduce[kind=sum, axes=[0,1]](%4) : f64[]
  %6, %7, %8, %9, %10 = while(%1, %3, %0, %0, %5) : i32[], {g}, {g}, {g}, f64[] {{
    cond({carries}) {{
      %5 = constant[value=[{steps}]]() : i32[]
      %6 = compare[dir=lt](%0, %5) : bool[]
      return %6
    }}
    body({carries}) {{
      %5 = constant[value=[0]]() : f64[]
      %6 = pad[low=[1,1], high=[1,1], interior=[0,0]](%3, %5) : f64[{m},{m}]
      %7 = slice[start=[0,1], limit=[{n},{k}], strides=[1,1]](%6) : {g}
      %8 = slice[start=[2,1], limit=[{m},{k}], strides=[1,1]](%6) : {g}
      %9 = slice[start=[1,0], limit=[{k},{n}], strides=[1,1]](%6) : {g}
      %10 = slice[start=[1,2], limit=[{k},{m}], strides=[1,1]](%6) : {g}
      %11 = add(%7, %8) : {g}
      %12 = add(%9, %10) : {g}
      %13 = add(%11, %12) : {g}
      %14 = constant[value=[4]]() : f64[]
      %15 = broadcast_in_dim[dims=[]](%14) : {g}
      %16 = mul(%3, %15) : {g}
      %17 = sub(%16, %13) : {g}
      %18 = mul(%3, %17) : {g}
      %19 = reduce[kind=sum, axes=[0,1]](%18) : f64[]
      %20 = div(%4, %19) : f64[]
      %21 = broadcast_in_dim[dims=[]](%20) : {g}
      %22 = mul(%21, %3) : {g}
      %23 = add(%1, %22) : {g}
      %24 = mul(%21, %17) : {g}
      %25 = sub(%2, %24) : {g}
      %26 = mul(%25, %25) : {g}
      %27 = reduce[kind=sum, axes=[0,1]](%26) : f64[]
      %28 = div(%27, %4) : f64[]
      %29 = broadcast_in_dim[dims=[]](%28) : {g}
      %30 = mul(%29, %3) : {g}
      %31 = add(%25, %30) : {g}
      %32 = constant[value=[1]]() : i32[]
      %33 = add(%0, %32) : i32[]
      return %33, %23, %25, %31, %27
    }}
  }}
  return %7, %10
}}"
    );
    Program::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// A loop body's QIR text, built a line at a time; values are numbered from `next`.
struct Body {
    lines: Vec<String>,
    next: usize,
    /// The state's type, `f32[w]`.
    vector: String,
}

impl Body {
    fn push(&mut self, rhs: String) -> usize {
        self.lines.push(format!("%{} = {rhs}", self.next));
        self.next += 1;
        self.next - 1
    }
    fn scalar(&mut self, c: f64) -> usize {
        self.push(format!("constant[value=[{c:?}]]() : f32[]"))
    }
    fn splat(&mut self, s: usize) -> usize {
        self.push(format!("broadcast_in_dim[dims=[]](%{s}) : {}", self.vector))
    }
    fn op(&mut self, op: &str, a: usize, b: usize) -> usize {
        let ty = self.vector.clone();
        self.push(format!("{op}(%{a}, %{b}) : {ty}"))
    }
    fn scalar_op(&mut self, op: &str, a: usize, b: usize) -> usize {
        self.push(format!("{op}(%{a}, %{b}) : f32[]"))
    }
    /// `y + hv * sum(c k)` over the nonzero coefficients.
    fn combination(&mut self, y: usize, hv: usize, terms: &[(f64, usize)]) -> usize {
        let mut acc: Option<usize> = None;
        for (c, k) in terms.iter().filter(|(c, _)| *c != 0.0) {
            let cs = self.scalar(*c);
            let cv = self.splat(cs);
            let term = self.op("mul", cv, *k);
            acc = Some(match acc {
                None => term,
                Some(a) => self.op("add", a, term),
            });
        }
        let Some(sum) = acc else { return y };
        let step = self.op("mul", hv, sum);
        self.op("add", y, step)
    }
    /// The field `f(y) = tanh(y) - y/2`.
    fn field(&mut self, y: usize) -> usize {
        let ty = self.vector.clone();
        let t = self.push(format!("tanh(%{y}) : {ty}"));
        let half = self.scalar(0.5);
        let hv = self.splat(half);
        let d = self.op("mul", hv, y);
        self.op("sub", t, d)
    }
}

/// Dormand-Prince 5(4) coefficients: the stages' rows, the fifth-order weights (the last
/// stage's row) and the fourth-order ones.
const DOPRI_A: [&[f64]; 6] = [
    &[1.0 / 5.0],
    &[3.0 / 40.0, 9.0 / 40.0],
    &[44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0],
    &[
        19372.0 / 6561.0,
        -25360.0 / 2187.0,
        64448.0 / 6561.0,
        -212.0 / 729.0,
    ],
    &[
        9017.0 / 3168.0,
        -355.0 / 33.0,
        46732.0 / 5247.0,
        49.0 / 176.0,
        -5103.0 / 18656.0,
    ],
    &[
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
    ],
];
const DOPRI_B4: [f64; 7] = [
    5179.0 / 57600.0,
    0.0,
    7571.0 / 16695.0,
    393.0 / 640.0,
    -92097.0 / 339200.0,
    187.0 / 2100.0,
    1.0 / 40.0,
];

/// `steps` adaptive Dormand-Prince steps of `y' = tanh(y) - y/2` over `f32[w]`, with carries
/// `(i, t, y, h)`: seven stages, the error norm against `1e-6 + 1e-3 max(|y|, |y5|)`, the
/// step accepted or not by a `select`, and `h` scaled by `clamp(0.9 err^(-1/5), 0.2, 10)`.
fn dopri5(steps: usize, w: usize) -> Program {
    let v = format!("f32[{w}]");
    let mut b = Body {
        lines: Vec::new(),
        next: 4,
        vector: v.clone(),
    };
    let (t, y, h) = (1, 2, 3);
    let hv = b.splat(h);
    let mut k = vec![b.field(y)];
    let mut y5 = y;
    for row in DOPRI_A {
        let terms: Vec<(f64, usize)> = row.iter().copied().zip(k.iter().copied()).collect();
        let ys = b.combination(y, hv, &terms);
        k.push(b.field(ys));
        y5 = ys;
    }
    let zero = b.scalar(0.0);
    let zv = b.splat(zero);
    let weights: Vec<(f64, usize)> = DOPRI_A[5]
        .iter()
        .chain([&0.0])
        .zip(DOPRI_B4)
        .map(|(b5, b4)| b5 - b4)
        .zip(k.iter().copied())
        .collect();
    let err = b.combination(zv, hv, &weights);
    let ay = b.push(format!("abs(%{y}) : {v}"));
    let ay5 = b.push(format!("abs(%{y5}) : {v}"));
    let big = b.op("max", ay, ay5);
    let (rtol, atol) = (b.scalar(1e-3), b.scalar(1e-6));
    let (rv, av) = (b.splat(rtol), b.splat(atol));
    let rel = b.op("mul", rv, big);
    let scale = b.op("add", av, rel);
    let ratio = b.op("div", err, scale);
    let sq = b.op("mul", ratio, ratio);
    let total = b.push(format!("reduce[kind=sum, axes=[0]](%{sq}) : f32[]"));
    let width = b.scalar(w as f64);
    let mean = b.scalar_op("div", total, width);
    let norm = b.push(format!("sqrt(%{mean}) : f32[]"));
    let one = b.scalar(1.0);
    let accept = b.push(format!("compare[dir=le](%{norm}, %{one}) : bool[]"));
    let (exponent, safety) = (b.scalar(-0.2), b.scalar(0.9));
    let grow = b.scalar_op("pow", norm, exponent);
    let factor = b.scalar_op("mul", safety, grow);
    let (lo, hi) = (b.scalar(0.2), b.scalar(10.0));
    let factor = b.scalar_op("max", factor, lo);
    let factor = b.scalar_op("min", factor, hi);
    let accepts = b.push(format!("broadcast_in_dim[dims=[]](%{accept}) : bool[{w}]"));
    let y_next = b.push(format!("select(%{accepts}, %{y5}, %{y}) : {v}"));
    let advanced = b.scalar_op("add", t, h);
    let t_next = b.push(format!("select(%{accept}, %{advanced}, %{t}) : f32[]"));
    let h_next = b.scalar_op("mul", h, factor);
    let i1 = b.push("constant[value=[1]]() : i32[]".into());
    let i_next = b.push(format!("add(%0, %{i1}) : i32[]"));
    let carries = format!("%0: i32[], %1: f32[], %2: {v}, %3: f32[]");
    let src = format!(
        "program(%0: {v}) {{
  %1 = constant[value=[0]]() : i32[]
  %2 = constant[value=[0]]() : f32[]
  %3 = constant[value=[0.5]]() : f32[]
  %4, %5, %6, %7 = while(%1, %2, %0, %3) : i32[], f32[], {v}, f32[] {{
    cond({carries}) {{
      %4 = constant[value=[{steps}]]() : i32[]
      %5 = compare[dir=lt](%0, %4) : bool[]
      return %5
    }}
    body({carries}) {{
      {}
      return %{i_next}, %{t_next}, %{y_next}, %{h_next}
    }}
  }}
  return %5, %6, %7
}}",
        b.lines.join("\n      ")
    );
    Program::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn f32_tensor(shape: Vec<usize>, fill: f32) -> Tensor {
    let n = shape.iter().product();
    Tensor::new(
        TensorType::new(DType::F32, shape),
        Storage::F32((0..n).map(|i| fill * ((i % 7) as f32 - 3.0)).collect()),
    )
}

/// `(buffers, allocations)` of a run of `program(steps)` on `inputs` in `tier`.
fn counted_in(tier: Tier, program: Program, inputs: Vec<Tensor>) -> (usize, usize) {
    program.validate().expect("test program is valid");
    let plan = Plan::new(program, tier);
    if tier != Tier::Interpreter {
        let compiled = plan.native.iter().any(Option::is_some) || plan.whole.is_some();
        assert!(compiled, "the loop compiles");
    }
    counted(&plan, inputs)
}

/// The CG and Dormand-Prince bodies, run for 4 and for 64 iterations in `tier`: the
/// interpreter takes as many buffers either way, and a compiled loop makes as many
/// allocations of any size.
fn assert_iterations_allocate_nothing(tier: Tier) {
    let n = 33;
    let grid = || vec![f64_tensor(vec![n, n], 0.3)];
    let state = || vec![f32_tensor(vec![4096], 0.7)];
    let cg = |steps| counted_in(tier, conjugate_gradients(steps, n), grid());
    let dp = |steps| counted_in(tier, dopri5(steps, 4096), state());
    for (name, short, long) in [("CG", cg(4), cg(64)), ("dopri5", dp(4), dp(64))] {
        let (short, long) = match tier {
            Tier::Interpreter => (short.0, long.0),
            Tier::Compiled | Tier::Loops => (short.1, long.1),
        };
        assert_eq!(
            short, long,
            "{name} in {tier:?}: {short} for 4 iterations, {long} for 64: an iteration allocates"
        );
    }
}

#[test]
fn cg_and_dopri5_iterations_reuse_buffers() {
    assert_iterations_allocate_nothing(Tier::Interpreter);
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn compiled_cg_and_dopri5_iterations_allocate_nothing() {
    assert_iterations_allocate_nothing(Tier::Compiled);
    assert_iterations_allocate_nothing(Tier::Loops);
}

/// The Dormand-Prince loop (f32 `tanh` and `pow` kernels among its ops) gives the same bits
/// in both tiers, and its accepted steps follow the ODE: `y` stays finite and `t` advances.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn dopri5_steps_give_the_same_bits_in_both_tiers() {
    let p = dopri5(40, 1024);
    let y0 = f32_tensor(vec![1024], 0.7);
    let compiled = run(&Plan::new(p.clone(), Tier::Compiled), vec![y0.clone()]);
    let interpreted = run(&Plan::new(p, Tier::Interpreter), vec![y0]);
    for (a, b) in compiled.iter().zip(&interpreted) {
        assert_eq!(a.data.to_bytes(), b.data.to_bytes());
    }
    let Storage::F32(t) = &*interpreted[0].data else {
        panic!("t is f32")
    };
    assert!(t[0] > 1.0, "40 steps advance t past 1, not to {}", t[0]);
}
