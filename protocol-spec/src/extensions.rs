//! Larik's extensions to ACP v1. Each is optional for the client and advertised in
//! `agentCapabilities._meta.larik`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The key under which Larik's data sits in any `_meta` object.
pub const META_KEY: &str = "larik";

/// Sent by a client in the `_meta.larik` of a `session/request_permission` response: the reason
/// the user gave for rejecting a tool call. The agent passes it to the model, so the model can
/// change course instead of retrying.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionFeedback {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// What Larik advertises in `agentCapabilities._meta.larik`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LarikCapabilities {
    /// Version of the extension set; bumped when an extension changes incompatibly.
    pub version: u32,
    /// `_meta.larik.feedback` on permission responses is read.
    pub permission_feedback: bool,
}

impl Default for LarikCapabilities {
    fn default() -> Self {
        Self { version: 1, permission_feedback: true }
    }
}
