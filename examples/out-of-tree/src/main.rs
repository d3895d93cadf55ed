//! The out-of-tree crate's program: the MLP fit of `fit.rs` (the workspace's examples run
//! the same file in CI).

mod fit;

fn main() -> quabla::Result<()> {
    let (first, last, platform) = fit::fit(500)?;
    println!("loss {first:.4e} -> {last:.4e} on {platform}");
    if !(last < first / 20.0) {
        return Err(quabla::Error::value(format!(
            "the fit did not converge: loss {first} -> {last}"
        )));
    }
    Ok(())
}
