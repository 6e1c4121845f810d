//! Web pages served on 127.0.0.1 by path, for the browser tools' tests and benchmarks.

use std::collections::HashMap;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves `pages` (path → HTML) until the process ends; returns the base URL. Any other path
/// is a 404.
pub async fn serve(pages: HashMap<&'static str, String>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let pages = pages.clone();
            tokio::spawn(async move {
                let Some(head) = request_head(&mut socket).await else { return };
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let (status, body) = match pages.get(path.as_str()) {
                    Some(page) => ("200 OK", page.clone()),
                    None => ("404 Not Found", "<title>Not found</title>".to_owned()),
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    base
}

/// Serves `body` (of `content_type`) at every path, but answers no request until `count` have
/// arrived: a barrier that only requests made at the same time pass. A request still alone after
/// 10 s is answered 503, so whatever sent requests one after the other sees an error.
pub async fn serve_together(count: usize, content_type: &'static str, body: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (arrived, _) = tokio::sync::watch::channel(0_usize);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let (page, arrived) = (body.clone(), arrived.clone());
            tokio::spawn(async move {
                if request_head(&mut socket).await.is_none() {
                    return;
                }
                arrived.send_modify(|arrived| *arrived += 1);
                let mut waiting = arrived.subscribe();
                let together = tokio::time::timeout(
                    std::time::Duration::from_secs(10),
                    waiting.wait_for(|arrived| *arrived >= count),
                )
                .await
                .is_ok_and(|seen| seen.is_ok());
                let (status, body) = if together {
                    ("200 OK", page)
                } else {
                    ("503 Service Unavailable", "<title>Alone</title>".to_owned())
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    base
}

/// A request's head, read up to its blank line; `None` when the client went away first.
async fn request_head(socket: &mut tokio::net::TcpStream) -> Option<String> {
    let mut request = Vec::new();
    let mut buffer = [0; 4096];
    while !request.windows(4).any(|window| window == b"\r\n\r\n") {
        match socket.read(&mut buffer).await {
            Ok(0) | Err(_) => return None,
            Ok(read) => request.extend_from_slice(&buffer[..read]),
        }
    }
    Some(String::from_utf8_lossy(&request).into_owned())
}

/// A page of `count` buttons in a list.
pub fn many_buttons(count: usize) -> String {
    let buttons: String = (0..count).map(|index| format!("<li><button>Item number {index}</button></li>")).collect();
    format!("<!doctype html><title>Many</title><ul>{buttons}</ul>")
}
