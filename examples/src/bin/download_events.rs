//! Checks a device's downloads as events: values computed on the device are read back through
//! `start_download` (several in flight at once, of every size class a plugin may stage
//! differently, empty and past 16 MiB among them, f32, f64, i32 and bool), through
//! `is_ready` polling and an `on_ready` callback, each compared bit for bit with the same
//! arithmetic done here. Exits non-zero on the first wrong byte or missing callback.
//!
//! `cargo run -p quabla-examples --bin download_events -- [--device cuda] [--rounds 20]`
//! (`gpu-check.sh` runs it on a lent GPU, where the CUDA plugin's downloads are CUDA events
//! behind pinned staging buffers; on a plugin whose downloads are ready at once it checks the
//! same values).

use quabla::{default_device, device, jit, Array, DType, Error, Result};
use quabla_examples::arg;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Callbacks run, by the slot their `user_data` names.
static CALLED: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

extern "C" fn ready(slot: usize) {
    if let Some(c) = CALLED.get(slot) {
        c.fetch_add(1, Ordering::SeqCst);
    }
}

/// `2x + 1`, exact in f32 for these inputs, and whether it passes `n/2`.
fn step(xs: &[Array]) -> Result<Vec<Array>> {
    let y = (&(&xs[0] + &xs[0])? + 1.0)?;
    let n = xs[0].shape()[0] as f64;
    let past = y.gt(n)?;
    Ok(vec![
        y.clone(),
        y.astype(DType::F64)?,
        y.astype(DType::I32)?,
        past,
    ])
}

fn fail(what: String) -> Error {
    Error::value(format!("download_events: {what}"))
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let platform = arg("--device", String::new());
    let rounds = arg("--rounds", 20usize);
    let dev = if platform.is_empty() {
        default_device()?
    } else {
        device(&platform)?
    };
    let f = jit(step);
    // 0, 1 and 1000 elements, 1 Mi (4 MiB of f32) and 5 Mi (20 MiB, past the largest class).
    let sizes = [0usize, 1, 1000, 1 << 20, 5 << 20];
    let mut checked = 0usize;
    let mut not_ready_at_once = 0usize;
    let start = Instant::now();
    for round in 0..rounds {
        let n = sizes[round % sizes.len()];
        let host: Vec<f32> = (0..n).map(|i| (i % 4096) as f32 * 0.25).collect();
        let x = Array::from_slice_on(&dev, &host, &[n])?;
        let outs = f.call(&[x])?;
        // Every download in flight before the first is read.
        let events = outs
            .iter()
            .map(|o| o.start_download())
            .collect::<Result<Vec<_>>>()?;
        for e in &events {
            if !e.is_ready()? {
                not_ready_at_once += 1;
            }
        }
        let slot = round % CALLED.len();
        let before = CALLED[slot].load(Ordering::SeqCst);
        events[0].on_ready(ready, slot)?;
        let mut got = events
            .into_iter()
            .map(|e| e.wait())
            .collect::<std::result::Result<Vec<_>, _>>()?
            .into_iter();
        let want: Vec<f32> = host.iter().map(|v| 2.0 * v + 1.0).collect();
        let mut next = || {
            got.next()
                .ok_or_else(|| fail("a download is missing".into()))
        };
        let y = next()?.to_vec::<f32>().map_err(fail)?;
        let y64 = next()?.to_vec::<f64>().map_err(fail)?;
        let yi = next()?.to_vec::<i32>().map_err(fail)?;
        let past = next()?.to_vec::<bool>().map_err(fail)?;
        for (i, w) in want.iter().enumerate() {
            let ok = y.get(i).map(|v| v.to_bits()) == Some(w.to_bits())
                && y64.get(i) == Some(&(*w as f64))
                && yi.get(i) == Some(&(*w as i32))
                && past.get(i) == Some(&(*w as f64 > n as f64));
            if !ok {
                return Err(fail(format!("{n} elements: element {i} differs from {w}")).into());
            }
        }
        if [y.len(), y64.len(), yi.len(), past.len()] != [n; 4] {
            return Err(fail(format!("{n} elements: a download has the wrong length")).into());
        }
        // The callback may come from another thread just after the bytes.
        let deadline = Instant::now() + Duration::from_secs(10);
        while CALLED[slot].load(Ordering::SeqCst) == before {
            if Instant::now() > deadline {
                return Err(fail(format!("{n} elements: on_ready never called back")).into());
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        checked += 4;
    }
    println!(
        "download_events on `{}`: {checked} downloads in {rounds} rounds right bit for bit, \
         every on_ready called; {not_ready_at_once} not ready when first polled; {:.2} s",
        dev.platform(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
