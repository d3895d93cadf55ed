//! The compiled tier against the interpreter, bit for bit, on random loops over arrays in
//! memory: one-element loads and in-place stores at starts in and out of range (clamped),
//! loads through row views of a matrix, starts read from an index table, inner loops that
//! update the array, elementwise ops over whole arrays (element loops into new arrays),
//! fills, row writes, matrix products, reductions over any axes, `cond`s whose branches
//! return different arrays, constants, carries replaced by new arrays (copied back), and
//! views at strides (stencils over padded copies, transposes, broadcasts, concatenations),
//! in every dtype an array can have.

use super::tests::{both_tiers, property_draws, Rng};
use crate::exec::run;
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::Program;
use quabla_abi::{DType, TensorType};

impl Rng {
    /// A start index: often in range, sometimes negative or past the end (clamped).
    fn start(&mut self, dim: usize) -> i64 {
        self.below(dim + 6) as i64 - 3
    }
}

const ROWS: usize = 5;
const COLS: usize = 3;
const TABLE: usize = 7;

/// Builds a loop body one node at a time over `%0: i32[]` (the counter), `%1: f64[]` (a
/// sum of what was read), `%2: D[ROWS, COLS]` (the array) and `%3: i32[TABLE]` (an index
/// table, read-only).
struct Body {
    lines: Vec<String>,
    next: usize,
    sum: usize,
    array: usize,
    d: &'static str,
}

impl Body {
    fn push(&mut self, text: String) -> usize {
        let id = self.next;
        self.lines.push(format!("%{id} = {text}"));
        self.next += 1;
        id
    }

    /// An `i32[]` start: the counter, a constant (maybe out of range) or a table entry.
    fn start(&mut self, rng: &mut Rng, dim: usize) -> usize {
        match rng.below(3) {
            0 => 0,
            1 => {
                let c = rng.start(dim);
                self.push(format!("constant[value=[{c}]]() : i32[]"))
            }
            _ => {
                let at = self.start(rng, TABLE);
                let e = self.push(format!("dynamic_slice[sizes=[1]](%3, %{at}) : i32[1]"));
                self.push(format!("reshape(%{e}) : i32[]"))
            }
        }
    }

    /// Adds a one-element value of the array's dtype to the sum.
    fn accumulate(&mut self, v: usize) {
        let s = self.push(format!("reshape(%{v}) : {}[]", self.d));
        let f = self.push(format!("convert(%{s}) : f64[]"));
        self.sum = self.push(format!("add(%{}, %{f}) : f64[]", self.sum));
    }

    fn load(&mut self, rng: &mut Rng) {
        let (r, c) = (self.start(rng, ROWS), self.start(rng, COLS));
        let e = self.push(format!(
            "dynamic_slice[sizes=[1,1]](%{}, %{r}, %{c}) : {}[1,1]",
            self.array, self.d
        ));
        self.accumulate(e);
    }

    /// A row as a view (`dynamic_slice` of a whole row, `reshape`), then one of its elements.
    fn load_through_row(&mut self, rng: &mut Rng) {
        let (r, c0) = (self.start(rng, ROWS), self.start(rng, COLS));
        let row = self.push(format!(
            "dynamic_slice[sizes=[1,{COLS}]](%{}, %{r}, %{c0}) : {}[1,{COLS}]",
            self.array, self.d
        ));
        // A transpose that moves only the unit axis is a view too.
        let flat = if rng.below(2) == 0 {
            self.push(format!("reshape(%{row}) : {}[{COLS}]", self.d))
        } else {
            let t = self.push(format!(
                "transpose[perm=[1,0]](%{row}) : {}[{COLS},1]",
                self.d
            ));
            self.push(format!("reshape(%{t}) : {}[{COLS}]", self.d))
        };
        let c = self.start(rng, COLS);
        let e = self.push(format!(
            "dynamic_slice[sizes=[1]](%{flat}, %{c}) : {}[1]",
            self.d
        ));
        self.accumulate(e);
    }

    /// Writes at a start pair, then reads the version before the write (a value is a
    /// value: the write works on a copy).
    fn store_and_read_the_old_version(&mut self, rng: &mut Rng) {
        let old = self.array;
        self.store(rng);
        let new = self.array;
        self.array = old;
        self.load(rng);
        self.array = new;
    }

