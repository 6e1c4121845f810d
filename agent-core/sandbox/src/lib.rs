//! The OS sandbox for shell commands that run without asking. A sandboxed command may read
//! everywhere but what settings hide (`sandbox.filesystem.denyRead`), and it writes only inside
//! the project roots, the temp directory and a few device files; inside the project, the paths
//! that decide what code runs later outside the sandbox (`.git/hooks`, `.git/config`, `.larik/`,
//! `.claude/`, `.vscode/`, `.mcp.json`, ...) stay read-only whether they exist or not; and unless
//! settings open the network, it reaches the network only through Larik's proxy, by domain
//! ([`network`]). A refused write or connection fails inside the command with an ordinary error,
//! and the tool result says which protected path or which domain was refused and why.
//!
//! How (see ARCHITECTURE.md for the choice): what confining a command means is a [`plan::Plan`],
//! and a [`backend`] for the platform carries it out. On Linux the `larik` binary re-executes
//! itself as a small helper (`larik __sandbox ... -- bash -c LINE`, `linux`) that enters
//! namespaces, mounts the protected paths read-only, applies Landlock and a seccomp socket
//! filter, and executes the command; absent protected paths get [`stand_in`]s the mounts can
//! cover. On macOS the command runs under `sandbox-exec` with a Seatbelt profile made from the
//! plan ([`seatbelt`]). Elsewhere there is no backend. Before the agent trusts any of it,
//! [`probe`] runs the helper once and checks from inside that each promise holds; where one
//! does not, or there is no backend, bash asks instead.

mod backend;
mod exemptions;
mod handover;
#[cfg(all(target_os = "linux", feature = "linux"))]
mod linux;
pub mod network;
pub mod plan;
pub mod probe;
mod protected;
mod relay;
pub mod seatbelt;
#[cfg(all(target_os = "linux", feature = "linux"))]
mod splice;
mod stand_in;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use backend::Backend;
pub use exemptions::Exemptions;
use network::proxy::NetworkProxy;
pub use network::{DomainPolicy, NetworkAccess};
pub use plan::HELPER_COMMAND;
pub use probe::Support;
pub use protected::{ProtectedPath, WhenAbsent};
use stand_in::StandIns;

/// Why commands cannot run confined: settings turned the sandbox off, or this machine lacks
/// what it needs. Every command then asks first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unconfined {
    pub reason: String,
}

/// How commands are confined in one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    helper: PathBuf,
    root: PathBuf,
    writable: Vec<PathBuf>,
    /// Project-relative `protectedPaths` from settings.
    extra_protected: Vec<PathBuf>,
    network: NetworkAccess,
    /// For a worktree: the repository's shared git directory, writable (commits work) but for
    /// what chooses the programs git runs.
    shared_git: Option<PathBuf>,
    /// Directories outside the project the user opened to the agent: writable, with the same
    /// paths kept read-only in each as in the project.
    extra_roots: Vec<PathBuf>,
    /// The command lines that run outside it.
    exemptions: Exemptions,
    /// Outside the project, kept read-only (`sandbox.filesystem.denyWrite`; inside it such paths
    /// are protected paths), and hidden (`denyRead`).
    denied_writes: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
    /// Inside hidden paths, readable all the same (`allowRead`).
    readable: Vec<PathBuf>,
}

/// A shell command ready to start: the program and arguments that run it (confined, when it
/// came from [`Sandbox::confine`]) and the stand-ins it relies on. It must be kept until the
/// command, every process of it, has ended; then [`PreparedCommand::finish`] (or dropping it)
/// releases the stand-ins and removes what the command created where nothing could stand in.
#[derive(Debug)]
pub struct PreparedCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    _stand_ins: StandIns,
    /// Protected paths that were absent with nothing to stand in for them.
    remove_after: Vec<PathBuf>,
}

impl PreparedCommand {
    /// `bash -c command` with no confinement (the call was approved as such).
    pub fn unconfined(command: &str) -> Self {
        Self {
            program: PathBuf::from("bash"),
            args: vec!["-c".into(), command.into()],
            _stand_ins: StandIns::default(),
            remove_after: Vec::new(),
        }
    }

