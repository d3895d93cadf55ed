use quabla::optim::{adam, apply_updates};
use quabla::{ad, jit, Array, Axes, Result};

pub fn init(width: usize) -> Result<Vec<Array>> {
    let w1: Vec<f32> = (0..width).map(|i| (i as f32 * 1.7).sin()).collect();
    let w2: Vec<f32> = (0..width)
        .map(|i| (i as f32 * 2.3).cos() / (width as f32).sqrt())
        .collect();
    Ok(vec![
        Array::from_slice(&w1, &[1, width])?,
        Array::from_slice(&vec![0.0f32; width], &[width])?,
        Array::from_slice(&w2, &[width, 1])?,
        Array::from_slice(&[0.0f32], &[1])?,
    ])
}

pub fn predict(p: &[Array], x: &Array) -> Result<Array> {
    let h = (x.matmul(&p[0])? + &p[1])?.tanh()?;
    h.matmul(&p[2])? + &p[3]
}

// args: w1, b1, w2, b2, x, y
pub fn loss(a: &[Array]) -> Result<Vec<Array>> {
    let r = (predict(&a[0..4], &a[4])? - &a[5])?;
    Ok(vec![(&r * &r)?.mean(Axes::All, false)?])
}

pub fn fit(steps: usize) -> Result<(f32, f32, String)> {
    let xs: Vec<f32> = (0..64).map(|i| -1.0 + 2.0 * i as f32 / 63.0).collect();
    let x = Array::from_slice(&xs, &[64, 1])?;
    let y = (&x * 3.0)?.sin()?;
    let opt = adam(1e-2.into());
    let params = init(16)?;
    let state = (opt.init)(&params)?;
    let ns = state.len();
    let step = jit(move |a: &[Array]| {
        // a = [4 params, ns state, x, y]
        let mut largs = a[0..4].to_vec();
        largs.push(a[4 + ns].clone());
        largs.push(a[5 + ns].clone());
        let lg = ad::value_and_grad(loss, &[0, 1, 2, 3], false)(&largs)?;
        let (updates, new_state) = (opt.update)(&lg[1..5], &a[4..4 + ns], &a[0..4])?;
        let mut out = apply_updates(&a[0..4], &updates)?;
        out.extend(new_state);
        out.push(lg[0].clone());
        Ok(out)
    });
    let mut carry = params;
    carry.extend(state);
    let mut largs = carry[0..4].to_vec();
    largs.push(x.clone());
    largs.push(y.clone());
    let first = loss(&largs)?[0].item::<f32>()?;
    for _ in 0..steps {
        let mut args = carry.clone();
        args.push(x.clone());
        args.push(y.clone());
        let mut out = step.call(&args)?;
        out.truncate(4 + ns);
        carry = out;
    }
    let mut largs = carry[0..4].to_vec();
    largs.push(x.clone());
    largs.push(y);
    let last = loss(&largs)?[0].item::<f32>()?;
    Ok((first, last, x.device().platform().to_string()))
}
