//! The compiled tier against the interpreter, bit for bit, on random scalar loops: every
//! unary, binary, compare, select, convert and bitcast over every dtype it admits, nested
//! `cond` and `while`, inputs at the edges (NaN, ±inf, ±0, subnormals, i32::MIN, u32::MAX,
//! shift counts past the width, zero divisors).

use crate::exec::run;
use crate::plan::{Plan, Tier};
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::{BinaryOp, CompareDir, DTypeClass, OpKind, Program, UnaryOp};
use quabla_abi::{DType, TensorType};

/// splitmix64: a fixed, seedable stream, so a failure names its seed.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

const DTYPES: [DType; 5] = [DType::Bool, DType::I32, DType::U32, DType::F32, DType::F64];

fn admits(class: DTypeClass, d: DType) -> bool {
    match class {
        DTypeClass::Any => true,
        DTypeClass::Numeric => d != DType::Bool,
        DTypeClass::Float => d.is_float(),
        DTypeClass::Integer => matches!(d, DType::I32 | DType::U32),
        DTypeClass::Bitwise => matches!(d, DType::Bool | DType::I32 | DType::U32),
        DTypeClass::Bits32 => matches!(d, DType::F32 | DType::I32 | DType::U32),
    }
}

/// Edge values of each dtype, as bits: signed zeros, subnormals, the extremes, infinities,
/// NaN, halves (rounding ties), values past the integer range, shift counts around the width.
fn edges(d: DType) -> Vec<u64> {
    let f64s = [
        0.0f64,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.5,
        -2.5,
        3.0,
        1e-310,
        -1e-310,
        1e-40,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        0.1,
        4.0e9,
        -3.0e9,
        2147483648.0,
        -2147483649.0,
        0.7,
        40.0,
    ];
    match d {
        DType::Bool => vec![0, 1],
        DType::I32 => [
            0i32,
            1,
            -1,
            2,
            -2,
            31,
            32,
            33,
            -32,
            7,
            i32::MIN,
            i32::MAX,
            1000,
            -1000,
        ]
        .iter()
        .map(|v| *v as u32 as u64)
        .collect(),
        DType::U32 => [
            0u32,
            1,
            2,
            31,
            32,
            33,
            7,
            u32::MAX,
            0x8000_0000,
            0x7fff_ffff,
            1000,
        ]
        .iter()
        .map(|v| *v as u64)
        .collect(),
        DType::F32 => f64s.iter().map(|v| (*v as f32).to_bits() as u64).collect(),
        DType::F64 => f64s.iter().map(|v| v.to_bits()).collect(),
    }
}

fn edge_bits(rng: &mut Rng, d: DType) -> u64 {
    match (d, rng.below(4)) {
        (DType::I32 | DType::U32, 0) => rng.next() as u32 as u64,
        (DType::F32, 0) => (((rng.next() as i64 % 2000) as f32) * 0.01).to_bits() as u64,
        (DType::F64, 0) => ((rng.next() as i64 % 2000) as f64 * 0.01).to_bits(),
        _ => *rng.pick(&edges(d)),
    }
}

/// One region's text being built: its values' dtypes by id, and its lines.
struct Region {
    dtypes: Vec<DType>,
    lines: Vec<String>,
}

impl Region {
    fn new(inputs: &[DType]) -> Region {
        Region {
            dtypes: inputs.to_vec(),
            lines: Vec::new(),
        }
    }
    /// A value of dtype `d`, if the region has one: one of the latest few, so chains form
    /// and results depend on most of the nodes.
    fn some_of(&self, rng: &mut Rng, d: DType) -> Option<usize> {
        let ids: Vec<usize> = (0..self.dtypes.len())
            .filter(|&i| self.dtypes[i] == d)
            .collect();
        let recent = &ids[ids.len().saturating_sub(3)..];
        (!recent.is_empty()).then(|| *rng.pick(recent))
    }
    /// The latest value of dtype `d` (a region's result), or a new one.
    fn latest(&mut self, rng: &mut Rng, d: DType) -> usize {
        match (0..self.dtypes.len()).rev().find(|&i| self.dtypes[i] == d) {
            Some(v) => v,
            None => self.value(rng, d),
        }
    }
    fn push(&mut self, results: &[DType], text: String) -> usize {
        let first = self.dtypes.len();
        let names: Vec<String> = (first..first + results.len())
            .map(|i| format!("%{i}"))
            .collect();
        self.lines.push(format!("{} = {text}", names.join(", ")));
        self.dtypes.extend_from_slice(results);
        first
    }
    /// A value of dtype `d`: an existing one, or a new constant.
    fn value(&mut self, rng: &mut Rng, d: DType) -> usize {
        if let Some(v) = self.some_of(rng, d).filter(|_| rng.below(5) != 0) {
            return v;
        }
        let lit = match d {
            DType::Bool => ["true", "false"][rng.below(2)].to_string(),
            DType::I32 => ["0", "1", "-3", "31", "40"][rng.below(5)].to_string(),
            DType::U32 => ["0", "1", "3", "31", "40"][rng.below(5)].to_string(),
            DType::F32 | DType::F64 => {
                ["0.5", "-1.25", "3.0", "-0.0", "0.001"][rng.below(5)].to_string()
            }
        };
        self.push(&[d], format!("constant[value=[{lit}]]() : {}[]", d.name()))
    }
    fn body_text(&self, header: &str, outputs: &[usize]) -> String {
        let outs: Vec<String> = outputs.iter().map(|o| format!("%{o}")).collect();
        format!(
            "{header} {{\n{}\nreturn {}\n}}",
            self.lines.join("\n"),
            outs.join(", ")
        )
    }
}

