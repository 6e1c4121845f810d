//! `larik doctor [--json]`: prints the core's checks (`larik_core::doctor`) as aligned lines, or
//! as one JSON object `{"ok", "checks": [{"id", "title", "status", "detail"}]}` for editor
//! plugins. The exit code is 1 when a check is an error.

use std::collections::HashMap;
use std::io::Write;

use larik_core::doctor::{self, Status};

pub async fn run(json: bool, env: &HashMap<String, String>) -> anyhow::Result<i32> {
    let project = std::env::current_dir()?;
    let version = format!(
        "larik {} ({}) at {}",
        env!("CARGO_PKG_VERSION"),
        env!("LARIK_COMMIT"),
        std::env::current_exe().map(|path| path.display().to_string()).unwrap_or_default()
    );
    let checks = doctor::run(&project, env, std::env::current_exe().ok(), &version).await;
    let ok = checks.iter().all(|check| check.status != Status::Error);
    let mut out = String::new();
    if json {
        out = serde_json::to_string(&serde_json::json!({"ok": ok, "checks": checks}))?;
        out.push('\n');
    } else {
        let width = checks.iter().map(|check| check.title.len()).max().unwrap_or(0);
        for check in &checks {
            let mark = match check.status {
                Status::Ok => "ok     ",
                Status::Warning => "warning",
                Status::Error => "ERROR  ",
            };
            out.push_str(&format!("{mark}  {:width$}  {}\n", check.title, check.detail));
        }
        out.push_str(if ok {
            "\nLarik can work here.\n"
        } else {
            "\nLarik cannot work here until each ERROR above is fixed.\n"
        });
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(if ok { 0 } else { 1 })
}
