//! The tools one session offers, by name. Names are known only at run time for tools from
//! outside (`mcp__server__tool`), and tools come and go while the session lives (a server
//! connects, or fails). The list sent to the model is sorted by name, holds the tools listed
//! directly ([`super::offer`]) and is fixed by the first request: a tool that arrives later is
//! offered on demand, one that goes keeps its place (its calls answer that it is not available
//! now), so the prompt prefix stays byte-identical and the provider's cache stays warm. Only a
//! listed tool's own spec changing (a live spec, a server relisting a tool differently) changes
//! the list, and `/clear` lists anew. A child agent gets a filtered copy, listed at its own first
//! request.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use super::on_demand::{ToolSearch, UseTool};
use super::shell_control::{BashOutput, KillShell};
use super::web_fetch::WebFetch;
use super::web_search::WebSearch;
use super::{
    DynTool, OfferPolicy, ToolNames, bash::Bash, edit::Edit, glob::Glob, grep::Grep, multi_edit::MultiEdit, read::Read,
    todo::Todo, write::Write,
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
    policy: OfferPolicy,
    /// The tools listed directly, by name, with the spec each is listed with.
    listed: BTreeMap<String, ToolSpec>,
    /// The specs sent with every model request, derived when the set changes.
    specs: Arc<[ToolSpec]>,
    /// Whether some listed tool's spec may change by itself ([`DynTool::live_spec`]).
    live: bool,
    /// Set by the first request: the listed names no longer change.
    sealed: bool,
    /// Changed since the list was last decided, before the first request: decided when next
    /// read, so a session's set-up (tools added, removed, the policy) decides it once.
    unsettled: bool,
    /// The tools on demand the model was told of (in `tool_search`'s description or a note).
    announced: BTreeSet<String>,
}

impl Tools {
    fn settle(&mut self) {
        if self.unsettled {
            self.unsettled = false;
            self.respec();
        }
    }

    fn respec(&mut self) {
        if self.sealed {
            // A tool that is back, or relisted, is listed with its spec of now; one that went
            // keeps the spec it was listed with.
            for (name, spec) in &mut self.listed {
                if let Some(tool) = self.by_name.get(name) {
                    *spec = tool.spec();
                }
            }
        } else {
            self.list();
        }
        let specs: Vec<ToolSpec> = self.listed.values().cloned().collect();
        if *specs != *self.specs {
            self.specs = specs.into();
        }
        self.live = self.listed.keys().filter_map(|name| self.by_name.get(name)).any(|tool| tool.live_spec());
    }

    /// Decides what is listed directly, before the first request.
    fn list(&mut self) {
        let names: BTreeSet<&str> = self.policy.listed(&self.by_name).into_iter().collect();
        self.listed = names.iter().map(|name| ((*name).to_owned(), self.by_name[*name].spec())).collect();
        self.announced = self.on_demand().map(|(name, _)| name.clone()).collect();
        if !self.announced.is_empty() || self.policy.late_tools {
            let mut search = <ToolSearch as DynTool>::spec(&ToolSearch { on_demand: Vec::new() });
            if !self.announced.is_empty() {
                let names: Vec<&str> = self.announced.iter().map(String::as_str).collect();
                search.description.push_str(&format!("\n\nOffered on demand: {}.", names.join(", ")));
            }
            self.listed.insert(ToolSearch::NAME.to_owned(), search);
            self.listed.insert(UseTool::NAME.to_owned(), UseTool.spec());
        }
    }

    /// The tools offered on demand: registered and not listed.
    fn on_demand(&self) -> impl Iterator<Item = (&String, &Arc<dyn DynTool>)> {
        self.by_name.iter().filter(|(name, _)| !self.listed.contains_key(*name))
    }

