//! Built-in tools and the one interface every tool implements.
//!
//! A tool is a spec derived from its Rust input type (never a hand-written schema), whether it is
//! read-only or concurrency-safe, a description of a call for the editor, and `run`. Tools never
//! prompt and never emit events themselves: the turn's dispatch does that for every tool alike.
//! The one exception is output a running call streams, which goes through its [`ToolProgress`].

pub mod apply_code_action;
pub mod ask_user;
pub mod background;
mod bash;
#[cfg(feature = "browser")]
pub mod browser;
mod edit;
mod glob;
mod grep;
pub mod lsp_query;
mod multi_edit;
mod names;
pub mod network_prompt;
mod offer;
mod on_demand;
mod prepared;
pub mod raw_output;
mod read;
mod registry;
mod services;
mod shell_control;
pub mod terminal;
mod todo;
mod tool_env;
pub mod truncate;
mod web_fetch;
mod web_search;
mod write;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use bash::Bash;
pub use names::{ClaudeCodeAlias, FieldRename, HookResponse, RuleFamily, ToolNames};
pub use offer::{MCP_BUDGET_BYTES, Offer, OfferPolicy};
pub use on_demand::{ToolSearch, UseTool};
pub use prepared::{PreparedCall, run_now};
pub use read::Read;
pub use registry::Registry;
pub use services::{EditorServices, LoginBrowser};
pub use todo::Todo;
pub use tool_env::ToolEnv;
pub use web_fetch::WebFetch;

use crate::event::{AgentEvent, Display, Location, ToolKind};
use crate::llm::{ResultPart, ToolSpec};
use crate::workspace::Workspace;

/// A tool call's id, as the model gave it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolCallId(pub String);

impl std::fmt::Display for ToolCallId {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// One call the model made: which tool, with what input. The same type for built-in, MCP and
/// subagent tools; the dispatch pipeline takes nothing else.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: ToolCallId,
    pub name: String,
    pub input: Value,
}

impl ToolCall {
    /// The calls a model message makes, in order.
    pub fn all_in(message: &crate::llm::Message) -> Vec<ToolCall> {
        message
            .content
            .iter()
            .filter_map(|part| match part {
                crate::llm::Part::ToolUse { id, name, input } => {
                    Some(ToolCall { id: ToolCallId(id.clone()), name: name.clone(), input: input.clone() })
                }
                _ => None,
            })
            .collect()
    }
}

/// What a tool call runs with: the tools' environment, the call's own cancellation (a child of
/// the turn's), and where it streams output while it runs.
#[derive(Clone)]
pub struct ToolContext {
    pub env: Arc<ToolEnv>,
    /// Fires when the call is cancelled (the turn was, or the session ended).
    pub cancel: CancellationToken,
    /// Where a running call streams its output, when someone is listening.
    pub progress: Option<ToolProgress>,
    /// The id the model gave the call (what the token saver stores its exact output under);
    /// empty for a call outside any turn.
    pub call_id: String,
}

/// The channel a running call streams its output through, as [`AgentEvent::ToolOutput`].
#[derive(Clone)]
pub struct ToolProgress {
    pub call_id: String,
    pub events: tokio::sync::mpsc::Sender<AgentEvent>,
}

impl ToolProgress {
    pub async fn output(&self, text: String) {
        let _ = self.events.send(AgentEvent::ToolOutput { id: self.call_id.clone(), text }).await;
    }

    /// How far the call has come, for the editor to show while it runs.
    pub async fn note(&self, text: String) {
        let _ = self.events.send(AgentEvent::ToolProgressNote { id: self.call_id.clone(), text }).await;
    }

    /// The call now runs in this editor terminal.
    pub async fn terminal(&self, terminal_id: &str) {
        let _ = self
            .events
            .send(AgentEvent::ToolTerminal { id: self.call_id.clone(), terminal_id: terminal_id.to_owned() })
            .await;
    }
}