    /// Writes the current sum, converted, at a start pair.
    fn store(&mut self, rng: &mut Rng) {
        let (r, c) = (self.start(rng, ROWS), self.start(rng, COLS));
        let v = self.push(format!("convert(%{}) : {}[]", self.sum, self.d));
        let v = self.push(format!("reshape(%{v}) : {}[1,1]", self.d));
        self.array = self.push(format!(
            "dynamic_update_slice(%{}, %{v}, %{r}, %{c}) : {}[{ROWS},{COLS}]",
            self.array, self.d
        ));
    }

    /// An inner loop writing its counter down the diagonal, `trips` times.
    fn inner_loop(&mut self, rng: &mut Rng) {
        let (d, trips) = (self.d, rng.below(4));
        let zero = self.push("constant[value=[0]]() : i32[]".into());
        let ty = format!("{d}[{ROWS},{COLS}]");
        let id = self.next;
        self.lines.push(format!(
            "%{id}, %{} = while(%{zero}, %{}) : i32[], {ty} {{
               cond(%0: i32[], %1: {ty}) {{
                 %2 = constant[value=[{trips}]]() : i32[]
                 %3 = compare[dir=lt](%0, %2) : bool[]
                 return %3
               }}
               body(%0: i32[], %1: {ty}) {{
                 %2 = convert(%0) : {d}[]
                 %3 = reshape(%2) : {d}[1,1]
                 %4 = dynamic_update_slice(%1, %3, %0, %0) : {ty}
                 %5 = constant[value=[1]]() : i32[]
                 %6 = add(%0, %5) : i32[]
                 return %6, %4
               }}
             }}",
            id + 1,
            self.array
        ));
        self.next += 2;
        self.array = id + 1;
    }
}

impl Body {
    /// A constant matrix of small values of the array's dtype (read every iteration: an
    /// update must never write into it).
    fn constant_matrix(&mut self, rng: &mut Rng) -> usize {
        let float = matches!(self.d, "f32" | "f64");
        let values: Vec<String> = (0..ROWS * COLS)
            .map(|_| {
                let v = rng.below(9);
                if float {
                    format!("{}.5", v as i64 - 4)
                } else {
                    format!("{v}")
                }
            })
            .collect();
        let ty = self.matrix_type();
        self.push(format!("constant[value=[{}]]() : {ty}", values.join(", ")))
    }

    /// An `i32[]` constant `c` (compared with the counter, it flips once the loop passes it).
    fn counter_as(&mut self, c: i32) -> usize {
        self.push(format!("constant[value=[{c}]]() : i32[]"))
    }

    fn matrix_type(&self) -> String {
        format!("{}[{ROWS},{COLS}]", self.d)
    }

    /// A new matrix: an elementwise op over the array and a fill or the array itself, or
    /// a select between them; it becomes the carry's next value (copied back).
    fn map(&mut self, rng: &mut Rng) {
        let ty = self.matrix_type();
        let other = if rng.below(3) == 0 {
            self.array
        } else if rng.below(2) == 0 {
            self.constant_matrix(rng)
        } else {
            let x = self.push(format!("convert(%{}) : {}[]", self.sum, self.d));
            self.push(format!("broadcast_in_dim[dims=[]](%{x}) : {ty}"))
        };
        let a = self.array;
        let float = matches!(self.d, "f32" | "f64");
        self.array = match rng.below(13) {
            0 => self.push(format!("add(%{a}, %{other}) : {ty}")),
            1 => self.push(format!("mul(%{a}, %{other}) : {ty}")),
            2 => self.push(format!("max(%{other}, %{a}) : {ty}")),
            3 => self.push(format!("sub(%{other}, %{a}) : {ty}")),
            4 => self.push(format!("neg(%{a}) : {ty}")),
            5 if self.d != "u32" => self.push(format!("abs(%{a}) : {ty}")),
            6 if float => self.push(format!("div(%{a}, %{other}) : {ty}")),
            7 if float => self.push(format!("sqrt(%{a}) : {ty}")),
            8 if !float => self.push(format!("xor(%{a}, %{other}) : {ty}")),
            // f32: one call of the kernel's vector loop (in place when `a` dies here).
            11 if float => self.push(format!("tanh(%{a}) : {ty}")),
            12 if float => self.push(format!("sin(%{other}) : {ty}")),
            5..=8 | 11 | 12 => self.push(format!("sub(%{a}, %{other}) : {ty}")),
            9 => {
                let p = self.push(format!(
                    "compare[dir=lt](%{a}, %{other}) : bool[{ROWS},{COLS}]"
                ));
                self.push(format!("select(%{p}, %{other}, %{a}) : {ty}"))
            }
            // One predicate for every element (the splat of a scalar compare).
            _ => {
                let one = self.counter_as(1);
                let p = self.push(format!("compare[dir=lt](%{one}, %0) : bool[]"));
                let p = self.push(format!(
                    "broadcast_in_dim[dims=[]](%{p}) : bool[{ROWS},{COLS}]"
                ));
                self.push(format!("select(%{p}, %{other}, %{a}) : {ty}"))
            }
        };
    }