fn types(ds: &[DType]) -> String {
    ds.iter()
        .map(|d| format!("{}[]", d.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn params(ds: &[DType]) -> String {
    ds.iter()
        .enumerate()
        .map(|(i, d)| format!("%{i}: {}[]", d.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn refs(ids: &[usize]) -> String {
    ids.iter()
        .map(|i| format!("%{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Appends one random elementwise node, or at `depth < 2` a `cond` or an inner `while`.
fn random_node(rng: &mut Rng, r: &mut Region, depth: usize) {
    let d = *rng.pick(&DTYPES);
    match rng.below(if depth < 2 { 9 } else { 7 }) {
        0 | 1 => {
            let ops: Vec<UnaryOp> = UnaryOp::ALL
                .iter()
                .copied()
                .filter(|u| admits(OpKind::Unary(*u).spec().dtypes, d))
                .collect();
            if let Some(op) = (!ops.is_empty()).then(|| *rng.pick(&ops)) {
                let x = r.value(rng, d);
                let out = if op == UnaryOp::IsFinite {
                    DType::Bool
                } else {
                    d
                };
                r.push(&[out], format!("{}(%{x}) : {}[]", op.name(), out.name()));
            }
        }
        2 | 3 => {
            let ops: Vec<BinaryOp> = BinaryOp::ALL
                .iter()
                .copied()
                .filter(|b| admits(OpKind::Binary(*b).spec().dtypes, d))
                .collect();
            if let Some(op) = (!ops.is_empty()).then(|| *rng.pick(&ops)) {
                let (a, b) = (r.value(rng, d), r.value(rng, d));
                r.push(&[d], format!("{}(%{a}, %{b}) : {}[]", op.name(), d.name()));
            }
        }
        4 => {
            let dir = rng.pick(CompareDir::ALL).name();
            let (a, b) = (r.value(rng, d), r.value(rng, d));
            r.push(
                &[DType::Bool],
                format!("compare[dir={dir}](%{a}, %{b}) : bool[]"),
            );
        }
        5 => {
            let (p, t, f) = (r.value(rng, DType::Bool), r.value(rng, d), r.value(rng, d));
            r.push(&[d], format!("select(%{p}, %{t}, %{f}) : {}[]", d.name()));
        }
        6 => {
            let from = *rng.pick(&DTYPES);
            let x = r.value(rng, from);
            if admits(DTypeClass::Bits32, from)
                && admits(DTypeClass::Bits32, d)
                && rng.below(2) == 0
            {
                r.push(&[d], format!("bitcast(%{x}) : {}[]", d.name()));
            } else {
                r.push(&[d], format!("convert(%{x}) : {}[]", d.name()));
            }
        }
        7 => random_cond(rng, r, depth),
        _ => push_random_while(rng, r, depth),
    }
}

/// Appends a `while` over 1-2 values of the region (and a counter).
fn push_random_while(rng: &mut Rng, r: &mut Region, depth: usize) {
    let carried: Vec<DType> = (0..1 + rng.below(2)).map(|_| *rng.pick(&DTYPES)).collect();
    let init: Vec<usize> = carried.iter().map(|d| r.value(rng, *d)).collect();
    let trips = rng.below(4) as i32;
    let text = random_while(rng, &carried, trips, depth + 1);
    let mut all = vec![DType::I32];
    all.extend(&carried);
    let zero = r.push(&[DType::I32], "constant[value=[0]]() : i32[]".into());
    let mut operands = vec![zero];
    operands.extend(init);
    let text = text.replace("OPERANDS", &refs(&operands));
    r.push(&all, text);
}

/// Whole programs: random scalar code before and after a loop (with `cond`s and inner
/// loops of its own), compiled as one function and as a loop alone, against the
/// interpreter.
#[test]
fn random_programs_around_a_loop_give_the_interpreters_bits() {
    for seed in 0..property_draws(300) {
        let mut rng = Rng(seed ^ 0x5eed);
        let ins: Vec<DType> = (0..1 + rng.below(3)).map(|_| *rng.pick(&DTYPES)).collect();
        let mut r = Region::new(&ins);
        for _ in 0..rng.below(8) {
            random_node(&mut rng, &mut r, 1);
        }
        push_random_while(&mut rng, &mut r, 0);
        for _ in 0..rng.below(8) {
            random_node(&mut rng, &mut r, 1);
        }
        let outs: Vec<usize> = (0..1 + rng.below(3))
            .map(|_| {
                let d = *rng.pick(&DTYPES);
                r.latest(&mut rng, d)
            })
            .collect();
        let src = r.body_text(&format!("program({})", params(&ins)), &outs);
        let p = Program::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        p.validate().unwrap_or_else(|e| panic!("{e:?}\n{src}"));
        let (compiled, reference) = both_tiers(&p, seed);
        for draw in 0..4 {
            let args: Vec<u64> = ins.iter().map(|d| edge_bits(&mut rng, *d)).collect();
            let a = compiled.run(tensors(&args, &ins));
            let b = run(&reference, tensors(&args, &ins));
            assert_same_bits(&a, &b, &format!("seed {seed}, draw {draw}"), &p);
        }
    }
}

/// A `cond` over 1-2 operands with 1-3 branches; the index may be out of range.
fn random_cond(rng: &mut Rng, r: &mut Region, depth: usize) {
    let ins: Vec<DType> = (0..1 + rng.below(2)).map(|_| *rng.pick(&DTYPES)).collect();
    let outs: Vec<DType> = (0..1 + rng.below(2)).map(|_| *rng.pick(&DTYPES)).collect();
    let idx = r.value(rng, DType::I32);
    let operands: Vec<usize> = ins.iter().map(|d| r.value(rng, *d)).collect();
    let branches: Vec<String> = (0..1 + rng.below(3))
        .map(|_| {
            let mut b = Region::new(&ins);
            for _ in 0..rng.below(4) {
                random_node(rng, &mut b, depth + 1);
            }
            let results: Vec<usize> = outs.iter().map(|d| b.latest(rng, *d)).collect();
            b.body_text(&format!("branch({})", params(&ins)), &results)
        })
        .collect();
    let mut all = vec![idx];
    all.extend(operands);
    r.push(
        &outs,
        format!(
            "cond({}) : {} {{\n{}\n}}",
            refs(&all),
            types(&outs),
            branches.join("\n")
        ),
    );
}

/// A `while` whose first carry counts to `trips`; `OPERANDS` is left for the caller.
fn random_while(rng: &mut Rng, carried: &[DType], trips: i32, depth: usize) -> String {
    let mut all = vec![DType::I32];
    all.extend(carried);
    let mut cond = Region::new(&all);
    let limit = cond.push(
        &[DType::I32],
        format!("constant[value=[{trips}]]() : i32[]"),
    );
    let mut test = cond.push(
        &[DType::Bool],
        format!("compare[dir=lt](%0, %{limit}) : bool[]"),
    );
    if rng.below(3) == 0 {
        // A data-dependent exit as well, still bounded by the counter.
        let extra = cond.value(rng, DType::Bool);
        test = cond.push(&[DType::Bool], format!("and(%{test}, %{extra}) : bool[]"));
    }
    let mut body = Region::new(&all);
    let one = body.push(&[DType::I32], "constant[value=[1]]() : i32[]".into());
    let counter = body.push(&[DType::I32], format!("add(%0, %{one}) : i32[]"));
    for _ in 0..2 + rng.below(10) {
        random_node(rng, &mut body, depth);
    }
    let mut next = vec![counter];
    next.extend(carried.iter().map(|d| body.latest(rng, *d)));
    format!(
        "while(OPERANDS) : {} {{\n{}\n{}\n}}",
        types(&all),
        cond.body_text(&format!("cond({})", params(&all)), &[test]),
        body.body_text(&format!("body({})", params(&all)), &next),
    )
}

fn random_program(rng: &mut Rng) -> (Program, Vec<DType>) {
    let carried: Vec<DType> = (0..1 + rng.below(3)).map(|_| *rng.pick(&DTYPES)).collect();
    let mut all = vec![DType::I32];
    all.extend(&carried);
    let trips = rng.below(6) as i32;
    let text = random_while(rng, &carried, trips, 0)
        .replace("OPERANDS", &refs(&(0..all.len()).collect::<Vec<_>>()));
    let n = all.len();
    let src = format!(
        "program({}) {{\n{} = {text}\nreturn {}\n}}",
        params(&all),
        refs(&(n..2 * n).collect::<Vec<_>>()),
        refs(&(n..2 * n).collect::<Vec<_>>()),
    );
    let p = Program::parse(&src).unwrap_or_else(|e| panic!("generated program: {e}\n{src}"));
    p.validate()
        .unwrap_or_else(|e| panic!("generated program: {e:?}\n{src}"));
    (p, all)
}

fn tensors(bits: &[u64], ds: &[DType]) -> Vec<Tensor> {
    bits.iter()
        .zip(ds)
        .map(|(b, d)| Tensor::new(TensorType::new(*d, vec![]), Storage::from_bits(*d, *b)))
        .collect()
}

/// How many random programs a property test draws: `QUABLA_PROPERTY_DRAWS`, else `default`.
pub(super) fn property_draws(default: u64) -> u64 {
    std::env::var("QUABLA_PROPERTY_DRAWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Compiled results `a` against the interpreter's `b`, bit for bit.
fn assert_same_bits(a: &[Tensor], b: &[Tensor], context: &str, p: &Program) {
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(
            x.data.to_bytes(),
            y.data.to_bytes(),
            "{context}, output {k} ({}): compiled {:?} vs interpreted {:?}\n{}",
            x.ty,
            x.data.bits_at(0),
            y.data.bits_at(0),
            p.to_text()
        );
    }
}

/// A program compiled both ways: whole, and its loop alone.
pub(super) struct Compiled {
    whole: Plan,
    loops: Plan,
}

impl Compiled {
    /// Runs both plans, which must agree bit for bit, and returns the results.
    pub(super) fn run(&self, inputs: Vec<Tensor>) -> Vec<Tensor> {
        let whole = run(&self.whole, inputs.clone());
        let loops = run(&self.loops, inputs);
        for (k, (a, b)) in whole.iter().zip(&loops).enumerate() {
            assert_eq!(
                (&a.ty, a.data.to_bytes()),
                (&b.ty, b.data.to_bytes()),
                "output {k}: the whole program's code and the loop's differ\n{}",
                self.whole.program.to_text()
            );
        }
        whole
    }
}

/// The plans of `p` on both tiers; the compiled ones must have compiled the program whole
/// and its loop alone.
pub(super) fn both_tiers(p: &Program, seed: u64) -> (Compiled, Plan) {
    let loops = Plan::new(p.clone(), Tier::Loops);
    assert!(
        loops.native.iter().any(Option::is_some),
        "seed {seed}: the loop did not compile\n{}",
        p.to_text()
    );
    let whole = Plan::new(p.clone(), Tier::Compiled);
    assert!(
        whole.whole.is_some(),
        "seed {seed}: the program did not compile whole\n{}",
        p.to_text()
    );
    let reference = Plan::new(p.clone(), Tier::Interpreter);
    assert!(reference.native.iter().all(Option::is_none) && reference.whole.is_none());
    (Compiled { whole, loops }, reference)
}

#[test]
fn random_scalar_loops_give_the_interpreters_bits() {
    for seed in 0..property_draws(1000) {
        let mut rng = Rng(seed);
        let (p, ins) = random_program(&mut rng);
        let (compiled, reference) = both_tiers(&p, seed);
        for draw in 0..8 {
            let mut args = ins
                .iter()
                .map(|d| edge_bits(&mut rng, *d))
                .collect::<Vec<_>>();
            args[0] = 0;
            let a = compiled.run(tensors(&args, &ins));
            let b = run(&reference, tensors(&args, &ins));
            assert_same_bits(&a, &b, &format!("seed {seed}, draw {draw}"), &p);
        }
    }
}

#[test]
fn a_loop_that_reverses_a_matrix_stays_with_the_interpreter() {
    let p = Program::parse(
        "program(%0: f32[2,3]) {
           %1 = while(%0) : f32[2,3] {
             cond(%0: f32[2,3]) {
               %1 = constant[value=[false]]() : bool[]
               return %1
             }
             body(%0: f32[2,3]) {
               %1 = reverse[dims=[1]](%0) : f32[2,3]
               return %1
             }
           }
           return %1
         }",
    )
    .unwrap();
    assert!(Plan::new(p, Tier::Loops).native[0].is_none());
}

/// Element loops that stay scalar compile up to `SCALAR_LOOP_LIMIT` elements; past it the
/// loop stays with the interpreter's vector kernels, unless the loop is lane-wise (SIMD).
#[test]
fn scalar_element_loops_past_the_limit_stay_with_the_interpreter() {
    let program = |n: usize, op: &str| {
        Program::parse(&format!(
            "program(%0: i32[], %1: f32[{n}]) {{
               %2, %3 = while(%0, %1) : i32[], f32[{n}] {{
                 cond(%0: i32[], %1: f32[{n}]) {{
                   %2 = constant[value=[3]]() : i32[]
                   %3 = compare[dir=lt](%0, %2) : bool[]
                   return %3
                 }}
                 body(%0: i32[], %1: f32[{n}]) {{
                   %2 = {op}(%1, %1) : f32[{n}]
                   %3 = constant[value=[1]]() : i32[]
                   %4 = add(%0, %3) : i32[]
                   return %4, %2
                 }}
               }}
               return %3
             }}"
        ))
        .unwrap()
    };
    let compiles = |n, op| Plan::new(program(n, op), Tier::Loops).native[0].is_some();
    // Float `rem` calls the interpreter's function: a scalar loop.
    assert!(compiles(1024, "rem"));
    assert!(!compiles(1025, "rem"));
    assert!(compiles(1 << 16, "add"));
    assert!(compiles(1 << 16, "max"));
}

/// A loop of one vector-math kernel (`tanh`, f32 and f64) is one call of its vector loop,
/// so it compiles at any length, and gives the interpreter's bits (which run the same vector
/// loop).
#[test]
fn a_kernel_over_a_long_array_compiles_and_gives_the_interpreters_bits() {
    let n = 5000;
    for d in [DType::F32, DType::F64] {
        let t = d.name();
        let p = Program::parse(&format!(
            "program(%0: i32[], %1: {t}[{n}]) {{
               %2, %3 = while(%0, %1) : i32[], {t}[{n}] {{
                 cond(%0: i32[], %1: {t}[{n}]) {{
                   %2 = constant[value=[3]]() : i32[]
                   %3 = compare[dir=lt](%0, %2) : bool[]
                   return %3
                 }}
                 body(%0: i32[], %1: {t}[{n}]) {{
                   %2 = tanh(%1) : {t}[{n}]
                   %3 = constant[value=[1]]() : i32[]
                   %4 = add(%0, %3) : i32[]
                   return %4, %2
                 }}
               }}
               return %3
             }}"
        ))
        .unwrap();
        let (compiled, reference) = both_tiers(&p, 0);
        let x = (0..n).map(|i| (i as f64 - 2500.0) * 0.0037);
        let data = match d {
            DType::F32 => Storage::F32(x.map(|v| v as f32).collect()),
            _ => Storage::F64(x.collect()),
        };
        let args = || {
            vec![
                Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
                Tensor::new(TensorType::new(d, vec![n]), data.clone()),
            ]
        };
        let (a, b) = (compiled.run(args()), run(&reference, args()));
        assert_eq!(a[0].data.to_bytes(), b[0].data.to_bytes(), "{t}");
    }
}

/// Element loops of every length split between the unrolled trips (four vectors each),
/// one-vector trips and the scalar tail, over contiguous and strided (transposed) loads,
/// give the interpreter's bits: `x = x * x' + transpose(y)` twice, rows of `c` elements.
#[test]
fn unrolled_vector_loops_give_the_interpreters_bits_at_every_split() {
    for d in [DType::F32, DType::F64] {
        let t = d.name();
        for c in [1, 3, 4, 5, 8, 15, 16, 17, 21, 37, 64] {
            let p = Program::parse(&format!(
                "program(%0: i32[], %1: {t}[3,{c}], %2: {t}[{c},3]) {{
                   %3, %4, %5 = while(%0, %1, %2) : i32[], {t}[3,{c}], {t}[{c},3] {{
                     cond(%0: i32[], %1: {t}[3,{c}], %2: {t}[{c},3]) {{
                       %3 = constant[value=[2]]() : i32[]
                       %4 = compare[dir=lt](%0, %3) : bool[]
                       return %4
                     }}
                     body(%0: i32[], %1: {t}[3,{c}], %2: {t}[{c},3]) {{
                       %3 = transpose[perm=[1,0]](%2) : {t}[3,{c}]
                       %4 = constant[value=[0.75]]() : {t}[]
                       %5 = broadcast_in_dim[dims=[]](%4) : {t}[3,{c}]
                       %6 = mul(%1, %5) : {t}[3,{c}]
                       %7 = mul(%6, %1) : {t}[3,{c}]
                       %8 = add(%7, %3) : {t}[3,{c}]
                       %9 = constant[value=[1]]() : i32[]
                       %10 = add(%0, %9) : i32[]
                       return %10, %8, %2
                     }}
                   }}
                   return %4
                 }}"
            ))
            .unwrap();
            let (compiled, reference) = both_tiers(&p, c as u64);
            let n = 3 * c;
            let values = |k: f64| (0..n).map(move |i| ((i as f64 + k) * 0.731).sin());
            let data = |k: f64| match d {
                DType::F32 => Storage::F32(values(k).map(|v| v as f32).collect()),
                _ => Storage::F64(values(k).collect()),
            };
            let args = || {
                vec![
                    Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
                    Tensor::new(TensorType::new(d, vec![3, c]), data(0.0)),
                    Tensor::new(TensorType::new(d, vec![c, 3]), data(0.5)),
                ]
            };
            let (a, b) = (compiled.run(args()), run(&reference, args()));
            assert_eq!(
                a[0].data.to_bytes(),
                b[0].data.to_bytes(),
                "{t}, rows of {c}"
            );
        }
    }
}

/// One op in a one-trip loop, `out = op(inputs)`, compiled once and run on every
/// combination of edge inputs.
fn check_single_op(inputs: &[DType], out: DType, op_text: &str) {
    let mut all = vec![DType::I32];
    all.extend(inputs);
    all.push(out);
    let n = all.len();
    let args: Vec<String> = (1..=inputs.len()).map(|i| format!("%{i}")).collect();
    let src = format!(
        "program({ps}) {{
  {res} = while({ins}) : {ts} {{
    cond({ps}) {{
      %{n} = constant[value=[1]]() : i32[]
      %{n1} = compare[dir=lt](%0, %{n}) : bool[]
      return %{n1}
    }}
    body({ps}) {{
      %{n} = constant[value=[1]]() : i32[]
      %{n1} = add(%0, %{n}) : i32[]
      %{n2} = {op_text}({args}) : {o}[]
      return %{n1}, {keep}, %{n2}
    }}
  }}
  return {res}
}}",
        ps = params(&all),
        res = refs(&(n..2 * n).collect::<Vec<_>>()),
        ins = refs(&(0..n).collect::<Vec<_>>()),
        ts = types(&all),
        n1 = n + 1,
        n2 = n + 2,
        args = args.join(", "),
        o = out.name(),
        keep = args.join(", "),
    );
    let p = Program::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    p.validate().unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    let compiled = Plan::new(p.clone(), Tier::Loops);
    assert!(compiled.native[0].is_some(), "{src}");
    let reference = Plan::new(p, Tier::Interpreter);
    let mut combos: Vec<Vec<u64>> = vec![vec![]];
    for d in inputs {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                edges(*d).into_iter().map(move |e| {
                    let mut c = c.clone();
                    c.push(e);
                    c
                })
            })
            .collect();
    }
    for c in combos {
        let mut bits = vec![0];
        bits.extend(&c);
        bits.push(0);
        let a = run(&compiled, tensors(&bits, &all));
        let b = run(&reference, tensors(&bits, &all));
        assert_eq!(
            a[n - 1].data.to_bytes(),
            b[n - 1].data.to_bytes(),
            "{op_text} on {inputs:?} {c:x?}: compiled {:x} vs interpreted {:x}",
            a[n - 1].data.bits_at(0),
            b[n - 1].data.bits_at(0)
        );
    }
}

