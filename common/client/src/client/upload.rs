//! `multipart/form-data` uploads (`POST .../storage/{storage}/upload`), streamed: the
//! file goes from disk to the socket through a small buffer, so an upload of any size
//! costs the same memory. The body's length is computed up front and sent as
//! `Content-Length` (PVE's API server reads the upload by length, not chunked).

use std::io::{Cursor, Read};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{trace, url, Answer, ApiError, ApiErrorKind, Client, Fields, Method};

/// The part boundary: not a byte sequence of PVE's form values (they are names and
/// checksums), and a file that happens to contain it is still read by its length.
const BOUNDARY: &str = "----ferrox-proxmox-upload-7c1f0e9a3b2d4c58";

/// The file part of an upload.
pub struct FilePart<'a> {
    /// The form field that carries it (`filename` for PVE's upload).
    pub field: &'a str,
    /// The file name the server is told.
    pub name: &'a str,
    /// Where the file's bytes come from; read once, as they are sent.
    pub reader: &'a mut dyn Read,
    /// The file's length in bytes, which the request's `Content-Length` counts on.
    pub len: u64,
}

/// What went over the wire: bytes of the file and how long the request took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sent {
    /// Bytes of the file sent.
    pub bytes: u64,
    /// How long the request took, in seconds.
    pub seconds: f64,
}

impl Client {
    /// POST `fields`, then `file` as the last part (PVE requires the file last), and
    /// the answer's `data`. Never repeated: the file is read once. The request may take
    /// as long as the upload needs; only the answer must come within `api_timeout`.
    pub fn post_multipart(&self, path: &str, fields: Fields, file: FilePart<'_>) -> Result<(Value, Sent), ApiError> {
        self.refuse_write_in_check_mode(Method::Post, path)?;
        if self.is_local() {
            return self.upload_through_pvesh(path, fields, file);
        }
        let (head, tail) = frame(fields, file.field, file.name);
        let length = head.len() as u64 + file.len + tail.len() as u64;
        let counted = Arc::new(AtomicU64::new(0));
        let mut body = Cursor::new(head)
            .chain(Counting {
                inner: file.reader.take(file.len),
                count: counted.clone(),
            })
            .chain(Cursor::new(tail));
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.observed.clear();
        self.progress.clear();
        let started = Instant::now();
        let url = url::request_url(&self.base_url, path, &[]);
        let mut req = self
            .agent
            .post(&url)
            .config()
            .timeout_global(None)
            .timeout_connect(Some(Duration::from_secs(self.timeout_secs)))
            .timeout_recv_response(Some(Duration::from_secs(self.timeout_secs)))
            .build();
        // A kept ticket PVE refuses was replaced by the module's earlier reads (the storage
        // and its content), which precede every upload.
        let headers = self.credentials().headers(true);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let exchanged = req
            .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
            .header("content-length", length.to_string())
            .send(ureq::SendBody::from_reader(&mut body));
        trace::record(
            "POST",
            path,
            exchanged.as_ref().ok().map(|r| r.status().as_u16()),
            started.elapsed(),
        );
        let mut response = match exchanged {
            Ok(response) => response,
            Err(e) => {
                let sent = counted.load(Ordering::Relaxed);
                return Err(self.upload_cut_short(path, e, started.elapsed(), (sent, file.len)));
            }
        };
        let sent = Sent {
            bytes: counted.load(Ordering::Relaxed),
            seconds: started.elapsed().as_secs_f64(),
        };
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(1024 * 1024)
            .read_to_string()
            .unwrap_or_default();
        if status >= 400 {
            return Err(self.http_error(status, &text));
        }
        let data = super::decode_value(&mut text.as_bytes(), Answer::Data)
            .map_err(|e| self.undecodable(Method::Post, path, &e))?;
        self.note_task(&data);
        Ok((data, sent))
    }
}

impl Client {
    /// An upload whose connection failed. PVE checks the credentials and the storage's
    /// `Datastore.AllocateTemplate` before it reads the body, answers a refusal (after its
    /// 3 s delay) and closes the connection, unread (pve-http-server `unshift_read_header`,
    /// pve-manager `auth_handler`): a client still sending the file sees a reset. The answer
    /// that came before the reset is the error; without one, a reset mid-file names the
    /// likely refusals before the network.
    fn upload_cut_short(&self, path: &str, e: ureq::Error, after: Duration, (sent, len): (u64, u64)) -> ApiError {
        if let Some(answer) = self.progress.late_answer() {
            let text = String::from_utf8_lossy(&answer);
            let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
            if let Some((status, _)) = head.lines().next().and_then(super::transport::parse_status_line) {
                let mut refused = self.http_error(status, body);
                refused.message = format!(
                    "{} (Proxmox VE refused the upload before reading the file, after {sent} of {len} bytes were sent)",
                    refused.message
                );
                return refused;
            }
        }
        let broken = matches!(&e, ureq::Error::Io(io) if matches!(io.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionAborted));
        if !(self.progress.was_sent() && broken && sent < len) {
            return self.transport_error(Method::Post, path, e, after);
        }
        ApiError::other(
            ApiErrorKind::Dropped,
            format!(
                "POST {path} to {}: the connection was reset after {sent} of {len} bytes of the file were sent, without an answer. Proxmox VE closes an upload it refuses before reading the file: check that {} is still accepted (authentication: api_password or api_token_id/api_token_secret) and has Datastore.AllocateTemplate on the storage (permission); otherwise the network or a proxy on the way broke the connection",
                self.endpoint.origin(),
                self.identity()
            ),
        )
    }
}

/// The body before the file's bytes (the fields and the file part's header) and after.
fn frame(fields: Fields, field: &str, name: &str) -> (Vec<u8>, Vec<u8>) {
    let mut head = String::new();
    for (k, v) in fields {
        head.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{}\"\r\n\r\n{v}\r\n",
            quoted(k)
        ));
    }
    head.push_str(&format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
        quoted(field),
        quoted(name)
    ));
    (head.into_bytes(), format!("\r\n--{BOUNDARY}--\r\n").into_bytes())
}

/// A header parameter value as browsers send it: `"` and line breaks escaped.
fn quoted(text: &str) -> String {
    text.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_the_last_part_and_the_length_is_exact() {
        let (head, tail) = frame(&[("content", "iso".into())], "filename", "a\"b.iso");
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\niso\r\n"
        )));
        assert!(head
            .ends_with("name=\"filename\"; filename=\"a%22b.iso\"\r\nContent-Type: application/octet-stream\r\n\r\n"));
        assert_eq!(String::from_utf8(tail).unwrap(), format!("\r\n--{BOUNDARY}--\r\n"));
    }
}
