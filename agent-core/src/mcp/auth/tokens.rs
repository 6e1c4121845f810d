//! Where a server's OAuth login is kept: `<data dir>/mcp-auth/<server>-<url hash>.json`, mode
//! 0600 in a 0700 directory, replaced atomically on every change (a refresh rewrites it). One
//! file per server *and* URL, so two servers never share tokens and a server moved to another
//! URL logs in again. The contents are never logged: `StoredCredentials`' own `Debug` hides them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

/// One server's login on disk, shared by its connection and a login in progress (a handle:
/// clones see the same file and the same cached copy).
#[derive(Clone)]
pub struct TokenFile {
    path: PathBuf,
    /// What the file holds (`Some(None)`: no file), once read: a token is asked for on every
    /// request, also of a server that has no login.
    cached: Arc<Mutex<Option<Option<StoredCredentials>>>>,
}

impl TokenFile {
    /// The file for `server` at `url` under the user's data directory (`dir`).
    pub fn new(dir: &Path, server: &str, url: &str) -> Self {
        let digest = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
        let hash: String = digest.as_ref().iter().take(8).map(|byte| format!("{byte:02x}")).collect();
        // The server's name is the user's; only safe characters reach the file name.
        let name: String =
            server.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        Self { path: dir.join("mcp-auth").join(format!("{name}-{hash}.json")), cached: Arc::default() }
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a login was ever saved (so a connection tries it before the server asks).
    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|error| AuthError::CredentialStoreError(format!("{}: {error}", self.path.display()))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(AuthError::CredentialStoreError(format!("{}: {error}", self.path.display()))),
        }
    }

    fn remember(&self, known: Option<Option<StoredCredentials>>) {
        if let Ok(mut cached) = self.cached.lock() {
            *cached = known;
        }
    }

    /// Forgets what was read, so the next use reads the file again (another process logged in).
    pub fn reload(&self) {
        self.remember(None);
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        if let Some(known) = self.cached.lock().ok().and_then(|cached| cached.clone()) {
            return Ok(known);
        }
        let read = self.read()?;
        self.remember(Some(read.clone()));
        Ok(read)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_vec_pretty(&credentials)
            .map_err(|error| AuthError::CredentialStoreError(error.to_string()))?;
        crate::workspace::write_private_file(&self.path, &text)
            .map_err(|error| AuthError::CredentialStoreError(format!("{}: {error}", self.path.display())))?;
        self.remember(Some(Some(credentials)));
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remember(Some(None));
        match std::fs::remove_file(&self.path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                Err(AuthError::CredentialStoreError(format!("{}: {error}", self.path.display())))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[tokio::test]
    async fn a_login_is_kept_private_and_apart_per_server_and_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::new(dir.path(), "git hub/../x", "https://example.com/mcp");
        assert_eq!(file.path().parent().unwrap(), dir.path().join("mcp-auth"));
        assert!(
            file.path().file_name().unwrap().to_str().unwrap().starts_with("git_hub____x-"),
            "{}",
            file.path().display()
        );
        assert_ne!(file.path(), TokenFile::new(dir.path(), "git hub/../x", "https://example.com/other").path());
        assert!(file.load().await.unwrap().is_none(), "no login yet");

        file.save(StoredCredentials::new("client-1".into(), None, vec!["mcp:read".into()], Some(1))).await.unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(file.path().parent().unwrap()), 0o700);
        // Another handle on the same file (a later session) reads what was saved.
        let again = TokenFile::new(dir.path(), "git hub/../x", "https://example.com/mcp");
        let loaded = again.load().await.unwrap().unwrap();
        assert_eq!(
            (loaded.client_id.as_str(), loaded.granted_scopes.as_slice()),
            ("client-1", ["mcp:read".to_owned()].as_slice())
        );

        // A refresh rewrites it and keeps the mode.
        file.save(StoredCredentials::new("client-2".into(), None, vec![], Some(2))).await.unwrap();
        assert_eq!(mode(file.path()), 0o600);
        again.reload();
        assert_eq!(again.load().await.unwrap().unwrap().client_id, "client-2");

        file.clear().await.unwrap();
        assert!(!file.exists());
        std::fs::create_dir_all(file.path().parent().unwrap()).unwrap();
        std::fs::write(file.path(), "{oops").unwrap();
        assert!(
            matches!(
                TokenFile::new(dir.path(), "git hub/../x", "https://example.com/mcp").load().await,
                Err(AuthError::CredentialStoreError(_))
            ),
            "a damaged file is an error, not an empty login"
        );
    }
}
