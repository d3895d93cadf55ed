//! Named arrays in the safetensors format (no pickle, no code run on load): what
//! `quabla.save` / `quabla.load` write and read, and the bytes the fuzz target
//! `safetensors_load` feeds hostile input to.
//!
//! ```
//! use quabla::tensor_file::{read_safetensors, write_safetensors};
//! use quabla::HostArray;
//! let w = HostArray::from_slice(vec![2], &[1.0f32, 2.0]).unwrap();
//! let bytes = write_safetensors(&[("w".into(), w.clone())], &Default::default()).unwrap();
//! let file = read_safetensors(&bytes).unwrap();
//! assert_eq!(file.tensors, vec![("w".to_string(), w)]);
//! ```

use crate::error::{Error, Result};
use quabla_abi::{DType, HostArray, TensorType};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::HashMap;

/// The contents of a safetensors file: its tensors sorted by name, and its string metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorFile {
    pub tensors: Vec<(String, HostArray)>,
    pub metadata: HashMap<String, String>,
}

fn to_safetensors(d: DType) -> Dtype {
    match d {
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::I32 => Dtype::I32,
        DType::U32 => Dtype::U32,
        DType::Bool => Dtype::BOOL,
    }
}

fn from_safetensors(d: Dtype, name: &str) -> Result<DType> {
    Ok(match d {
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
        Dtype::I32 => DType::I32,
        Dtype::U32 => DType::U32,
        Dtype::BOOL => DType::Bool,
        other => {
            return Err(Error::dtype(format!(
                "tensor `{name}` is {other:?}; Quabla reads float32, float64, int32, uint32 \
                 and bool"
            )))
        }
    })
}

/// Reads a safetensors file's bytes. Every tensor is checked as it is read (its dtype, that
/// its byte count matches its shape, bool bytes 0 or 1), so a truncated or hostile file is a
/// [`Error::Value`] or [`Error::DType`], never a panic.
///
/// ```no_run
/// # use quabla::tensor_file;
/// let bytes = std::fs::read("weights.safetensors").map_err(|e| quabla::Error::value(e.to_string()))?;
/// let file = tensor_file::read_safetensors(&bytes)?;
/// for (name, t) in &file.tensors {
///     println!("{name}: {}", t.ty);
/// }
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn read_safetensors(bytes: &[u8]) -> Result<TensorFile> {
    let bad = |e: safetensors::SafeTensorError| {
        Error::value(format!("not a valid safetensors file: {e}"))
    };
    let (_, meta) = SafeTensors::read_metadata(bytes).map_err(bad)?;
    let st = SafeTensors::deserialize(bytes).map_err(bad)?;
    let mut tensors = Vec::new();
    for (name, view) in st.iter() {
        let ty = TensorType::new(from_safetensors(view.dtype(), name)?, view.shape().to_vec());
        let host = HostArray::new(ty, view.data().to_vec())
            .map_err(|e| Error::value(format!("tensor `{name}`: {e}")))?;
        tensors.push((name.to_string(), host));
    }
    // The format keys tensors by name and lays them out by alignment, not in the order they
    // were written; name order is the one order every reader agrees on.
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    let metadata = meta.metadata().clone().unwrap_or_default();
    Ok(TensorFile { tensors, metadata })
}

/// Writes named arrays and string metadata as a safetensors file's bytes.
///
/// ```no_run
/// # use quabla::{tensor_file, Array};
/// let w = Array::from_slice(&[1.0f32, 2.0], &[2])?.to_host()?;
/// let bytes = tensor_file::write_safetensors(&[("w".to_string(), w)], &Default::default())?;
/// let back = tensor_file::read_safetensors(&bytes)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn write_safetensors(
    tensors: &[(String, HostArray)],
    metadata: &HashMap<String, String>,
) -> Result<Vec<u8>> {
    let views = tensors
        .iter()
        .map(|(n, h)| {
            TensorView::new(to_safetensors(h.ty.dtype), h.ty.shape.clone(), &h.bytes)
                .map(|v| (n.clone(), v))
                .map_err(|e| Error::value(format!("tensor `{n}`: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let meta = (!metadata.is_empty()).then(|| metadata.clone());
    safetensors::tensor::serialize(views, meta).map_err(|e| Error::value(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<(String, HostArray)> {
        vec![
            (
                "z".into(),
                HostArray::from_slice(vec![2, 1], &[1.5f64, -0.0]).unwrap(),
            ),
            (
                "a".into(),
                HostArray::from_slice(vec![3], &[7i32, -1, 0]).unwrap(),
            ),
            (
                "m".into(),
                HostArray::new(TensorType::new(DType::Bool, vec![2]), vec![1, 0]).unwrap(),
            ),
        ]
    }

    #[test]
    fn round_trip_keeps_names_bits_and_metadata() {
        let meta = HashMap::from([("tree".to_string(), "{\"w\": 0}".to_string())]);
        let bytes = write_safetensors(&sample(), &meta).unwrap();
        let back = read_safetensors(&bytes).unwrap();
        let mut by_name = sample();
        by_name.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(back.tensors, by_name);
        assert_eq!(back.metadata, meta);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = write_safetensors(&sample(), &HashMap::new()).unwrap();
        for n in 0..bytes.len() {
            assert!(
                read_safetensors(&bytes[..n]).is_err(),
                "prefix of {n} bytes"
            );
        }
    }

    /// Found by the `safetensors_load` fuzz target: two empty tensors share a data offset, so
    /// ordering by layout made a round trip reorder them.
    #[test]
    fn empty_tensors_read_back_in_one_order() {
        let empty = |shape: Vec<usize>| HostArray::from_slice::<f32>(shape, &[]).unwrap();
        let t = vec![
            ("input0".to_string(), empty(vec![3, 0])),
            ("input1".to_string(), empty(vec![0, 2])),
        ];
        let once = read_safetensors(&write_safetensors(&t, &HashMap::new()).unwrap()).unwrap();
        let twice = read_safetensors(&write_safetensors(&once.tensors, &once.metadata).unwrap());
        assert_eq!(twice.unwrap(), once);
        assert_eq!(once.tensors, t);
    }

    #[test]
    fn bool_bytes_beyond_one_are_refused() {
        let m = HostArray::new(TensorType::new(DType::Bool, vec![1]), vec![1]).unwrap();
        let mut bytes = write_safetensors(&[("m".into(), m)], &HashMap::new()).unwrap();
        *bytes.last_mut().unwrap() = 7;
        let e = read_safetensors(&bytes).unwrap_err();
        assert!(matches!(&e, Error::Value(m) if m.contains("bool")), "{e}");
    }

    #[test]
    fn foreign_dtypes_are_named() {
        let raw = [0u8; 2];
        let v = TensorView::new(Dtype::F16, vec![1], &raw).unwrap();
        let bytes = safetensors::tensor::serialize([("h", v)], None).unwrap();
        let e = read_safetensors(&bytes).unwrap_err();
        assert!(matches!(&e, Error::DType(m) if m.contains("F16")), "{e}");
    }
}
