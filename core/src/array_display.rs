//! How arrays print: their values, nested as numpy nests them, large ones summarised
//! (numpy's threshold of 1,000 elements, 3 edge items a side).

use crate::array::{Array, Repr};
use quabla_abi::{DType, Element, HostArray};
use std::fmt::{self, Write};

/// Arrays with more elements than this print summarised (numpy's `threshold`).
const SUMMARY_THRESHOLD: usize = 1000;
/// Items kept at each end of a summarised axis (numpy's `edgeitems`).
const EDGE_ITEMS: usize = 3;

/// One element as text: floats in Rust's shortest round-trip form (`1.0`, `0.1`, `NaN`,
/// `inf`), integers and bools as Rust prints them.
fn element(host: &HostArray, i: usize) -> String {
    fn at<T: Element>(bytes: &[u8], i: usize) -> T {
        let n = std::mem::size_of::<T>();
        T::read_le(&bytes[i * n..(i + 1) * n])
    }
    match host.ty.dtype {
        DType::F32 => format!("{:?}", at::<f32>(&host.bytes, i)),
        DType::F64 => format!("{:?}", at::<f64>(&host.bytes, i)),
        DType::I32 => at::<i32>(&host.bytes, i).to_string(),
        DType::U32 => at::<u32>(&host.bytes, i).to_string(),
        DType::Bool => (host.bytes[i] != 0).to_string(),
    }
}

/// The indices shown along an axis of `len`: all, or the edges around a gap (`None`).
fn shown(len: usize, summarise: bool) -> Vec<Option<usize>> {
    if summarise && len > 2 * EDGE_ITEMS {
        let mut v: Vec<Option<usize>> = (0..EDGE_ITEMS).map(Some).collect();
        v.push(None);
        v.extend((len - EDGE_ITEMS..len).map(Some));
        v
    } else {
        (0..len).map(Some).collect()
    }
}

/// What `render` writes, in order.
enum Token {
    Cell(String),
    /// `...` in place of the middle of an axis.
    Gap,
    /// Between two items of `axis`; between sub-arrays (`axis + 1 < rank`) their brackets
    /// close before it and open after it, except beside a gap.
    Separator {
        axis: usize,
        close: bool,
        open: bool,
    },
}

/// numpy-style nested text of `host`: `[[1.0, 2.0],\n [3.0, 4.0]]`, columns right-aligned
/// to the widest value. An odometer over the shown indices, so no input's rank sets a
/// recursion depth.
pub(crate) fn render(host: &HostArray) -> String {
    let shape = &host.ty.shape;
    let rank = shape.len();
    let n: usize = shape.iter().product();
    if rank == 0 {
        return element(host, 0);
    }
    if n == 0 {
        return "[]".into();
    }
    let summarise = n > SUMMARY_THRESHOLD;
    let shown: Vec<Vec<Option<usize>>> = shape.iter().map(|&l| shown(l, summarise)).collect();
    let strides: Vec<usize> = (0..rank).map(|d| shape[d + 1..].iter().product()).collect();
    let mut pos = vec![0usize; rank];
    let mut tokens = Vec::new();
    loop {
        let at: Option<usize> = pos
            .iter()
            .zip(&shown)
            .zip(&strides)
            .map(|((&p, s), &st)| s[p].map(|i| i * st))
            .sum();
        tokens.push(at.map_or(Token::Gap, |o| Token::Cell(element(host, o))));
        // The deepest axis with an item left moves on; the axes inside it start over.
        let Some(d) = (0..rank).rev().find(|&d| pos[d] + 1 < shown[d].len()) else {
            break;
        };
        pos[d] += 1;
        pos[d + 1..].iter_mut().for_each(|p| *p = 0);
        let gap = shown[d][pos[d]].is_none() && d + 1 < rank;
        tokens.push(Token::Separator {
            axis: d,
            close: true,
            open: !gap,
        });
        if gap {
            // A gap between sub-arrays is a line of its own: `...,`.
            tokens.push(Token::Gap);
            tokens.push(Token::Separator {
                axis: d,
                close: false,
                open: true,
            });
            pos[d] += 1;
        }
    }
    let width = tokens
        .iter()
        .map(|t| match t {
            Token::Cell(c) => c.len(),
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let mut out = "[".repeat(rank);
    for t in &tokens {
        match t {
            Token::Cell(c) => {
                let _ = write!(out, "{c:>width$}");
            }
            Token::Gap => out.push_str("..."),
            Token::Separator { axis, close, open } => {
                let depth = rank - 1 - axis;
                if depth == 0 {
                    out.push_str(", ");
                    continue;
                }
                if *close {
                    out.push_str(&"]".repeat(depth));
                }
                out.push(',');
                out.push_str(&"\n".repeat(depth));
                out.push_str(&" ".repeat(axis + 1));
                if *open {
                    out.push_str(&"[".repeat(depth));
                }
            }
        }
    }
    out.push_str(&"]".repeat(rank));
    out
}

impl fmt::Display for Array {
    /// The values, as numpy prints them (`[[1.0, 2.0],\n [3.0, 4.0]]`; summarised past
    /// 1,000 elements); a traced array prints its type, having no values yet.
    ///
    /// ```no_run
    /// let x = quabla::Array::from_slice(&[1.0f32, 2.5], &[2]).unwrap();
    /// assert_eq!(x.to_string(), "[1.0, 2.5]");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Concrete { .. } => match self.to_host() {
                Ok(h) => f.write_str(&render(&h)),
                Err(e) => write!(f, "<{} whose values could not be read: {e}>", self.ty),
            },
            Repr::Traced { value, .. } => write!(f, "Traced({} as {value})", self.ty),
        }
    }
}

