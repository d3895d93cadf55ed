//! A `while` loop with a bound on its trips, differentiable in reverse mode, whose cost
//! follows the trips it takes (equinox's `while_loop(kind="bounded", max_steps=...)`;
//! JAX's `while_loop` refuses reverse mode).
//!
//! It is built from primitives that carry every rule already, so forward mode, `vmap`,
//! nesting, higher derivatives, and `cond`, `checkpoint` or custom rules in the body compose
//! as they do for them. The loop is a tree of `scan`s, [`BoundedWhileOptions::checkpoints`]
//! children a node (16 by default):
//! - a leaf is a guarded step, a `cond`: `cond(carry) and count < max_steps` runs `body`,
//!   else the carry passes through. A `cond` transposes into the selected branch only, so a
//!   skipped step costs neither a body evaluation nor a backward step;
//! - a node at level `l` is a `scan` over its children, each behind a `cond` on the same
//!   predicate, so a finished loop skips a whole subtree at the cost of the predicate;
//! - nodes at odd levels (below the root) are wrapped in `checkpoint`: reverse mode keeps
//!   only their inputs and recomputes their insides when it gets there.
//!
//! Costs with the default 16 children, for `n` trips taken and `d` levels
//! (`ceil(log16(max_steps))`, or one fewer when a root of up to 32 children covers the
//! bound): forward `n` body evaluations plus at most
//! 15 skipped children a level (31 at the root; the tree's last partly used path), so the
//! bound adds `O(log max_steps)` predicate evaluations, not `O(sqrt(max_steps))`. Reverse:
//! the forward pass, then each level's `scan` recomputes its steps' residuals in its
//! backward pass, so `(d + 1) n` body evaluations (4 a trip at a bound of 4,096, 5 at
//! 65,536; counted in `core/tests/loop_work.rs`) and `n` backward steps. Memory: a few
//! hundred carries whatever the bound (measured in `core/tests/bounded_while.rs`: 4,896
//! bytes at 1,024 trips of a 16-float carry, 7,072 at 16,384).

use super::{cond, scan, RegionFn};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::eval::eval_program;
use quabla_abi::qir::Program;
use quabla_abi::{DType, TensorType};

/// `while cond_fn(carry): carry = body_fn(carry)`, stopping after `max_steps` trips at the
/// latest, and differentiable in reverse mode as well as forward mode. The bound sizes the
/// loop's storage (at most a few hundred carries); the time is that of the trips taken.
/// [`bounded_while_loop_with`] chooses how reverse mode trades memory for recomputation.
///
/// ```no_run
/// # use quabla::{lax, Array};
/// // Halve x until it is below 1: 3 trips from 5.
/// let x = Array::from_slice(&[5.0f64], &[]).unwrap();
/// let out = lax::bounded_while_loop(
///     &|c: &[Array]| Ok(vec![c[0].ge(1.0)?]),
///     &|c: &[Array]| Ok(vec![(&c[0] * 0.5)?]),
///     &[x],
///     100,
/// )
/// .unwrap();
/// assert_eq!(out[0].item::<f64>().unwrap(), 0.625);
/// ```
pub fn bounded_while_loop(
    cond_fn: RegionFn,
    body_fn: RegionFn,
    init: &[Array],
    max_steps: usize,
) -> Result<Vec<Array>> {
    bounded_while_loop_with(cond_fn, body_fn, init, &BoundedWhileOptions::new(max_steps))
}

/// The default of [`BoundedWhileOptions::checkpoints`].
pub const DEFAULT_CHECKPOINTS: usize = 16;