    /// Call once the command has ended: removes the protected paths it created where no
    /// stand-in could be, and says which.
    pub fn finish(mut self) -> Option<String> {
        let removed = self.remove_created();
        (!removed.is_empty()).then(|| format!("[sandbox] The command created {}, which the sandbox keeps absent (git reads it to decide which programs to run); it was removed.", removed.join(", ")))
    }

    fn remove_created(&mut self) -> Vec<String> {
        let mut removed = Vec::new();
        for path in std::mem::take(&mut self.remove_after) {
            let Ok(meta) = path.symlink_metadata() else { continue };
            let result = if meta.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
            match result {
                Ok(()) => removed.push(format!("`{}`", path.display())),
                Err(error) => {
                    tracing::warn!(path = %path.display(), %error, "could not remove a protected path a command created")
                }
            }
        }
        removed
    }
}

impl Drop for PreparedCommand {
    fn drop(&mut self) {
        self.remove_created();
    }
}

impl Sandbox {
    /// `helper` is the `larik` binary; `root` the project; `writable` extra paths commands may
    /// write (caches); `protected` the settings' `protectedPaths`; `network` opens the network
    /// fully, else commands get the proxy with no domain listed ([`Sandbox::with_domains`]).
    pub fn new(helper: PathBuf, root: PathBuf, writable: Vec<PathBuf>, protected: &[String], network: bool) -> Self {
        // Mounts and Landlock rules name real paths, so a symlinked root is resolved first.
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let mut all = vec![root.clone()];
        all.extend(writable);
        all.push(std::env::temp_dir());
        all.push(PathBuf::from("/tmp"));
        all.sort();
        all.dedup();
        let extra_protected = protected.iter().map(|path| PathBuf::from(path.trim_start_matches("./"))).collect();
        Self {
            helper,
            root,
            writable: all,
            extra_protected,
            network: if network { NetworkAccess::Full } else { NetworkAccess::Proxied(DomainPolicy::default()) },
            shared_git: None,
            extra_roots: Vec::new(),
            exemptions: Exemptions::default(),
            denied_writes: Vec::new(),
            hidden: Vec::new(),
            readable: Vec::new(),
        }
    }

    /// The same confinement keeping `read_only` unwritable and `hidden` unreadable but for the
    /// `readable` paths inside them (absolute paths; those that do not exist when a command
    /// starts are passed over).
    pub fn with_denied(mut self, read_only: Vec<PathBuf>, hidden: Vec<PathBuf>, readable: Vec<PathBuf>) -> Sandbox {
        self.denied_writes = read_only;
        self.hidden = hidden;
        self.readable = readable;
        self
    }

    /// The same confinement with the proxy deciding by `policy` (unless the network is open).
    pub fn with_domains(mut self, policy: DomainPolicy) -> Sandbox {
        if let NetworkAccess::Proxied(_) = self.network {
            self.network = NetworkAccess::Proxied(policy);
        }
        self
    }

    /// The same confinement with the settings' exemptions.
    pub fn with_exemptions(mut self, exemptions: Exemptions) -> Sandbox {
        self.exemptions = exemptions;
        self
    }

    /// Whether `line` runs confined, the call having asked for the sandbox or not (see
    /// [`Exemptions`]).
    pub fn confines(&self, line: &str, asked: bool) -> bool {
        self.exemptions.confines(line, asked)
    }

    /// The same confinement with `dirs` writable too, each as guarded as the project.
    pub fn with_extra_roots(mut self, dirs: &[PathBuf]) -> Sandbox {
        for dir in dirs {
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            if !dir.starts_with(&self.root) && !self.extra_roots.contains(&dir) {
                self.writable.push(dir.clone());
                self.extra_roots.push(dir);
            }
        }
        self.writable.sort();
        self.writable.dedup();
        self
    }

