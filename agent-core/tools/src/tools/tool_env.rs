//! What a tool call may reach: the files, the sandbox, the shells it started, the editor's
//! services, the language servers and the token saver. Nothing else: a tool cannot see the
//! permissions, the hooks, the session file or the model, so no tool can decide its own
//! approval or write the conversation. Of the permissions, bash's proxy reads only what the rules
//! say of a domain and saves only the user's answer about one ([`DomainRules`]), and a code
//! action only whether a rule denies editing a file it changes ([`EditRules`]). A mechanism's tool that needs more of its mechanism
//! (the `task` tool its runner, the `skill` tool the skills) holds it itself.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::EditorServices;
use super::apply_code_action::EditRules;
use super::background::BackgroundShells;
use super::network_prompt::DomainRules;
use crate::lsp::LanguageServers;
use crate::sandbox::Sandbox;
use crate::sandbox::network::proxy::NetworkLog;
use crate::token_saver::TokenSaver;
use crate::workspace::Workspace;

pub struct ToolEnv {
    /// The session's id, as hooks and transcripts name it (a child's starts with its parent's).
    pub session_id: String,
    pub workspace: Arc<Workspace>,
    pub sandbox: Option<Arc<Sandbox>>,
    /// The background shells the session's calls started.
    pub shells: Arc<BackgroundShells>,
    /// What the front end offers beyond files: questions to the user, terminals.
    pub services: EditorServices,
    /// The user's data directory for Larik (subagents' worktrees go there).
    pub data_dir: Option<PathBuf>,
    /// The language servers, shared with children.
    pub lsp: Arc<LanguageServers>,
    /// The token saver, when the user turned it on; a child shares its parent's (and so its
    /// sidecar, where `raw_output` finds any of the session's calls).
    pub token_saver: Option<Arc<TokenSaver>>,
    /// The permission rules' word on domains, for the sandbox's proxy; shared with children.
    pub domain_rules: Option<Arc<dyn DomainRules>>,
    /// The permission rules' word on editing a file, for the files a code action changes;
    /// shared with children.
    pub edit_rules: Option<Arc<dyn EditRules>>,
    /// Every domain the session's sandboxed commands asked for, children's included.
    pub network_log: Arc<Mutex<NetworkLog>>,
}

impl ToolEnv {
    /// An environment of its own around `workspace`: no sandbox, no front end, no language
    /// server. For running tools directly (tests, benchmarks).
    pub fn standalone(workspace: Arc<Workspace>) -> Self {
        Self {
            session_id: "standalone".into(),
            workspace,
            sandbox: None,
            shells: Arc::new(BackgroundShells::new(CancellationToken::new())),
            services: EditorServices::default(),
            data_dir: None,
            lsp: Arc::new(LanguageServers::none()),
            token_saver: None,
            domain_rules: None,
            edit_rules: None,
            network_log: Arc::default(),
        }
    }

    /// A child's environment: its own id and working directory, the sandbox for it (`sandbox`,
    /// else the parent's made for the child's directory), its own background shells under
    /// `cancel`; the services, language servers and token saver shared.
    pub fn child(
        &self,
        session_id: String,
        workspace: Arc<Workspace>,
        sandbox: Option<Arc<Sandbox>>,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            session_id,
            sandbox: sandbox
                .or_else(|| self.sandbox.as_ref().map(|sandbox| Arc::new(sandbox.for_root(workspace.root())))),
            workspace,
            shells: Arc::new(BackgroundShells::new(cancel)),
            services: self.services.clone(),
            data_dir: self.data_dir.clone(),
            lsp: Arc::clone(&self.lsp),
            token_saver: self.token_saver.clone(),
            domain_rules: self.domain_rules.clone(),
            edit_rules: self.edit_rules.clone(),
            network_log: Arc::clone(&self.network_log),
        }
    }
}