    /// A row of a new matrix written into the array at a (clamped) row start.
    fn write_row(&mut self, rng: &mut Rng) {
        let ty = self.matrix_type();
        let d = self.d;
        let twice = self.push(format!("add(%{0}, %{0}) : {ty}", self.array));
        let (r, c) = (self.start(rng, ROWS), self.start(rng, COLS));
        let row = self.push(format!(
            "dynamic_slice[sizes=[1,{COLS}]](%{twice}, %{r}, %{c}) : {d}[1,{COLS}]"
        ));
        let (r, c) = (self.start(rng, ROWS), self.start(rng, COLS));
        self.array = self.push(format!(
            "dynamic_update_slice(%{}, %{row}, %{r}, %{c}) : {ty}",
            self.array
        ));
    }

    /// A matrix product (floats): the array's Gram matrix `aᵀa` (lhs read transposed) or
    /// a row times the array's transpose (rhs read transposed); one element of it summed.
    fn dot(&mut self, rng: &mut Rng) {
        let d = self.d;
        let a = self.array;
        let g = if rng.below(2) == 0 {
            self.push(format!(
                "dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[0], rhs_contract=[0]](%{a}, %{a}) : {d}[{COLS},{COLS}]"
            ))
        } else {
            let r = self.start(rng, ROWS);
            let zero = self.push("constant[value=[0]]() : i32[]".into());
            let row = self.push(format!(
                "dynamic_slice[sizes=[1,{COLS}]](%{a}, %{r}, %{zero}) : {d}[1,{COLS}]"
            ));
            self.push(format!(
                "dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[1]](%{row}, %{a}) : {d}[1,{ROWS}]"
            ))
        };
        let (r, c) = (self.start(rng, COLS), self.start(rng, COLS));
        let e = self.push(format!(
            "dynamic_slice[sizes=[1,1]](%{g}, %{r}, %{c}) : {d}[1,1]"
        ));
        self.accumulate(e);
    }
}

