//! Background shells started by `bash` with `run_in_background`: their output is kept for
//! `bash_output`, `kill_shell` stops them, and every one still running is killed when the session
//! ends (its cancellation token fires, or the registry is dropped). Each runs in its own process
//! group, so killing it takes its children too.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncRead;
use tokio_util::sync::CancellationToken;

use super::bash::{kill_group, prepare, spawn_shell};
use super::network_prompt::CommandNetwork;
use crate::sandbox::network::proxy::NetworkLog;

/// How much output a background shell keeps; older output is dropped first.
const MAX_KEPT_BYTES: usize = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellStatus {
    Running,
    Exited(i32),
    Killed,
}

struct Shell {
    command: String,
    group: Option<i32>,
    output: Vec<u8>,
    /// How much of `output` the model has already been shown.
    read_to: usize,
    dropped: usize,
    status: ShellStatus,
}

/// What `bash_output` returns: output since the last read, and the state.
pub struct ShellReport {
    pub command: String,
    pub new_output: String,
    pub status: ShellStatus,
}

pub struct BackgroundShells {
    shells: Arc<Mutex<BTreeMap<String, Shell>>>,
    next: Mutex<u32>,
    /// The session's token: background shells outlive a turn, not the session.
    cancel: CancellationToken,
}

impl BackgroundShells {
    pub fn new(cancel: CancellationToken) -> Self {
        Self { shells: Arc::default(), next: Mutex::new(0), cancel }
    }

    /// Starts `command` in `cwd`, `network` deciding its connections, which are added to
    /// `record` when it ends; returns its id.
    pub fn start(
        &self,
        command: &str,
        cwd: &std::path::Path,
        sandbox: Option<&crate::sandbox::Sandbox>,
        network: CommandNetwork,
        record: Arc<Mutex<NetworkLog>>,
    ) -> std::io::Result<String> {
        let prepared = prepare(command, sandbox, network)?;
        let (mut child, output) = spawn_shell(&prepared.command, cwd)?;
        let id = {
            let mut next = self.next.lock().map_err(|_| std::io::Error::other("shell registry poisoned"))?;
            *next += 1;
            format!("shell_{}", *next)
        };
        let group = child.id().and_then(|pid| i32::try_from(pid).ok());
        let shell = Shell {
            command: command.to_owned(),
            group,
            output: Vec::new(),
            read_to: 0,
            dropped: 0,
            status: ShellStatus::Running,
        };
        if let Ok(mut shells) = self.shells.lock() {
            shells.insert(id.clone(), shell);
        }
        tokio::spawn(collect(output, Arc::clone(&self.shells), id.clone()));
        let shells = Arc::clone(&self.shells);
        let cancel = self.cancel.clone();
        let shell_id = id.clone();
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status.ok().and_then(|status| status.code()).map_or(ShellStatus::Killed, ShellStatus::Exited),
                () = cancel.cancelled() => {
                    kill_group(group);
                    let _ = child.wait().await;
                    ShellStatus::Killed
                }
            };
            // The shell has ended: the stand-ins and the proxy it relied on may go.
            if let (Some(proxy), Ok(mut record)) = (&prepared.proxy, record.lock()) {
                record.merge(&proxy.log());
            }
            drop(prepared);
            if let Ok(mut shells) = shells.lock()
                && let Some(shell) = shells.get_mut(&shell_id)
                && shell.status == ShellStatus::Running
            {
                shell.status = status;
            }
        });
        Ok(id)
    }

    /// Output since the last call, or `None` for an unknown id.
    pub fn read(&self, id: &str) -> Option<ShellReport> {
        let mut shells = self.shells.lock().ok()?;
        let shell = shells.get_mut(id)?;
        let start = shell.read_to.saturating_sub(shell.dropped);
        let new_output = String::from_utf8_lossy(&shell.output[start.min(shell.output.len())..]).into_owned();
        shell.read_to = shell.dropped + shell.output.len();
        Some(ShellReport { command: shell.command.clone(), new_output, status: shell.status.clone() })
    }

    /// Kills a shell's process group. Returns false for an unknown id.
    pub fn kill(&self, id: &str) -> bool {
        let Ok(mut shells) = self.shells.lock() else { return false };
        let Some(shell) = shells.get_mut(id) else { return false };
        if shell.status == ShellStatus::Running {
            kill_group(shell.group);
            shell.status = ShellStatus::Killed;
        }
        true
    }

    fn kill_all(&self) {
        if let Ok(mut shells) = self.shells.lock() {
            for shell in shells.values_mut().filter(|shell| shell.status == ShellStatus::Running) {
                kill_group(shell.group);
                shell.status = ShellStatus::Killed;
            }
        }
    }
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        self.kill_all();
    }
}

async fn collect(mut pipe: impl AsyncRead + Unpin, shells: Arc<Mutex<BTreeMap<String, Shell>>>, id: String) {
    use tokio::io::AsyncReadExt;
    let mut buffer = vec![0u8; 8192];
    loop {
        let read = match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let Ok(mut shells) = shells.lock() else { return };
        let Some(shell) = shells.get_mut(&id) else { return };
        shell.output.extend_from_slice(&buffer[..read]);
        if shell.output.len() > MAX_KEPT_BYTES {
            let excess = shell.output.len() - MAX_KEPT_BYTES;
            shell.output.drain(..excess);
            shell.dropped += excess;
        }
    }
}
