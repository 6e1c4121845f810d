//! The redirect listener of a login: a one-request HTTP server on the loopback interface that
//! the authorization server sends the browser back to (`http://localhost:PORT/callback?code=…`).
//! It takes the first request for `/callback`, answers it with a page saying the login may be
//! closed, and hands the full URL over; anything else (a favicon) gets a 404 and is ignored.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How long the user has to finish logging in.
pub const LOGIN_WAIT: Duration = Duration::from_secs(300);
/// The longest request line and headers read from one connection.
const REQUEST_LIMIT: usize = 16 * 1024;

/// Why the browser did not come back with a login.
#[derive(Debug, thiserror::Error)]
pub enum RedirectError {
    #[error("the login listener failed: {0}")]
    Listener(std::io::Error),
    #[error("the login was not finished within {} minutes", LOGIN_WAIT.as_secs() / 60)]
    TimedOut,
    #[error("the login was cancelled")]
    Cancelled,
}

pub struct RedirectListener {
    listener: TcpListener,
    port: u16,
}

impl RedirectListener {
    /// Listens on 127.0.0.1, on `port` when one is configured (a pre-registered client's redirect
    /// URI names it), else on any free port.
    pub async fn bind(port: Option<u16>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).await?;
        let port = listener.local_addr()?.port();
        Ok(Self { listener, port })
    }

    /// The redirect URI to register and send: `localhost`, as native clients' redirect URIs are
    /// usually registered (the browser resolves it to the loopback address we listen on).
    pub fn redirect_uri(&self) -> String {
        format!("http://localhost:{}/callback", self.port)
    }

    /// Waits for the browser to come back; the callback URL with its query, or why not.
    pub async fn callback(&self, cancel: &CancellationToken) -> Result<String, RedirectError> {
        let wait = async {
            loop {
                let (mut stream, _) = self.listener.accept().await.map_err(RedirectError::Listener)?;
                let Ok(Ok(target)) = tokio::time::timeout(Duration::from_secs(10), request_target(&mut stream)).await
                else {
                    continue;
                };
                if target.split('?').next() != Some("/callback") {
                    let _ = stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    continue;
                }
                let page = "<!doctype html><meta charset=utf-8><title>Larik</title><p>Logged in. You can close this tab and go back to your editor.</p>";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
                return Ok(format!("http://localhost:{}{target}", self.port));
            }
        };
        tokio::select! {
            result = tokio::time::timeout(LOGIN_WAIT, wait) => result.unwrap_or(Err(RedirectError::TimedOut)),
            () = cancel.cancelled() => Err(RedirectError::Cancelled),
        }
    }
}

/// The target of a `GET` request (`/callback?code=…`), read up to the end of its headers.
async fn request_target(stream: &mut tokio::net::TcpStream) -> Result<String, String> {
    let mut request = Vec::new();
    let mut buffer = [0u8; 2048];
    while !request.windows(4).any(|window| window == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await.map_err(|error| error.to_string())?;
        if read == 0 || request.len() > REQUEST_LIMIT {
            return Err("incomplete request".into());
        }
        request.extend_from_slice(&buffer[..read]);
    }
    let text = String::from_utf8_lossy(&request);
    let mut words = text.lines().next().unwrap_or_default().split_whitespace();
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(target.to_owned()),
        _ => Err("not a GET request".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn takes_the_callback_and_ignores_other_requests() {
        let listener = RedirectListener::bind(None).await.unwrap();
        let uri = listener.redirect_uri();
        assert!(uri.starts_with("http://localhost:") && uri.ends_with("/callback"), "{uri}");
        let port = uri.trim_start_matches("http://localhost:").trim_end_matches("/callback").to_owned();
        let browser = tokio::spawn(async move {
            let client = crate::http::client_builder().build().unwrap();
            let favicon = client.get(format!("http://127.0.0.1:{port}/favicon.ico")).send().await.unwrap();
            assert_eq!(favicon.status(), 404);
            let page = client.get(format!("http://127.0.0.1:{port}/callback?code=abc&state=xyz")).send().await.unwrap();
            assert_eq!(page.status(), 200);
            assert!(page.text().await.unwrap().contains("close this tab"));
        });
        let callback = listener.callback(&CancellationToken::new()).await.unwrap();
        assert!(callback.ends_with("/callback?code=abc&state=xyz"), "{callback}");
        browser.await.unwrap();
    }

    #[tokio::test]
    async fn a_cancelled_login_stops_waiting() {
        let listener = RedirectListener::bind(None).await.unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(listener.callback(&cancel).await.unwrap_err().to_string(), "the login was cancelled");
    }
}