impl Body {
    /// A new matrix from views of the array (read in place at strides) and windows of new
    /// memory: a 5-point-style stencil over its padded copy, a transpose there and back,
    /// a row or column broadcast against it, two blocks concatenated in swapped order, or
    /// every other row interleaved with padding.
    fn movement(&mut self, rng: &mut Rng) {
        let (d, ty) = (self.d, self.matrix_type());
        let a = self.array;
        let (r2, c2) = (ROWS + 2, COLS + 2);
        self.array = match rng.below(7) {
            0 => {
                let v = self.push(format!("convert(%{}) : {d}[]", self.sum));
                let p = self.push(format!(
                    "pad[low=[1,1], high=[1,1], interior=[0,0]](%{a}, %{v}) : {d}[{r2},{c2}]"
                ));
                let (i, j) = (rng.below(3), rng.below(3));
                let x = self.push(format!(
                    "slice[start=[{i},{j}], limit=[{},{}], strides=[1,1]](%{p}) : {ty}",
                    i + ROWS,
                    j + COLS
                ));
                let y = self.push(format!(
                    "slice[start=[{}, 1], limit=[{},{}], strides=[1,1]](%{p}) : {ty}",
                    2 - i,
                    2 - i + ROWS,
                    1 + COLS
                ));
                self.push(format!("add(%{x}, %{y}) : {ty}"))
            }
            1 => {
                let t = self.push(format!("transpose[perm=[1,0]](%{a}) : {d}[{COLS},{ROWS}]"));
                let n = self.push(format!("neg(%{t}) : {d}[{COLS},{ROWS}]"));
                self.push(format!("transpose[perm=[1,0]](%{n}) : {ty}"))
            }
            2 => {
                let r = self.start(rng, ROWS);
                let zero = self.push("constant[value=[0]]() : i32[]".into());
                let row = self.push(format!(
                    "dynamic_slice[sizes=[1,{COLS}]](%{a}, %{r}, %{zero}) : {d}[1,{COLS}]"
                ));
                let b = self.push(format!("broadcast_in_dim[dims=[0,1]](%{row}) : {ty}"));
                self.push(format!("mul(%{a}, %{b}) : {ty}"))
            }
            3 => {
                let col = self.push(format!("reduce[kind=max, axes=[1]](%{a}) : {d}[{ROWS}]"));
                let b = self.push(format!("broadcast_in_dim[dims=[0]](%{col}) : {ty}"));
                self.push(format!("sub(%{b}, %{a}) : {ty}"))
            }
            4 => {
                let top = self.push(format!(
                    "slice[start=[0,0], limit=[2,{COLS}], strides=[1,1]](%{a}) : {d}[2,{COLS}]"
                ));
                let rest = self.push(format!(
                    "slice[start=[2,0], limit=[{ROWS},{COLS}], strides=[1,1]](%{a}) : {d}[{},{COLS}]",
                    ROWS - 2
                ));
                self.push(format!("concatenate[dim=0](%{rest}, %{top}) : {ty}"))
            }
            5 => {
                let left = self.push(format!(
                    "slice[start=[0,0], limit=[{ROWS},1], strides=[1,1]](%{a}) : {d}[{ROWS},1]"
                ));
                let right = self.push(format!(
                    "slice[start=[0,1], limit=[{ROWS},{COLS}], strides=[1,1]](%{a}) : {d}[{ROWS},{}]",
                    COLS - 1
                ));
                self.push(format!("concatenate[dim=1](%{right}, %{left}) : {ty}"))
            }
            _ => {
                let half = ROWS.div_ceil(2);
                let every = self.push(format!(
                    "slice[start=[0,0], limit=[{ROWS},{COLS}], strides=[2,1]](%{a}) : {d}[{half},{COLS}]"
                ));
                let v = self.push(format!("convert(%{}) : {d}[]", self.sum));
                self.push(format!(
                    "pad[low=[0,0], high=[0,0], interior=[1,0]](%{every}, %{v}) : {ty}"
                ))
            }
        };
    }

    /// A `cond` on the counter (0 runs the first branch; past the last, the last runs):
    /// pass the array through, write one element, or double it.
    fn branch(&mut self, rng: &mut Rng) {
        let (d, ty) = (self.d, self.matrix_type());
        let c = rng.below(3);
        let id = self.next;
        self.lines.push(format!(
            "%{id} = cond(%0, %{}, %{}) : {ty} {{
               branch(%0: {ty}, %1: f64[]) {{
                 return %0
               }}
               branch(%0: {ty}, %1: f64[]) {{
                 %2 = convert(%1) : {d}[]
                 %3 = reshape(%2) : {d}[1,1]
                 %4 = constant[value=[{c}]]() : i32[]
                 %5 = dynamic_update_slice(%0, %3, %4, %4) : {ty}
                 return %5
               }}
               branch(%0: {ty}, %1: f64[]) {{
                 %2 = add(%0, %0) : {ty}
                 return %2
               }}
             }}",
            self.array, self.sum
        ));
        self.next += 1;
        self.array = id;
    }

    /// A reduction over the trailing axis (one value per row), the leading one (one per
    /// column) or both (one value),
    /// of a kind the dtype admits; one element of it summed.
    fn reduce(&mut self, rng: &mut Rng) {
        let d = self.d;
        let kind = ["sum", "prod", "max", "min"][rng.below(4)];
        let a = self.array;
        let e = if rng.below(3) == 0 {
            let rows = self.push(format!("reduce[kind={kind}, axes=[1]](%{a}) : {d}[{ROWS}]"));
            let r = self.start(rng, ROWS);
            self.push(format!("dynamic_slice[sizes=[1]](%{rows}, %{r}) : {d}[1]"))
        } else if rng.below(2) == 0 {
            // Over the leading axis: the columns, folded from a transposed copy.
            let cols = self.push(format!("reduce[kind={kind}, axes=[0]](%{a}) : {d}[{COLS}]"));
            let c = self.start(rng, COLS);
            self.push(format!("dynamic_slice[sizes=[1]](%{cols}, %{c}) : {d}[1]"))
        } else {
            self.push(format!("reduce[kind={kind}, axes=[0,1]](%{a}) : {d}[]"))
        };
        self.accumulate(e);
    }
}

