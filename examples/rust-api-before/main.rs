mod cg_spd;
mod lotka_volterra;
mod mlp_fit;

use quabla::{ad, Axes};

fn main() -> quabla::Result<()> {
    let (first, last, platform) = mlp_fit::fit(500)?;
    println!("mlp: loss {first:.4e} -> {last:.4e} on {platform}");

    let rates = lotka_volterra::classic_rates()?;
    let g = ad::grad(lotka_volterra::end_prey, &[0, 1, 2, 3])(&rates)?;
    let g: Vec<f64> = g.iter().map(|x| x.item::<f64>()).collect::<quabla::Result<_>>()?;
    // central differences in each rate
    let h = 1e-6;
    for k in 0..4 {
        let mut up = rates.clone();
        let mut dn = rates.clone();
        up[k] = (&rates[k] + h)?;
        dn[k] = (&rates[k] - h)?;
        let fd = (lotka_volterra::end_prey(&up)?[0].item::<f64>()?
            - lotka_volterra::end_prey(&dn)?[0].item::<f64>()?)
            / (2.0 * h);
        println!("lv: d prey/d rate {k}: ad {:.8e} fd {fd:.8e}", g[k]);
    }

    let (x, info, dense) = cg_spd::solve(100)?;
    let err = (&x - &dense)?.abs()?.max(Axes::All, false)?.item::<f64>()?;
    println!("cg: info {} max |x - dense| {err:.3e}", info.item::<i32>()?);
    Ok(())
}
