//! The tools one session offers, by name. Names are known only at run time for tools from
//! outside (`mcp__server__tool`), and tools come and go while the session lives (a server
//! connects, or fails). The list sent to the model is sorted by name and rebuilt only when the
//! set changes, so the prompt prefix stays byte-identical and the provider's cache stays warm.
//! A child agent gets a filtered copy.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::shell_control::{BashOutput, KillShell};
use super::web_fetch::WebFetch;
use super::web_search::WebSearch;
use super::{
    DynTool, ToolNames, bash::Bash, edit::Edit, glob::Glob, grep::Grep, multi_edit::MultiEdit, read::Read, todo::Todo,
    write::Write,
};
use crate::llm::ToolSpec;
use larik_settings::SearchBackend;

#[derive(Default)]
pub struct Registry {
    // Never held across an await: every method takes it for a lookup or a swap.
    tools: RwLock<Tools>,
}

#[derive(Clone, Default)]
struct Tools {
    by_name: BTreeMap<String, Arc<dyn DynTool>>,
    /// The specs sent with every model request, derived when the set changes.
    specs: Arc<[ToolSpec]>,
    /// Whether some tool's spec may change by itself ([`DynTool::live_spec`]).
    live: bool,
}

impl Tools {
    fn respec(&mut self) {
        self.specs = self.by_name.values().map(|tool| tool.spec()).collect();
        self.live = self.by_name.values().any(|tool| tool.live_spec());
    }

    /// The specs with each live tool's asked again; `None` when none changed.
    fn changed_specs(&self) -> Option<Arc<[ToolSpec]>> {
        let fresh: Vec<ToolSpec> = self
            .by_name
            .values()
            .zip(self.specs.iter())
            .map(|(tool, spec)| if tool.live_spec() { tool.spec() } else { spec.clone() })
            .collect();
        (*fresh != *self.specs).then(|| fresh.into())
    }
}

impl Registry {
    /// Every built-in tool. `search` is the web search service, if one is configured.
    pub fn builtin(search: Option<SearchBackend>) -> Self {
        let registry = Self::default();
        let builtins: [Arc<dyn DynTool>; 13] = [
            Arc::new(Read),
            Arc::new(Write),
            Arc::new(Edit),
            Arc::new(MultiEdit),
            Arc::new(Grep),
            Arc::new(Glob),
            Arc::new(Todo),
            Arc::new(super::ask_user::AskUserTool),
            Arc::new(WebFetch::default()),
            Arc::new(WebSearch { backend: search }),
            Arc::new(Bash),
            Arc::new(BashOutput),
            Arc::new(KillShell),
        ];
        registry.add_all(builtins);
        registry
    }

    /// Adds (or replaces) a tool.
    pub fn add(&self, tool: Arc<dyn DynTool>) {
        self.add_all([tool]);
    }

    /// Adds several tools with one rebuild of the specs.
    pub fn add_all(&self, tools: impl IntoIterator<Item = Arc<dyn DynTool>>) {
        self.change(|set| {
            for tool in tools {
                set.by_name.insert(tool.name().to_owned(), tool);
            }
        });
    }

    /// Removes a tool; returns whether it was there.
    pub fn remove(&self, name: &str) -> bool {
        let mut removed = false;
        self.change(|set| removed = set.by_name.remove(name).is_some());
        removed
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        self.tools.read().ok()?.by_name.get(name).cloned()
    }

    /// The specs of every tool, sorted by name; the same allocation until the set or a live
    /// tool's spec changes, so an unchanged list is sent byte for byte the same.
    pub fn specs(&self) -> Arc<[ToolSpec]> {
        let changed = match self.tools.read() {
            Ok(set) if !set.live => return Arc::clone(&set.specs),
            Ok(set) => match set.changed_specs() {
                None => return Arc::clone(&set.specs),
                Some(changed) => changed,
            },
            Err(_) => return Arc::from(Vec::new()),
        };
        if let Ok(mut set) = self.tools.write() {
            set.specs = Arc::clone(&changed);
        }
        changed
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.read().map(|set| set.by_name.keys().cloned().collect()).unwrap_or_default()
    }

    /// A registry of its own holding the tools `keep` accepts, for a child agent.
    pub fn filtered(&self, keep: impl Fn(ToolNames<'_>) -> bool) -> Registry {
        let child = Registry::default();
        if let Ok(set) = self.tools.read() {
            child.add_all(set.by_name.iter().filter(|(_, tool)| keep(tool.names())).map(|(_, tool)| Arc::clone(tool)));
        }
        child
    }

    fn change(&self, edit: impl FnOnce(&mut Tools)) {
        if let Ok(mut set) = self.tools.write() {
            edit(&mut set);
            set.respec();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_come_and_go_and_the_list_stays_sorted() {
        let registry = Registry::builtin(None);
        let before = registry.specs();
        assert!(Arc::ptr_eq(&before, &registry.specs()), "unchanged sets share one list");
        let names: Vec<&str> = before.iter().map(|spec| spec.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(registry.remove("web_search"));
        assert!(!registry.remove("web_search"));
        assert!(registry.get("web_search").is_none());
        assert_eq!(registry.specs().len(), before.len() - 1);
        let child = registry.filtered(|names| names.name != "bash");
        assert!(child.get("bash").is_none() && child.get("read").is_some());
        assert!(registry.get("bash").is_some(), "the parent keeps its tools");
    }
}
