//! [`Trainer`]: [`crate::optim::Trainer`] with parameters and batches of any [`Tree`].

use super::Tree;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::optim::Optimizer;
use std::cell::RefCell;
use std::rc::Rc;

/// The flattened loss the flat trainer differentiates: `(param leaves, batch leaves)`.
type FlatLoss = Box<dyn Fn(&[Array]) -> Result<Vec<Array>>>;

/// Trains parameters of any tree to minimise `loss(&params, &batch)` (a scalar float), as
/// [`crate::optim::Trainer`] does for slices: each step is one compiled program (loss,
/// gradient, update) with the parameters and optimizer state kept on the device.
///
/// The batch's structure (and its static fields) is read when a step is first traced, as
/// [`super::jit`] reads its input's: batches of one signature share the compiled step.
///
/// ```no_run
/// # use quabla::{optim::adam, tree::{self, Tree}, Array, Axes, Result};
/// #[derive(Clone, Tree)]
/// struct Line { w: Array, b: Array }
/// let loss = |p: &Line, (x, y): &(Array, Array)| -> Result<Array> {
///     let r = ((&(x * &p.w)? + &p.b)? - y)?;
///     (&r * &r)?.mean(Axes::All, false)
/// };
/// let p = Line { w: Array::from_slice(&[0.0f32], &[])?, b: Array::from_slice(&[0.0f32], &[])? };
/// let x = Array::linspace(0.0, 1.0, 16, quabla::DType::F32)?;
/// let y = ((2.0 * &x)? + 1.0)?;
/// let mut t = tree::Trainer::new(loss, p, adam(1e-1))?;
/// t.run(200, &(x, y), false)?;
/// let fitted: Line = t.params()?; // w near 2, b near 1
/// # Ok::<(), quabla::Error>(())
/// ```
pub struct Trainer<P, D> {
    flat: crate::optim::Trainer,
    params_like: P,
    batch_like: Rc<RefCell<Option<D>>>,
}