#[test]
fn every_elementwise_op_gives_the_interpreters_bits_on_every_edge_input() {
    for d in DTYPES {
        for u in UnaryOp::ALL {
            if admits(OpKind::Unary(*u).spec().dtypes, d) {
                let out = if *u == UnaryOp::IsFinite {
                    DType::Bool
                } else {
                    d
                };
                check_single_op(&[d], out, u.name());
            }
        }
        for b in BinaryOp::ALL {
            if admits(OpKind::Binary(*b).spec().dtypes, d) {
                check_single_op(&[d, d], d, b.name());
            }
        }
        for dir in CompareDir::ALL {
            check_single_op(
                &[d, d],
                DType::Bool,
                &format!("compare[dir={}]", dir.name()),
            );
        }
        check_single_op(&[DType::Bool, d, d], d, "select");
        for to in DTYPES {
            check_single_op(&[d], to, "convert");
            if admits(DTypeClass::Bits32, d) && admits(DTypeClass::Bits32, to) {
                check_single_op(&[d], to, "bitcast");
            }
        }
    }
}

/// `fori_loop(0, 10000, x * 0.999 + a)` as the core lowers it: a scan over `iota`, whose
/// index vector the loop carries unread.
#[test]
fn a_lowered_fori_loop_compiles_and_passes_its_index_vector_through() {
    let p = Program::parse(
        "program(%0: f64[], %1: f64[]) {
  %2 = iota[dim=0]() : i32[10000]
  %3 = constant[value=[0]]() : i32[]
  %4, %5, %6, %7 = while(%3, %1, %0, %2) : i32[], f64[], f64[], i32[10000] {
    cond(%0: i32[], %1: f64[], %2: f64[], %3: i32[10000]) {
      %4 = constant[value=[10000]]() : i32[]
      %5 = compare[dir=lt](%0, %4) : bool[]
      return %5
    }
    body(%0: i32[], %1: f64[], %2: f64[], %3: i32[10000]) {
      %4 = constant[value=[0.999]]() : f64[]
      %5 = mul(%2, %4) : f64[]
      %6 = add(%5, %1) : f64[]
      %7 = constant[value=[1]]() : i32[]
      %8 = add(%0, %7) : i32[]
      return %8, %1, %6, %3
    }
  }
  return %6, %7
}",
    )
    .unwrap();
    let compiled = Plan::new(p.clone(), Tier::Loops);
    assert!(compiled.native[2].is_some());
    let reference = Plan::new(p, Tier::Interpreter);
    let ins = [DType::F64, DType::F64];
    let args = [1.0f64.to_bits(), 0.001f64.to_bits()];
    let a = run(&compiled, tensors(&args, &ins));
    let b = run(&reference, tensors(&args, &ins));
    assert_eq!(a[0].data.to_bytes(), b[0].data.to_bytes());
    assert_eq!(a[1].data.to_bytes(), b[1].data.to_bytes());
    // The closed form of x <- 0.999 x + 0.001 from 1 is 1 (a fixed point).
    assert!((f64::from_bits(a[0].data.bits_at(0)) - 1.0).abs() < 1e-9);
}

