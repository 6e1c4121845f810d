//! `larik plugin list|install|enable|disable`: Claude Code plugins from a terminal, through the
//! core's `plugin_install` (the same as `/plugin`), for the project in the current directory.

use std::collections::HashMap;
use std::io::Write;

use larik_core::plugin_install::{self, PluginAction};

/// Prints what was done; the exit code is 1 when it was refused or failed.
pub fn run(action: PluginAction, env: &HashMap<String, String>) -> anyhow::Result<i32> {
    let project = std::env::current_dir()?;
    match plugin_install::run(action, &project, env) {
        Ok(outcome) => {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{outcome}")?;
            stdout.flush()?;
            Ok(0)
        }
        Err(error) => {
            writeln!(std::io::stderr(), "larik plugin: {error}")?;
            Ok(1)
        }
    }
}