fn random_program(rng: &mut Rng) -> (Program, DType) {
    let (dtype, d) = [
        (DType::F32, "f32"),
        (DType::F64, "f64"),
        (DType::I32, "i32"),
        (DType::U32, "u32"),
    ][rng.below(4)];
    let mut b = Body {
        lines: Vec::new(),
        next: 4,
        sum: 1,
        array: 2,
        d,
    };
    for _ in 0..2 + rng.below(6) {
        match rng.below(15) {
            13 | 14 => b.movement(rng),
            9 => b.reduce(rng),
            10 => b.branch(rng),
            0 | 1 => b.load(rng),
            2 => b.load_through_row(rng),
            3 | 4 => b.store(rng),
            5 => b.inner_loop(rng),
            6 => b.map(rng),
            7 => b.write_row(rng),
            8 => b.store_and_read_the_old_version(rng),
            _ if dtype.is_float() => b.dot(rng),
            _ => b.map(rng),
        }
    }
    let one = b.push("constant[value=[1]]() : i32[]".into());
    let counter = b.push(format!("add(%0, %{one}) : i32[]"));
    let trips = rng.below(5);
    let ty = format!("i32[], f64[], {d}[{ROWS},{COLS}], i32[{TABLE}]");
    let params = format!("%0: i32[], %1: f64[], %2: {d}[{ROWS},{COLS}], %3: i32[{TABLE}]");
    let src = format!(
        "program({params}) {{
           %4, %5, %6, %7 = while(%0, %1, %2, %3) : {ty} {{
             cond({params}) {{
               %4 = constant[value=[{trips}]]() : i32[]
               %5 = compare[dir=lt](%0, %4) : bool[]
               return %5
             }}
             body({params}) {{
               {}
               return %{counter}, %{}, %{}, %3
             }}
           }}
           return %4, %5, %6, %7
         }}",
        b.lines.join("\n"),
        b.sum,
        b.array
    );
    let p = Program::parse(&src).unwrap_or_else(|e| panic!("generated program: {e}\n{src}"));
    p.validate()
        .unwrap_or_else(|e| panic!("generated program: {e:?}\n{src}"));
    (p, dtype)
}

fn matrix(rng: &mut Rng, d: DType) -> Storage {
    let n = ROWS * COLS;
    // Mostly ordinary values, sometimes NaN, an infinity or a signed zero (the SIMD and
    // scalar paths must agree on those too).
    let draw = |rng: &mut Rng| match rng.below(24) {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => -0.0,
        _ => (rng.below(2001) as f64 - 1000.0) * 0.37,
    };
    match d {
        DType::F32 => Storage::F32((0..n).map(|_| draw(rng) as f32).collect()),
        DType::F64 => Storage::F64((0..n).map(|_| draw(rng)).collect()),
        DType::I32 => Storage::I32((0..n).map(|_| rng.next() as i32).collect()),
        DType::U32 => Storage::U32((0..n).map(|_| rng.next() as u32).collect()),
        DType::Bool => Storage::Bool((0..n).map(|_| rng.below(2) == 1).collect()),
    }
}

fn inputs(rng: &mut Rng, d: DType) -> Vec<Tensor> {
    let table: Vec<i32> = (0..TABLE).map(|_| rng.start(ROWS) as i32).collect();
    vec![
        Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
        Tensor::new(TensorType::new(DType::F64, vec![]), Storage::F64(vec![0.5])),
        Tensor::new(TensorType::new(d, vec![ROWS, COLS]), matrix(rng, d)),
        Tensor::new(
            TensorType::new(DType::I32, vec![TABLE]),
            Storage::I32(table),
        ),
    ]
}

#[test]
fn random_loops_over_arrays_give_the_interpreters_bits() {
    for seed in 0..property_draws(400) {
        let mut rng = Rng(seed);
        let (p, d) = random_program(&mut rng);
        let (compiled, reference) = both_tiers(&p, seed);
        for draw in 0..4 {
            let args = inputs(&mut rng, d);
            let kept = args[2].clone();
            let a = compiled.run(args.clone());
            let b = run(&reference, args);
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(
                    nan_blind(&x.data),
                    nan_blind(&y.data),
                    "seed {seed}, draw {draw}, output {k} ({})\n{}",
                    x.ty,
                    p.to_text()
                );
            }
            // The caller's array is a value: an in-place update works on a copy of it.
            assert_eq!(
                kept.data.to_bytes(),
                inputs_again(seed, draw, d).to_bytes(),
                "seed {seed}: the input array was written"
            );
        }
    }
}

