//! Installing Debian packages the tests need (the machines run as root with apt; nothing
//! else can be downloaded).

use std::process::Command;

/// Installs `packages` with apt-get (an `apt-get update` first only if the plain install
/// fails). Returns whether apt-get reported success.
pub fn install(why: &str, packages: &[&str]) -> bool {
    if Command::new("apt-get").arg("--version").output().is_err() {
        eprintln!(
            "xtask: no apt-get: install {} by hand ({why})",
            packages.join(" ")
        );
        return false;
    }
    eprintln!("xtask: installing {} ({why})", packages.join(" "));
    let attempt = || {
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "-q",
                "-o",
                "DPkg::Lock::Timeout=900",
                "--no-install-recommends",
            ])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    if attempt() {
        return true;
    }
    let _ = Command::new("apt-get")
        .args(["update", "-q", "-o", "DPkg::Lock::Timeout=900"])
        .status();
    attempt()
}
