//! `larik doctor`'s checks: how this `larik` was installed and whether editors find it, what a
//! session in this project would find (settings, model and key, the endpoint, the sandbox, language servers, MCP servers, Chromium), each with a status
//! and words for the user. A key is never shown, only where it comes from. Front ends print the
//! list; only an error is a problem that stops the agent from working.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

mod install;

use crate::config::{self, ModelConfig, ProviderKind};
use crate::llm::Reached;
use crate::lsp::ServerSpec;

/// How long the endpoint may take to answer.
const REACH_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Larik works, with something missing or off (no browser, no language server).
    Warning,
    /// Larik cannot work until this is fixed.
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub title: &'static str,
    pub status: Status,
    pub detail: String,
}

impl Check {
    fn new(id: &'static str, title: &'static str, status: Status, detail: impl Into<String>) -> Self {
        Self { id, title, status, detail: detail.into() }
    }
}

/// Every check for the project at `project`. `helper` is the binary that confines commands
/// (`larik` itself).
pub async fn run(project: &Path, env: &HashMap<String, String>, helper: Option<PathBuf>, version: &str) -> Vec<Check> {
    let mut checks = vec![Check::new("version", "Larik", Status::Ok, version.to_owned())];
    if let Some(binary) = &helper {
        checks.push(install::check(binary, env.get("PATH").map(String::as_str)));
    }
    let files = config::SettingsFiles::default();
    let settings = match config::load_settings_from(&files, project, env).and_then(|settings| {
        config::load_permissions_from(&files, project, env).map(|permissions| (settings, permissions))
    }) {
        Ok((mut settings, permissions)) => {
            // A managed policy that fails closed is said first: every call asks until it changes.
            settings.problems.splice(0..0, permissions.fails_closed);
            let status = if settings.problems.is_empty() { Status::Ok } else { Status::Warning };
            let detail = if settings.problems.is_empty() {
                "read without problems".to_owned()
            } else {
                settings.problems.join("; ")
            };
            checks.push(Check::new("settings", "Settings", status, detail));
            settings
        }
        Err(error) => {
            checks.push(Check::new("settings", "Settings", Status::Error, error.to_string()));
            config::Settings::default()
        }
    };
    match config::resolve_model(&settings, env) {
        Ok(model) => {
            checks.push(model_check(&model, &settings));
            checks.push(reach_check(&model).await);
        }
        Err(error) => {
            checks.push(Check::new("model", "Model", Status::Error, error.to_string()));
            checks.push(Check::new("provider", "Provider", Status::Warning, "not checked: no model is configured"));
        }
    }
    checks.push(sandbox_check(&settings, helper.as_deref()));
    checks.push(language_servers_check(&settings, env));
    checks.push(mcp_check(project, env, helper).await);
    checks.push(chromium_check(&settings, env));
    checks
}

fn model_check(model: &ModelConfig, settings: &config::Settings) -> Check {
    let (provider, key_var) = match model.provider {
        ProviderKind::Anthropic => ("Anthropic", "ANTHROPIC_API_KEY"),
        ProviderKind::Openai => ("OpenAI-compatible", "OPENAI_API_KEY"),
    };
    let key_var = settings.api_key_env.as_deref().unwrap_or(key_var);
    let key = match (&model.api_key, model.provider) {
        (Some(_), _) => format!("key from ${key_var}"),
        (None, ProviderKind::Anthropic) => {
            return Check::new(
                "model",
                "Model",
                Status::Error,
                format!("{} ({provider}) needs a key: ${key_var} is not set", model.model),
            );
        }
        (None, ProviderKind::Openai) => format!("no key (${key_var} is not set; a local server needs none)"),
    };
    Check::new("model", "Model", Status::Ok, format!("{} ({provider}) at {}, {key}", model.model, model.base_url))
}

async fn reach_check(model: &ModelConfig) -> Check {
    let provider = match model.build_provider() {
        Ok(provider) => provider,
        Err(error) => return Check::new("provider", "Provider", Status::Error, error.to_string()),
    };
    match tokio::time::timeout(REACH_TIMEOUT, provider.reach()).await {
        Ok(Ok(Reached::Listed)) => {
            Check::new("provider", "Provider", Status::Ok, format!("{} answered and accepted the key", model.base_url))
        }
        Ok(Ok(Reached::Answered(status))) => Check::new(
            "provider",
            "Provider",
            Status::Ok,
            format!("{} answered (HTTP {status} to a model list)", model.base_url),
        ),
        Ok(Ok(Reached::NotAsked)) => Check::new("provider", "Provider", Status::Ok, "not behind an endpoint"),
        Ok(Err(error)) => Check::new("provider", "Provider", Status::Error, format!("{}: {error}", model.base_url)),
        Err(_) => Check::new(
            "provider",
            "Provider",
            Status::Error,
            format!("{} did not answer within {} s", model.base_url, REACH_TIMEOUT.as_secs()),
        ),
    }
}

