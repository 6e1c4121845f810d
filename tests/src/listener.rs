//! A server on 127.0.0.1 that records every request it receives and answers each with one
//! fixed JSON body: the user's own search service in a test, or the server a hostile
//! repository names, which must receive nothing.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub struct Recorder {
    url: String,
    received: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    /// Listens on a free port of 127.0.0.1, answering `body` (JSON) to every request.
    pub async fn start(body: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received: Arc<Mutex<Vec<String>>> = Arc::default();
        let (body, record) = (body.to_owned(), Arc::clone(&received));
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let (body, record) = (body.clone(), Arc::clone(&record));
                tokio::spawn(async move {
                    // Whatever arrives counts, even a connection that sends nothing.
                    let index = {
                        let mut record = record.lock().unwrap();
                        record.push(String::new());
                        record.len() - 1
                    };
                    let mut buffer = [0; 4096];
                    let mut request = Vec::new();
                    while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                        match tokio::time::timeout(std::time::Duration::from_secs(2), socket.read(&mut buffer)).await {
                            Ok(Ok(read)) if read > 0 => request.extend_from_slice(&buffer[..read]),
                            _ => break,
                        }
                    }
                    record.lock().unwrap()[index] = String::from_utf8_lossy(&request).into_owned();
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(response.as_bytes()).await;
                });
            }
        });
        Self { url, received }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Each request's head (request line and headers), in order of arrival.
    pub fn received(&self) -> Vec<String> {
        self.received.lock().unwrap().clone()
    }
}
