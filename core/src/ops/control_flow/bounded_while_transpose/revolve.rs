//! Griewank's binomial checkpointing ("revolve") for a bounded loop's backward pass, used
//! when the budget of `k` carries is too small for two levels.
//!
//! A pass counts the trips `n` (keeping nothing). The kept carries then form a stack, the
//! loop's start at the bottom; the top one starts the trips `a .. end` not yet transposed,
//! with `s` carries for them (its own and the free ones). Each trip of the backward loop
//! transposes trip `end - 1`, after a forward phase (a loop of its own) that starts from
//! the top carry and, while its segment has more than one trip and a free carry, runs
//! forward to a binomial split `a + m` one trip at a time and pushes the carry there
//! (`a + m .. end` is handled first, with `s - 1` carries; `a .. a + m` later, with `s`),
//! then runs forward to trip `end - 1`. The top carry is popped once `end` reaches it.
//!
//! The cotangents change once a trip of the outer loop, never in the forward phase: they
//! pass through no branch (which would copy them at every action).
//!
//! The split: with `t` the least with `beta(s, t) = C(s + t, s) >= end - a`,
//! `m = min(beta(s, t - 1), (end - a) - beta(s - 1, t - 1))`, clamped into `1 .. end - a`.
//! That recomputes `t l - beta(s + 1, t - 1)` trips for `l` trips and `s` carries, the
//! fewest any schedule with `s` carries can (the tests check it against the dynamic
//! program over every split). The binomials come from a table made here, one row per `s`
//! up to the first entry reaching `max_steps`.

use super::{i32_of, read_row, read_rows, write_row, Plan};
use crate::array::Array;
use crate::error::Result;
use crate::eval::eval_program;
use crate::ops::control_flow::bounded_while::bounded_while_fn;
use crate::ops::control_flow::cond;
use quabla_abi::{DType, TensorType};

/// `beta(s, t) = C(s + t, s)` for `s` in `1..=k`, row by row in one array, saturating at
/// `i32::MAX`, then `longest` entries of `i32::MAX` (so a window of `longest` entries from
/// any row's start lies inside); row `s >= 2` ends at its first entry `>= max_steps` (so
/// the least `t` with `beta(s, t) >= l` is inside it), row 1 is as long as row 2 (it is
/// read at `t - 1` for a `t` of row 2).
struct BinomialTable {
    values: Vec<i32>,
    /// Where row `s` starts in `values` for `s` in `1..=k`, and where the rows end (entry
    /// `k + 1`); entry 0 is row 1's start too.
    starts: Vec<i32>,
    /// The longest row (row 2's length).
    longest: usize,
}

impl BinomialTable {
    fn new(k: usize, max_steps: usize) -> Result<BinomialTable> {
        let target = max_steps.max(1) as u64;
        let row = |s: u64, len: Option<usize>| -> Vec<i32> {
            let mut out = Vec::new();
            let mut b: u64 = 1;
            for t in 0u64.. {
                out.push(i32::try_from(b).unwrap_or(i32::MAX));
                let done = match len {
                    Some(len) => out.len() >= len,
                    None => b >= target,
                };
                if done {
                    break;
                }
                // beta(s, t + 1) = beta(s, t) (s + t + 1) / (t + 1), exact; below the
                // target (< 2^30) the product stays far inside u64.
                b = b * (s + t + 1) / (t + 1);
            }
            out
        };
        let second = if k >= 2 { row(2, None) } else { vec![1] };
        let longest = second.len();
        let mut values = Vec::new();
        let mut starts = vec![0];
        for s in 1..=k.max(1) {
            starts.push(i32_of(values.len())?);
            match s {
                1 => values.extend(row(1, Some(longest))),
                2 => values.extend(second.iter().copied()),
                s => values.extend(row(s as u64, None)),
            }
        }
        starts.push(i32_of(values.len())?);
        values.extend(std::iter::repeat_n(i32::MAX, longest));
        Ok(BinomialTable {
            values,
            starts,
            longest,
        })
    }
}