fn sandbox_check(settings: &config::Settings, helper: Option<&Path>) -> Check {
    let sandbox = settings.sandbox.clone().unwrap_or_default();
    if sandbox.enabled == Some(false) {
        return Check::new(
            "sandbox",
            "Sandbox",
            Status::Warning,
            "off (sandbox.enabled is false in settings): every command asks first",
        );
    }
    let Some(helper) = helper else {
        return Check::new(
            "sandbox",
            "Sandbox",
            Status::Warning,
            "the larik binary was not found to confine commands: every command asks first",
        );
    };
    let support = crate::sandbox::probe::support(helper);
    match support.problem {
        Some(problem) => Check::new(
            "sandbox",
            "Sandbox",
            Status::Warning,
            format!("off ({problem}): every command asks first; `larik sandbox check` says more"),
        ),
        None => {
            let network = if sandbox.network.full { "network on" } else { "network through the proxy, by domain" };
            let landlock = support.landlock_abi.map(|abi| format!(", Landlock ABI {abi}")).unwrap_or_default();
            Check::new(
                "sandbox",
                "Sandbox",
                Status::Ok,
                format!("commands run confined ({}{landlock}; {network})", crate::sandbox::backend_name()),
            )
        }
    }
}

fn language_servers_check(settings: &config::Settings, env: &HashMap<String, String>) -> Check {
    let lsp = settings.lsp.clone().unwrap_or_default();
    if lsp.enabled == Some(false) {
        return Check::new(
            "language_servers",
            "Language servers",
            Status::Ok,
            "off (lsp.enabled is false in settings)",
        );
    }
    let available = ServerSpec::available(env, &lsp);
    let found: Vec<String> = available.iter().map(|spec| format!("{} ({})", spec.name, spec.command)).collect();
    let missing: Vec<&str> =
        ServerSpec::built_in_names().filter(|name| !available.iter().any(|spec| spec.name == *name)).collect();
    let missing = if missing.is_empty() { String::new() } else { format!("; not on PATH: {}", missing.join(", ")) };
    if found.is_empty() {
        Check::new(
            "language_servers",
            "Language servers",
            Status::Warning,
            format!("none on PATH, so edits are not checked for new errors{missing}"),
        )
    } else {
        Check::new("language_servers", "Language servers", Status::Ok, format!("{}{missing}", found.join(", ")))
    }
}

async fn mcp_check(project: &Path, env: &HashMap<String, String>, helper: Option<PathBuf>) -> Check {
    let config = match crate::session::SessionConfig::from_settings(project.to_path_buf(), env, helper) {
        Ok((config, _)) => config,
        Err(error) => return Check::new("mcp", "MCP servers", Status::Warning, format!("not checked: {error}")),
    };
    let cancel = CancellationToken::new();
    let session = crate::session::Session::new(config, &cancel);
    let report = session.mcp_servers().await;
    cancel.cancel();
    let status = if report.all_well() { Status::Ok } else { Status::Warning };
    let said = if report.servers.is_empty() {
        report.to_string()
    } else {
        report.servers.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    };
    Check::new("mcp", "MCP servers", status, said)
}

#[cfg(feature = "browser")]
fn chromium_check(settings: &config::Settings, env: &HashMap<String, String>) -> Check {
    let browser = settings.browser.clone().unwrap_or_default();
    if browser.enabled == Some(false) {
        return Check::new("chromium", "Browser", Status::Ok, "off (browser.enabled is false in settings)");
    }
    match crate::browser::find_chromium(browser.executable.as_deref(), env) {
        Ok(path) => Check::new(
            "chromium",
            "Browser",
            Status::Ok,
            format!("{}, started on the first browser tool call", path.display()),
        ),
        Err(message) => Check::new(
            "chromium",
            "Browser",
            Status::Warning,
            format!("{message} The browser tools are off until then."),
        ),
    }
}

#[cfg(not(feature = "browser"))]
fn chromium_check(_: &config::Settings, _: &HashMap<String, String>) -> Check {
    Check::new("chromium", "Browser", Status::Ok, "this build has no browser tools")
}
