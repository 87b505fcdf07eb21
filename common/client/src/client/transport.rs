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
pub struct ReasonPhrase {
    latest: Mutex<Option<(u16, String)>>,
}

impl ReasonPhrase {
    /// The latest status line's reason, if it had this status.
    pub fn for_status(&self, status: u16) -> Option<String> {
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
/// Proxmox VE never saw the request, one after it leaves its fate unknown.
#[derive(Debug, Default)]
pub struct RequestProgress {
    sent: AtomicBool,
}

impl RequestProgress {
    /// A new request begins.
    pub fn clear(&self) {
        self.sent.store(false, Ordering::Relaxed);
    }
    pub fn was_sent(&self) -> bool {
        self.sent.load(Ordering::Relaxed)
    }
    fn mark_sent(&self) {
        self.sent.store(true, Ordering::Relaxed);
    }
}

/// `HTTP/1.1 401 No ticket` to `(401, "No ticket")`.
pub fn parse_status_line(line: &str) -> Option<(u16, String)> {
    let rest = line.strip_prefix("HTTP/")?;
    let (_version, rest) = rest.split_once(' ')?;
    let (code, reason) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((code.parse().ok()?, reason.trim().to_string()))
}

/// Wraps the TCP transport in TLS with a fixed rustls configuration.
pub struct TlsConnector {
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

pub struct TlsTransport {
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

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
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
