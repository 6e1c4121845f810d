//! `lsp` in settings: which language servers run, and how.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

/// `lsp` in settings.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct LspSettings {
    /// `false` turns every server off.
    pub enabled: Option<bool>,
    pub servers: HashMap<String, ServerSettings>,
}

/// One server in settings: a new one, or changes to a built-in one of that name.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerSettings {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// Extensions (`py`) or `extension:languageId` pairs (`tsx:typescriptreact`).
    pub filetypes: Option<Vec<String>>,
    pub root_markers: Option<Vec<String>>,
    pub initialization_options: Option<Value>,
    pub enabled: Option<bool>,
}