impl<P: Tree + Clone + 'static, D: Tree + Clone + 'static> Trainer<P, D> {
    /// Sets up training from the initial `params`; nothing is compiled until the first step.
    ///
    /// ```no_run
    /// # use quabla::{optim::adam, tree::{self, Tree}, Array, Axes, Result};
    /// #[derive(Clone, Tree)]
    /// struct Line { w: Array, b: Array }
    /// let loss = |p: &Line, (x, y): &(Array, Array)| -> Result<Array> {
    ///     (x.ex() * &p.w + &p.b - y).pow(&Array::scalar(2.0f32)?).mean(Axes::All, false).get()
    /// };
    /// let p = Line { w: Array::scalar(0.0f32)?, b: Array::scalar(0.0f32)? };
    /// let x = Array::linspace(0.0, 1.0, 16, quabla::DType::F32)?;
    /// let data = (x.clone(), (2.0 * x.ex() + 1.0).get()?);
    /// let mut t = tree::Trainer::new(loss, p, adam(1e-1))?;
    /// t.run(200, &data, false)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn new(
        loss: impl Fn(&P, &D) -> Result<Array> + 'static,
        params: P,
        optimizer: Optimizer,
    ) -> Result<Trainer<P, D>> {
        Self::over_flat(loss, params, |flat_loss, leaves| {
            crate::optim::Trainer::new(flat_loss, leaves, optimizer)
        })
    }

    /// Data-parallel training, as [`crate::optim::Trainer::data_parallel`]: each rank of
    /// `comm` passes its shard of the batch (a tree of the same structure) to
    /// [`Trainer::step`]; the loss and gradients are averaged across ranks before the
    /// update, and the parameters start as rank 0's.
    ///
    /// ```no_run
    /// # use quabla::{distributed, optim::adam, tree, Array, Axes, Result};
    /// let comm = distributed::initialize()?;
    /// let loss = |w: &Array, x: &Array| -> Result<Array> {
    ///     let d = (w - x)?;
    ///     (&d * &d)?.mean(Axes::All, false)
    /// };
    /// let w = Array::from_slice(&[0.5f32], &[1])?;
    /// let mut t = tree::Trainer::data_parallel(loss, w, adam(1e-2), comm)?;
    /// t.step(&Array::from_slice(&[1.0f32, 2.0], &[2])?)?; // this rank's rows
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn data_parallel(
        loss: impl Fn(&P, &D) -> Result<Array> + 'static,
        params: P,
        optimizer: Optimizer,
        comm: std::sync::Arc<crate::distributed::Communicator>,
    ) -> Result<Trainer<P, D>> {
        Self::over_flat(loss, params, |flat_loss, leaves| {
            crate::optim::Trainer::data_parallel(flat_loss, leaves, optimizer, comm)
        })
    }

    /// The tree trainer over the flat one `make` builds from the flattened loss and the
    /// parameters' leaves.
    fn over_flat(
        loss: impl Fn(&P, &D) -> Result<Array> + 'static,
        params: P,
        make: impl FnOnce(FlatLoss, Vec<Array>) -> Result<crate::optim::Trainer>,
    ) -> Result<Trainer<P, D>> {
        let leaves = params.leaves();
        let np = leaves.len();
        let like = params.clone();
        let batch_like: Rc<RefCell<Option<D>>> = Default::default();
        let batch = batch_like.clone();
        let flat_loss: FlatLoss = Box::new(move |a: &[Array]| -> Result<Vec<Array>> {
            let (p, d) = a.split_at(np.min(a.len()));
            let b = batch
                .borrow()
                .clone()
                .ok_or_else(|| Error::internal("tree::Trainer traced without a batch"))?;
            Ok(vec![loss(
                &like.with_leaves(p.to_vec())?,
                &b.with_leaves(d.to_vec())?,
            )?])
        });
        Ok(Trainer {
            flat: make(flat_loss, leaves)?,
            params_like: params,
            batch_like,
        })
    }

    /// One optimisation step on `batch`.
    ///
    /// ```no_run
    /// # use quabla::{optim::adam, tree::{self, Tree}, Array, Axes, Result};
    /// #[derive(Clone, Tree)]
    /// struct Line { w: Array, b: Array }
    /// let loss = |p: &Line, (x, y): &(Array, Array)| -> Result<Array> {
    ///     (x.ex() * &p.w + &p.b - y).pow(&Array::scalar(2.0f32)?).mean(Axes::All, false).get()
    /// };
    /// let p = Line { w: Array::scalar(0.0f32)?, b: Array::scalar(0.0f32)? };
    /// let x = Array::linspace(0.0, 1.0, 16, quabla::DType::F32)?;
    /// let data = (x.clone(), (2.0 * x.ex() + 1.0).get()?);
    /// let mut t = tree::Trainer::new(loss, p, adam(1e-1))?;
    /// t.step(&data)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn step(&mut self, batch: &D) -> Result<()> {
        *self.batch_like.borrow_mut() = Some(batch.clone());
        self.flat.step(&batch.leaves())
    }

    /// `steps` steps on the same batch, with a progress bar when `progress`.
    ///
    /// ```no_run
    /// # use quabla::{optim::adam, tree::{self, Tree}, Array, Axes, Result};
    /// #[derive(Clone, Tree)]
    /// struct Line { w: Array, b: Array }
    /// let loss = |p: &Line, (x, y): &(Array, Array)| -> Result<Array> {
    ///     (x.ex() * &p.w + &p.b - y).pow(&Array::scalar(2.0f32)?).mean(Axes::All, false).get()
    /// };
    /// let p = Line { w: Array::scalar(0.0f32)?, b: Array::scalar(0.0f32)? };
    /// let x = Array::linspace(0.0, 1.0, 16, quabla::DType::F32)?;
    /// let data = (x.clone(), (2.0 * x.ex() + 1.0).get()?);
    /// let mut t = tree::Trainer::new(loss, p, adam(1e-1))?;
    /// t.run(300, &data, true)?; // with a progress bar
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn run(&mut self, steps: usize, batch: &D, progress: bool) -> Result<()> {
        *self.batch_like.borrow_mut() = Some(batch.clone());
        self.flat.run(steps, &batch.leaves(), progress)
    }

    /// The loss of the last step (downloaded now; an error before the first step).
    ///
    /// ```no_run
    /// # use quabla::{optim::adam, tree::{self, Tree}, Array, Axes, Result};
    /// #[derive(Clone, Tree)]
    /// struct Line { w: Array, b: Array }
    /// let loss = |p: &Line, (x, y): &(Array, Array)| -> Result<Array> {
    ///     (x.ex() * &p.w + &p.b - y).pow(&Array::scalar(2.0f32)?).mean(Axes::All, false).get()
    /// };
    /// let p = Line { w: Array::scalar(0.0f32)?, b: Array::scalar(0.0f32)? };
    /// let x = Array::linspace(0.0, 1.0, 16, quabla::DType::F32)?;
    /// let data = (x.clone(), (2.0 * x.ex() + 1.0).get()?);
    /// let mut t = tree::Trainer::new(loss, p, adam(1e-1))?;
    /// t.run(100, &data, false)?;
    /// println!("{:.3e}", t.loss()?);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn loss(&self) -> Result<f64> {
        self.flat.loss()
    }

    /// The parameters, in their tree, on the device.
    ///
    /// ```no_run
    /// # use quabla::{optim::adam, tree::{self, Tree}, Array, Axes, Result};
    /// #[derive(Clone, Tree)]
    /// struct Line { w: Array, b: Array }
    /// let loss = |p: &Line, (x, y): &(Array, Array)| -> Result<Array> {
    ///     (x.ex() * &p.w + &p.b - y).pow(&Array::scalar(2.0f32)?).mean(Axes::All, false).get()
    /// };
    /// let p = Line { w: Array::scalar(0.0f32)?, b: Array::scalar(0.0f32)? };
    /// let x = Array::linspace(0.0, 1.0, 16, quabla::DType::F32)?;
    /// let data = (x.clone(), (2.0 * x.ex() + 1.0).get()?);
    /// let mut t = tree::Trainer::new(loss, p, adam(1e-1))?;
    /// t.run(300, &data, false)?;
    /// let fitted: Line = t.params()?; // w near 2, b near 1
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn params(&self) -> Result<P> {
        self.params_like.with_leaves(self.flat.params().to_vec())
    }

    /// Steps run so far.
    ///
    /// ```no_run
    /// # use quabla::{optim::adam, tree::{self, Tree}, Array, Axes, Result};
    /// #[derive(Clone, Tree)]
    /// struct Line { w: Array, b: Array }
    /// let loss = |p: &Line, (x, y): &(Array, Array)| -> Result<Array> {
    ///     (x.ex() * &p.w + &p.b - y).pow(&Array::scalar(2.0f32)?).mean(Axes::All, false).get()
    /// };
    /// let p = Line { w: Array::scalar(0.0f32)?, b: Array::scalar(0.0f32)? };
    /// let x = Array::linspace(0.0, 1.0, 16, quabla::DType::F32)?;
    /// let data = (x.clone(), (2.0 * x.ex() + 1.0).get()?);
    /// let mut t = tree::Trainer::new(loss, p, adam(1e-1))?;
    /// t.run(5, &data, false)?;
    /// assert_eq!(t.steps(), 5);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn steps(&self) -> usize {
        self.flat.steps()
    }
}
