//! Which tools the model is offered in every request, and which it finds when it needs them.
//!
//! Every tool's schema is in the prompt prefix of every request, so a rarely used tool costs on
//! each one. Tools that declare [`Offer::OnDemand`] (the browser's), and MCP servers' tools when
//! together they are larger than [`MCP_BUDGET_BYTES`], are left out of the list and offered
//! through two tools with fixed schemas: `tool_search` answers with the schemas of the tools that
//! match, and `use_tool` calls one of them by name. Finding and calling such a tool adds to the
//! conversation only; the list at the front of the prefix does not change, so the provider's
//! cache holds. The user keeps a tool in the list with `alwaysOfferedTools`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::DynTool;
use crate::llm::ToolSpec;

/// MCP tools' schemas together up to this many bytes are listed in every request; beyond it,
/// all of them are offered on demand (about 2,500 tokens, what a large MCP server costs).
pub const MCP_BUDGET_BYTES: usize = 10_000;

/// How a tool wants to be offered to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// In the list sent with every request.
    Listed,
    /// In the list while the tools offered this way together stay within [`MCP_BUDGET_BYTES`]
    /// (an MCP server's tools); on demand beyond it.
    WithinBudget,
    /// Found through `tool_search` and called through `use_tool`.
    OnDemand,
}

/// The session's choices on offering tools.
#[derive(Debug, Clone, Default)]
pub struct OfferPolicy {
    /// Names, or prefixes ending in `*`, of tools always listed (`alwaysOfferedTools`).
    pub always: Vec<String>,
    /// Tools may arrive after the first request (MCP servers are configured): `tool_search` and
    /// `use_tool` are listed from the start even if nothing is on demand yet, so a server that
    /// connects late adds its tools without changing the list.
    pub late_tools: bool,
}

impl OfferPolicy {
    /// Whether the user asked for `name` to be listed in every request.
    pub fn always_offers(&self, name: &str) -> bool {
        self.always.iter().any(|pattern| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => pattern == name,
        })
    }

    /// The names of the tools listed directly, out of `tools`.
    pub fn listed<'a>(&self, tools: &'a BTreeMap<String, Arc<dyn DynTool>>) -> Vec<&'a str> {
        let budgeted: usize = tools
            .values()
            .filter(|tool| tool.offer() == Offer::WithinBudget)
            .map(|tool| spec_bytes(&tool.spec()))
            .sum();
        tools
            .iter()
            .filter(|(name, tool)| match tool.offer() {
                Offer::Listed => true,
                Offer::WithinBudget => budgeted <= MCP_BUDGET_BYTES || self.always_offers(name),
                Offer::OnDemand => self.always_offers(name),
            })
            .map(|(name, _)| name.as_str())
            .collect()
    }
}

/// What a spec costs in the request, near enough.
pub fn spec_bytes(spec: &ToolSpec) -> usize {
    spec.name.len() + spec.description.len() + spec.input_schema.to_string().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_names_one_tool_or_a_prefix() {
        let policy =
            OfferPolicy { always: vec!["browser_navigate".into(), "mcp__github__*".into()], late_tools: false };
        assert!(policy.always_offers("browser_navigate"));
        assert!(!policy.always_offers("browser_navigate_back"));
        assert!(policy.always_offers("mcp__github__create_issue"));
        assert!(!policy.always_offers("mcp__gitlab__create_issue"));
        let everything = OfferPolicy { always: vec!["*".into()], late_tools: false };
        assert!(everything.always_offers("browser_click"));
    }
}