    /// The same confinement for another project root (a child agent's worktree).
    pub fn for_root(&self, root: &Path) -> Sandbox {
        let extra: Vec<PathBuf> = self
            .writable
            .iter()
            .filter(|path| **path != self.root && !self.extra_roots.contains(path))
            .cloned()
            .collect();
        let protected: Vec<String> = self.extra_protected.iter().map(|path| path.display().to_string()).collect();
        let mut sandbox = Sandbox::new(self.helper.clone(), root.to_path_buf(), extra, &protected, false)
            .with_extra_roots(&self.extra_roots)
            .with_exemptions(self.exemptions.clone())
            .with_denied(self.denied_writes.clone(), self.hidden.clone(), self.readable.clone());
        sandbox.network = self.network.clone();
        sandbox
    }

    /// The same confinement for a git worktree of the project (a subagent's): its root
    /// writable, and the repository's shared git directory too, its hooks and config read-only.
    pub fn for_worktree(&self, worktree: &Path, shared_git: &Path) -> Sandbox {
        let mut sandbox = self.for_root(worktree);
        let shared = std::fs::canonicalize(shared_git).unwrap_or_else(|_| shared_git.to_path_buf());
        sandbox.writable.push(shared.clone());
        sandbox.writable.sort();
        sandbox.writable.dedup();
        sandbox.shared_git = Some(shared);
        sandbox
    }

    /// Whether the network is fully open to sandboxed commands.
    pub fn network(&self) -> bool {
        self.network == NetworkAccess::Full
    }

    /// The domain lists the proxy decides by, unless the network is fully open.
    pub fn domains(&self) -> Option<&DomainPolicy> {
        match &self.network {
            NetworkAccess::Full => None,
            NetworkAccess::Proxied(policy) => Some(policy),
        }
    }

    /// Whether the sandbox holds on this machine, or why not: the probe's answer, found once per
    /// process (probing here if [`Sandbox::checked`] has not). Until it says so, no command
    /// counts as sandboxed.
    pub fn holds(&self) -> Result<(), Unconfined> {
        match probe::support(&self.helper).problem {
            None => Ok(()),
            Some(reason) => Err(Unconfined { reason }),
        }
    }

    /// Waits, without blocking the event loop, for the probe's answer, so that [`Sandbox::holds`]
    /// answers at once from then on.
    pub async fn checked(&self) {
        probe::support_async(&self.helper).await;
    }

    pub fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// What the sandbox keeps read-only under the project root, as things are now.
    pub fn protected(&self) -> Vec<ProtectedPath> {
        let mut paths = protected::protected_paths(&self.root, &self.extra_protected);
        for extra in &self.extra_roots {
            paths.extend(protected::protected_paths(extra, &[]));
        }
        if let Some(shared) = &self.shared_git {
            paths.extend(protected::shared_git_paths(shared, self.worktree_git().as_deref()));
        }
        paths
    }

    /// The worktree's own git directory, from its `.git` pointer (`gitdir: ...`).
    fn worktree_git(&self) -> Option<PathBuf> {
        let pointer = std::fs::read_to_string(self.root.join(".git")).ok()?;
        let dir = PathBuf::from(pointer.strip_prefix("gitdir:")?.trim());
        std::fs::canonicalize(&dir).ok()
    }

    /// The root a protected path lies under: the project, an extra root, or the shared git
    /// directory.
    fn anchor(&self, path: &Path) -> &Path {
        let extra = self.extra_roots.iter().find(|extra| path.starts_with(extra)).map(PathBuf::as_path);
        self.shared_git.as_deref().filter(|shared| path.starts_with(shared)).or(extra).unwrap_or(&self.root)
    }

    /// Removes the stand-ins an agent killed in the middle of a command left in the project,
    /// where no command of another process still relies on them (see `stand_in`).
    pub fn sweep_stand_ins(&self) {
        let protected = self.protected();
        let mut leftovers: Vec<PathBuf> = protected
            .iter()
            .flat_map(|protected| {
                protected
                    .path
                    .ancestors()
                    .take_while(|path| path.starts_with(&self.root) && *path != self.root)
                    .map(Path::to_path_buf)
                    .collect::<Vec<_>>()
            })
            .filter(|path| stand_in::is_stand_in(path))
            .collect();
        leftovers.sort();
        leftovers.dedup();
        let mut parents: Vec<&Path> = protected
            .iter()
            .filter_map(|protected| protected.path.parent())
            .filter(|parent| parent.starts_with(&self.root))
            .collect();
        parents.sort();
        parents.dedup();
        for parent in parents {
            stand_in::sweep_unfinished(parent);
        }
        // Held and let go at once: the last one out removes a stand-in no one else holds.
        match StandIns::hold(&leftovers) {
            Ok(held) => drop(held),
            Err(error) => tracing::warn!(%error, "left-over sandbox stand-ins could not be removed"),
        }
    }