/// Sums of products read from where the loop leaves their factors (`x . y`, and `x' . x'`
/// of the updated `x`), next to one whose factor the same loop negates in place (kept as
/// stored products), give the interpreter's bits: rows shorter than a block and longer
/// than a group, f32 and f64.
#[test]
fn sums_of_products_give_the_interpreters_bits() {
    for d in [DType::F32, DType::F64] {
        for n in [300usize, 5000] {
            let t = d.name();
            let v = format!("{t}[{n}]");
            let p = Program::parse(&format!(
                "program(%0: i32[], %1: {v}, %2: {v}, %3: {t}[]) {{
                   %4, %5, %6, %7 = while(%0, %1, %2, %3) : i32[], {v}, {v}, {t}[] {{
                     cond(%0: i32[], %1: {v}, %2: {v}, %3: {t}[]) {{
                       %4 = constant[value=[3]]() : i32[]
                       %5 = compare[dir=lt](%0, %4) : bool[]
                       return %5
                     }}
                     body(%0: i32[], %1: {v}, %2: {v}, %3: {t}[]) {{
                       %4 = mul(%1, %2) : {v}
                       %5 = neg(%2) : {v}
                       %6 = reduce[kind=sum, axes=[0]](%4) : {t}[]
                       %7 = constant[value=[0.001]]() : {t}[]
                       %8 = mul(%6, %7) : {t}[]
                       %9 = broadcast_in_dim[dims=[]](%8) : {v}
                       %10 = add(%1, %9) : {v}
                       %11 = mul(%10, %10) : {v}
                       %12 = reduce[kind=sum, axes=[0]](%11) : {t}[]
                       %13 = add(%3, %12) : {t}[]
                       %14 = constant[value=[1]]() : i32[]
                       %15 = add(%0, %14) : i32[]
                       return %15, %10, %5, %13
                     }}
                   }}
                   return %5, %6, %7
                 }}"
            ))
            .unwrap();
            let (compiled, reference) = both_tiers(&p, 0);
            let big = |i: usize| if i.is_multiple_of(7) { 1e4 } else { 1.0 };
            let data = |f: fn(f64) -> f64| {
                let x = (0..n).map(move |i| f(i as f64) * big(i));
                match d {
                    DType::F32 => Storage::F32(x.map(|v| v as f32).collect()),
                    _ => Storage::F64(x.collect()),
                }
            };
            let args = || {
                vec![
                    Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
                    Tensor::new(TensorType::new(d, vec![n]), data(|i| (i * 0.37).sin())),
                    Tensor::new(TensorType::new(d, vec![n]), data(|i| (i * 0.11).cos())),
                    Tensor::new(TensorType::new(d, vec![]), Storage::zeros(d, 1)),
                ]
            };
            let (a, b) = (compiled.run(args()), run(&reference, args()));
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.data.to_bytes(), y.data.to_bytes(), "{t}, {n} elements");
            }
        }
    }
}

