//! The `larik` binary: `larik acp` (Agent Client Protocol over stdio), `larik -p "..."` (one
//! headless turn), `larik demo` (a recorded session, offline). The runtime and logging are set up
//! here only; stdout belongs to the protocol or the headless answer, logs go to stderr or a file.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use larik::headless::OutputFormat;

/// `larik --version`: the release and the commit it was built from.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("LARIK_COMMIT"), ")");

#[derive(Parser)]
#[command(name = "larik", version = VERSION, about = "A coding agent that lives in your editor")]
struct Cli {
    /// Run one turn headless in the current directory and print the answer.
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    prompt: Option<String>,
    /// Output of a headless run.
    #[arg(long, value_enum, default_value = "text")]
    output_format: OutputFormat,
    /// Write logs to this file instead of stderr.
    #[arg(long, global = true)]
    log_file: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Speak the Agent Client Protocol (v1) on stdin/stdout, for editors.
    Acp,
    /// Speak the Language Server Protocol on stdin/stdout, for editors whose extensions are
    /// language servers (Helix).
    Lsp,
    /// The MCP servers of the project in the current directory.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Claude Code plugins: list them, install one (nothing of it runs until enabled), enable or
    /// disable one.
    Plugin {
        #[command(subcommand)]
        action: PluginAction,
    },
    /// The shell sandbox on this machine.
    Sandbox {
        #[command(subcommand)]
        action: SandboxAction,
    },
    /// Check this machine and the project in the current directory: model and key, provider
    /// reachable, sandbox, language servers, MCP servers, Chromium. Exits 1 on a blocking problem.
    Doctor {
        /// One JSON object instead of lines, for editor plugins.
        #[arg(long)]
        json: bool,
    },
    /// Read or change your own settings (~/.config/larik/settings.json).
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Replay a recorded session against a scratch copy of a sample project.
    Demo {
        /// Print the transcript without pauses between streamed pieces.
        #[arg(long)]
        fast: bool,
    },
}

#[derive(Subcommand)]
enum McpAction {
    /// Every server and where it is (connected with its tool count, failed and why, waiting for approval).
    List,
    /// One server.
    Get { name: String },
    /// Log in to an HTTP or SSE server that asks for OAuth: opens its authorization page
    /// (`$BROWSER`, else `xdg-open`; the address is printed too) and keeps the login.
    Login { name: String },
}

#[derive(Subcommand)]
enum PluginAction {
    /// Every installed plugin (Claude Code's and Larik's), its version, and whether it is enabled.
    List,
    /// Install from a directory or git URL holding a plugin or a marketplace
    /// (.claude-plugin/marketplace.json; PLUGIN picks one of its plugins), or PLUGIN@MARKETPLACE.
    Install { source: String, plugin: Option<String> },
    /// Turn an installed plugin on in your settings (its hooks and MCP servers run from then on).
    Enable { id: String },
    /// Turn a plugin off in your settings.
    Disable { id: String },
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Print one setting (or, without a key, every setting `larik config` knows and its value).
    Get { key: Option<String> },
    /// Set one setting in your own settings file, written atomically.
    Set { key: String, value: String },
    /// Remove one setting from your own settings file.
    Unset { key: String },
}

#[derive(Subcommand)]
enum SandboxAction {
    /// Print what the sandbox enforces for the project in the current directory: writable
    /// roots, read-only protected paths, network, Landlock ABI, namespaces.
    Check,
}

fn main() -> anyhow::Result<()> {
    // The sandbox helper restricts itself and becomes the command; it must run before anything
    // else starts a thread.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(larik_core::sandbox::HELPER_COMMAND) {
        std::process::exit(larik_core::sandbox::run_helper(&args[2..]));
    }
    let cli = Cli::parse();
    let mut env: std::collections::HashMap<String, String> = std::env::vars().collect();
    // The user's `env` settings apply to the whole process, so every command, hook and server
    // it starts sees them, as in Claude Code.
    for (key, value) in larik_core::config::user_env(&env) {
        // SAFETY: no other thread runs yet: logging and the runtime start below.
        unsafe { std::env::set_var(&key, &value) };
        env.insert(key, value);
    }
    init_logging(cli.log_file.as_deref())?;
    let runtime = match cli.command {
        Some(Command::Acp) => tokio::runtime::Builder::new_current_thread().enable_all().build()?,
        _ => tokio::runtime::Builder::new_multi_thread().enable_all().build()?,
    };
    let code = runtime.block_on(async move {
        match (cli.command, cli.prompt) {
            (Some(Command::Acp), _) => larik::acp::serve_stdio(env).await.map(|()| 0),
            (Some(Command::Lsp), _) => larik::lsp::serve_stdio(env).await.map(|()| 0),
            (Some(Command::Demo { fast }), _) => larik::demo::run(fast).await.map(|()| 0),
            (Some(Command::Doctor { json }), _) => larik::doctor::run(json, &env).await,
            (Some(Command::Config { action }), _) => larik::config_cli::run(action.into(), &env),
            (Some(Command::Plugin { action }), _) => larik::plugin_cli::run(action.into(), &env),
            (Some(Command::Sandbox { action: SandboxAction::Check }), _) => larik::sandbox_check::run(&env),
            (Some(Command::Mcp { action: McpAction::List }), _) => larik::mcp_cli::run(None, &env).await,
            (Some(Command::Mcp { action: McpAction::Get { name } }), _) => larik::mcp_cli::run(Some(&name), &env).await,
            (Some(Command::Mcp { action: McpAction::Login { name } }), _) => larik::mcp_cli::login(&name, &env).await,
            (None, Some(prompt)) => larik::headless::run(&prompt, cli.output_format, env).await,
            (None, None) => Err(anyhow::anyhow!(
                "nothing to do: run `larik acp` from an editor, `larik -p \"prompt\"`, or `larik demo`"
            )),
        }
    })?;
    // Tasks still blocked on stdin would keep the runtime alive; nothing of ours is left running.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    std::process::exit(code);
}

impl From<PluginAction> for larik_core::plugin_install::PluginAction {
    fn from(action: PluginAction) -> Self {
        match action {
            PluginAction::List => Self::List,
            PluginAction::Install { source, plugin } => Self::Install { source, plugin },
            PluginAction::Enable { id } => Self::Enable(id),
            PluginAction::Disable { id } => Self::Disable(id),
        }
    }
}

impl From<ConfigAction> for larik::config_cli::Action {
    fn from(action: ConfigAction) -> Self {
        match action {
            ConfigAction::Get { key } => Self::Get(key),
            ConfigAction::Set { key, value } => Self::Set(key, value),
            ConfigAction::Unset { key } => Self::Unset(key),
        }
    }
}

fn init_logging(log_file: Option<&std::path::Path>) -> anyhow::Result<()> {
    // The DevTools crate warns of every event of a newer Chromium it cannot parse and logs a
    // browser the user closed as an error; both are expected and handled (`larik::browser` logs
    // what they mean), so the crate is quiet unless LARIK_LOG asks for it.
    let filter = tracing_subscriber::EnvFilter::try_from_env("LARIK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,chromiumoxide=off"));
    // A log line that cannot be written (stderr gone with a dropped SSH connection) is lost;
    // reporting that on stderr too would panic the agent while it shuts down.
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false).log_internal_errors(false);
    match log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
            builder.with_writer(std::sync::Mutex::new(file)).init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}
