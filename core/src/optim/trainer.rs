//! `Trainer`: one compiled program per step (loss, gradient, optimizer update) with the
//! parameters and optimizer state kept on the device between steps.

use super::{apply_updates, Optimizer};
use crate::ad::value_and_grad;
use crate::array::Array;
use crate::distributed::{self, Communicator};
use crate::error::Result;
use crate::jit::{jit, Jit};
use crate::HostArray;
use std::sync::Arc;

type StepFn = Box<dyn Fn(&[Array]) -> Result<Vec<Array>>>;

/// How a step runs.
enum Step {
    /// Loss, gradient and update in one compiled program.
    Fused(Jit<StepFn>),
    /// Loss and gradient on this rank's shard, both averaged across ranks
    /// ([`distributed::value_and_grad`]), then the update: two compiled programs with the
    /// collective between them.
    DataParallel { grad: StepFn, update: Jit<StepFn> },
}

/// Trains `params` to minimise `loss_fn(params..., batch...)` (a scalar float).
///
/// Each [`Trainer::step`] runs one compiled program; parameters and optimizer state stay on
/// the device (donated to the step, so the backend may update them in place); the loss is
/// read back only when asked.
///
/// ```no_run
/// # use quabla::{optim::{adam, Trainer}, Array, Axes};
/// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.sin()?.sum(Axes::All, false)?]);
/// let w = Array::from_slice(&[0.5f32, 1.0], &[2]).unwrap();
/// let mut t = Trainer::new(loss, vec![w], adam(1e-2)).unwrap();
/// let batch = Array::from_slice(&[0.1f32, 0.2], &[2]).unwrap();
/// t.run(100, &[batch], true).unwrap();
/// println!("loss {}", t.loss().unwrap());
/// ```
pub struct Trainer {
    step: Step,
    params: Vec<Array>,
    state: Vec<Array>,
    loss: Option<Array>,
    steps: usize,
}

impl Trainer {
    /// Sets up training; nothing is compiled until the first step.
    ///
    /// ```no_run
    /// # use quabla::{optim::{adam, Trainer}, Array, Axes};
    /// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.pow(2.0)?.sum(Axes::All, false)?]);
    /// let w = Array::from_slice(&[0.0f32; 3], &[3])?;
    /// let target = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// let mut t = Trainer::new(loss, vec![w], adam(1e-1))?;
    /// t.run(200, &[target], false)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn new<L>(loss_fn: L, params: Vec<Array>, optimizer: Optimizer) -> Result<Trainer>
    where
        L: Fn(&[Array]) -> Result<Vec<Array>> + 'static,
    {
        if params.is_empty() {
            return Err(crate::Error::value("Trainer needs at least one parameter"));
        }
        let state = optimizer.init(&params)?;
        let (np, ns) = (params.len(), state.len());
        let argnums: Vec<usize> = (0..np).collect();
        let vg = value_and_grad(loss_fn, &argnums, false);
        let step: StepFn = Box::new(move |a: &[Array]| {
            let (p, rest) = a.split_at(np);
            let (s, batch) = rest.split_at(ns);
            let inputs: Vec<Array> = p.iter().chain(batch).cloned().collect();
            let r = vg(&inputs)?;
            let (updates, new_state) = optimizer.update(&r[1..], s, p)?;
            let mut out = vec![r[0].clone()];
            out.extend(apply_updates(p, &updates)?);
            out.extend(new_state);
            Ok(out)
        });
        Ok(Trainer {
            step: Step::Fused(jit(step)),
            params,
            state,
            loss: None,
            steps: 0,
        })
    }