/// A bounded loop's bound and its reverse-mode schedule.
///
/// The loop is a tree of `scan`s with `checkpoints` children a node (up to twice that at
/// the root), `levels = ceil(log_checkpoints(max_steps))` deep (one fewer when the root's
/// extra room covers the bound). Reverse mode keeps about `checkpoints` carries a level and
/// evaluates the body `levels + 1` times a trip taken, so the knob trades memory for
/// recomputation as revolve's snapshot count does: `checkpoints >= max_steps / 2` is one
/// level (every trip's residuals stored, as a `scan`'s full tape: two evaluations a trip),
/// `checkpoints = sqrt(max_steps)` two levels (`2 sqrt(max_steps)` carries, three
/// evaluations a trip), the default 16 three levels at a bound of 4,096 (four a trip, a few
/// hundred carries). Values and forward-mode results do not depend on it.
///
/// Fewer evaluations are not always faster: the trips a node skips (up to `checkpoints - 1`
/// a level, twice that at the root) each still cost the reverse pass a pass over the
/// captured parameters' cotangents. Measured on a neural ODE (64-wide MLP field, a bound of
/// 4,107, a few dozen trips taken): one level was 10-25x slower than the default, 64
/// children about 2x slower, 4 or 8 about as fast (`cargo xtask bench --only ode`).
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let x = Array::from_slice(&[5.0f64], &[]).unwrap();
/// // Up to 4,096 trips; reverse mode stores at most 2 x 64 carries.
/// let opts = lax::BoundedWhileOptions { checkpoints: 64, ..lax::BoundedWhileOptions::new(4096) };
/// let out = lax::bounded_while_loop_with(
///     &|c: &[Array]| Ok(vec![c[0].ge(1.0)?]),
///     &|c: &[Array]| Ok(vec![(&c[0] * 0.5)?]),
///     &[x],
///     &opts,
/// )
/// .unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundedWhileOptions {
    /// The most trips the loop takes (below 2^30).
    pub max_steps: usize,
    /// Children of each node of the loop's tree, at least 2 (default [`DEFAULT_CHECKPOINTS`]).
    pub checkpoints: usize,
}

impl BoundedWhileOptions {
    /// At most `max_steps` trips, with the default schedule.
    pub fn new(max_steps: usize) -> Self {
        BoundedWhileOptions {
            max_steps,
            checkpoints: DEFAULT_CHECKPOINTS,
        }
    }

    fn check(&self, caller: &str) -> Result<()> {
        if self.max_steps > i32::MAX as usize / 2 {
            return Err(Error::Value(format!(
                "{caller}: max_steps must be below 2^30, got {}",
                self.max_steps
            )));
        }
        if self.checkpoints < 2 {
            return Err(Error::Value(format!(
                "{caller}: checkpoints must be at least 2 (the children of each node of the \
                 loop's tree), got {}; use {DEFAULT_CHECKPOINTS} (the default), or max_steps \
                 for a single level",
                self.checkpoints
            )));
        }
        Ok(())
    }
}

/// [`bounded_while_loop`] with its reverse-mode schedule chosen by
/// [`BoundedWhileOptions::checkpoints`].
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let x = Array::from_slice(&[5.0f64], &[]).unwrap();
/// let out = lax::bounded_while_loop_with(
///     &|c: &[Array]| Ok(vec![c[0].ge(1.0)?]),
///     &|c: &[Array]| Ok(vec![(&c[0] * 0.5)?]),
///     &[x],
///     &lax::BoundedWhileOptions { max_steps: 100, checkpoints: 100 },
/// )
/// .unwrap();
/// assert_eq!(out[0].item::<f64>().unwrap(), 0.625);
/// ```
pub fn bounded_while_loop_with(
    cond_fn: RegionFn,
    body_fn: RegionFn,
    init: &[Array],
    opts: &BoundedWhileOptions,
) -> Result<Vec<Array>> {
    let like = init
        .first()
        .ok_or_else(|| Error::Value("bounded_while_loop needs a carry".into()))?;
    opts.check("bounded_while_loop")?;
    let device = super::device_for(&init.iter().collect::<Vec<_>>())?;
    let types: Vec<TensorType> = init.iter().map(|a| a.tensor_type().clone()).collect();
    // The regions are traced once; what they capture travels beside the loop state, as the
    // consts of every scan of the tree (`checkpoint` must not capture an outer trace's values).
    let regions =
        super::LoopRegions::trace("bounded_while_loop", &device, &types, cond_fn, body_fn)?;
    if opts.max_steps == 0 {
        return Ok(init.to_vec());
    }
    let mut state = init.to_vec();
    state.push(crate::ops::zeros_typed(
        like,
        &TensorType::scalar(DType::I32),
    )?);
    let mut caps = regions.cond_captures;
    let tree = Tree {
        cond: &regions.cond,
        body: &regions.body,
        carry: init.len(),
        cond_caps: caps.len(),
        bound: opts.max_steps as i32,
        children: level_sizes(opts.max_steps, opts.checkpoints),
    };
    caps.extend(regions.body_captures);
    let mut out = tree.node(tree.children.len(), &state, &caps)?;
    out.truncate(init.len());
    Ok(out)
}

