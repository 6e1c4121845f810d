//! Where a provider's key comes from: the environment's, fixed, or a command the user named in
//! their own settings (Claude Code's `apiKeyHelper`), run with `/bin/sh -c` when a key is first
//! needed, again once its answer is older than the time to live, and again after the provider
//! refused it. Its answer is never logged nor shown, and neither is the command (it may hold the
//! key itself, `echo sk-...`): errors say how the helper ended, not what it printed on stdout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::ProviderError;

/// Claude Code asks its helper again after five minutes.
pub const DEFAULT_HELPER_TTL: Duration = Duration::from_secs(300);
/// A helper that takes longer than this is stuck.
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);

/// A provider's key.
#[derive(Clone)]
pub enum Credential {
    Fixed(String),
    Helper(Arc<KeyHelper>),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Fixed(_) => out.write_str("Credential::Fixed(…)"),
            Credential::Helper(_) => out.write_str("Credential::Helper(…)"),
        }
    }
}

/// The helpers of the process, by command and time to live.
type Helpers = HashMap<(String, Duration), Arc<KeyHelper>>;

/// A command that prints a key, and what it printed last.
pub struct KeyHelper {
    command: String,
    ttl: Duration,
    last: Mutex<Option<(String, Instant)>>,
}

impl Credential {
    /// The helper for `command`: one per command in the process, so every provider built from
    /// the same settings (a model switch, a subagent) shares its answer.
    pub fn helper(command: &str, ttl: Duration) -> Credential {
        static HELPERS: OnceLock<Mutex<Helpers>> = OnceLock::new();
        let helpers = HELPERS.get_or_init(Mutex::default);
        let make = || Arc::new(KeyHelper { command: command.to_owned(), ttl, last: Mutex::new(None) });
        let helper = match helpers.lock() {
            Ok(mut helpers) => Arc::clone(helpers.entry((command.to_owned(), ttl)).or_insert_with(make)),
            Err(_) => make(),
        };
        Credential::Helper(helper)
    }

    /// The key to send now.
    pub async fn key(&self) -> Result<String, ProviderError> {
        match self {
            Credential::Fixed(key) => Ok(key.clone()),
            Credential::Helper(helper) => helper.key().await,
        }
    }

    /// The provider refused the key: a helper's is asked for again; a fixed one cannot change.
    /// Returns whether asking again may help.
    pub fn refused(&self) -> bool {
        match self {
            Credential::Fixed(_) => false,
            Credential::Helper(helper) => {
                if let Ok(mut last) = helper.last.lock() {
                    *last = None;
                }
                true
            }
        }
    }
}

impl KeyHelper {
    async fn key(&self) -> Result<String, ProviderError> {
        if let Ok(last) = self.last.lock()
            && let Some((key, at)) = last.as_ref()
            && at.elapsed() < self.ttl
        {
            return Ok(key.clone());
        }
        let key = self.run().await?;
        if let Ok(mut last) = self.last.lock() {
            *last = Some((key.clone(), Instant::now()));
        }
        Ok(key)
    }

    async fn run(&self) -> Result<String, ProviderError> {
        let failed = |why: String| ProviderError::Auth { message: format!("the key helper (apiKeyHelper) {why}") };
        let child = tokio::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| failed(format!("could not start: {error}")))?;
        let output = tokio::time::timeout(HELPER_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| failed(format!("did not finish within {} s", HELPER_TIMEOUT.as_secs())))?
            .map_err(|error| failed(format!("failed: {error}")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let said: String = stderr.trim().chars().take(300).collect();
            return Err(failed(format!("exited with {}: {said}", output.status)));
        }
        let key = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if key.is_empty() || key.contains('\n') {
            return Err(failed("printed no key (one line on stdout is expected)".into()));
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_helpers_key_is_kept_until_it_expires_or_is_refused() {
        let dir = std::env::temp_dir().join(format!("larik-helper-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let count = dir.join("count");
        let command = format!("echo x >> {0}; echo \"key-$(wc -l < {0} | tr -d ' ')\"", count.display());
        let helper = Credential::helper(&command, Duration::from_secs(3600));
        assert_eq!(helper.key().await.unwrap(), "key-1");
        assert_eq!(helper.key().await.unwrap(), "key-1", "kept");
        assert_eq!(Credential::helper(&command, Duration::from_secs(3600)).key().await.unwrap(), "key-1", "shared");
        assert!(helper.refused());
        assert_eq!(helper.key().await.unwrap(), "key-2", "asked again after a refusal");
        let short = Credential::helper(&command, Duration::ZERO);
        assert_eq!(short.key().await.unwrap(), "key-3");
        assert_eq!(short.key().await.unwrap(), "key-4", "expired at once");
        assert!(!Credential::Fixed("k".into()).refused());
        assert!(!format!("{helper:?} {:?}", Credential::Fixed("secret".into())).contains("key-"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_failing_helper_says_so_without_its_output() {
        let error = Credential::helper("echo sk-leaked; exit 3", DEFAULT_HELPER_TTL).key().await.unwrap_err();
        let said = error.to_string();
        assert!(said.contains("exited with exit status: 3"), "{said}");
        assert!(!said.contains("sk-leaked"), "{said}");
        let error = Credential::helper("true", DEFAULT_HELPER_TTL).key().await.unwrap_err();
        assert!(error.to_string().contains("printed no key"), "{error}");
    }
}
