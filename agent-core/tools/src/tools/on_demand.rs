//! The two tools through which the model reaches tools offered on demand ([`super::offer`]):
//! `tool_search` answers with the schemas of the tools that match a query, and `use_tool` calls
//! one by name. Both have fixed schemas, so finding and calling a tool never changes the list at
//! the front of the prompt. A `use_tool` call is taken apart before the dispatch pipeline
//! resolves it ([`UseTool::target`]): hooks, permission rules, the editor and the session file
//! see the call of the tool it names, with that tool's input.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{CallDescription, Tool, ToolCall, ToolContext, ToolOutput};
use crate::event::ToolKind;
use crate::llm::ToolSpec;

/// The most tools one search answers with, and how many it answers with unless told.
const MAX_RESULTS: usize = 10;
const DEFAULT_RESULTS: usize = 5;

#[derive(Deserialize, JsonSchema)]
pub struct SearchInput {
    /// Words to match against the tools' names and descriptions (`browser click`, `github
    /// issue`), or `select:name1,name2` for tools whose names you know.
    pub query: String,
    /// How many tools to answer with (default 5, at most 10).
    #[serde(default)]
    pub max_results: Option<usize>,
}

/// `tool_search`, holding the specs of the tools offered on demand when the call was resolved.
pub struct ToolSearch {
    pub on_demand: Vec<ToolSpec>,
}

impl ToolSearch {
    pub const NAME: &'static str = <Self as Tool>::NAME;

    /// The specs that answer `query`, best first.
    fn matches(&self, query: &str, limit: usize) -> Vec<&ToolSpec> {
        if let Some(names) = query.trim().strip_prefix("select:") {
            let wanted: Vec<&str> = names.split(',').map(str::trim).collect();
            return self.on_demand.iter().filter(|spec| wanted.contains(&spec.name.as_str())).take(limit).collect();
        }
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut scored: Vec<(usize, &ToolSpec)> = self
            .on_demand
            .iter()
            .map(|spec| {
                let (name, description) = (spec.name.to_lowercase(), spec.description.to_lowercase());
                let score = words
                    .iter()
                    .map(|word| match () {
                        () if name == *word => 10,
                        () if name.contains(word.as_str()) => 3,
                        () if description.contains(word.as_str()) => 1,
                        () => 0,
                    })
                    .sum::<usize>();
                (score, spec)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        scored.sort_by(|(a, left), (b, right)| b.cmp(a).then_with(|| left.name.cmp(&right.name)));
        scored.into_iter().take(limit).map(|(_, spec)| spec).collect()
    }
}

impl Tool for ToolSearch {
    type Input = SearchInput;
    const NAME: &'static str = "tool_search";
    const DESCRIPTION: &'static str = "Find tools offered on demand instead of listed here: the browser's (`browser_*`) and MCP servers' (`mcp__<server>__<tool>`) when they are many. Answers with each matching tool's description and input schema; then call it with `use_tool`.";
    const KIND: ToolKind = ToolKind::Search;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &SearchInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Find tools: {}", input.query))
    }

    async fn run(&self, input: SearchInput, _ctx: &ToolContext) -> ToolOutput {
        let limit = input.max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS);
        let found = self.matches(&input.query, limit);
        if found.is_empty() {
            let names: Vec<&str> = self.on_demand.iter().map(|spec| spec.name.as_str()).collect();
            return ToolOutput::text(match names.is_empty() {
                true => "No tools are offered on demand in this session.".to_owned(),
                false => format!("No tool matches `{}`. Offered on demand: {}.", input.query, names.join(", ")),
            });
        }
        let mut text = format!(
            "Call one with {}: {{\"name\": \"<tool>\", \"input\": {{...}}}}, the input as its schema says.\n",
            UseTool::NAME
        );
        for spec in found {
            text.push_str(&format!(
                "\n<tool name=\"{}\">\n{}\nInput schema: {}\n</tool>\n",
                spec.name, spec.description, spec.input_schema
            ));
        }
        ToolOutput::text(text)
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct UseToolInput {
    /// The name of a tool `tool_search` found.
    pub name: String,
    /// The tool's input, as its schema says.
    #[serde(default)]
    pub input: Map<String, Value>,
}

/// `use_tool`. The pipeline calls the tool it names in its place, so its own run is reached only
/// when it names itself.
pub struct UseTool;

impl UseTool {
    pub const NAME: &'static str = <Self as Tool>::NAME;

    /// The call `call` stands for when it is a well-formed `use_tool` call: the same id, the named
    /// tool and its input. A malformed one is left to fail as `use_tool`'s own input error.
    pub fn target(call: &ToolCall) -> Option<ToolCall> {
        if call.name != Self::NAME {
            return None;
        }
        let input = UseToolInput::deserialize(&call.input).ok()?;
        Some(ToolCall { id: call.id.clone(), name: input.name, input: Value::Object(input.input) })
    }
}

impl Tool for UseTool {
    type Input = UseToolInput;
    const NAME: &'static str = "use_tool";
    const DESCRIPTION: &'static str = "Call a tool offered on demand, found with `tool_search`: `name` is its name, `input` its input as its schema says. The call is checked, asked about and shown as that tool's own.";
    const KIND: ToolKind = ToolKind::Other;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &UseToolInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Use {}", input.name))
    }

    async fn run(&self, input: UseToolInput, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::error(format!("`{}` names no tool offered on demand; find one with tool_search", input.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolCallId;
    use serde_json::json;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec { name: name.into(), description: description.into(), input_schema: json!({"type": "object"}) }
    }

    #[test]
    fn a_search_ranks_names_over_descriptions_and_selects_exact_names() {
        let search = ToolSearch {
            on_demand: vec![
                spec("browser_click", "Click an element of the page"),
                spec("browser_navigate", "Open a URL in the browser"),
                spec("mcp__github__create_issue", "Create an issue on GitHub"),
            ],
        };
        let names = |found: Vec<&ToolSpec>| found.iter().map(|spec| spec.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(search.matches("click", 5)), ["browser_click"]);
        assert_eq!(names(search.matches("browser", 5)), ["browser_click", "browser_navigate"]);
        assert_eq!(names(search.matches("github issue", 5)), ["mcp__github__create_issue"]);
        assert_eq!(names(search.matches("select:browser_navigate, nothing", 5)), ["browser_navigate"]);
        assert!(search.matches("kubernetes", 5).is_empty());
        assert_eq!(names(search.matches("browser", 1)).len(), 1);
    }

    #[test]
    fn a_use_tool_call_stands_for_the_tool_it_names() {
        let call = |input: Value| ToolCall { id: ToolCallId("c1".into()), name: UseTool::NAME.into(), input };
        let target =
            UseTool::target(&call(json!({"name": "browser_navigate", "input": {"url": "http://a.localhost"}})));
        let target = target.expect("a target");
        assert_eq!((target.id.0.as_str(), target.name.as_str()), ("c1", "browser_navigate"));
        assert_eq!(target.input, json!({"url": "http://a.localhost"}));
        assert!(UseTool::target(&call(json!({"input": {}}))).is_none(), "no name: use_tool's own input error");
        let other = ToolCall { id: ToolCallId("c2".into()), name: "read".into(), input: json!({}) };
        assert!(UseTool::target(&other).is_none());
    }
}
