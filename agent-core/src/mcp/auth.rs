//! OAuth for MCP servers over HTTP and SSE, on rmcp's authorization code: discovery from the
//! server's `WWW-Authenticate` challenge first (protected-resource metadata, then the
//! authorization server's, with the spec's fallbacks), then a pre-registered client, a client-id
//! metadata document or dynamic registration, PKCE S256 and the RFC 8707 `resource` on both
//! requests. Larik brings what rmcp leaves to its user: the redirect listener on the loopback
//! interface, the browser step (a [`LoginBrowser`]: the editor opens the page, or a headless visit
//! for the conformance suite), the token file, and re-authorizing with the wider scope a 403
//! `insufficient_scope` names (step-up), at most [`MAX_AUTHORIZATIONS`] times per request.
//!
//! Connections made in the background never log in: a server that asks ends in "needs login",
//! and `/mcp login <server>` (or `larik mcp login`) runs [`log_in`] with the user there.

pub mod redirect;
pub mod tokens;

use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, WWWAuthenticateParams,
};
use tokio_util::sync::CancellationToken;

use self::redirect::{RedirectError, RedirectListener};
use self::tokens::TokenFile;
use super::config::OAuthSettings;
use crate::services::EditorError;
use crate::tools::LoginBrowser;

/// How many times one request may send the user to authorize before it fails: a server that
/// keeps refusing every token is not asked forever.
pub const MAX_AUTHORIZATIONS: u32 = 3;

/// Why a login did not happen.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The authorization server, its metadata or its answers: the message says which.
    #[error("{0}")]
    Server(#[from] AuthError),
    /// No listener for the browser's way back: nothing was shown to the user.
    #[error("could not listen for the login's redirect: {0}")]
    NoListener(std::io::Error),
    /// The login page could not be shown, or the user declined it.
    #[error("{0}")]
    NotShown(#[from] EditorError),
    /// The user did not finish (cancelled, took too long), or the listener failed.
    #[error("{0}")]
    NotFinished(#[from] RedirectError),
}

/// What a login needs to know about the server.
pub struct LoginTarget<'a> {
    pub server: &'a str,
    pub url: &'a str,
    pub oauth: &'a OAuthSettings,
    pub tokens: &'a TokenFile,
}

/// The authorization manager for `url`, keeping its tokens in `tokens`, on our HTTP stack.
pub async fn manager(url: &str, tokens: &TokenFile) -> Result<AuthorizationManager, AuthError> {
    // Our client first: building it chooses the TLS provider, which the manager's own default
    // client (made by `new`, then replaced) needs already.
    let client = crate::http::client_builder().build().map_err(|error| AuthError::InternalError(error.to_string()))?;
    let mut manager = AuthorizationManager::new(url).await?;
    manager.with_client(client)?;
    manager.set_credential_store(tokens.clone());
    Ok(manager)
}

/// Logs in to the server: from `challenge` (the `WWW-Authenticate` of the 401 or 403 that asked
/// for it) when there is one, through `browser`, and saves the tokens in the target's token file.
pub async fn log_in(
    target: &LoginTarget<'_>,
    challenge: Option<&str>,
    browser: &dyn LoginBrowser,
    cancel: &CancellationToken,
) -> Result<(), LoginError> {
    let result = authorize(target, challenge, browser, cancel).await;
    browser.finished(target.server).await;
    result
}

async fn authorize(
    target: &LoginTarget<'_>,
    challenge: Option<&str>,
    browser: &dyn LoginBrowser,
    cancel: &CancellationToken,
) -> Result<(), LoginError> {
    let mut manager = manager(target.url, target.tokens).await?;
    let metadata = match &target.oauth.auth_server_metadata_url {
        Some(url) => configured_metadata(url).await?,
        None => manager.resolve_metadata_from_challenge(challenge).await?.metadata,
    };
    manager.set_metadata(metadata);
    let listener = RedirectListener::bind(target.oauth.callback_port).await.map_err(LoginError::NoListener)?;
    let mut request = AuthorizationRequest::new(listener.redirect_uri()).with_client_name("Larik");
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    if let Some(scopes) = target.oauth.scopes.as_deref().filter(|scopes| !scopes.trim().is_empty()) {
        request = request.with_scopes(scopes.split_whitespace());
    }
    if let Some(client_id) = &target.oauth.client_id {
        request = request.with_preregistered_client(client_id);
        if let Some(secret) = &target.oauth.client_secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(document) = &target.oauth.client_metadata_url {
        request = request.with_client_metadata_url(document);
    }
    let session = AuthorizationSession::new(manager, request).await.map_err(|(_, error)| error)?;
    browser.open(target.server, &session.auth_url).await?;
    let callback = listener.callback(cancel).await?;
    let callback = AuthorizationCallback::from_redirect_url(&callback)?;
    // The exchange saves the tokens through the manager's store: the token file.
    session.handle_callback_with_issuer(&callback.code, &callback.csrf_token, callback.issuer.as_deref()).await?;
    Ok(())
}

/// The authorization server's metadata from the URL the settings name.
async fn configured_metadata(url: &str) -> Result<AuthorizationMetadata, LoginError> {
    let failed =
        |error: &dyn std::fmt::Display| LoginError::Server(AuthError::MetadataError(format!("{url}: {error}")));
    let client = crate::http::client_builder().build().map_err(|error| failed(&error))?;
    let response =
        client.get(url).send().await.and_then(reqwest::Response::error_for_status).map_err(|error| failed(&error))?;
    response.json().await.map_err(|error| failed(&error))
}

/// Whether a challenge asks for a wider scope than the token has (a 403 `insufficient_scope`),
/// rather than for a login at all.
pub fn wants_wider_scope(challenge: &str, url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|base| WWWAuthenticateParams::parse(challenge, &base).is_insufficient_scope())
}
