//! `larik config get|set|unset`: the user's own settings from a terminal, through the core's
//! `user_settings` (known keys, checked values, atomic writes).

use std::collections::HashMap;
use std::io::Write;

use larik_core::user_settings;

pub enum Action {
    Get(Option<String>),
    Set(String, String),
    Unset(String),
}

/// Prints what was asked or done; the exit code is 1 when a key or value was refused.
pub fn run(action: Action, env: &HashMap<String, String>) -> anyhow::Result<i32> {
    let said = match action {
        Action::Get(None) => user_settings::all(env).map(|keys| listing(&keys)),
        Action::Get(Some(key)) => {
            user_settings::get(&key, env).map(|value| value.unwrap_or_else(|| "(not set)".into()))
        }
        Action::Set(key, value) => user_settings::set(&key, &value, env)
            .and_then(|stored| Ok(format!("{key} = {stored} in {}", user_settings::settings_path(env)?.display()))),
        Action::Unset(key) => user_settings::unset(&key, env)
            .and_then(|()| Ok(format!("{key} removed from {}", user_settings::settings_path(env)?.display()))),
    };
    let mut stdout = std::io::stdout().lock();
    let code = match said {
        Ok(text) => {
            writeln!(stdout, "{text}")?;
            0
        }
        Err(error) => {
            writeln!(std::io::stderr(), "larik config: {error}")?;
            1
        }
    };
    stdout.flush()?;
    Ok(code)
}

/// Every key with its value, for `larik config get` and `/config`.
pub fn listing(keys: &[(&'static user_settings::Key, Option<String>)]) -> String {
    let width = keys.iter().map(|(key, _)| key.name.len()).max().unwrap_or(0);
    keys.iter()
        .map(|(key, value)| {
            format!("{:width$}  {:14}  {}", key.name, value.as_deref().unwrap_or("(not set)"), key.about)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
