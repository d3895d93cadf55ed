//! Helpers shared by the plugin test files.

use std::path::PathBuf;

/// A plugin's shared library in this build's target folder (`name` without prefix/suffix).
pub fn plugin_library(name: &str) -> PathBuf {
    quabla_conformance::built_plugin(name)
}