    /// Prepares `bash -c command`: the backend's program and arguments for the protected paths
    /// as they are now, with stand-ins made for the absent ones where the backend needs them.
    /// With no running `proxy`, a command without the open network reaches nothing.
    pub fn confine(&self, command: &str, proxy: Option<&NetworkProxy>) -> std::io::Result<PreparedCommand> {
        let backend = current_backend();
        let mut read_only = Vec::new();
        let mut absent = Vec::new();
        let mut remove_after = Vec::new();
        for protected in self.protected() {
            if stand_in::is_stand_in(&protected.path) {
                absent.push(protected.path);
            } else if protected.path.symlink_metadata().is_ok() || !backend.needs_stand_ins() {
                read_only.push(protected.path);
            } else {
                match protected.when_absent {
                    WhenAbsent::StandIn => {
                        absent.extend(stand_in::first_missing(self.anchor(&protected.path), &protected.path))
                    }
                    WhenAbsent::RemovedAfter => remove_after.push(protected.path),
                    WhenAbsent::Nothing => {}
                }
            }
        }
        read_only.extend(self.denied_writes.iter().filter(|path| path.symlink_metadata().is_ok()).cloned());
        absent.sort();
        absent.dedup();
        let stand_ins = StandIns::hold(&absent)?;
        // A stand-in that became a real directory meanwhile is covered as it is.
        read_only.extend(absent.iter().filter(|path| !stand_ins.paths().any(|held| held == path.as_path())).cloned());
        let hidden: Vec<PathBuf> = self.hidden.iter().filter(|path| path.symlink_metadata().is_ok()).cloned().collect();
        // Whatever is mounted over keeps its parents where they are.
        let covered: Vec<PathBuf> =
            read_only.iter().chain(&hidden).cloned().chain(stand_ins.paths().map(Path::to_path_buf)).collect();
        let plan = plan::Plan {
            writable: self.writable.clone(),
            pinned: self.pinned(&covered),
            read_only,
            stand_ins: stand_ins.paths().map(Path::to_path_buf).collect(),
            hidden,
            readable: self.readable.clone(),
            network: self.network(),
            proxy: self.domains().and(proxy).map(|proxy| proxy.socket().to_path_buf()),
            proxy_port: self.domains().and(proxy).and_then(NetworkProxy::port),
            local_binding: self.domains().is_some_and(|policy| policy.local_binding),
            unix_sockets: self.domains().is_none_or(|policy| policy.unix_sockets),
            command: vec!["bash".into(), "-c".into(), command.to_owned()],
        };
        let (program, args) = backend.command(&self.helper, &plan)?;
        Ok(PreparedCommand { program, args, _stand_ins: stand_ins, remove_after })
    }

    /// The directories made mount points so no protected path's parent can be swapped: under
    /// the project, the additional directories, and the shared git directory of a worktree.
    fn pinned(&self, covered: &[PathBuf]) -> Vec<PathBuf> {
        let mut pinned = protected::pinned_ancestors(&self.root, covered);
        // Every other root a command may write holds protected paths of its own.
        for root in self.shared_git.iter().chain(&self.extra_roots) {
            pinned.extend(protected::pinned_ancestors(root, covered));
        }
        pinned.sort_by_key(|path| path.components().count());
        pinned.dedup();
        pinned
    }

