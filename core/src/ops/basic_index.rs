//! numpy's basic indexing (`x[i]`, `x[1:, ::2]`, `x[..., None]`) as `slice`, `reverse`
//! and `reshape`, so its derivatives and batching are theirs. [`crate::s!`] writes the
//! index list: `x.index(&s![.., -1])`.

use crate::array::Array;
use crate::error::{Error, Result};
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo};

/// One entry of a basic index: an integer (the axis goes), a range with a step (the axis
/// stays), all of an axis, or a new axis of length 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    /// `x[i]`: one position (negative counts from the end); the axis is dropped.
    At(isize),
    /// `x[start:stop:step]` with numpy's defaults and clamping (`None`: the default end).
    Range {
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    },
    /// `x[:]`.
    Full,
    /// `x[None]`: a new axis of length 1.
    NewAxis,
}

impl Index {
    /// `start..stop` by `step` (negative steps walk backwards, as numpy's `x[a:b:-1]`).
    ///
    /// ```no_run
    /// use quabla::{s, Array, Index};
    /// let x = Array::from_slice(&[0i32, 1, 2, 3, 4], &[5]).unwrap();
    /// let r = x.index(&[Index::stepped(None, None, -2)]).unwrap(); // [4, 2, 0]
    /// ```
    pub fn stepped(start: Option<isize>, stop: Option<isize>, step: isize) -> Index {
        Index::Range { start, stop, step }
    }
}

impl From<isize> for Index {
    fn from(i: isize) -> Self {
        Index::At(i)
    }
}

impl From<RangeFull> for Index {
    fn from(_: RangeFull) -> Self {
        Index::Full
    }
}

impl From<Range<isize>> for Index {
    fn from(r: Range<isize>) -> Self {
        Index::stepped(Some(r.start), Some(r.end), 1)
    }
}

impl From<RangeFrom<isize>> for Index {
    fn from(r: RangeFrom<isize>) -> Self {
        Index::stepped(Some(r.start), None, 1)
    }
}

impl From<RangeTo<isize>> for Index {
    fn from(r: RangeTo<isize>) -> Self {
        Index::stepped(None, Some(r.end), 1)
    }
}

impl From<RangeInclusive<isize>> for Index {
    fn from(r: RangeInclusive<isize>) -> Self {
        let (a, b) = r.into_inner();
        // `a..=-1` runs to the end, not to "before -1".
        let stop = if b == -1 { None } else { Some(b + 1) };
        Index::stepped(Some(a), stop, 1)
    }
}

/// A basic index list for [`Array::index`]: integers, ranges (`1..`, `..-1`, `..`) and
/// [`Index`] values (`Index::NewAxis`, `Index::stepped(..)`), as numpy's `x[...]`.
///
/// ```no_run
/// use quabla::{s, Array};
/// let x = Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
/// let last_column = x.index(&s![.., -1]).unwrap(); // [2, 5]
/// let first_row_tail = x.index(&s![0, 1..]).unwrap(); // [1, 2]
/// ```
#[macro_export]
macro_rules! s {
    ($($e:expr),* $(,)?) => {
        [$($crate::Index::from($e)),*]
    };
}

/// `[begin, end)` by `stride` along an axis of `len`, and whether to reverse the axis first
/// (a negative step), as Python's `slice.indices`.
fn window(
    len: usize,
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
) -> Result<(usize, usize, usize, bool)> {
    if step == 0 {
        return Err(Error::value("index: a range's step must not be zero"));
    }
    let n = len as isize;
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let at = |v: Option<isize>, default: isize| match v {
        None => default,
        Some(v) if v < 0 => (v + n).clamp(lo, hi),
        Some(v) => v.clamp(lo, hi),
    };
    let flip = step < 0;
    // Walk from `a` towards `b`; a negative step walks the reversed axis, where position
    // `a` is `n - 1 - a`.
    let (a, b) = if flip {
        (at(start, n - 1), at(stop, -1))
    } else {
        (at(start, 0), at(stop, n))
    };
    let (distance, begin) = if flip { (a - b, n - 1 - a) } else { (b - a, a) };
    let stride = step.unsigned_abs();
    let count = if distance > 0 {
        (distance as usize).div_ceil(stride)
    } else {
        0
    };
    let begin = begin.max(0) as usize;
    let end = begin
        + if count > 0 {
            (count - 1) * stride + 1
        } else {
            0
        };
    Ok((begin, end, stride, flip))
}