/// A store the next iteration overwrites unread is dropped (`y * s` over `y`'s scratch),
/// and the loop still gives the interpreter's bits.
#[test]
fn a_loop_without_its_dead_back_edge_store_gives_the_interpreters_bits() {
    for d in [DType::F32, DType::F64] {
        let t = d.name();
        let p = Program::parse(&format!(
            "program(%0: i32[], %1: {t}[64]) {{
               %2, %3 = while(%0, %1) : i32[], {t}[64] {{
                 cond(%0: i32[], %1: {t}[64]) {{
                   %2 = constant[value=[4]]() : i32[]
                   %3 = compare[dir=lt](%0, %2) : bool[]
                   return %3
                 }}
                 body(%0: i32[], %1: {t}[64]) {{
                   %2 = add(%1, %1) : {t}[64]
                   %3 = reduce[kind=sum, axes=[0]](%2) : {t}[]
                   %4 = broadcast_in_dim[dims=[]](%3) : {t}[64]
                   %5 = mul(%2, %4) : {t}[64]
                   %6 = add(%1, %5) : {t}[64]
                   %7 = constant[value=[1]]() : i32[]
                   %8 = add(%0, %7) : i32[]
                   return %8, %6
                 }}
               }}
               return %3
             }}"
        ))
        .unwrap();
        let (compiled, reference) = both_tiers(&p, 0);
        let x = (0..64).map(|i| ((i as f64) * 0.37).sin() * 1e-3);
        let data = match d {
            DType::F32 => Storage::F32(x.map(|v| v as f32).collect()),
            _ => Storage::F64(x.collect()),
        };
        let args = || {
            vec![
                Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
                Tensor::new(TensorType::new(d, vec![64]), data.clone()),
            ]
        };
        let (a, b) = (compiled.run(args()), run(&reference, args()));
        assert_eq!(a[0].data.to_bytes(), b[0].data.to_bytes(), "{t}");
    }
}