impl Plan<'_> {
    /// The backward pass under the binomial schedule of `snapshots` carries.
    pub(super) fn binomial_backward(
        &self,
        like: &Array,
        known: &[Array],
        fixed: &[Array],
        cts: Vec<Array>,
        snapshots: usize,
    ) -> Result<Vec<Array>> {
        let trips = self.count_trips(like, known)?;
        let k = snapshots.max(1);
        let table = BinomialTable::new(k, self.max_steps)?;
        let zero = crate::ops::zeros_typed(like, &TensorType::scalar(DType::I32))?;
        let start = self.varying_of(known);
        let bufs: Vec<Array> = self
            .buffers(like, k)?
            .iter()
            .zip(&start)
            .map(|(b, v)| write_row(b, v, &zero))
            .collect::<Result<_>>()?;
        super::super::scan_tape::record_tape(&bufs);
        let device = like.device();
        let counting: Vec<i32> = (0..i32_of(table.longest)?).collect();
        let mut init = vec![
            trips,
            (&zero + 1)?,
            crate::ops::zeros_typed(like, &TensorType::new(DType::I32, vec![k]))?,
        ];
        let (nv, nl) = (start.len(), cts.len());
        init.extend(bufs);
        init.extend(cts);
        init.extend(fixed.iter().cloned());
        init.push(Array::from_slice_on(
            device,
            &table.values,
            &[table.values.len()],
        )?);
        init.push(Array::from_slice_on(
            device,
            &table.starts,
            &[table.starts.len()],
        )?);
        init.push(Array::from_slice_on(device, &counting, &[table.longest])?);
        let schedule = Schedule {
            plan: self,
            k: i32_of(k)?,
            longest: table.longest,
            nv,
        };
        // Each trip of this loop transposes one trip of the loop differentiated, after a
        // forward phase that brings the top carry to that trip, `end - 1`, pushing carries
        // at the splits on the way.
        let body = |c: &[Array]| -> Result<Vec<Array>> {
            let (end, depth, idx) = (&c[0], &c[1], &c[2]);
            let (bufs, rest) = c[3..].split_at(nv);
            let (cts, rest) = rest.split_at(nl);
            let (fixed, tables) = rest.split_at(rest.len() - 3);
            // Trip -1: the first step takes the top carry (a view of the buffers as the
            // initial carry would make the loop copy the buffers, which it updates).
            let (splits, target) = schedule.target(depth, idx, end, tables)?;
            let mut phase = vec![
                (end.zeros_like()? - 1)?,
                depth.clone(),
                idx.clone(),
                splits,
                target,
            ];
            for &v in &self.varying {
                phase.push(crate::ops::zeros_typed(
                    end,
                    &self.carry_types[self.known[v]],
                )?);
            }
            phase.extend(bufs.iter().cloned());
            phase.push(end.clone());
            phase.extend(fixed.iter().cloned());
            phase.extend(tables.iter().cloned());
            let out = bounded_while_fn(
                end,
                |p| schedule.ready(p)?.logical_not(),
                |p| schedule.step(p),
                &phase,
                self.max_steps + k,
            )?;
            let (depth, idx) = (&out[1], &out[2]);
            let (x, bufs) = out[5..5 + 2 * nv].split_at(nv);
            let mut args = eval_program(&self.fwd_residuals, &self.known_carry(x, fixed))?;
            args.extend(cts.iter().cloned());
            let ct = eval_program(&self.bwd, &args)?;
            let end = (end - 1)?;
            // Once `end` reaches the top carry's trip, that carry starts no trip left (the
            // loop's start stays: nothing is left when `end` reaches 0).
            let top = (depth - 1)?;
            let pop = read_row(idx, &top)?.eq(&end)?.bitwise_and(&depth.gt(1)?)?;
            let mut next = vec![end, (depth - &pop.astype(DType::I32)?)?, idx.clone()];
            next.extend(bufs.iter().cloned());
            next.extend(ct);
            next.extend(rest.iter().cloned());
            Ok(next)
        };
        let going = |c: &[Array]| c[0].gt(0);
        let out = bounded_while_fn(like, going, body, &init, self.max_steps)?;
        Ok(out[3 + nv..3 + nv + nl].to_vec())
    }

    /// The trips the loop takes from the known operands (nothing kept).
    fn count_trips(&self, like: &Array, known: &[Array]) -> Result<Array> {
        let nk = known.len();
        let mut init = vec![crate::ops::zeros_typed(
            like,
            &TensorType::scalar(DType::I32),
        )?];
        init.extend(known.iter().cloned());
        let going = |c: &[Array]| self.going(&c[1..1 + nk], &c[0]);
        let body = |c: &[Array]| -> Result<Vec<Array>> {
            let mut next = vec![(&c[0] + 1)?];
            next.extend(eval_program(&self.fwd_known, &c[1..1 + nk])?);
            Ok(next)
        };
        let out = bounded_while_fn(like, going, body, &init, self.max_steps)?;
        Ok(out[0].clone())
    }
}