impl Array {
    /// numpy's basic indexing `x[...]`: each entry of `index` takes one axis in order (an
    /// integer drops it, a range keeps it, [`Index::NewAxis`] adds one); axes past the list
    /// are kept whole. Out-of-range integers are an error; ranges clamp, as numpy's.
    ///
    /// ```no_run
    /// use quabla::{s, Array, Index};
    /// let x = Array::from_slice(&[0.0f64, 1.0, 2.0, 3.0], &[2, 2]).unwrap();
    /// assert_eq!(x.index(&s![1, 0]).unwrap().item::<f64>().unwrap(), 2.0);
    /// assert_eq!(x.index(&s![.., Index::NewAxis, 1]).unwrap().shape(), &[2, 1]);
    /// ```
    pub fn index(&self, index: &[Index]) -> Result<Array> {
        let used = index.iter().filter(|i| **i != Index::NewAxis).count();
        if used > self.ndim() {
            return Err(Error::shape(format!(
                "index: {used} indices for an array of rank {} ({})",
                self.ndim(),
                self.tensor_type()
            )));
        }
        let rank = self.ndim();
        let (mut start, mut limit, mut strides) =
            (vec![0; rank], self.shape().to_vec(), vec![1; rank]);
        let mut reversed = Vec::new();
        let mut shape: Vec<isize> = Vec::new();
        let mut axis = 0;
        for ix in index {
            match *ix {
                Index::NewAxis => shape.push(1),
                Index::At(i) => {
                    let n = self.shape()[axis] as isize;
                    let p = if i < 0 { i + n } else { i };
                    if !(0..n).contains(&p) {
                        return Err(Error::value(format!(
                            "index {i} is out of bounds for axis {axis} of length {n} ({})",
                            self.tensor_type()
                        )));
                    }
                    (start[axis], limit[axis]) = (p as usize, p as usize + 1);
                    axis += 1;
                }
                Index::Full => {
                    shape.push(self.shape()[axis] as isize);
                    axis += 1;
                }
                Index::Range {
                    start: a,
                    stop: b,
                    step,
                } => {
                    let (begin, end, stride, flip) = window(self.shape()[axis], a, b, step)?;
                    if flip {
                        reversed.push(axis);
                    }
                    (start[axis], limit[axis], strides[axis]) = (begin, end, stride);
                    shape.push(((end - begin).div_ceil(stride)) as isize);
                    axis += 1;
                }
            }
        }
        shape.extend(self.shape()[axis..].iter().map(|&d| d as isize));
        let x = if reversed.is_empty() {
            self.clone()
        } else {
            self.flip(&reversed)?
        };
        x.slice(&start, &limit, &strides)?.reshape(&shape)
    }

    /// `x[i]`: the entry `i` of the first axis (negative counts from the end), that axis
    /// dropped.
    ///
    /// ```no_run
    /// let ys = quabla::Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    /// assert_eq!(ys.at(-1).unwrap().item::<f32>().unwrap(), 3.0);
    /// ```
    pub fn at(&self, i: isize) -> Result<Array> {
        self.index(&[Index::At(i)])
    }
}

#[cfg(test)]
mod tests {
    use super::window;

    /// numpy's `len(range(*slice(start, stop, step).indices(len)))` and its first element.
    fn numpy(len: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<usize> {
        let (begin, end, stride, flip) = window(len, start, stop, step).unwrap();
        let idx: Vec<usize> = (begin..end).step_by(stride).collect();
        if flip {
            idx.iter().map(|&i| len - 1 - i).collect()
        } else {
            idx
        }
    }

    /// `start`, `stop`, `step` and the positions Python's `list(range(5))[start:stop:step]`
    /// gives.
    type Case = (Option<isize>, Option<isize>, isize, &'static [usize]);

    #[test]
    fn windows_follow_pythons_slice_indices() {
        let cases: &[Case] = &[
            (None, None, 1, &[0, 1, 2, 3, 4]),
            (Some(1), None, 2, &[1, 3]),
            (Some(-2), None, 1, &[3, 4]),
            (None, Some(-1), 1, &[0, 1, 2, 3]),
            (Some(3), Some(1), 1, &[]),
            (Some(-10), Some(10), 3, &[0, 3]),
            (None, None, -1, &[4, 3, 2, 1, 0]),
            (None, None, -2, &[4, 2, 0]),
            (Some(3), Some(0), -1, &[3, 2, 1]),
            (Some(-1), Some(-4), -2, &[4, 2]),
            (Some(10), None, -3, &[4, 1]),
            (Some(0), Some(3), -1, &[]),
            (Some(2), Some(-10), -1, &[2, 1, 0]),
        ];
        for &(a, b, s, want) in cases {
            assert_eq!(numpy(5, a, b, s), want, "[{a:?}:{b:?}:{s}]");
        }
        assert_eq!(numpy(0, None, None, -1), Vec::<usize>::new());
        assert!(window(3, None, None, 0).is_err());
    }
}
