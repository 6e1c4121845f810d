//! The set of tools a session offers, by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::shell_control::{BashOutput, KillShell};
use super::{DynTool, bash::Bash, edit::Edit, glob::Glob, grep::Grep, multi_edit::MultiEdit, read::Read, todo::Todo, write::Write};
use super::web_fetch::WebFetch;
use super::web_search::WebSearch;
use crate::config::SearchBackend;
use crate::llm::ToolSpec;

#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, Arc<dyn DynTool>>,
    /// The specs sent with every model request, derived once.
    specs: Arc<[ToolSpec]>,
}

impl Registry {
    /// Every built-in tool. `search` is the web search service, if one is configured.
    pub fn builtin(search: Option<SearchBackend>) -> Self {
        let mut registry = Self::default();
        registry.add(Arc::new(Read));
        registry.add(Arc::new(Write));
        registry.add(Arc::new(Edit));
        registry.add(Arc::new(MultiEdit));
        registry.add(Arc::new(Grep));
        registry.add(Arc::new(Glob));
        registry.add(Arc::new(Todo));
        registry.add(Arc::new(super::ask_user::AskUserTool));
        registry.add(Arc::new(WebFetch::default()));
        registry.add(Arc::new(WebSearch { backend: search }));
        registry.add(Arc::new(Bash));
        registry.add(Arc::new(BashOutput));
        registry.add(Arc::new(KillShell));
        registry
    }

    pub fn add(&mut self, tool: Arc<dyn DynTool>) {
        self.tools.insert(tool.name(), tool);
        self.specs = self.tools.values().map(|tool| tool.spec()).collect();
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        self.tools.get(name).cloned()
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }
}