    /// Data-parallel training: each rank of `comm` passes its shard of the batch to
    /// [`Trainer::step`]; the loss and gradients are averaged across ranks before the update,
    /// so with a loss that is a mean over equal shards every rank takes the full batch's
    /// step. The parameters start as rank 0's (broadcast here), so the replicas agree.
    ///
    /// ```no_run
    /// # use quabla::{distributed, optim::{adam, Trainer}, Array, Axes};
    /// let comm = distributed::initialize().unwrap();
    /// let loss = |a: &[Array]| {
    ///     let d = (&a[0] - &a[1])?;
    ///     Ok(vec![(&d * &d)?.mean(Axes::All, false)?])
    /// };
    /// let w = Array::from_slice(&[0.5f32], &[1]).unwrap();
    /// let mut t = Trainer::data_parallel(loss, vec![w], adam(1e-2), comm).unwrap();
    /// let shard = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap(); // this rank's rows
    /// t.step(&[shard]).unwrap();
    /// ```
    pub fn data_parallel<L>(
        loss_fn: L,
        params: Vec<Array>,
        optimizer: Optimizer,
        comm: Arc<Communicator>,
    ) -> Result<Trainer>
    where
        L: Fn(&[Array]) -> Result<Vec<Array>> + 'static,
    {
        if params.is_empty() {
            return Err(crate::Error::value("Trainer needs at least one parameter"));
        }
        let params = comm.broadcast_many(&params)?;
        let state = optimizer.init(&params)?;
        let (np, ns) = (params.len(), state.len());
        let argnums: Vec<usize> = (0..np).collect();
        let grad: StepFn = Box::new(distributed::value_and_grad(comm, loss_fn, &argnums));
        let update: StepFn = Box::new(move |a: &[Array]| {
            let (p, rest) = a.split_at(np);
            let (s, g) = rest.split_at(ns);
            let (updates, new_state) = optimizer.update(g, s, p)?;
            let mut out = apply_updates(p, &updates)?;
            out.extend(new_state);
            Ok(out)
        });
        Ok(Trainer {
            step: Step::DataParallel {
                grad,
                update: jit(update),
            },
            params,
            state,
            loss: None,
            steps: 0,
        })
    }