/// The forward phase of one transposed trip, a loop over `(pos, depth, idx, whether the top
/// carry's segment splits, its target, the current carry, the buffers, end, fixed, the
/// tables)`: from the top carry (taken at the first step, `pos` -1 before it), run one
/// trip forward at a time to the target, and at a split push the current carry.
struct Schedule<'p, 'a> {
    plan: &'p Plan<'a>,
    k: i32,
    longest: usize,
    nv: usize,
}

impl Schedule<'_, '_> {
    /// `(whether the top carry's segment splits, its target trip)`.
    fn target(
        &self,
        depth: &Array,
        idx: &Array,
        end: &Array,
        tables: &[Array],
    ) -> Result<(Array, Array)> {
        let a = read_row(idx, &(depth - 1)?)?;
        let l = (end - &a)?;
        let free = (&depth.neg()? + self.k)?;
        let splits = l.gt(1)?.bitwise_and(&free.gt(0)?)?;
        let m = split(tables, &(&free + 1)?, &l, self.longest)?;
        let target = splits.select(&(&a + &m)?, &(end - 1)?)?;
        Ok((splits, target))
    }

    /// At trip `end - 1` with nothing to push: the trip can be transposed.
    fn ready(&self, p: &[Array]) -> Result<Array> {
        p[0].ge(&p[4])?.bitwise_and(&p[3].logical_not()?)
    }

    fn step(&self, p: &[Array]) -> Result<Vec<Array>> {
        let nv = self.nv;
        let (depth, idx, splits, target) = (&p[1], &p[2], &p[3], &p[4]);
        let (x, rest) = p[5..].split_at(nv);
        let (bufs, rest) = rest.split_at(nv);
        let (end, fixed) = (&rest[0], &rest[1..rest.len() - 3]);
        let tables = &rest[rest.len() - 3..];
        let top = (depth - 1)?;
        // The top carry and its trip: taken at the first step, written back at the others.
        let (top_trip, top_carry) = (read_row(idx, &top)?, read_rows(bufs, &top)?);
        let fresh = p[0].lt(0)?;
        let pos = &fresh.select(&top_trip, &p[0])?;
        let x: Vec<Array> = x
            .iter()
            .zip(&top_carry)
            .map(|(x, kept)| fresh.select(kept, x))
            .collect::<Result<_>>()?;
        let forward = pos.lt(target)?;
        let push = forward.logical_not()?.bitwise_and(splits)?;
        // The trip runs only when it is taken.
        let run = |c: &[Array]| -> Result<Vec<Array>> {
            let known = self.plan.known_carry(&c[..nv], &c[nv..]);
            Ok(self
                .plan
                .varying_of(&eval_program(&self.plan.fwd_known, &known)?))
        };
        let stay = |c: &[Array]| Ok(c[..nv].to_vec());
        let operands: Vec<Array> = x.iter().chain(fixed).cloned().collect();
        let x = cond(&forward, &run, &stay, &operands)?;
        // A push writes the current carry one above the top; otherwise the top carry is
        // written back onto itself (the write stays in place, outside the branches).
        let row = push.select(depth, &top)?;
        let depth = (depth + &push.astype(DType::I32)?)?;
        let idx = write_row(idx, &push.select(pos, &top_trip)?, &row)?;
        // The next step's target, from the top carry after a push (once a step, not in
        // the loop's test as well).
        let (splits, target) = self.target(&depth, &idx, end, tables)?;
        let mut next = vec![
            (pos + &forward.astype(DType::I32)?)?,
            depth,
            idx,
            splits,
            target,
        ];
        next.extend(x.iter().cloned());
        for ((b, v), kept) in bufs.iter().zip(&x).zip(&top_carry) {
            next.push(write_row(b, &push.select(v, kept)?, &row)?);
        }
        next.extend(rest.iter().cloned());
        Ok(next)
    }
}

/// The binomial split of `l` trips with `s` carries (meaningful for `l >= 2`, `s >= 2`):
/// `t` is the count of row `s`'s entries below `l` (the row rises to at least `l`).
fn split(tables: &[Array], s: &Array, l: &Array, longest: usize) -> Result<Array> {
    let (beta, starts, counting) = (&tables[0], &tables[1], &tables[2]);
    let row = read_row(starts, s)?;
    let len = (&read_row(starts, &(s + 1)?)? - &row)?;
    let window = beta.dynamic_slice(&[&row], &[longest])?;
    let t = window
        .lt(l)?
        .bitwise_and(&counting.lt(&len)?)?
        .astype(DType::I32)?
        .sum(crate::Axes::All, false)?;
    let at = |row: &Array| read_row(beta, &(&(row + &t)? - 1)?);
    let left = at(&row)?;
    let right = (l - &at(&read_row(starts, &(s - 1)?)?)?)?;
    left.minimum(&right)?.maximum(1)?.minimum(&(l - 1)?)
}

