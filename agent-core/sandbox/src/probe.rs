//! Whether the sandbox holds on this machine, found by running it: the helper sets itself up
//! exactly as for a command (namespaces, a read-only mount, Landlock, the socket filter) around
//! a scratch directory and checks from inside that each promise holds. The agent trusts
//! "sandboxed" only after that; anything less and bash asks instead. Opening a session does not
//! wait for the answer: its first prompt does.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::helper::{self, Plan};

/// What the sandbox can enforce here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Support {
    /// The kernel's Landlock ABI version, if it has Landlock.
    pub landlock_abi: Option<i32>,
    /// Why commands cannot be sandboxed, if they cannot.
    pub problem: Option<String>,
}

impl Support {
    pub fn enforced(&self) -> bool {
        self.problem.is_none()
    }
}

/// The answer, once per process.
static SUPPORT: tokio::sync::OnceCell<Support> = tokio::sync::OnceCell::const_new();

/// Probes with `helper` (the `larik` binary), waiting for the answer. Called where no event loop
/// runs, or once [`support_async`] has answered; before that it probes on its own.
pub fn support(helper: &Path) -> Support {
    if let Some(known) = SUPPORT.get() {
        return known.clone();
    }
    let found = judge(
        std::process::Command::new(helper)
            .args([helper::HELPER_COMMAND, "--probe"])
            .stdin(std::process::Stdio::null())
            .output(),
    );
    // Another caller may have finished first; both found the same.
    let _ = SUPPORT.set(found.clone());
    found
}

/// The same probe without blocking the event loop; callers that arrive while it runs wait for
/// the same answer. A front end starts it as soon as it knows it will open sessions
/// ([`start`]); a session waits for it only before its first prompt.
pub async fn support_async(helper: &Path) -> Support {
    SUPPORT
        .get_or_init(|| async {
            judge(
                tokio::process::Command::new(helper)
                    .args([helper::HELPER_COMMAND, "--probe"])
                    .stdin(std::process::Stdio::null())
                    .output()
                    .await,
            )
        })
        .await
        .clone()
}

/// Starts the probe on the event loop without waiting for it.
pub fn start(helper: &Path) {
    if SUPPORT.get().is_none() {
        let helper = helper.to_path_buf();
        tokio::spawn(async move { support_async(&helper).await });
    }
}

fn judge(output: std::io::Result<std::process::Output>) -> Support {
    let landlock_abi = super::kernel_support().ok();
    let problem = |problem: String| Support { landlock_abi, problem: Some(problem) };
    let output = match output {
        Ok(output) => output,
        Err(error) => return problem(format!("the sandbox helper could not start: {error}")),
    };
    if output.status.success() {
        return Support { landlock_abi, problem: None };
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let reason =
        said.lines().rev().find_map(|line| line.strip_prefix("larik sandbox: ")).unwrap_or("the sandbox check failed");
    problem(reason.to_owned())
}

/// The helper's side of the probe: returns 0 when every promise held. The check runs in a
/// child, so the scratch directory is removed from outside the namespaces.
pub(super) fn run_probe() -> i32 {
    let Ok(scratch) = tempfile::tempdir() else { return fail("no temporary directory for the check") };
    let root = scratch.path().to_path_buf();
    let (kept, stand_in) = (root.join("kept"), root.join("absent"));
    if std::fs::write(&kept, "kept").is_err() || std::fs::create_dir(&stand_in).is_err() {
        return fail("could not prepare the check");
    }
    let plan = Plan {
        writable: vec![root.clone()],
        pinned: vec![root.clone()],
        read_only: vec![kept.clone(), stand_in.clone()],
        stand_ins: Vec::new(),
        hidden: Vec::new(),
        readable: Vec::new(),
        network: false,
        proxy: None,
        local_binding: false,
        unix_sockets: false,
        command: vec!["probe".into()],
    };
    // SAFETY: the helper is single-threaded; the child runs ordinary code and exits.
    let child = unsafe { libc::fork() };
    if child == 0 {
        // Commands start in the project, so the check does too: relative paths must meet the
        // protections as absolute ones do.
        if std::env::set_current_dir(&root).is_err() {
            std::process::exit(fail("could not enter the scratch directory"));
        }
        let code = match helper::confine(&plan) {
            Ok(_locks) => helper::run_confined(&plan, |_| check_from_inside(&root, &kept, &stand_in)),
            Err(error) => fail(&error),
        };
        std::process::exit(code);
    }
    let code = if child < 0 { fail("fork failed") } else { helper::wait_for(child) };
    drop(scratch);
    code
}

fn check_from_inside(root: &Path, kept: &Path, stand_in: &Path) -> i32 {
    if std::fs::write(root.join("written"), "ok").is_err() {
        return fail("a write inside a writable root failed");
    }
    let relative = |path: &Path| path.strip_prefix(root).map(Path::to_path_buf).unwrap_or_default();
    if std::fs::write(kept, "changed").is_ok()
        || std::fs::write(relative(kept), "changed").is_ok()
        || std::fs::write(relative(stand_in).join("created"), "x").is_ok()
    {
        return fail("a read-only mount did not hold");
    }
    let outside = root.with_file_name(format!("larik-sandbox-probe-{}", std::process::id()));
    if std::fs::write(&outside, "x").is_ok() {
        let _ = std::fs::remove_file(&outside);
        return fail("Landlock did not stop a write outside the writable roots");
    }
    if std::net::UdpSocket::bind("127.0.0.1:0").is_ok() || std::net::TcpStream::connect("127.0.0.1:9").is_ok() {
        return fail("the network filter did not hold");
    }
    0
}

fn fail(message: &str) -> i32 {
    helper::report(message);
    helper::SETUP_FAILED
}
