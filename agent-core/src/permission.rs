//! Every permission decision goes through [`Permissions::decide`], and it fails closed. The
//! precedence is hook deny > rule deny > hook allow / ask > mode and allow rules > ask the user,
//! in these steps:
//!
//! 1. a write outside the project, through a symlink, or to a protected file: deny, in every mode;
//! 2. a deny rule matches (for bash: any command of the line), or a URL's host is in
//!    `sandbox.network.deniedDomains`: deny, in every mode;
//! 3. yolo mode: allow;
//! 4. plan mode and a tool that changes things: deny, except web fetch and search, which ask
//!    (research is part of planning);
//!    then an ask rule that matches: ask, for every tool (read-only ones too, as in Claude Code);
//! 5. a read-only tool: allow;
//! 6. an allow rule matches (for bash: every command of the line, with no command substitution
//!    and no redirection into a file): allow;
//! 7. bash with the sandbox on, the call not opting out: allow (the sandbox contains it);
//! 8. bash on the safe list (`ls`, exact `git status`, ...) as one plain command: allow;
//! 9. write or edit in accept-edits mode, inside the project: allow;
//! 10. otherwise: ask.
//!
//! Hooks plug in through [`HookVerdict`]: their deny comes first, their allow or ask right after
//! the deny rules.

mod domains;
pub mod rules;

mod store;

pub use larik_settings::Mode;
pub use store::{NotSaved, approve_project, approved_project};

use std::path::PathBuf;
use std::sync::Mutex;

use rules::{Rule, RuleSet, Subject};

use crate::shell;
use crate::tools::apply_code_action::{ApplyCodeAction, EditRules};
use crate::tools::{Bash, CallDescription, CallSubject, DynTool, Read, ToolNames};
use crate::workspace::Workspace;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny { reason: String },
    Ask { reason: String },
}

/// What a pre-tool hook said about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookVerdict {
    Allow,
    Ask,
    Deny { reason: String },
}

/// Commands that run without asking when they are the whole line.
const SAFE_PREFIXES: &[&str] =
    &["ls", "pwd", "whoami", "date", "echo", "cat", "head", "tail", "wc", "which", "file", "stat", "tree", "du", "df"];
const SAFE_EXACT: &[&str] = &["git status", "git diff", "git log", "git branch", "git diff --staged", "git show"];
/// Tools whose first argument is a subcommand worth keeping in an "always allow" rule.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "go", "docker", "kubectl", "pip", "uv", "poetry", "gh", "bun", "deno",
    "rustup",
];

/// The session's permission state: mode, rules, whether bash runs sandboxed, and where "always
/// allow" rules are saved.
pub struct Permissions {
    mode: Mutex<Mode>,
    rules: Mutex<RuleSet>,
    /// Whether the user approved the project's settings, so its own allow rules count.
    project_trusted: std::sync::atomic::AtomicBool,
    /// Whether a command the sandbox contains may run without asking: asked when such a command
    /// is decided (the sandbox's probe answers then, not when the session opens).
    sandboxed_bash: Box<dyn Fn() -> bool + Send + Sync>,
    /// Why commands are refused: the settings require the sandbox (`sandbox.failIfUnavailable`)
    /// and it cannot hold. Asked when a command is decided, as `sandboxed_bash` is.
    sandbox_required: Option<Box<dyn Fn() -> Option<String> + Send + Sync>>,
    store: Option<PathBuf>,
    policy: Policy,
    /// `sandbox.network.deniedDomains`: refused to `web_fetch` and the browser as to commands.
    denied_domains: Vec<crate::sandbox::network::DomainPattern>,
}

/// What the organisation's managed policy (and, for yolo, any settings file) imposes on every
/// decision.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Why every call asks, in every mode: the policy holds a restriction Larik cannot enforce.
    pub fails_closed: Option<String>,
    /// No session runs in yolo (`disableBypassPermissionsMode`, from any file).
    pub bypass_disabled: bool,
    /// Only the policy's own allow rules count (`allowManagedPermissionRulesOnly`): "always
    /// allow" adds none.
    pub rules_only: bool,
}

/// A mode the settings do not let a session run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the {} mode is disabled by settings (permissions.disableBypassPermissionsMode)", .0.id())]
pub struct ModeRefused(pub Mode);

impl Default for Permissions {
    fn default() -> Self {
        Self::new(RuleSet::default(), || false, None)
    }
}