impl fmt::Debug for Array {
    /// `Array([1.0, 2.5], dtype=f32, device=cpu)`, as JAX's `repr`; traced arrays show their
    /// type and trace value.
    ///
    /// ```no_run
    /// let x = quabla::Array::from_slice(&[1i32, 2], &[2]).unwrap();
    /// assert_eq!(format!("{x:?}"), "Array([1, 2], dtype=i32, device=cpu)");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Concrete { device, .. } => {
                let values = match self.to_host() {
                    Ok(h) => render(&h).replace('\n', "\n      "),
                    Err(e) => format!("<values not readable: {e}>"),
                };
                write!(
                    f,
                    "Array({values}, dtype={}, device={})",
                    self.ty.dtype,
                    device.platform()
                )
            }
            Repr::Traced { value, .. } => write!(f, "Traced({} as {value})", self.ty),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::render;
    use quabla_abi::{DType, Element, HostArray, TensorType};

    fn host<T: Element>(v: &[T], shape: &[usize]) -> HostArray {
        let mut bytes = Vec::new();
        v.iter().for_each(|x| x.write_le(&mut bytes));
        HostArray {
            ty: TensorType::new(T::DTYPE, shape.to_vec()),
            bytes,
        }
    }

    #[test]
    fn small_arrays_print_every_value_nested_as_numpy() {
        assert_eq!(render(&host(&[2.5f64], &[])), "2.5");
        // Right-aligned to the widest, as numpy.
        assert_eq!(
            render(&host(&[1.0f32, -0.0, f32::NAN], &[3])),
            "[ 1.0, -0.0,  NaN]"
        );
        assert_eq!(
            render(&host(&[1i32, 20, 3, 4], &[2, 2])),
            "[[ 1, 20],\n [ 3,  4]]"
        );
        let v: Vec<u32> = (0..8).collect();
        assert_eq!(
            render(&host(&v, &[2, 2, 2])),
            "[[[0, 1],\n  [2, 3]],\n\n [[4, 5],\n  [6, 7]]]"
        );
        assert_eq!(render(&host(&[true, false], &[2])), "[ true, false]");
        assert_eq!(render(&host::<f32>(&[], &[0])), "[]");
        assert_eq!(render(&host::<f32>(&[], &[2, 0])), "[]");
    }

    #[test]
    fn large_arrays_print_their_edges() {
        let v: Vec<i32> = (0..2000).collect();
        assert_eq!(
            render(&host(&v, &[2000])),
            "[   0,    1,    2, ..., 1997, 1998, 1999]"
        );
        let m: Vec<i32> = (0..1600).collect();
        let text = render(&host(&m, &[40, 40]));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert_eq!(lines[0], "[[   0,    1,    2, ...,   37,   38,   39],");
        assert_eq!(lines[3], " ...,");
        assert_eq!(lines[6], " [1560, 1561, 1562, ..., 1597, 1598, 1599]]");
        // A small array is never summarised, however long one axis is.
        let w: Vec<i32> = (0..10).collect();
        assert_eq!(render(&host(&w, &[10])).matches(", ").count(), 9);
    }

    #[test]
    fn dtype_names_print_as_qir_writes_them() {
        assert_eq!(DType::F32.to_string(), "f32");
    }
}
