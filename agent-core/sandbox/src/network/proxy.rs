//! The proxy in the agent, one per sandboxed command: a Unix socket in a private directory over
//! which the command's helper hands each connection the command opened (`handover`). The first byte tells the protocol (5 is
//! SOCKS5, anything else an HTTP request); both end in [`Gate::open`], which decides by name,
//! asks where the lists leave it open, resolves, checks the addresses and connects to one it
//! checked, so what the command reaches is what was decided. Every request is kept in the
//! command's [`NetworkLog`].

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::task::JoinSet;

use super::address::{self, Literal};
use super::{Answer, DomainPolicy, Listed, NetworkAuthority};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// A running proxy; dropping it stops it and every connection it carries.
pub struct NetworkProxy {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    /// Where it listens on the host's loopback too, for a backend that gives the command no
    /// network namespace (both protocols on one port: the first byte tells them apart).
    port: Option<u16>,
    gate: Arc<Gate>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for NetworkProxy {
    fn drop(&mut self) {
        self.task.abort();
        // The command has ended: the connections still carried end with it.
        if let Ok(live) = self.gate.live.lock() {
            for sockets in live.values() {
                for socket in sockets {
                    // SAFETY: a plain call on a descriptor we hold.
                    unsafe { libc::shutdown(socket.as_raw_fd(), libc::SHUT_RDWR) };
                }
            }
        }
    }
}

impl NetworkProxy {
    /// Listens in a new private directory, and on the host's loopback where this platform's
    /// backend needs it; `authority` has the user's say on what `policy` leaves open.
    pub fn start(policy: DomainPolicy, authority: Arc<dyn NetworkAuthority>) -> std::io::Result<NetworkProxy> {
        Self::start_listening(policy, authority, crate::current_backend().proxy_over_tcp())
    }

    /// As [`NetworkProxy::start`], listening on a port of the host's loopback when `on_loopback`.
    pub fn start_listening(
        policy: DomainPolicy,
        authority: Arc<dyn NetworkAuthority>,
        on_loopback: bool,
    ) -> std::io::Result<NetworkProxy> {
        let dir = tempfile::Builder::new().prefix("larik-proxy-").tempdir()?;
        let socket = dir.path().join("proxy.sock");
        let listener = UnixListener::bind(&socket)?;
        let loopback = if on_loopback {
            let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
            listener.set_nonblocking(true)?;
            Some(TcpListener::from_std(listener)?)
        } else {
            None
        };
        let port = loopback.as_ref().and_then(|listener| listener.local_addr().ok()).map(|address| address.port());
        let gate = Arc::new(Gate {
            policy,
            authority,
            answers: tokio::sync::Mutex::new(BTreeMap::new()),
            log: Mutex::new(NetworkLog::default()),
            live: Mutex::new(BTreeMap::new()),
            next_connection: std::sync::atomic::AtomicU64::new(0),
        });
        let serving = gate.clone();
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((channel, _)) => {
                            connections.spawn(take_over(channel, serving.clone()));
                        }
                        Err(error) => {
                            tracing::warn!(%error, "the sandbox's proxy stopped accepting");
                            break;
                        }
                    },
                    Ok((connection, _)) = accept(loopback.as_ref()) => {
                        connections.spawn(serve(connection, serving.clone()));
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(NetworkProxy { _dir: dir, socket, port, gate, task })
    }

    /// The socket the helper connects to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The port on the host's loopback, where it listens there.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// What the command asked for so far.
    pub fn log(&self) -> NetworkLog {
        self.gate.log.lock().map(|log| log.clone()).unwrap_or_default()
    }
}

/// Requests by domain: how many went through, how many were refused and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkLog {
    pub domains: BTreeMap<String, DomainRequests>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainRequests {
    pub passed: u32,
    pub refused: u32,
    /// Allowed, but the server could not be reached (no address, no answer).
    pub unreachable: u32,
    /// Why the last refused or unreachable one was.
    pub reason: Option<String>,
}

impl NetworkLog {
    /// `[network: 3 requests to a.example, 1 refused: b.example (why)]`, or nothing when the
    /// command asked for nothing.
    pub fn summary(&self) -> Option<String> {
        let mut parts = Vec::new();
        for (domain, requests) in &self.domains {
            if requests.passed > 0 {
                let plural = if requests.passed == 1 { "" } else { "s" };
                parts.push(format!("{} request{plural} to {domain}", requests.passed));
            }
        }
        for (domain, requests) in &self.domains {
            let why = requests.reason.as_deref().map(|reason| format!(" ({reason})")).unwrap_or_default();
            if requests.refused > 0 {
                parts.push(format!("{} refused: {domain}{why}", requests.refused));
            }
            if requests.unreachable > 0 {
                parts.push(format!("{} unreachable: {domain}{why}", requests.unreachable));
            }
        }
        (!parts.is_empty()).then(|| format!("[network: {}]", parts.join(", ")))
    }

