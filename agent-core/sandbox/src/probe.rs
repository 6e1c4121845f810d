//! Whether the sandbox holds on this machine, found by running it: the helper sets itself up
//! exactly as for a command (namespaces, a read-only mount, Landlock, the socket filter) around
//! a scratch directory and checks from inside that each promise holds. The agent trusts
//! "sandboxed" only after that; anything less and bash asks instead. Opening a session does not
//! wait for the answer: its first prompt does.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::plan::HELPER_COMMAND;

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
            .args([HELPER_COMMAND, "--probe"])
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
                    .args([HELPER_COMMAND, "--probe"])
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
    let landlock_abi = crate::kernel_support().ok();
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

/// From inside a confined process whose writable root is `root`, with `kept` read-only and
/// `stand_in` an absent protected path: 0 when every promise held, else the failure, said.
#[cfg_attr(not(any(all(target_os = "linux", feature = "linux"), target_os = "macos")), allow(dead_code))]
pub(crate) fn check_from_inside(root: &Path, kept: &Path, stand_in: &Path) -> i32 {
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

/// Says on stderr (which a command's output shares) why the sandbox did not start, in the line
/// [`judge`] looks for.
pub(crate) fn report(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "larik sandbox: {message}");
}

/// [`report`]s and returns the exit code of a helper that could not set the sandbox up.
pub(crate) fn fail(message: &str) -> i32 {
    report(message);
    crate::plan::SETUP_FAILED
}