/// The bits of `s`, every NaN one NaN: the suite's exactness ("identical bits except NaN
/// payloads"). Where two different NaNs meet (a NaN input and the default NaN of inf - inf,
/// say), which survives depends on operand order, which LLVM may commute.
fn nan_blind(s: &Storage) -> Vec<u64> {
    match s {
        Storage::F32(v) => v
            .iter()
            .map(|x| {
                if x.is_nan() {
                    u64::MAX
                } else {
                    x.to_bits() as u64
                }
            })
            .collect(),
        Storage::F64(v) => v
            .iter()
            .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
            .collect(),
        other => (0..other.len()).map(|i| other.bits_at(i)).collect(),
    }
}

/// The array `inputs` drew for `draw` of `seed`, drawn again.
fn inputs_again(seed: u64, draw: usize, d: DType) -> Storage {
    let mut rng = Rng(seed);
    let _ = random_program(&mut rng);
    let mut args = inputs(&mut rng, d);
    for _ in 0..draw {
        args = inputs(&mut rng, d);
    }
    std::sync::Arc::try_unwrap(args.swap_remove(2).data).unwrap_or_else(|a| (*a).clone())
}

/// A batched product whose operands are in neither (batch, rows, cols) nor its transpose
/// (`lhs` as (contract, batch, free), `rhs` as (free, batch, contract)): the loop IR copies
/// each into that order first, as the interpreter does, so both tiers give the same bits;
/// the product feeds the next iteration.
#[test]
fn products_of_reordered_operands_give_the_interpreters_bits() {
    for d in ["f32", "f64"] {
        let p = Program::parse(&format!(
            "program(%0: i32[], %1: {d}[3,2,4], %2: {d}[5,2,3]) {{
  %3, %4, %5 = while(%0, %1, %2) : i32[], {d}[3,2,4], {d}[5,2,3] {{
    cond(%0: i32[], %1: {d}[3,2,4], %2: {d}[5,2,3]) {{
      %3 = constant[value=[3]]() : i32[]
      %4 = compare[dir=lt](%0, %3) : bool[]
      return %4
    }}
    body(%0: i32[], %1: {d}[3,2,4], %2: {d}[5,2,3]) {{
      %3 = dot_general[lhs_batch=[1], rhs_batch=[1], lhs_contract=[0], rhs_contract=[2]](%1, %2) : {d}[2,4,5]
      %4 = tanh(%3) : {d}[2,4,5]
      %5 = reduce[kind=sum, axes=[1]](%4) : {d}[2,5]
      %6 = transpose[perm=[1,0]](%5) : {d}[5,2]
      %7 = broadcast_in_dim[dims=[0,1]](%6) : {d}[5,2,3]
      %8 = add(%2, %7) : {d}[5,2,3]
      %9 = constant[value=[1]]() : i32[]
      %10 = add(%0, %9) : i32[]
      return %10, %1, %8
    }}
  }}
  return %5
}}"
        ))
        .unwrap();
        p.validate().unwrap();
        let (compiled, reference) = both_tiers(&p, 0);
        let dtype = if d == "f32" { DType::F32 } else { DType::F64 };
        let values = |n: usize, scale: f64| -> Storage {
            let xs: Vec<f64> = (0..n)
                .map(|k| ((k * 37 % 23) as f64 - 11.0) * scale)
                .collect();
            match dtype {
                DType::F32 => Storage::F32(xs.iter().map(|x| *x as f32).collect()),
                _ => Storage::F64(xs),
            }
        };
        let inputs = vec![
            Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
            Tensor::new(TensorType::new(dtype, vec![3, 2, 4]), values(24, 0.07)),
            Tensor::new(TensorType::new(dtype, vec![5, 2, 3]), values(30, 0.05)),
        ];
        let x = compiled.run(inputs.clone());
        let y = run(&reference, inputs.clone());
        assert_eq!(x[0].data.to_bytes(), y[0].data.to_bytes(), "{d}");
        assert_ne!(
            x[0].data.to_bytes(),
            inputs[2].data.to_bytes(),
            "{d}: the loop ran"
        );
    }
}
