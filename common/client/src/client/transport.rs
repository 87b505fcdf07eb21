//! The TLS layer under ureq: our own rustls configuration (ureq's `TlsConfig` cannot
//! carry a custom verifier, which fingerprint pinning needs), and a tap that keeps
//! the reason phrase of each response's status line.
//!
//! PVE puts its error text in the reason phrase (`HTTP/1.1 401 No ticket`) and, since
//! PVE 8.3, also in the body's `message`. ureq does not expose the reason phrase, so
//! it is read off the decrypted stream here: the answer to a request starts with the
//! first bytes read after the request was written.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport, TransportAdapter,
};

/// The reason phrase of the latest response, shared with the client.
#[derive(Debug, Default)]
pub(super) struct ReasonPhrase {
    latest: Mutex<Option<(u16, String)>>,
}

impl ReasonPhrase {
    /// The latest status line's reason, if it had this status.
    pub(super) fn for_status(&self, status: u16) -> Option<String> {
        let latest = self.latest.lock().ok()?;
        latest.as_ref().filter(|(s, _)| *s == status).map(|(_, r)| r.clone())
    }
    fn set(&self, value: Option<(u16, String)>) {
        if let Ok(mut l) = self.latest.lock() {
            *l = value;
        }
    }
}

/// Whether the current request's bytes left this host: a failure before that point means
/// Proxmox VE never saw the request, one after it leaves its fate unknown. And what the
/// server answered before a write of the request failed ([`RequestProgress::late_answer`]).
#[derive(Debug, Default)]
pub(super) struct RequestProgress {
    sent: AtomicBool,
    late_answer: Mutex<Option<Vec<u8>>>,
}

impl RequestProgress {
    /// A new request begins.
    pub(super) fn clear(&self) {
        self.sent.store(false, Ordering::Relaxed);
        self.set_late_answer(None);
    }
    pub(super) fn was_sent(&self) -> bool {
        self.sent.load(Ordering::Relaxed)
    }
    fn mark_sent(&self) {
        self.sent.store(true, Ordering::Relaxed);
    }
    /// The bytes of an answer that arrived before a write of the request failed: PVE
    /// answers an upload it refuses (authentication, permission) before reading its body,
    /// then closes the connection, so a client still sending sees a reset.
    pub(super) fn late_answer(&self) -> Option<Vec<u8>> {
        self.late_answer.lock().ok().and_then(|mut a| a.take())
    }
    fn set_late_answer(&self, answer: Option<Vec<u8>>) {
        if let Ok(mut a) = self.late_answer.lock() {
            *a = answer;
        }
    }
}

/// How long a failed write waits for the rest of an answer the server already sent.
const LATE_ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// The most of such an answer that is kept (PVE's refusals are a status line and a line).
const LATE_ANSWER_LIMIT: usize = 64 * 1024;

/// `HTTP/1.1 401 No ticket` to `(401, "No ticket")`.
pub(super) fn parse_status_line(line: &str) -> Option<(u16, String)> {
    let rest = line.strip_prefix("HTTP/")?;
    let (_version, rest) = rest.split_once(' ')?;
    let (code, reason) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((code.parse().ok()?, reason.trim().to_string()))
}

/// Wraps the TCP transport in TLS with a fixed rustls configuration.
pub(super) struct TlsConnector {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
    pub reason: Arc<ReasonPhrase>,
    pub progress: Arc<RequestProgress>,
}

impl std::fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConnector")
            .field("server_name", &self.server_name)
            .finish()
    }
}

impl<In: Transport> Connector<In> for TlsConnector {
    type Out = Either<In, TlsTransport>;

    fn connect(&self, details: &ConnectionDetails, chained: Option<In>) -> Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else {
            return Err(ureq::Error::ConnectionFailed);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        let mut conn = ClientConnection::new(self.config.clone(), self.server_name.clone())?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(details.timeout);
        conn.complete_io(&mut sock)?;
        let buffers = LazyBuffers::new(details.config.input_buffer_size(), details.config.output_buffer_size());
        Ok(Some(Either::B(TlsTransport {
            buffers,
            stream: StreamOwned { conn, sock },
            status_line: StatusLineTap {
                reason: self.reason.clone(),
                pending: Some(Vec::new()),
            },
            progress: self.progress.clone(),
        })))
    }
}