    /// The specs with each live tool's asked again; `None` when none changed.
    fn changed_specs(&self) -> Option<Arc<[ToolSpec]>> {
        let fresh: Vec<ToolSpec> = self
            .listed
            .iter()
            .map(|(name, spec)| match self.by_name.get(name) {
                Some(tool) if tool.live_spec() => tool.spec(),
                _ => spec.clone(),
            })
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

    /// How tools are offered: which the user keeps listed, whether tools may come late.
    pub fn set_policy(&self, policy: OfferPolicy) {
        self.change(|set| set.policy = policy);
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

    /// The tool called `name`: a registered one, listed or on demand, or one of the two tools
    /// that reach those on demand.
    pub fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        let set = self.settled()?;
        match name {
            ToolSearch::NAME => {
                let on_demand = set.on_demand().map(|(_, tool)| tool.spec()).collect();
                Some(Arc::new(ToolSearch { on_demand }))
            }
            UseTool::NAME => Some(Arc::new(UseTool)),
            _ => set.by_name.get(name).cloned(),
        }
    }

    /// Whether `name` is in the list the model was sent but its tool is gone (its MCP server
    /// stopped): a call of it is told so rather than that no such tool exists.
    pub fn listed_but_gone(&self, name: &str) -> bool {
        self.settled().is_some_and(|set| set.listed.contains_key(name) && !set.by_name.contains_key(name))
    }

    /// The specs of the listed tools, sorted by name; the same allocation until the set or a
    /// live tool's spec changes, so an unchanged list is sent byte for byte the same. The first
    /// call fixes which tools are listed.
    pub fn specs(&self) -> Arc<[ToolSpec]> {
        match self.tools.read() {
            Ok(set) if set.sealed && !set.live && !set.unsettled => return Arc::clone(&set.specs),
            Ok(_) => {}
            Err(_) => return Arc::from(Vec::new()),
        }
        let Ok(mut set) = self.tools.write() else { return Arc::from(Vec::new()) };
        set.settle();
        set.sealed = true;
        if set.live
            && let Some(changed) = set.changed_specs()
        {
            set.specs = changed;
        }
        Arc::clone(&set.specs)
    }

    /// Lists anew at the next request, what has arrived since included: the conversation starts
    /// over (`/clear`), so the cached prefix is rebuilt anyway.
    pub fn list_anew(&self) {
        self.change(|set| set.sealed = false);
    }

    /// The tools offered on demand that arrived since the model was last told, marked told.
    pub fn take_news(&self) -> Vec<String> {
        let Ok(mut set) = self.tools.write() else { return Vec::new() };
        set.settle();
        let news: Vec<String> =
            set.on_demand().map(|(name, _)| name.clone()).filter(|name| !set.announced.contains(name)).collect();
        set.announced.extend(news.iter().cloned());
        news
    }

    /// The names of every registered tool, listed or on demand.
    pub fn names(&self) -> Vec<String> {
        self.tools.read().map(|set| set.by_name.keys().cloned().collect()).unwrap_or_default()
    }

    /// A registry of its own holding the tools `keep` accepts, for a child agent.
    pub fn filtered(&self, keep: impl Fn(ToolNames<'_>) -> bool) -> Registry {
        let child = Registry::default();
        if let Ok(set) = self.tools.read() {
            child.set_policy(set.policy.clone());
            child.add_all(set.by_name.iter().filter(|(_, tool)| keep(tool.names())).map(|(_, tool)| Arc::clone(tool)));
        }
        child
    }

    fn change(&self, edit: impl FnOnce(&mut Tools)) {
        if let Ok(mut set) = self.tools.write() {
            edit(&mut set);
            if set.sealed {
                set.respec();
            } else {
                set.unsettled = true;
            }
        }
    }

    /// The set with its list decided, for a reader.
    fn settled(&self) -> Option<std::sync::RwLockReadGuard<'_, Tools>> {
        if self.tools.read().ok()?.unsettled {
            self.tools.write().ok()?.settle();
        }
        self.tools.read().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Offer;

    /// A tool that wants to be offered as `offer` says, its description `size` bytes long.
    struct Sized {
        name: String,
        offer: Offer,
        size: usize,
    }

    impl DynTool for Sized {
        fn spec(&self) -> ToolSpec {
            ToolSpec { name: self.name.clone(), description: "d".repeat(self.size), input_schema: json!({}) }
        }
        fn name(&self) -> &str {
            &self.name
        }
        fn offer(&self) -> Offer {
            self.offer
        }
        fn kind(&self) -> crate::event::ToolKind {
            crate::event::ToolKind::Other
        }
        fn read_only(&self) -> bool {
            true
        }
        fn concurrency_safe(&self) -> bool {
            true
        }
        fn report_only(&self) -> bool {
            false
        }
        fn prepare(
            self: Arc<Self>,
            _input: &serde_json::Value,
            _ctx: &crate::tools::ToolContext,
        ) -> Result<Box<dyn crate::tools::PreparedCall>, crate::tools::InputError> {
            Err(crate::tools::InputError { tool: self.name.clone(), reason: "a test tool".into() })
        }
    }

    use serde_json::json;

    fn sized(name: &str, offer: Offer, size: usize) -> Arc<dyn DynTool> {
        Arc::new(Sized { name: name.into(), offer, size })
    }

    fn listed(registry: &Registry) -> Vec<String> {
        registry.specs().iter().map(|spec| spec.name.clone()).collect()
    }

    #[test]
    fn tools_come_and_go_and_the_list_stays_sorted() {
        let registry = Registry::builtin(None);
        assert!(registry.remove("web_search"));
        assert!(!registry.remove("web_search"));
        assert!(registry.get("web_search").is_none());
        let before = registry.specs();
        assert!(Arc::ptr_eq(&before, &registry.specs()), "unchanged sets share one list");
        let names: Vec<&str> = before.iter().map(|spec| spec.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(!names.contains(&"web_search") && !names.contains(&ToolSearch::NAME), "nothing is on demand");
        let child = registry.filtered(|names| names.name != "bash");
        assert!(child.get("bash").is_none() && child.get("read").is_some());
        assert!(registry.get("bash").is_some(), "the parent keeps its tools");
    }

    #[test]
    fn tools_on_demand_are_reached_through_two_listed_tools() {
        let registry = Registry::builtin(None);
        registry
            .add_all([sized("browser_click", Offer::OnDemand, 10), sized("mcp__a__small", Offer::WithinBudget, 10)]);
        let names = listed(&registry);
        assert!(names.contains(&"mcp__a__small".to_owned()), "MCP tools within the budget are listed");
        assert!(!names.contains(&"browser_click".to_owned()));
        assert!(names.contains(&ToolSearch::NAME.to_owned()) && names.contains(&UseTool::NAME.to_owned()));
        let search = registry.specs().iter().find(|spec| spec.name == ToolSearch::NAME).cloned().unwrap();
        assert!(search.description.ends_with("Offered on demand: browser_click."), "{}", search.description);
        assert!(registry.get("browser_click").is_some(), "a tool on demand is still called by its name");

        // Beyond the budget, every MCP tool is on demand, unless the user keeps it listed.
        let registry = Registry::builtin(None);
        registry.set_policy(OfferPolicy { always: vec!["mcp__big__one".into()], late_tools: false });
        registry.add_all([
            sized("mcp__big__one", Offer::WithinBudget, MCP_BUDGET),
            sized("mcp__big__two", Offer::WithinBudget, 10),
        ]);
        let names = listed(&registry);
        assert!(names.contains(&"mcp__big__one".to_owned()) && !names.contains(&"mcp__big__two".to_owned()));
    }

    const MCP_BUDGET: usize = crate::tools::MCP_BUDGET_BYTES;

    #[test]
    fn the_first_request_fixes_the_list_and_later_tools_come_on_demand() {
        let registry = Registry::builtin(None);
        registry.set_policy(OfferPolicy { always: Vec::new(), late_tools: true });
        registry.add(sized("mcp__early__a", Offer::WithinBudget, 10));
        let first = registry.specs();
        assert!(first.iter().any(|spec| spec.name == ToolSearch::NAME), "tools may come late: the search is listed");
        assert!(registry.take_news().is_empty());

        registry.add(sized("mcp__late__b", Offer::WithinBudget, 10));
        assert!(Arc::ptr_eq(&first, &registry.specs()), "a late tool leaves the list as it was");
        assert_eq!(registry.take_news(), ["mcp__late__b"]);
        assert!(registry.take_news().is_empty(), "told once");
        let search = registry.get(ToolSearch::NAME).unwrap();
        assert!(search.spec().name == ToolSearch::NAME);

        // A listed tool that goes keeps its place; back, it is listed as before.
        assert!(registry.remove("mcp__early__a"));
        assert_eq!(*registry.specs(), *first, "the list keeps a tool that went");
        assert!(registry.listed_but_gone("mcp__early__a"));
        registry.add(sized("mcp__early__a", Offer::WithinBudget, 10));
        assert_eq!(*registry.specs(), *first);
        assert!(!registry.listed_but_gone("mcp__early__a"));

        // `/clear` lists anew, with what came late.
        registry.list_anew();
        assert!(listed(&registry).contains(&"mcp__late__b".to_owned()));
    }
}