/// The number of children of a node at each level, leaves' parents first: `branching`
/// everywhere but at the root, which has as many as the bound needs, up to twice
/// `branching` rather than a level more. Each level costs reverse mode a pass over the
/// trips taken, and a bound just past a power of the branching is common (`odeint`'s is
/// `max_steps + len(t)`: 4,107 for 11 times), which would otherwise add a root of 2
/// children, a whole pass, for a 0.3% larger bound.
fn level_sizes(max_steps: usize, branching: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut below = 1usize;
    while below.saturating_mul(branching.saturating_mul(2)) < max_steps {
        sizes.push(branching);
        below = below.saturating_mul(branching);
    }
    sizes.push(max_steps.div_ceil(below));
    sizes
}

/// The traced regions and the tree's shape. A loop state is `(carry..., trips taken)`; the
/// captures of `cond` then `body` travel beside it, as the consts of every `scan`.
struct Tree<'a> {
    cond: &'a Program,
    body: &'a Program,
    carry: usize,
    cond_caps: usize,
    bound: i32,
    children: Vec<usize>,
}

impl Tree<'_> {
    fn going(&self, state: &[Array], caps: &[Array]) -> Result<Array> {
        let args = [&state[..self.carry], &caps[..self.cond_caps]].concat();
        let go = eval_program(self.cond, &args)?.remove(0);
        go.bitwise_and(&state[self.carry].lt(self.bound)?)
    }

    fn step(&self, state: &[Array], caps: &[Array]) -> Result<Vec<Array>> {
        let args = [&state[..self.carry], &caps[self.cond_caps..]].concat();
        let mut next = eval_program(self.body, &args)?;
        next.push((&state[self.carry] + 1)?);
        Ok(next)
    }

    /// The subtree at `level` (0: one trip), run only while the loop is going.
    fn guarded(&self, level: usize, state: &[Array], caps: &[Array]) -> Result<Vec<Array>> {
        let unchanged = |s: &[Array]| -> Result<Vec<Array>> { Ok(s.to_vec()) };
        let inside = |s: &[Array]| -> Result<Vec<Array>> {
            if level == 0 {
                self.step(s, caps)
            } else {
                self.node(level, s, caps)
            }
        };
        cond(&self.going(state, caps)?, &inside, &unchanged, state)
    }

    /// A node at `level` >= 1: a `scan` over its guarded children, checkpointed at odd
    /// levels below the root.
    fn node(&self, level: usize, state: &[Array], caps: &[Array]) -> Result<Vec<Array>> {
        let k = state.len();
        let children = |args: &[Array]| -> Result<Vec<Array>> {
            let (state, caps) = args.split_at(k);
            let child = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
                Ok((self.guarded(level - 1, c, caps)?, vec![]))
            };
            Ok(scan(&child, state, &[], Some(self.children[level - 1]), false, 1)?.0)
        };
        let args = [state, caps].concat();
        if level % 2 == 1 && level < self.children.len() {
            crate::checkpoint(children)(&args)
        } else {
            children(&args)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{level_sizes, DEFAULT_CHECKPOINTS};

    #[test]
    fn the_tree_covers_the_bound_with_as_few_levels_as_the_root_allows() {
        for (bound, sizes) in [
            (1, vec![1]),
            (16, vec![16]),
            (32, vec![32]),
            (33, vec![16, 3]),
            (4096, vec![16, 16, 16]),
            (4107, vec![16, 16, 17]),
            (8192, vec![16, 16, 32]),
            (8193, vec![16, 16, 16, 3]),
            (65547, vec![16, 16, 16, 17]),
        ] {
            assert_eq!(
                level_sizes(bound, DEFAULT_CHECKPOINTS),
                sizes,
                "bound {bound}"
            );
            let leaves: usize = sizes.iter().product();
            assert!(leaves >= bound, "bound {bound}");
        }
    }

    #[test]
    fn the_checkpoint_count_sets_the_branching() {
        for (bound, branching, sizes) in [
            (4096, 64, vec![64, 64]),
            (4107, 64, vec![64, 65]),
            (4096, 2048, vec![4096]),
            (4096, 4096, vec![4096]),
            (4096, 2, vec![2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4]),
            (1, 2, vec![1]),
            (5, 1 << 29, vec![5]),
        ] {
            let got = level_sizes(bound, branching);
            assert_eq!(got, sizes, "bound {bound}, branching {branching}");
            assert!(got.iter().product::<usize>() >= bound);
        }
    }
}