/// Collects the first line of each response.
struct StatusLineTap {
    reason: Arc<ReasonPhrase>,
    /// `Some` while waiting for the status line of the current response.
    pending: Option<Vec<u8>>,
}

impl StatusLineTap {
    /// A request was written: the next bytes read begin its answer.
    fn request_sent(&mut self) {
        if self.pending.is_none() {
            self.reason.set(None);
        }
        self.pending = Some(Vec::new());
    }

    fn bytes_read(&mut self, bytes: &[u8]) {
        let Some(pending) = self.pending.as_mut() else { return };
        pending.extend_from_slice(bytes);
        if let Some(end) = pending.windows(2).position(|w| w == b"\r\n") {
            let line = String::from_utf8_lossy(&pending[..end]).into_owned();
            self.reason.set(parse_status_line(&line));
            self.pending = None;
        } else if pending.len() > 1024 {
            self.pending = None;
        }
    }
}

pub(super) struct TlsTransport {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
    status_line: StatusLineTap,
    progress: Arc<RequestProgress>,
}

impl std::fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsTransport")
    }
}

impl TlsTransport {
    /// A write failed after part of the request went out: whatever the server answered
    /// before it closed is read (TLS records only, nothing written: the connection is
    /// broken for writing) and kept for the caller, its status line for the reason phrase.
    fn read_late_answer(&mut self) {
        let StreamOwned { conn, sock } = &mut self.stream;
        sock.set_timeout(NextTimeout {
            after: LATE_ANSWER_WAIT.into(),
            reason: ureq::Timeout::RecvResponse,
            ..NextTimeout::default()
        });
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        while answer.len() < LATE_ANSWER_LIMIT {
            match conn.reader().read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    answer.extend_from_slice(&chunk[..n]);
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
            match conn.read_tls(sock) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if conn.process_new_packets().is_err() {
                        break;
                    }
                }
            }
        }
        if !answer.is_empty() {
            self.status_line.bytes_read(&answer);
            self.progress.set_late_answer(Some(answer));
        }
    }
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        if let Err(e) = self.stream.write_all(output) {
            if self.progress.was_sent() {
                self.read_late_answer();
            }
            return Err(e.into());
        }
        // A request cut short while being written is incomplete and cannot run; once a
        // write has gone through, PVE may have all of it.
        self.progress.mark_sent();
        self.status_line.request_sent();
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let amount = self.stream.read(input)?;
        self.status_line.bytes_read(&input[..amount]);
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_parse() {
        assert_eq!(
            parse_status_line("HTTP/1.1 401 No ticket"),
            Some((401, "No ticket".into()))
        );
        assert_eq!(parse_status_line("HTTP/1.1 200 OK"), Some((200, "OK".into())));
        assert_eq!(parse_status_line("HTTP/1.1 204"), Some((204, String::new())));
        assert_eq!(parse_status_line("garbage"), None);
    }

    #[test]
    fn tap_reads_a_status_line_split_across_reads() {
        let reason = Arc::new(ReasonPhrase::default());
        let mut tap = StatusLineTap {
            reason: reason.clone(),
            pending: None,
        };
        tap.request_sent();
        tap.bytes_read(b"HTTP/1.1 500 unable to ");
        assert_eq!(reason.for_status(500), None);
        tap.bytes_read(b"create VM\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(reason.for_status(500).as_deref(), Some("unable to create VM"));
        assert_eq!(reason.for_status(200), None);
        // Body bytes of the same response do not replace the status line.
        tap.bytes_read(b"HTTP/1.1 200 OK\r\n");
        assert_eq!(reason.for_status(500).as_deref(), Some("unable to create VM"));
    }
}