impl Permissions {
    pub fn new(
        rules: RuleSet,
        sandboxed_bash: impl Fn() -> bool + Send + Sync + 'static,
        store: Option<PathBuf>,
    ) -> Self {
        Self {
            mode: Mutex::new(Mode::Default),
            rules: Mutex::new(rules),
            project_trusted: std::sync::atomic::AtomicBool::new(false),
            sandboxed_bash: Box::new(sandboxed_bash),
            sandbox_required: None,
            store,
            policy: Policy::default(),
            denied_domains: Vec::new(),
        }
    }

    /// The same permissions refusing every command while `missing` says why the sandbox the
    /// settings require cannot hold.
    pub fn requiring_sandbox(mut self, missing: impl Fn() -> Option<String> + Send + Sync + 'static) -> Self {
        self.sandbox_required = Some(Box::new(missing));
        self
    }

    /// The same permissions under the organisation's managed policy.
    pub fn under(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The modes a session may run in.
    pub fn modes(&self) -> Vec<Mode> {
        Mode::ALL.into_iter().filter(|mode| !(self.policy.bypass_disabled && *mode == Mode::Yolo)).collect()
    }

    pub fn mode(&self) -> Mode {
        self.mode.lock().map(|mode| *mode).unwrap_or_default()
    }

    pub fn set_mode(&self, mode: Mode) -> Result<(), ModeRefused> {
        if !self.modes().contains(&mode) {
            return Err(ModeRefused(mode));
        }
        if let Ok(mut current) = self.mode.lock() {
            *current = mode;
        }
        Ok(())
    }

    /// The project's own allow rules count from now on (the user approved its settings).
    pub fn trust_project_rules(&self) {
        self.project_trusted.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The allow rules the project's settings bring, as written, for the user to approve.
    pub fn project_allow_rules(&self) -> Vec<String> {
        self.rules
            .lock()
            .map(|rules| rules.project_allow.iter().map(|rule| rule.text.clone()).collect())
            .unwrap_or_default()
    }

    /// Adds an allow rule for the rest of the session and saves it to the project's private
    /// settings. If saving fails the rule still holds for this session; the error says why.
    /// Under a managed policy that allows only its own rules, nothing is added.
    pub fn allow_always(&self, rule: &str) -> Result<(), NotSaved> {
        let parsed = Rule::parse(rule).ok_or_else(|| NotSaved::NotARule(rule.to_owned()))?;
        if self.policy.rules_only {
            return Err(NotSaved::ManagedRulesOnly);
        }
        if let Ok(mut rules) = self.rules.lock()
            && !rules.allow.contains(&parsed)
        {
            rules.allow.push(parsed);
        }
        match &self.store {
            Some(path) => store::add_allow_rule(path, rule),
            None => Err(NotSaved::NowhereToSave),
        }
    }

    /// Why a read of `path` is denied by a rule, if it is (for @-mentioned files too).
    pub fn read_denied(&self, path: &std::path::Path, root: &std::path::Path) -> Option<String> {
        self.path_denied(ToolNames::of::<Read>(), path, root)
    }

    /// Why a deny rule for the tools `names` covers `path`, if one does; rules that cannot be
    /// read deny.
    fn path_denied(&self, names: ToolNames<'_>, path: &std::path::Path, root: &std::path::Path) -> Option<String> {
        let Ok(rules) = self.rules.lock() else { return Some("the permission rules could not be read".into()) };
        rules
            .deny
            .iter()
            .find(|rule| rule.matches(names, Subject::Path { path, root }))
            .map(|rule| format!("denied by the rule `{}`", rule.text))
    }

    /// What is refused before anything else, in every mode: a write outside the project or to a
    /// protected file (step 1), a hook's deny, a command where the sandbox the settings require
    /// cannot hold.
    fn refused_first(
        &self,
        call: &CallDescription,
        workspace: &Workspace,
        hook: Option<&HookVerdict>,
    ) -> Option<String> {
        if let CallSubject::Write(target) = &call.subject
            && let Err(error) = workspace.writable(target)
        {
            return Some(error.to_string());
        }
        if let Some(HookVerdict::Deny { reason }) = hook {
            return Some(format!("blocked by a hook: {reason}"));
        }
        match &call.subject {
            CallSubject::Command { .. } => self.sandbox_required.as_ref().and_then(|required| required()),
            _ => None,
        }
    }

    pub fn decide(
        &self,
        tool: &dyn DynTool,
        call: &CallDescription,
        workspace: &Workspace,
        hook: Option<&HookVerdict>,
    ) -> Decision {
        let names = tool.names();
        let name = names.name;
        if let Some(reason) = self.refused_first(call, workspace, hook) {
            return Decision::Deny { reason };
        }
        let Ok(rules) = self.rules.lock() else {
            return Decision::Deny { reason: "permission state is unavailable".into() };
        };
        let subjects = Subjects::of(call, workspace);
        // 2. Deny rules, in every mode.
        if let Some(rule) = rules.deny.iter().find(|rule| subjects.any(|subject| rule.matches(names, subject))) {
            return Decision::Deny { reason: format!("denied by the rule `{}`", rule.text) };
        }
        if let Some(pattern) = subjects.domain.as_deref().and_then(|host| self.denied_domain(host)) {
            return Decision::Deny { reason: format!("`{pattern}` is in sandbox.network.deniedDomains") };
        }
        // A policy Larik cannot enforce: nothing runs without the user's say, whatever allows it.
        if let Some(reason) = &self.policy.fails_closed {
            return Decision::Ask { reason: reason.clone() };
        }
        match hook {
            Some(HookVerdict::Allow) => return Decision::Allow,
            Some(HookVerdict::Ask) => return Decision::Ask { reason: "a hook asked for your approval".into() },
            _ => {}
        }
        let mode = self.mode();
        // 3. Yolo.
        if mode == Mode::Yolo {
            return Decision::Allow;
        }
        // 4. Plan mode changes nothing.
        if mode == Mode::Plan && !tool.read_only() {
            return if call.subject.reaches_network() {
                Decision::Ask { reason: format!("{name} needs your approval (plan mode)") }
            } else {
                Decision::Deny {
                    reason: format!("plan mode is on: {name} changes things, so it cannot run until plan mode ends"),
                }
            };
        }
        // Ask rules force a prompt for every tool, read-only ones included, as in Claude Code.
        if let Some(rule) = rules.ask.iter().find(|rule| subjects.any(|subject| rule.matches(names, subject))) {
            return Decision::Ask { reason: format!("the rule `{}` asks for approval", rule.text) };
        }
        // 5. Read-only tools.
        if tool.read_only() {
            return Decision::Allow;
        }
        // 6. Allow rules: for bash, every command of the line must be covered. The project's
        // own count only once the user approved its settings.
        let trusted =
            self.project_trusted.load(std::sync::atomic::Ordering::Relaxed) && !rules.project_allow.is_empty();
        let allowed = if trusted {
            subjects.all_allowed(names, &[rules.allow.as_slice(), rules.project_allow.as_slice()].concat())
        } else {
            subjects.all_allowed(names, &rules.allow)
        };
        if allowed {
            return Decision::Allow;
        }
        if let CallSubject::Command { sandboxed, .. } = &call.subject {
            // 7. The sandbox contains what the command does.
            if *sandboxed && (self.sandboxed_bash)() {
                return Decision::Allow;
            }
            // 8. Harmless commands on their own.
            if let Some(line) = &subjects.command_line
                && line.is_single_plain_command()
                && is_safe(&line.commands[0])
            {
                return Decision::Allow;
            }
        }
        // 9. Edits inside the project in accept-edits mode (step 1 already checked the path).
        if mode == Mode::AcceptEdits && matches!(call.subject, CallSubject::Write(_)) {
            return Decision::Allow;
        }
        let reason = match &subjects.command_line {
            Some(line) if line.has_substitution => {
                "the command uses command substitution, which rules cannot vouch for".to_owned()
            }
            Some(line) if line.writes_file => "the command redirects output into a file".to_owned(),
            _ => format!("{name} needs your approval"),
        };
        Decision::Ask { reason }
    }
}

fn is_safe(command: &str) -> bool {
    SAFE_EXACT.contains(&command)
        || SAFE_PREFIXES.iter().any(|safe| command == *safe || command.starts_with(&format!("{safe} ")))
}

/// Whether allow rules alone let this bash line run: every command it runs covered, nothing
/// rules cannot vouch for. The same judgment [`Permissions::decide`] makes at its step 6.
pub(crate) fn bash_line_allowed(allow: &[String], line: &str) -> bool {
    let rules = RuleSet::from_lists(allow, &[], &[]);
    let subjects = Subjects {
        paths: Vec::new(),
        command_line: Some(shell::parse(line)),
        raw_command: Some(line.trim().to_owned()),
        domain: None,
    };
    subjects.all_allowed(ToolNames::of::<Bash>(), &rules.allow)
}

/// The subjects a call offers to rules, computed once per decision.
struct Subjects {
    paths: Vec<(PathBuf, PathBuf)>,
    command_line: Option<shell::CommandLine>,
    raw_command: Option<String>,
    domain: Option<String>,
}

impl Subjects {
    fn of(call: &CallDescription, workspace: &Workspace) -> Self {
        let root = workspace.root().to_path_buf();
        let mut subjects = Subjects { paths: Vec::new(), command_line: None, raw_command: None, domain: None };
        match &call.subject {
            CallSubject::Write(path) | CallSubject::Read(path) => subjects.paths.push((workspace.absolute(path), root)),
            CallSubject::Command { line, .. } => {
                subjects.command_line = Some(shell::parse(line));
                subjects.raw_command = Some(line.trim().to_owned());
            }
            CallSubject::Url(url) => {
                subjects.domain = reqwest::Url::parse(url).ok().and_then(|url| url.host_str().map(str::to_owned))
            }
            CallSubject::None | CallSubject::Search(_) => {}
        }
        subjects
    }

    fn each(&self) -> Vec<Subject<'_>> {
        let mut out: Vec<Subject<'_>> = self.paths.iter().map(|(path, root)| Subject::Path { path, root }).collect();
        if let Some(line) = &self.command_line {
            out.extend(line.commands.iter().map(|command| Subject::Command(command)));
            // An unparsable line is still judged as written, so a deny rule cannot be dodged.
            if line.unparsable
                && let Some(raw) = &self.raw_command
            {
                out.push(Subject::Command(raw));
            }
        }
        if let Some(domain) = &self.domain {
            out.push(Subject::Domain(domain));
        }
        if out.is_empty() {
            out.push(Subject::Nothing);
        }
        out
    }

    fn any(&self, mut predicate: impl FnMut(Subject<'_>) -> bool) -> bool {
        self.each().into_iter().any(&mut predicate)
    }

    /// Every subject is covered by an allow rule. Lines with substitutions, file redirections or
    /// parse errors are covered only by the bare tool rule.
    fn all_allowed(&self, tool: ToolNames<'_>, allow: &[Rule]) -> bool {
        if allow.iter().any(|rule| rule.names_tool(tool) && rule.pattern.is_none()) {
            return true;
        }
        if let Some(line) = &self.command_line
            && (line.has_substitution || line.writes_file || line.unparsable || line.commands.is_empty())
        {
            return false;
        }
        self.each().into_iter().all(|subject| allow.iter().any(|rule| rule.matches(tool, subject)))
    }
}

/// The rule "always allow" proposes for a call: `bash(git commit*)` for tools with subcommands,
/// `bash(make*)` otherwise, the domain for a URL (web_fetch, browser_navigate), the bare tool
/// name for the rest.
impl EditRules for Permissions {
    fn edit_denied(&self, path: &std::path::Path, root: &std::path::Path) -> Option<String> {
        self.path_denied(ToolNames::of::<ApplyCodeAction>(), path, root)
    }
}

pub fn suggested_rule(tool: &dyn DynTool, call: &CallDescription) -> String {
    match &call.subject {
        CallSubject::Command { line, .. } => {
            let parsed = shell::parse(line);
            let Some(first) = parsed.commands.first() else { return tool.name().to_owned() };
            let words: Vec<&str> = first.split_whitespace().collect();
            match words.as_slice() {
                [program, sub, ..] if SUBCOMMAND_TOOLS.contains(program) && !sub.starts_with('-') => {
                    format!("{}({program} {sub}*)", tool.name())
                }
                // `python3 -m unittest`, `python -m pytest`: the module is what is being allowed.
                [program, "-m", module, ..] if program.starts_with("python") => {
                    format!("{}({program} -m {module}*)", tool.name())
                }
                [program, ..] => format!("{}({program}*)", tool.name()),
                [] => tool.name().to_owned(),
            }
        }
        CallSubject::Url(url) => {
            match reqwest::Url::parse(url).ok().and_then(|url| url.host_str().map(str::to_owned)) {
                Some(host) => format!("{}(domain:{host})", tool.name()),
                None => tool.name().to_owned(),
            }
        }
        _ => tool.name().to_owned(),
    }
}

#[cfg(test)]
mod tests;