    /// Adds another command's requests.
    pub fn merge(&mut self, other: &NetworkLog) {
        for (domain, theirs) in &other.domains {
            let mine = self.domains.entry(domain.clone()).or_default();
            mine.passed += theirs.passed;
            mine.refused += theirs.refused;
            mine.unreachable += theirs.unreachable;
            if theirs.reason.is_some() {
                mine.reason.clone_from(&theirs.reason);
            }
        }
    }
}

/// Why a connection was not made: refused by the rules, or the target could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    Refused(String),
    Unreachable(String),
}

impl Refusal {
    pub(super) fn message(&self, host: &str) -> String {
        match self {
            Refusal::Refused(why) => format!("larik sandbox: the connection to {host} was refused: {why}"),
            Refusal::Unreachable(why) => format!("larik sandbox: {host} could not be reached: {why}"),
        }
    }
}

/// The decisions of one command's proxy.
pub(super) struct Gate {
    policy: DomainPolicy,
    authority: Arc<dyn NetworkAuthority>,
    /// The user's answers for this command, by host; held while asking, so a name is asked once.
    answers: tokio::sync::Mutex<BTreeMap<String, bool>>,
    log: Mutex<NetworkLog>,
    /// The connections being carried, by number: shut down when the proxy goes.
    live: Mutex<BTreeMap<u64, [OwnedFd; 2]>>,
    next_connection: std::sync::atomic::AtomicU64,
}

impl Gate {
    /// Copies both ways until both sides are done, off the event loop: what the client sent
    /// beyond what was read goes first, then the kernel splices the rest (see `relay`).
    pub(super) async fn carry(&self, client: BufReader<TcpStream>, upstream: TcpStream) -> std::io::Result<()> {
        let early = client.buffer().to_vec();
        let client = client.into_inner().into_std()?;
        let upstream = upstream.into_std()?;
        client.set_nonblocking(false)?;
        upstream.set_nonblocking(false)?;
        std::io::Write::write_all(&mut &upstream, &early)?;
        let (client, upstream) = (OwnedFd::from(client), OwnedFd::from(upstream));
        let number = self.next_connection.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let (Ok(mut live), Ok(one), Ok(other)) = (self.live.lock(), client.try_clone(), upstream.try_clone()) {
            live.insert(number, [one, other]);
        }
        let carried = tokio::task::spawn_blocking(move || crate::relay::both_ways(client, upstream)).await;
        if let Ok(mut live) = self.live.lock() {
            live.remove(&number);
        }
        carried.map_err(std::io::Error::other)
    }

    /// A connection to `host:port`, if the rules or the user allow it.
    pub(super) async fn open(&self, host: &str, port: u16) -> Result<TcpStream, Refusal> {
        let host = host.trim_end_matches('.').trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let result = self.decide_and_connect(&host, port).await;
        if let Ok(mut log) = self.log.lock() {
            let entry = log.domains.entry(host.clone()).or_default();
            match &result {
                Ok(_) => entry.passed += 1,
                Err(Refusal::Refused(why)) => {
                    entry.refused += 1;
                    entry.reason = Some(why.clone());
                }
                Err(Refusal::Unreachable(why)) => {
                    entry.unreachable += 1;
                    entry.reason = Some(why.clone());
                }
            }
        }
        if let Err(refusal) = &result {
            tracing::info!(%host, port, ?refusal, "sandboxed connection not made");
        }
        result
    }