    /// A note for the model when a sandboxed command seems to have hit the sandbox: which
    /// protected path it touched and why that is refused, or that the network is off.
    pub fn explain(&self, command: &str, output: &str) -> Option<String> {
        const REFUSALS: &[&str] = &[
            "Read-only file system",
            "Device or resource busy",
            "Permission denied",
            "Operation not permitted",
            "Is a directory",
            "Network is unreachable",
            "resolve",
        ];
        if !REFUSALS.iter().any(|refusal| output.contains(refusal)) {
            return None;
        }
        let mut notes = Vec::new();
        for protected in self.protected() {
            let Ok(relative) = protected.path.strip_prefix(&self.root) else { continue };
            let relative = relative.display().to_string();
            if command.contains(&relative) || output.contains(&relative) {
                notes.push(format!("`{relative}` is read-only in the sandbox: {}.", protected.why));
            }
        }
        if !self.network() && notes.is_empty() && mentions_network(command, output) {
            notes.push("Sandboxed commands reach the network only through Larik's proxy, by domain (the [network] line says what it refused; a background command is never asked about, so only listed domains work there), and open no Unix socket unless sandbox.network.allowAllUnixSockets is set.".into());
        }
        (!notes.is_empty()).then(|| {
            format!(
                "[sandbox] {} A command that must do this has to run with \"sandbox\": false, which asks the user.",
                notes.join(" ")
            )
        })
    }
}

fn mentions_network(command: &str, output: &str) -> bool {
    const NETWORK: &[&str] = &[
        "curl",
        "wget",
        "http",
        "socket",
        "connect",
        "/dev/tcp",
        "/dev/udp",
        "nc ",
        "ssh",
        "git push",
        "git fetch",
        "git clone",
        "pip install",
        "npm install",
        "cargo fetch",
    ];
    NETWORK.iter().any(|word| command.contains(word) || output.contains(word))
}

/// Why this kernel cannot confine a command as the sandbox must: the caller runs nothing
/// unconfined without asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupError {
    /// No Landlock at all, with the kernel's answer.
    NoLandlock(String),
    /// A Landlock too old to stop every write outside the project.
    OldLandlock(i32),
    /// Landlock refused the rules.
    Landlock(String),
    /// The kernel enforced only part of the rules.
    PartlyEnforced,
    /// The socket filter could not be installed.
    Seccomp(String),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoLandlock(why) => write!(formatter, "this kernel does not enforce Landlock ({why})"),
            Self::OldLandlock(abi) => write!(
                formatter,
                "Landlock ABI {abi} cannot stop every write outside the project (ABI {}, Linux 6.2, is needed)",
                MIN_LANDLOCK_ABI
            ),
            Self::Landlock(why) => write!(formatter, "sandbox setup failed: {why}"),
            Self::PartlyEnforced => {
                write!(formatter, "sandbox setup failed: the kernel enforced only part of the rules")
            }
            Self::Seccomp(why) => write!(formatter, "sandbox setup failed (seccomp): {why}"),
        }
    }
}

impl std::error::Error for SetupError {}

/// The oldest Landlock ABI that covers every write (ABI 3 added truncation).
pub const MIN_LANDLOCK_ABI: i32 = 3;

/// Whether this kernel enforces Landlock, and its ABI version; checked once per process. Only
/// the Linux backend uses it; elsewhere the answer is no.
pub fn kernel_support() -> Result<i32, SetupError> {
    static SUPPORT: OnceLock<Result<i32, SetupError>> = OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            #[cfg(all(target_os = "linux", feature = "linux"))]
            return linux::kernel_support();
            #[cfg(not(all(target_os = "linux", feature = "linux")))]
            return Err(SetupError::NoLandlock("not used by this build".into()));
        })
        .clone()
}

/// The backend this build uses.
pub(crate) fn current_backend() -> &'static dyn Backend {
    #[cfg(all(target_os = "linux", feature = "linux"))]
    return &crate::linux::Namespaces;
    #[cfg(target_os = "macos")]
    return &crate::seatbelt::Seatbelt;
    #[cfg(not(any(all(target_os = "linux", feature = "linux"), target_os = "macos")))]
    return &backend::Unsupported;
}

/// The helper's work, for `larik __sandbox ARGS`: returns the exit code to end with.
pub fn run_helper(args: &[String]) -> i32 {
    current_backend().run_helper(args)
}

/// What confines commands in this build: `larik sandbox check` and the doctor say it.
pub fn backend_name() -> &'static str {
    current_backend().name()
}
