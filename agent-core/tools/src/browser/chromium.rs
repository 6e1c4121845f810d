//! The Chromium process: found on PATH or named in settings, started in its own process group
//! with the closed-network flags and a DevTools port of its own choosing, and ended with its
//! whole group. The DevTools address is read from the line Chromium prints on stderr.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::BrowserError;

/// How long Chromium may take to say where its DevTools listen.
const START_WAIT: Duration = Duration::from_secs(30);

/// Binaries tried on PATH, in order.
const CANDIDATES: &[&str] = &["chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "chrome"];

/// Flags for a browser on a machine that may have no network but the pages it is sent to: no
/// background fetches, no updates, no sync, no first-run pages.
const QUIET_FLAGS: &[&str] = &[
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
];

/// What the browser is started with.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    pub executable: PathBuf,
    pub profile: PathBuf,
    pub headless: bool,
}

/// The executable to start: the one settings name, or the first candidate on PATH.
pub fn find_executable(configured: Option<&str>, env: &HashMap<String, String>) -> Result<PathBuf, BrowserError> {
    if let Some(configured) = configured {
        let path = PathBuf::from(configured);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(BrowserError::Unavailable(format!("`browser.executable` names {configured}, which does not exist")))
        };
    }
    let path = env.get("PATH").map(String::as_str).unwrap_or("/usr/local/bin:/usr/bin:/bin");
    CANDIDATES
        .iter()
        .find_map(|name| larik_host::child_process::on_path(name, path))
        .ok_or_else(|| BrowserError::Unavailable("No Chromium or Chrome found on PATH. Install one (on Debian or Ubuntu: `sudo apt install chromium`), or name it in your settings as `browser.executable`.".to_owned()))
}

/// A running Chromium: its process group ends when this is dropped.
pub struct Chromium {
    child: tokio::process::Child,
    /// The process group's id (the browser's own pid).
    group: i32,
    /// The DevTools endpoint: `ws://127.0.0.1:PORT/devtools/browser/ID`.
    pub websocket: String,
    /// A profile of its own when the persistent one is in use by another browser, removed
    /// when this one ends.
    _scratch_profile: Option<tempfile::TempDir>,
}

impl Chromium {
    pub async fn start(options: &LaunchOptions) -> Result<Self, BrowserError> {
        let (profile, scratch) = usable_profile(&options.profile)?;
        let mut command = tokio::process::Command::new(&options.executable);
        command
            .args(QUIET_FLAGS)
            .arg("--remote-debugging-port=0")
            .arg("--remote-debugging-address=127.0.0.1")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--window-size=1280,800");
        if options.headless {
            command.args(["--headless=new", "--hide-scrollbars", "--mute-audio"]);
        }
        // Chromium's own sandbox cannot start as root; the flag is only given then.
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            command.arg("--no-sandbox");
        }
        command
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        // The browser is killed if the agent dies without ending it.
        crate::child_process::dies_with_agent(&mut command);
        let mut child = command
            .spawn()
            .map_err(|error| unavailable(format!("could not start {}: {error}", options.executable.display())))?;
        let group =
            child.id().and_then(|pid| i32::try_from(pid).ok()).ok_or(unavailable("the browser exited at once"))?;
        let stderr = child.stderr.take().ok_or(unavailable("no stderr from the browser"))?;
        let mut lines = BufReader::new(stderr).lines();
        let found = tokio::time::timeout(START_WAIT, async {
            let mut said = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(address) = line.strip_prefix("DevTools listening on ") {
                    return Ok(address.trim().to_owned());
                }
                said.push(line);
            }
            Err(said.into_iter().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n"))
        })
        .await;
        let mut chromium = Self { child, group, websocket: String::new(), _scratch_profile: scratch };
        match found {
            Ok(Ok(address)) => chromium.websocket = address,
            Ok(Err(said)) => return Err(unavailable(format!("the browser exited before it was ready: {said}"))),
            Err(_) => {
                return Err(unavailable(format!("the browser did not get ready within {} s", START_WAIT.as_secs())));
            }
        }
        // The rest of its stderr goes to the log, so its pipe never fills.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "larik::browser", "{line}");
            }
        });
        Ok(chromium)
    }

    pub fn pid(&self) -> i32 {
        self.group
    }

    /// Whether the browser process is still there (the user may have closed its window).
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Ends the whole process group and reaps the browser.
    pub async fn stop(mut self) {
        self.kill_group();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }

    fn kill_group(&self) {
        // SAFETY: a plain system call on a process group this struct started.
        unsafe {
            libc::killpg(self.group, libc::SIGKILL);
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        self.kill_group();
    }
}

fn unavailable(why: impl Into<String>) -> BrowserError {
    BrowserError::Unavailable(why.into())
}

/// The persistent profile, or a scratch one when another browser holds it (Chromium would hand
/// the launch to that browser and exit).
fn usable_profile(profile: &Path) -> Result<(PathBuf, Option<tempfile::TempDir>), BrowserError> {
    let in_use = std::fs::read_link(profile.join("SingletonLock")).ok().and_then(|target| {
        let pid = target.to_string_lossy().rsplit('-').next()?.parse::<u32>().ok()?;
        larik_host::platform::process_exists(pid).then_some(())
    });
    if in_use.is_none() {
        std::fs::create_dir_all(profile).map_err(|error| unavailable(format!("{}: {error}", profile.display())))?;
        return Ok((profile.to_path_buf(), None));
    }
    let scratch =
        tempfile::Builder::new().prefix("larik-browser-").tempdir().map_err(|error| unavailable(error.to_string()))?;
    Ok((scratch.path().to_path_buf(), Some(scratch)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_executable_is_the_configured_one_or_the_first_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let env = HashMap::from([("PATH".to_owned(), dir.path().display().to_string())]);
        assert!(find_executable(None, &env).unwrap_err().to_string().contains("apt install chromium"));
        let fake = dir.path().join("google-chrome");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        assert!(find_executable(None, &env).is_err(), "not executable");
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        assert_eq!(find_executable(None, &env).unwrap(), fake);
        assert!(
            find_executable(Some("/nonexistent/chrome"), &env).unwrap_err().to_string().contains("browser.executable")
        );
    }
}
