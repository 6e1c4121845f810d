//! A server of one file over HTTP/1.1 on 127.0.0.1 for the download figures, sending the body
//! with `sendfile(2)` as a production file server does, so the server spends little of this
//! machine's CPU: a registry's or a mirror's server runs elsewhere, and on two cores a server
//! that copies every byte through user space takes the time the figures are about.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A running server: where it listens and what its answers took.
pub struct FileServer {
    pub port: u16,
    tally: Arc<Tally>,
}

/// The answers finished so far and the CPU they took.
#[derive(Default)]
struct Tally {
    answers: AtomicU64,
    micros: AtomicU64,
}

impl FileServer {
    /// Serves `file` at every path until the process ends.
    pub fn start(file: PathBuf) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let tally = Arc::new(Tally::default());
        let counted = tally.clone();
        std::thread::spawn(move || {
            for connection in listener.incoming().flatten() {
                let (file, counted) = (file.clone(), counted.clone());
                // One thread per answer, so the thread's CPU is the answer's. A failed answer is
                // a cut-off download: `curl` says so, and the bench stops there.
                std::thread::spawn(move || {
                    let _ = answer(connection, &file);
                    let micros = crate::process::cpu_used(libc::RUSAGE_THREAD).as_micros();
                    counted.micros.fetch_add(u64::try_from(micros).unwrap_or(u64::MAX), Ordering::Relaxed);
                    counted.answers.fetch_add(1, Ordering::Release);
                });
            }
        });
        Ok(Self { port, tally })
    }

    /// How many answers have finished, their CPU counted.
    pub fn answers(&self) -> u64 {
        self.tally.answers.load(Ordering::Acquire)
    }

    /// The CPU every answer finished so far took, user and system.
    pub fn cpu_spent(&self) -> Duration {
        Duration::from_micros(self.tally.micros.load(Ordering::Relaxed))
    }

    /// Waits (a second at most) until more than `answers` answers have finished: the client
    /// may have its last byte before the answer's thread has counted its CPU.
    pub async fn answered_beyond(&self, answers: u64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        while self.answers() <= answers && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

fn answer(connection: TcpStream, file: &std::path::Path) -> anyhow::Result<()> {
    let mut reader = BufReader::new(connection.try_clone()?);
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let body = std::fs::File::open(file)?;
    let length = body.metadata()?.len();
    let mut connection = connection;
    write!(
        connection,
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    )?;
    send_body(&body, &mut connection, length)
}

#[cfg(target_os = "linux")]
fn send_body(body: &std::fs::File, connection: &mut TcpStream, length: u64) -> anyhow::Result<()> {
    use std::os::fd::AsRawFd;
    let mut left = length;
    while left > 0 {
        let chunk = usize::try_from(left.min(1 << 30))?;
        // SAFETY: two open descriptors of ours; a null offset reads from the file's position.
        let sent = unsafe { libc::sendfile(connection.as_raw_fd(), body.as_raw_fd(), std::ptr::null_mut(), chunk) };
        anyhow::ensure!(sent > 0, "sendfile: {}", std::io::Error::last_os_error());
        left -= sent.unsigned_abs() as u64;
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn send_body(body: &std::fs::File, connection: &mut TcpStream, _length: u64) -> anyhow::Result<()> {
    std::io::copy(&mut &*body, connection)?;
    Ok(())
}