    async fn decide_and_connect(&self, host: &str, port: u16) -> Result<TcpStream, Refusal> {
        let rules = self.authority.rules(host);
        let listed = self.policy.listed(host, port, rules);
        if let Listed::Denied(why) = &listed {
            return Err(Refusal::Refused(why.clone()));
        }
        let named = listed == Listed::Named;
        if let Some(literal) = address::literal(host)
            && !named
        {
            let spelled = match literal {
                Literal::Address(_) => "an IP address",
                Literal::OtherSpelling => "an IP address in another notation",
            };
            return Err(Refusal::Refused(format!(
                "{spelled}: sandboxed commands reach names, unless sandbox.network.allowedDomains lists the address"
            )));
        }
        let addresses = address::resolve(host, port).await.map_err(|error| Refusal::Unreachable(error.to_string()))?;
        if !named && let Some(private) = addresses.iter().find(|address| address::is_refused(address.ip())) {
            return Err(Refusal::Refused(format!(
                "it resolves to {}, a loopback, private or link-local address, which only an entry naming {host} in sandbox.network.allowedDomains opens",
                private.ip()
            )));
        }
        if listed == Listed::Unlisted {
            self.ask(host, port).await?;
        }
        let mut last = String::from("no address");
        for address in addresses {
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
                Ok(Ok(stream)) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Ok(Err(error)) => last = error.to_string(),
                Err(_) => last = "timed out".into(),
            }
        }
        Err(Refusal::Unreachable(last))
    }

    /// The user's word on a name the lists leave open, asked once per command.
    async fn ask(&self, host: &str, port: u16) -> Result<(), Refusal> {
        if self.policy.managed_only {
            return Err(Refusal::Refused(
                "your organisation's policy allows only the domains it lists (allowManagedDomainsOnly)".into(),
            ));
        }
        let mut answers = self.answers.lock().await;
        let allowed = match answers.get(host) {
            Some(allowed) => *allowed,
            None => {
                let allowed = matches!(self.authority.ask(host, port).await, Answer::Once | Answer::Always);
                answers.insert(host.to_owned(), allowed);
                allowed
            }
        };
        if allowed {
            Ok(())
        } else {
            Err(Refusal::Refused("not in sandbox.network.allowedDomains, and not allowed when asked".into()))
        }
    }
}

/// The next connection on the host's loopback; never, where the proxy does not listen there.
async fn accept(listener: Option<&TcpListener>) -> std::io::Result<(TcpStream, std::net::SocketAddr)> {
    match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    }
}

/// Receives the command's connection the helper hands over, and serves it.
async fn take_over(channel: UnixStream, gate: Arc<Gate>) {
    let received = loop {
        if channel.readable().await.is_err() {
            return;
        }
        match channel.try_io(tokio::io::Interest::READABLE, || crate::handover::receive(&channel)) {
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => continue,
            other => break other,
        }
    };
    let connection = received.and_then(|fd| {
        let connection = std::net::TcpStream::from(fd);
        connection.set_nonblocking(true)?;
        TcpStream::from_std(connection)
    });
    match connection {
        Ok(connection) => serve(connection, gate).await,
        Err(error) => tracing::debug!(%error, "no connection came from the sandbox"),
    }
}

/// One connection of the command: SOCKS5 or HTTP by its first byte.
async fn serve(connection: TcpStream, gate: Arc<Gate>) {
    let mut client = BufReader::new(connection);
    let first = match client.fill_buf().await {
        Ok([first, ..]) => *first,
        _ => return,
    };
    let result = if first == super::socks::VERSION {
        super::socks::serve(client, &gate).await
    } else {
        super::http::serve(client, &gate).await
    };
    if let Err(error) = result {
        tracing::debug!(%error, "a sandboxed connection ended");
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::network::{DomainPattern, NoOneToAsk};

    /// A server on the host's loopback that answers one request per connection with `ok`.
    async fn server() -> u16 {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut connection, _)) = listener.accept().await {
                let mut request = [0u8; 1024];
                let _ = connection.read(&mut request).await;
                let _ = connection.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").await;
            }
        });
        port
    }

    async fn exchange(port: u16, request: &str) -> String {
        let mut connection = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        connection.write_all(request.as_bytes()).await.unwrap();
        let mut answer = vec![0u8; 1024];
        let read = tokio::time::timeout(Duration::from_secs(10), connection.read(&mut answer)).await.unwrap().unwrap();
        String::from_utf8_lossy(&answer[..read]).into_owned()
    }

    #[tokio::test]
    async fn on_the_host_loopback_one_port_carries_what_the_lists_allow_and_nothing_else() {
        let upstream = server().await;
        let allowed = DomainPattern::parse(&format!("127.0.0.1:{upstream}")).unwrap();
        let policy = DomainPolicy { allowed: vec![allowed], ..DomainPolicy::default() };
        let proxy = NetworkProxy::start_listening(policy, Arc::new(NoOneToAsk), true).unwrap();
        let port = proxy.port().unwrap();

        let target = format!("127.0.0.1:{upstream}");
        let answer = exchange(port, &format!("GET http://{target}/ HTTP/1.1\r\nHost: {target}\r\n\r\n")).await;
        assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"), "{answer}");

        let refused =
            exchange(port, "CONNECT unlisted.localhost:443 HTTP/1.1\r\nHost: unlisted.localhost:443\r\n\r\n").await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        let log = proxy.log();
        assert_eq!(log.domains["127.0.0.1"].passed, 1, "{log:?}");
        assert_eq!(log.domains["unlisted.localhost"].refused, 1, "{log:?}");

        let unix_only = NetworkProxy::start_listening(DomainPolicy::default(), Arc::new(NoOneToAsk), false).unwrap();
        assert_eq!(unix_only.port(), None);
    }
}