#[test]
fn an_array_iota_in_a_loop_compiles_to_the_interpreters_bits() {
    let p = Program::parse(
        "program(%0: i32[], %1: f32[3,4], %2: i32[2,3]) {
           %3, %4, %5 = while(%0, %1, %2) : i32[], f32[3,4], i32[2,3] {
             cond(%0: i32[], %1: f32[3,4], %2: i32[2,3]) {
               %3 = constant[value=[3]]() : i32[]
               %4 = compare[dir=lt](%0, %3) : bool[]
               return %4
             }
             body(%0: i32[], %1: f32[3,4], %2: i32[2,3]) {
               %3 = constant[value=[1]]() : i32[]
               %4 = add(%0, %3) : i32[]
               %5 = iota[dim=0]() : f32[3,4]
               %6 = iota[dim=1]() : f32[3,4]
               %7 = mul(%5, %6) : f32[3,4]
               %8 = add(%1, %7) : f32[3,4]
               %9 = iota[dim=1]() : i32[2,3]
               %10 = add(%2, %9) : i32[2,3]
               return %4, %8, %10
             }
           }
           return %3, %4, %5
         }",
    )
    .unwrap();
    let (compiled, reference) = both_tiers(&p, 0);
    let inputs = || {
        vec![
            Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
            Tensor::new(
                TensorType::new(DType::F32, vec![3, 4]),
                Storage::F32((0..12).map(|k| k as f32 * 0.25).collect()),
            ),
            Tensor::new(
                TensorType::new(DType::I32, vec![2, 3]),
                Storage::I32(vec![0; 6]),
            ),
        ]
    };
    let (a, b) = (compiled.run(inputs()), run(&reference, inputs()));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.data.to_bytes(), y.data.to_bytes());
    }
    // Three trips of + i * j and + j, against the values written out.
    let want: Vec<f32> = (0..12)
        .map(|k| k as f32 * 0.25 + 3.0 * ((k / 4) * (k % 4)) as f32)
        .collect();
    assert_eq!(a[1].data.to_bytes(), Storage::F32(want).to_bytes());
    assert_eq!(
        a[2].data.to_bytes(),
        Storage::I32(vec![0, 3, 6, 0, 3, 6]).to_bytes()
    );
}