impl ToolContext {
    /// A context of its own, outside any session: a standalone environment around `workspace`.
    /// For running a tool directly (tests, benchmarks).
    pub fn standalone(workspace: Arc<Workspace>) -> Self {
        Self {
            env: Arc::new(ToolEnv::standalone(workspace)),
            cancel: CancellationToken::new(),
            progress: None,
            call_id: String::new(),
        }
    }
}

/// What a tool returns: content for the model, an error flag, and an optional richer display.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<ResultPart>,
    pub is_error: bool,
    pub display: Option<Display>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ResultPart::Text { text: text.into() }], is_error: false, display: None }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self { content: vec![ResultPart::Text { text: text.into() }], is_error: true, display: None }
    }

    pub fn with_display(mut self, display: Display) -> Self {
        self.display = Some(display);
        self
    }

    /// The text parts joined, for front ends that show output.
    pub fn text_content(&self) -> String {
        self.content
            .iter()
            .filter_map(|part| match part {
                ResultPart::Text { text } => Some(text.as_str()),
                ResultPart::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// How the editor should show a call before it runs, and what permission rules judge it by.
#[derive(Debug, Clone, PartialEq)]
pub struct CallDescription {
    pub title: String,
    pub locations: Vec<Location>,
    pub subject: CallSubject,
}

/// What a call acts on, as permission rules see it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallSubject {
    None,
    /// A file the call would change (checked against the project bounds too).
    Write(String),
    /// A file the call reads.
    Read(String),
    /// A shell command line; `sandboxed` is false when the call opted out of the sandbox,
    /// `foreground` false when it starts the command in the background (and returns at once).
    Command {
        line: String,
        sandboxed: bool,
        foreground: bool,
    },
    /// A URL the call fetches.
    Url(String),
    /// A query the call sends to a search service.
    Search(String),
}

impl CallSubject {
    /// Whether the call reaches out of the machine (a fetch, a search).
    pub fn reaches_network(&self) -> bool {
        matches!(self, Self::Url(_) | Self::Search(_))
    }
}

/// The family of the tools that edit a file: a rule for `edit` covers each of them.
pub const EDIT_FAMILY: RuleFamily = RuleFamily { name: edit::Edit::NAME, claude_code: edit::ALIAS.name };

impl CallDescription {
    pub fn titled(title: impl Into<String>) -> Self {
        Self { title: title.into(), locations: Vec::new(), subject: CallSubject::None }
    }
}

/// A tool with a typed input. The registry stores them behind [`DynTool`].
pub trait Tool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    const KIND: ToolKind;
    /// How Claude Code knows the tool, where it has a counterpart there (see [`ToolNames`]).
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> = None;
    /// The family whose rules cover this tool too (see [`ToolNames`]).
    const RULE_FAMILY: Option<RuleFamily> = None;
    /// Whether the model is offered it in every request or finds it when it needs it.
    const OFFER: Offer = Offer::Listed;

    /// Read-only tools skip permission prompts (deny rules still apply) and may run in parallel.
    fn read_only(&self) -> bool;
    /// A call that changes nothing locally but still needs approval may run in parallel too.
    fn concurrency_safe(&self) -> bool {
        self.read_only()
    }
    /// Whether the call streams output while it runs (a command in the foreground), so an editor
    /// can give it a terminal.
    fn streams_output(&self, _input: &Self::Input) -> bool {
        false
    }
    /// A read-only tool whose whole effect is what it reports (the plan): it runs as soon as it
    /// is authorized, and front ends show its report instead of the call.
    fn report_only(&self) -> bool {
        false
    }
    fn describe(&self, input: &Self::Input, ctx: &ToolContext) -> CallDescription;
    /// What the call would change, shown in permission prompts (e.g. an edit's diff).
    fn preview(&self, _input: &Self::Input, _ctx: &ToolContext) -> impl Future<Output = Option<Display>> + Send {
        async { None }
    }
    fn run(&self, input: Self::Input, ctx: &ToolContext) -> impl Future<Output = ToolOutput> + Send;
}

/// The object-safe face of a tool, with the input still as JSON.
pub trait DynTool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// Whether the spec depends on something that changes while the session lives (settings
    /// read again): the registry then asks for it before each request, not once.
    fn live_spec(&self) -> bool {
        false
    }
    fn name(&self) -> &str;
    /// Whether the model is offered it in every request or finds it when it needs it.
    fn offer(&self) -> Offer {
        Offer::Listed
    }
    /// The names rules, hooks and agent files know it by.
    fn names(&self) -> ToolNames<'_> {
        ToolNames::from(self.name())
    }
    fn kind(&self) -> ToolKind;
    fn read_only(&self) -> bool;
    fn concurrency_safe(&self) -> bool;
    fn report_only(&self) -> bool;
    /// Parses the input once, into the call that is described, decided on and run; a malformed
    /// one is reported to the model without running anything.
    fn prepare(self: Arc<Self>, input: &Value, ctx: &ToolContext) -> Result<Box<dyn PreparedCall>, InputError>;
}