    /// One optimisation step on `batch` (the loss function's arguments after the parameters;
    /// this rank's shard of them when data-parallel).
    ///
    /// ```no_run
    /// # use quabla::{optim::{adam, Trainer}, Array, Axes};
    /// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.pow(2.0)?.sum(Axes::All, false)?]);
    /// let w = Array::from_slice(&[0.0f32; 3], &[3])?;
    /// let target = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// let mut t = Trainer::new(loss, vec![w], adam(1e-1))?;
    /// t.step(std::slice::from_ref(&target))?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn step(&mut self, batch: &[Array]) -> Result<()> {
        let (np, ns) = (self.params.len(), self.state.len());
        let mut args: Vec<Array> = std::mem::take(&mut self.params);
        args.append(&mut std::mem::take(&mut self.state));
        let (program, loss) = match &self.step {
            Step::Fused(step) => {
                args.extend(batch.iter().cloned());
                (step, None)
            }
            Step::DataParallel { grad, update } => {
                let mut inputs: Vec<Array> = args[..np].to_vec();
                inputs.extend(batch.iter().cloned());
                let mut averaged = match grad(&inputs) {
                    Ok(r) => r,
                    Err(e) => {
                        (self.params, self.state) = split_state(args, np, ns);
                        return Err(e);
                    }
                };
                let grads = averaged.split_off(1);
                args.extend(grads);
                (update, averaged.pop())
            }
        };
        let mut donate = vec![true; np + ns];
        donate.resize(args.len(), false);
        // Trace and compile first: an error there leaves the training state untouched.
        if let Err(e) = program.compile_for(&args) {
            (self.params, self.state) = split_state(args, np, ns);
            return Err(e);
        }
        let mut out = program.call_donating(args, &donate).map_err(|e| {
            e.context(
                "the training step failed after its state was donated to the backend \
                 (parameters and optimizer state are gone; build a new Trainer)",
            )
        })?;
        let tail = usize::from(loss.is_none());
        self.state = out.split_off(tail + np);
        self.params = out.split_off(tail);
        self.loss = loss.or_else(|| out.pop());
        self.steps += 1;
        Ok(())
    }

    /// `steps` steps on the same batch, with a progress bar (loss and steps/s) when `progress`.
    ///
    /// ```no_run
    /// # use quabla::{optim::{adam, Trainer}, Array, Axes};
    /// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.pow(2.0)?.sum(Axes::All, false)?]);
    /// let w = Array::from_slice(&[0.0f32; 3], &[3])?;
    /// let target = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// let mut t = Trainer::new(loss, vec![w], adam(1e-1))?;
    /// t.run(500, &[target], true)?; // prints loss and steps/s
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn run(&mut self, steps: usize, batch: &[Array], progress: bool) -> Result<()> {
        let bar = progress.then(|| {
            let b = indicatif::ProgressBar::new(steps as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {per_sec} loss {msg}")
            {
                b.set_style(style);
            }
            b
        });
        for k in 0..steps {
            self.step(batch)?;
            if let Some(b) = &bar {
                b.inc(1);
                if k % 50 == 0 || k + 1 == steps {
                    b.set_message(format!("{:.4e}", self.loss()?));
                }
            }
        }
        if let Some(b) = bar {
            b.finish();
        }
        Ok(())
    }

    /// The loss of the last step (downloaded now; an error before the first step).
    ///
    /// ```no_run
    /// # use quabla::{optim::{adam, Trainer}, Array, Axes};
    /// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.pow(2.0)?.sum(Axes::All, false)?]);
    /// let w = Array::from_slice(&[0.0f32; 3], &[3])?;
    /// let target = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// let mut t = Trainer::new(loss, vec![w], adam(1e-1))?;
    /// t.run(100, &[target], false)?;
    /// println!("loss {:.3e} after {} steps", t.loss()?, t.steps());
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn loss(&self) -> Result<f64> {
        match &self.loss {
            Some(l) => l.astype(quabla_abi::DType::F64)?.item::<f64>(),
            None => Err(crate::Error::value("no step has run yet")),
        }
    }

    /// The parameters, on the device.
    ///
    /// ```no_run
    /// # use quabla::{optim::{adam, Trainer}, Array, Axes};
    /// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.pow(2.0)?.sum(Axes::All, false)?]);
    /// let w = Array::from_slice(&[0.0f32; 3], &[3])?;
    /// let target = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// let mut t = Trainer::new(loss, vec![w], adam(1e-1))?;
    /// t.run(100, &[target], false)?;
    /// let w: &Array = &t.params()[0];
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn params(&self) -> &[Array] {
        &self.params
    }

    /// The parameters, downloaded.
    ///
    /// ```no_run
    /// # use quabla::{optim::{adam, Trainer}, Array, Axes};
    /// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.pow(2.0)?.sum(Axes::All, false)?]);
    /// let w = Array::from_slice(&[0.0f32; 3], &[3])?;
    /// let target = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// let mut t = Trainer::new(loss, vec![w], adam(1e-1))?;
    /// t.run(100, &[target], false)?;
    /// let w = t.params_to_host()?[0].to_vec::<f32>().map_err(quabla::Error::DType)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn params_to_host(&self) -> Result<Vec<HostArray>> {
        self.params.iter().map(|p| p.to_host()).collect()
    }

    /// Steps run so far.
    ///
    /// ```no_run
    /// # use quabla::{optim::{adam, Trainer}, Array, Axes};
    /// let loss = |a: &[Array]| Ok(vec![(&a[0] - &a[1])?.pow(2.0)?.sum(Axes::All, false)?]);
    /// let w = Array::from_slice(&[0.0f32; 3], &[3])?;
    /// let target = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// let mut t = Trainer::new(loss, vec![w], adam(1e-1))?;
    /// t.run(10, &[target], false)?;
    /// assert_eq!(t.steps(), 10);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn steps(&self) -> usize {
        self.steps
    }
}

/// The parameters and optimizer state (the first `np + ns` of a step's arguments), to put
/// back after a failure.
fn split_state(mut args: Vec<Array>, np: usize, ns: usize) -> (Vec<Array>, Vec<Array>) {
    args.truncate(np + ns);
    let state = args.split_off(np);
    (args, state)
}
