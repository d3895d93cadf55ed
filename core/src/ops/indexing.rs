//! Indexing: gather/scatter-add and dynamic slices. Out-of-bounds gather indices clamp;
//! out-of-bounds scatter updates are dropped (JAX's defaults).

use super::apply1;
use super::shape::axis_index;
use crate::array::Array;
use crate::error::{type_err, Result};
use quabla_abi::qir::{GatherDims, Op, ScatterDims};
use quabla_abi::DType;

impl Array {
    /// XLA gather (the index vector is the last dim of `indices`).
    pub fn gather(&self, indices: &Array, dims: GatherDims) -> Result<Array> {
        apply1(
            Op::Gather(dims),
            &[self, &indices.astype(DType::I32)?],
            vec![],
        )
    }

    /// XLA scatter-add (the index vector is the last dim of `indices`).
    pub fn scatter_add(
        &self,
        indices: &Array,
        updates: &Array,
        dims: ScatterDims,
    ) -> Result<Array> {
        apply1(
            Op::ScatterAdd(dims),
            &[
                self,
                &indices.astype(DType::I32)?,
                &updates.astype(self.dtype())?,
            ],
            vec![],
        )
    }

    /// `numpy.take(x, indices, axis)`: picks whole slices along `axis`; indices clamp.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[10.0f32, 20.0, 30.0], &[3]).unwrap();
    /// let i = Array::from_slice(&[2i32, 0, 7], &[3]).unwrap();
    /// assert_eq!(x.take(&i, 0).unwrap().to_vec::<f32>().unwrap(), vec![30.0, 10.0, 30.0]);
    /// ```
    pub fn take(&self, indices: &Array, axis: isize) -> Result<Array> {
        let axis = axis_index(axis, self.ndim())?;
        let idx = indices.expand_dims(-1)?;
        let nb = indices.ndim();
        let mut slice_sizes = self.shape().to_vec();
        slice_sizes[axis] = 1;
        // Output: indices' dims replace `axis`; the other operand dims keep their order.
        let offset_dims: Vec<usize> = (0..self.ndim() - 1)
            .map(|d| if d < axis { d } else { d + nb })
            .collect();
        self.gather(
            &idx,
            GatherDims {
                offset_dims,
                collapsed_slice_dims: vec![axis],
                start_index_map: vec![axis],
                slice_sizes,
            },
        )
    }

    /// A slice of `sizes` starting at traced or concrete scalar `starts` (clamped to fit).
    pub fn dynamic_slice(&self, starts: &[&Array], sizes: &[usize]) -> Result<Array> {
        if starts.len() != self.ndim() {
            return type_err(format!(
                "dynamic_slice needs {} start indices, got {}",
                self.ndim(),
                starts.len()
            ));
        }
        let mut args = vec![self.clone()];
        for s in starts {
            args.push(s.astype(DType::I32)?.reshape(&[])?);
        }
        let refs: Vec<&Array> = args.iter().collect();
        apply1(
            Op::DynamicSlice {
                sizes: sizes.to_vec(),
            },
            &refs,
            vec![],
        )
    }

    /// Writes `update` at `starts` (clamped to fit).
    pub fn dynamic_update_slice(&self, update: &Array, starts: &[&Array]) -> Result<Array> {
        if starts.len() != self.ndim() {
            return type_err(format!(
                "dynamic_update_slice needs {} start indices, got {}",
                self.ndim(),
                starts.len()
            ));
        }
        let mut args = vec![self.clone(), update.astype(self.dtype())?];
        for s in starts {
            args.push(s.astype(DType::I32)?.reshape(&[])?);
        }
        let refs: Vec<&Array> = args.iter().collect();
        apply1(Op::DynamicUpdateSlice, &refs, vec![])
    }
}
