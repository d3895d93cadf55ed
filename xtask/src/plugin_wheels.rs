//! The install a user does: `pip install quabla quabla-<plugin>` into a fresh venv, then a
//! jitted gradient on `device="<plugin>"`. For each plugin wheel (`bindings/<name>-plugin`),
//! the `quabla` wheel (shipping the CPU plugin) and the plugin's wheel are built from this
//! build's libraries, installed by file (PyPI has an unrelated project named `quabla`, whose
//! newer version pip would prefer under a plain name), their dependencies from the caches the
//! fetchers fill, and a check script runs in the venv.

use super::{plugin_file, root, run, target_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One plugin wheel's install test.
pub struct PluginWheel<'a> {
    /// The platform and the wheel's project folder `bindings/<name>-plugin`.
    pub name: &'a str,
    /// The plugin library the wheel ships.
    pub library: PathBuf,
    /// Folders of wheels its dependencies come from (the fetchers' caches).
    pub find_links: Vec<PathBuf>,
    /// Python run in the venv; it fails by raising.
    pub check: String,
    /// Environment for the check.
    pub env: Vec<(&'a str, String)>,
}

/// A gradient check on `device`: `d/dx sum(sin(x) x) = cos(x) x + sin(x)`, jitted, with the
/// result on that device; `extra` runs after it.
pub fn gradient_check(device: &str, extra: &str) -> String {
    format!(
        "import quabla, quabla.numpy as qnp, numpy as np, sys\n\
         assert '{device}' in [d.platform for d in quabla.devices()], quabla.devices()\n\
         x = quabla.device_put(qnp.linspace(-1.0, 2.0, 7), '{device}')\n\
         g = quabla.jit(quabla.grad(lambda x: qnp.sum(qnp.sin(x) * x)))(x)\n\
         assert g.device.platform == '{device}', g.device\n\
         v = np.linspace(-1.0, 2.0, 7)\n\
         np.testing.assert_allclose(np.asarray(g), np.cos(v) * v + np.sin(v), rtol=1e-6)\n\
         {extra}\n\
         print('jitted gradient on', g.device, 'matches cos(x) x + sin(x)')\n"
    )
}

fn pip_wheel(what: &str, wheels: &Path, project: &str, env: (&str, &Path)) {
    let mut c = Command::new(super::venv_python());
    c.args([
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
    ])
    .arg("-w")
    .arg(wheels)
    .arg(root().join(project))
    .env(env.0, env.1)
    // The test build's profile, as `python_tests` installs it: nothing recompiles.
    .env("MATURIN_PEP517_ARGS", "--profile dev");
    run(what, &mut c);
}

fn wheel_file(wheels: &Path, prefix: &str) -> PathBuf {
    std::fs::read_dir(wheels)
        .ok()
        .and_then(|d| {
            d.flatten().map(|e| e.path()).find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
        })
        .unwrap_or_else(|| {
            eprintln!("xtask: no {prefix}*.whl in {}", wheels.display());
            std::process::exit(2)
        })
}

/// Runs each plugin's install test.
pub fn install_tests(plugins: &[PluginWheel]) {
    if plugins.is_empty() {
        return;
    }
    let wheels = target_dir().join("wheels").join("install-test");
    let _ = std::fs::remove_dir_all(&wheels);
    let cpu = plugin_file("debug", "quabla_cpu");
    pip_wheel(
        "build the quabla wheel",
        &wheels,
        "bindings/python",
        ("QUABLA_CPU_PLUGIN_PREBUILT", &cpu),
    );
    let host = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    for p in plugins {
        let project = format!("bindings/{}-plugin", p.name);
        let env = format!("QUABLA_{}_PLUGIN_PREBUILT", p.name.to_uppercase());
        pip_wheel(
            &format!("build the quabla-{} wheel", p.name),
            &wheels,
            &project,
            (&env, &p.library),
        );
        let venv = target_dir().join(format!("{}-wheel-venv", p.name));
        let _ = std::fs::remove_dir_all(&venv);
        run(
            "create a fresh venv for the two-wheel install",
            Command::new(&host).arg("-m").arg("venv").arg(&venv),
        );
        let py = venv.join("bin").join("python");
        let mut install = Command::new(&py);
        install.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ]);
        for l in &p.find_links {
            install.arg("--find-links").arg(l);
        }
        install
            .arg(wheel_file(&wheels, "quabla-"))
            .arg(wheel_file(&wheels, &format!("quabla_{}-", p.name)));
        run(
            &format!("pip install the quabla and quabla-{} wheels", p.name),
            &mut install,
        );
        let mut check = Command::new(&py);
        check
            .args(["-c", &p.check])
            .env_remove("QUABLA_PLUGIN_PATH");
        for (k, v) in &p.env {
            check.env(k, v);
        }
        run(
            &format!(
                "a jitted gradient on device=\"{}\" from the installed wheels",
                p.name
            ),
            &mut check,
        );
    }
}
