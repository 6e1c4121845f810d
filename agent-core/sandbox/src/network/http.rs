//! The HTTP side of the proxy: `CONNECT host:port` (HTTPS, and anything tunnelled) and plain
//! requests in absolute form (`GET http://host/path`). The name decided on is the one the
//! request targets; a `Host` header that names another is refused, so a request cannot be
//! decided for one name and read by the server as another. A plain request is sent on with
//! `Connection: close`: the next request, perhaps for another name, comes on a new connection
//! and is decided again.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::proxy::{Gate, Refusal};

/// The most a request's head may hold.
const MAX_HEAD: usize = 64 * 1024;

/// A request's head, as the proxy reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Head {
    method: String,
    target: String,
    version: String,
    headers: Vec<(String, String)>,
}

pub(super) async fn serve(mut client: BufReader<TcpStream>, gate: &Gate) -> std::io::Result<()> {
    let head = match read_head(&mut client).await? {
        Some(head) => head,
        None => return Ok(()),
    };
    let (host, port, origin_form) = match head.destination() {
        Ok(destination) => destination,
        Err(why) => return answer(&mut client, "400 Bad Request", &format!("larik sandbox: {why}")).await,
    };
    let mut upstream = match gate.open(&host, port).await {
        Ok(upstream) => upstream,
        Err(refusal @ Refusal::Refused(_)) => {
            return answer(&mut client, "403 Forbidden", &refusal.message(&host)).await;
        }
        Err(refusal @ Refusal::Unreachable(_)) => {
            return answer(&mut client, "502 Bad Gateway", &refusal.message(&host)).await;
        }
    };
    match origin_form {
        None => client.get_mut().write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await?,
        Some(path) => upstream.write_all(head.forwarded(&path).as_bytes()).await?,
    }
    gate.carry(client, upstream).await
}

/// Reads up to the blank line; `None` when the client closed before sending anything.
async fn read_head(client: &mut (impl AsyncRead + Unpin + AsyncBufReadExt)) -> std::io::Result<Option<Head>> {
    let mut text = String::new();
    loop {
        let mut line = String::new();
        let read = client.read_line(&mut line).await?;
        if read == 0 {
            return if text.is_empty() { Ok(None) } else { Err(bad("the request ended inside its head")) };
        }
        text.push_str(&line);
        if text.len() > MAX_HEAD {
            return Err(bad("the request's head is too long"));
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
    }
    Head::parse(&text).map(Some).ok_or_else(|| bad("not an HTTP request"))
}

fn bad(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_owned())
}

impl Head {
    pub(super) fn parse(text: &str) -> Option<Head> {
        let mut lines = text.lines();
        let mut first = lines.next()?.split(' ');
        let (method, target, version) = (first.next()?, first.next()?, first.next()?);
        if !version.starts_with("HTTP/1.") || first.next().is_some() {
            return None;
        }
        let headers = lines
            .take_while(|line| !line.is_empty())
            .map(|line| line.split_once(':').map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned())))
            .collect::<Option<Vec<_>>>()?;
        Some(Head { method: method.to_owned(), target: target.to_owned(), version: version.to_owned(), headers })
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The host and port decided on, and for a plain request the path to send on.
    pub(super) fn destination(&self) -> Result<(String, u16, Option<String>), String> {
        let (authority, path, default_port) = if self.method.eq_ignore_ascii_case("CONNECT") {
            (self.target.as_str(), None, 443)
        } else if let Some(rest) = self.target.strip_prefix("http://") {
            let (authority, path) = rest.find('/').map_or((rest, "/"), |at| rest.split_at(at));
            (authority, Some(path.to_owned()), 80)
        } else {
            return Err(format!("`{}` is not a proxy request (plain HTTP in absolute form, or CONNECT)", self.target));
        };
        let (host, port) = split_authority(authority, default_port).ok_or("the request names no host")?;
        if let Some(named) = self.header("Host") {
            let agrees = split_authority(named, default_port).is_some_and(|(other, other_port)| {
                other.eq_ignore_ascii_case(&host) && (other_port == port || !named.contains(':'))
            });
            if !agrees {
                return Err(format!("the Host header ({named}) names another host than the request ({authority})"));
            }
        }
        Ok((host, port, path))
    }

    /// The head sent to the server: the path alone, no proxy headers, one request only.
    pub(super) fn forwarded(&self, path: &str) -> String {
        let mut text = format!("{} {path} {}\r\n", self.method, self.version);
        for (name, value) in &self.headers {
            let hop = ["connection", "proxy-connection", "proxy-authorization", "keep-alive"];
            if !hop.iter().any(|hop| name.eq_ignore_ascii_case(hop)) {
                text.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        text.push_str("Connection: close\r\n\r\n");
        text
    }
}

/// `host[:port]`, IPv6 in brackets.
fn split_authority(authority: &str, default_port: u16) -> Option<(String, u16)> {
    let authority = authority.rsplit_once('@').map_or(authority, |(_, rest)| rest);
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().ok()?,
        None => default_port,
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

async fn answer(client: &mut (impl AsyncWrite + Unpin), status: &str, message: &str) -> std::io::Result<()> {
    let body = format!("{message}\n");
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(text.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Head {
        Head::parse(text).unwrap()
    }

    #[test]
    fn the_name_decided_on_is_the_one_the_request_targets() {
        let connect = head("CONNECT registry.localhost:8443 HTTP/1.1\r\nHost: registry.localhost:8443\r\n\r\n");
        assert_eq!(connect.destination().unwrap(), ("registry.localhost".into(), 8443, None));
        let plain = head("GET http://Files.localhost:8080/a?b HTTP/1.1\r\nHost: files.localhost:8080\r\n\r\n");
        assert_eq!(plain.destination().unwrap(), ("files.localhost".into(), 8080, Some("/a?b".into())));
        let bare = head("GET http://files.localhost HTTP/1.1\r\n\r\n");
        assert_eq!(bare.destination().unwrap(), ("files.localhost".into(), 80, Some("/".into())));
        let v6 = head("CONNECT [::1]:443 HTTP/1.1\r\n\r\n");
        assert_eq!(v6.destination().unwrap(), ("::1".into(), 443, None));
    }

    #[test]
    fn a_host_header_naming_another_host_is_refused() {
        let spoofed = head("GET http://allowed.localhost/ HTTP/1.1\r\nHost: metadata.localhost\r\n\r\n");
        assert!(spoofed.destination().unwrap_err().contains("another host"));
        let other_port = head("CONNECT allowed.localhost:443 HTTP/1.1\r\nHost: allowed.localhost:22\r\n\r\n");
        assert!(other_port.destination().is_err());
        let origin = head("GET /path HTTP/1.1\r\nHost: allowed.localhost\r\n\r\n");
        assert!(origin.destination().is_err(), "a request that is not for a proxy");
        assert!(Head::parse("GARBAGE\r\n\r\n").is_none());
    }

    #[test]
    fn a_forwarded_request_carries_no_proxy_headers_and_closes() {
        let plain = head(
            "GET http://a.localhost/x HTTP/1.1\r\nHost: a.localhost\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nAccept: */*\r\n\r\n",
        );
        let sent = plain.forwarded("/x");
        assert_eq!(sent, "GET /x HTTP/1.1\r\nHost: a.localhost\r\nAccept: */*\r\nConnection: close\r\n\r\n");
    }
}