/// A tool's input schema, derived from its Rust input type once per process: every session,
/// child agent and registry change asks again, and deriving is most of what opening a session
/// would otherwise spend.
pub fn input_schema<T: JsonSchema + 'static>() -> Value {
    type Derived = std::sync::Mutex<std::collections::HashMap<std::any::TypeId, Value>>;
    static DERIVED: std::sync::OnceLock<Derived> = std::sync::OnceLock::new();
    let derived = DERIVED.get_or_init(Derived::default);
    if let Some(schema) = derived.lock().ok().and_then(|known| known.get(&std::any::TypeId::of::<T>()).cloned()) {
        return schema;
    }
    let schema = derive_input_schema::<T>();
    if let Ok(mut known) = derived.lock() {
        known.insert(std::any::TypeId::of::<T>(), schema.clone());
    }
    schema
}

fn derive_input_schema<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft07().into_generator().into_root_schema_for::<T>();
    let mut input_schema = serde_json::to_value(schema).unwrap_or_default();
    if let Some(object) = input_schema.as_object_mut() {
        // Models only need the shape; the meta keys cost prompt bytes.
        object.remove("$schema");
        object.remove("title");
    }
    input_schema
}

/// A call's input that does not fit the tool: reported to the model, and nothing runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid input for {tool}: {reason}")]
pub struct InputError {
    pub tool: String,
    pub reason: String,
}

pub fn parse_input<T: DeserializeOwned>(name: &str, input: &Value) -> Result<T, InputError> {
    if let Value::String(written) = input {
        // What the model wrote was not JSON at all (see `Part::ToolUse`).
        let start: String = written.chars().take(80).collect();
        return Err(InputError { tool: name.to_owned(), reason: format!("the input is not valid JSON: {start}") });
    }
    T::deserialize(input).map_err(|error| InputError { tool: name.to_owned(), reason: error.to_string() })
}

impl<T: Tool> DynTool for T {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_owned(),
            description: T::DESCRIPTION.trim().to_owned(),
            input_schema: input_schema::<T::Input>(),
        }
    }

    fn name(&self) -> &str {
        T::NAME
    }

    fn names(&self) -> ToolNames<'_> {
        ToolNames::of::<T>()
    }

    fn offer(&self) -> Offer {
        T::OFFER
    }

    fn kind(&self) -> ToolKind {
        T::KIND
    }

    fn read_only(&self) -> bool {
        Tool::read_only(self)
    }

    fn concurrency_safe(&self) -> bool {
        Tool::concurrency_safe(self)
    }

    fn report_only(&self) -> bool {
        Tool::read_only(self) && Tool::report_only(self)
    }

    fn prepare(self: Arc<Self>, input: &Value, ctx: &ToolContext) -> Result<Box<dyn PreparedCall>, InputError> {
        prepared::Typed::prepare(self, input, ctx)
    }
}

/// The path relative to the root when inside it, for short titles.
pub fn display_path(ctx: &ToolContext, path: &std::path::Path) -> String {
    path.strip_prefix(ctx.env.workspace.root()).unwrap_or(path).display().to_string()
}
