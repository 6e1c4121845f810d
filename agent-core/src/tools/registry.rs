//! The set of tools a session offers, by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{DynTool, bash::Bash, edit::Edit, read::Read, write::Write};
use crate::llm::ToolSpec;

#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, Arc<dyn DynTool>>,
}

impl Registry {
    /// Every built-in tool.
    pub fn builtin() -> Self {
        let mut registry = Self::default();
        registry.add(Arc::new(Read));
        registry.add(Arc::new(Write));
        registry.add(Arc::new(Edit));
        registry.add(Arc::new(Bash));
        registry
    }

    pub fn add(&mut self, tool: Arc<dyn DynTool>) {
        self.tools.insert(tool.name(), tool);
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        self.tools.get(name).cloned()
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|tool| tool.spec()).collect()
    }
}