#[cfg(test)]
mod tests {
    use super::BinomialTable;

    fn binomial(s: u64, t: u64) -> u64 {
        (1..=t).fold(1, |b, i| b * (s + i) / i)
    }

    /// Trips the schedule recomputes for `l` trips and `s` carries, by the rule the loop
    /// follows (the stack made explicit, not recursion), with the table's binomials.
    fn recomputed(l: u64, s: u64, table: &BinomialTable) -> u64 {
        let beta =
            |s: u64, t: u64| table.values[table.starts[s as usize] as usize + t as usize] as u64;
        let mut stack = vec![(0u64, s)];
        let mut end = l;
        let mut work = 0;
        while end > 0 {
            let (a, s) = *stack.last().unwrap();
            let len = end - a;
            if len > 1 && s > 1 {
                let t = (0..).find(|&t| beta(s, t) >= len).unwrap();
                let m = beta(s, t - 1)
                    .min(len - beta(s - 1, t - 1))
                    .clamp(1, len - 1);
                work += m;
                stack.push((a + m, s - 1));
            } else {
                work += len - 1;
                end -= 1;
                if a == end && stack.len() > 1 {
                    stack.pop();
                }
            }
        }
        work
    }

    /// The least recomputation over every schedule: split at each `m` and take the best.
    fn optimum(max_l: usize, max_s: usize) -> Vec<Vec<u64>> {
        let mut f = vec![vec![0u64; max_s + 1]; max_l + 1];
        for l in 2..=max_l {
            for s in 1..=max_s {
                f[l][s] = if s == 1 {
                    (l * (l - 1) / 2) as u64
                } else {
                    (1..l)
                        .map(|m| m as u64 + f[l - m][s - 1] + f[m][s])
                        .min()
                        .unwrap()
                };
            }
        }
        f
    }

    #[test]
    fn the_binomial_split_recomputes_the_least_any_schedule_can() {
        let (max_l, max_s) = (160, 9);
        let best = optimum(max_l, max_s);
        let table = BinomialTable::new(max_s, max_l).unwrap();
        for (l, row) in best.iter().enumerate().skip(1) {
            for (s, least) in row.iter().enumerate().skip(1) {
                assert_eq!(
                    recomputed(l as u64, s as u64, &table),
                    *least,
                    "{l} trips, {s} carries"
                );
            }
        }
    }

    #[test]
    fn the_recomputation_follows_griewanks_formula() {
        for (k, m) in [
            (2usize, 4096usize),
            (3, 4096),
            (5, 65536),
            (12, 65536),
            (40, 4096),
        ] {
            let table = BinomialTable::new(k, m).unwrap();
            for l in [1u64, 2, 5, 50, 777, m as u64] {
                let t = (0..).find(|&t| binomial(k as u64, t) >= l).unwrap();
                let want = if t == 0 {
                    0
                } else {
                    t * l - binomial(k as u64 + 1, t - 1)
                };
                assert_eq!(
                    recomputed(l, k as u64, &table),
                    want,
                    "{l} trips, {k} carries"
                );
            }
        }
    }

    #[test]
    fn rows_end_where_the_search_needs_them() {
        let table = BinomialTable::new(4, 4096).unwrap();
        // C(t + 2, 2) first reaches 4096 at t = 90 (4186; 4095 at 89), C(t + 3, 3) at 28
        // (4495), C(t + 4, 4) at 16 (4845); row 1 is as long as row 2.
        assert_eq!(table.longest, 91);
        assert_eq!(table.starts[1..], [0, 91, 182, 211, 228]);
        // Padding: a window of 91 from row 4's start stays inside.
        assert_eq!(table.values.len(), 228 + 91);
        assert_eq!(table.values[228..], [i32::MAX; 91]);
        assert_eq!(table.values[90], 91);
        assert_eq!(table.values[91 + 89..91 + 91], [4095, 4186]);
        assert_eq!(table.values[182 + 28], 4495);
        assert_eq!(table.values[211 + 16], 4845);
    }
}
