//! A loopback HTTP file server for tests of `download-url` and `query-url-metadata`: the
//! "internet" a simulated node downloads from. Files are described, not stored: a
//! pattern body of any size is generated as it is sent, so a 1 GiB image costs no memory.
//! Plain HTTP/1.1, one request per connection, `GET` and `HEAD`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What a path answers.
#[derive(Debug, Clone)]
pub struct Served {
    pub status: u16,
    /// The body's first bytes (e.g. an image header); the rest follows the pattern.
    pub prefix: Vec<u8>,
    /// Total body size in bytes.
    pub size: u64,
    pub content_type: Option<String>,
    pub disposition: Option<String>,
    /// `Location` of a 302.
    pub redirect: Option<String>,
    /// Send no `Content-Length` (close-delimited body).
    pub no_length: bool,
    /// Send at most this many bytes per second (a slow mirror), else as fast as possible.
    pub bytes_per_sec: Option<u64>,
    /// The status a `HEAD` gets instead (no headers of the file): 405 from a server that
    /// does not implement HEAD, 403 from an object store link signed for GET only.
    pub head_status: Option<u16>,
}

impl Served {
    /// `size` bytes of the pattern, `application/octet-stream`.
    pub fn pattern(size: u64) -> Served {
        Served {
            status: 200,
            prefix: vec![],
            size,
            content_type: Some("application/octet-stream".into()),
            disposition: None,
            redirect: None,
            no_length: false,
            bytes_per_sec: None,
            head_status: None,
        }
    }
    /// Exactly these bytes.
    pub fn bytes(b: &[u8]) -> Served {
        Served {
            prefix: b.to_vec(),
            ..Served::pattern(b.len() as u64)
        }
    }
    /// A qcow2 image file of `size` bytes whose disk is `virtual_size` bytes.
    pub fn qcow2(virtual_size: u64, size: u64) -> Served {
        Served {
            prefix: qcow2_header(virtual_size),
            ..Served::pattern(size.max(32))
        }
    }
    /// A status without a body (`404`, …).
    pub fn status(code: u16) -> Served {
        Served {
            status: code,
            ..Served::pattern(0)
        }
    }
    /// This file, but a `HEAD` of it answered with `status` alone.
    pub fn refusing_head(self, status: u16) -> Served {
        Served {
            head_status: Some(status),
            ..self
        }
    }
    /// A 302 to `location`.
    pub fn redirect(location: &str) -> Served {
        Served {
            status: 302,
            redirect: Some(location.to_string()),
            ..Served::pattern(0)
        }
    }
    /// Byte `i` of the body.
    fn byte(&self, i: u64) -> u8 {
        match self.prefix.get(i as usize) {
            Some(b) => *b,
            None => (i.wrapping_mul(31) ^ (i >> 13)) as u8,
        }
    }
    /// Feed the body, in chunks, to `f`.
    pub fn each_chunk(&self, mut f: impl FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        let mut buf = vec![0u8; 64 << 10];
        let mut at = 0u64;
        while at < self.size {
            let n = (self.size - at).min(buf.len() as u64) as usize;
            for (k, b) in buf[..n].iter_mut().enumerate() {
                *b = self.byte(at + k as u64);
            }
            f(&buf[..n])?;
            at += n as u64;
        }
        Ok(())
    }
    /// The body as a reader, generated as it is read.
    pub fn reader(&self) -> ServedReader {
        ServedReader {
            served: self.clone(),
            at: 0,
        }
    }
    /// The body's digests by algorithm (what a checksum of it must say).
    pub fn digests(&self) -> BTreeMap<String, String> {
        let mut d = crate::content::digest::Digests::default();
        let _ = self.each_chunk(|c| {
            d.update(c);
            Ok(())
        });
        d.finish()
    }
}

/// A [`Served`] body being read.
pub struct ServedReader {
    served: Served,
    at: u64,
}

impl std::io::Read for ServedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (self.served.size - self.at).min(buf.len() as u64) as usize;
        for (k, b) in buf[..n].iter_mut().enumerate() {
            *b = self.served.byte(self.at + k as u64);
        }
        self.at += n as u64;
        Ok(n)
    }
}

/// The first 32 bytes of a qcow2 v3 image without a backing file.
pub fn qcow2_header(virtual_size: u64) -> Vec<u8> {
    let mut h = b"QFI\xfb\0\0\0\x03".to_vec();
    h.extend(0u64.to_be_bytes()); // backing file offset
    h.extend(16u32.to_be_bytes()); // backing file size 0, cluster bits 16
    h.extend(16u32.to_be_bytes());
    h.extend(virtual_size.to_be_bytes());
    h
}

/// A running file server; stops when dropped.
pub struct FileServer {
    addr: SocketAddr,
    files: Arc<Mutex<BTreeMap<String, Served>>>,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl FileServer {
    pub fn start() -> std::io::Result<FileServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let files: Arc<Mutex<BTreeMap<String, Served>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (f, r, s) = (files.clone(), requests.clone(), stop.clone());
        std::thread::Builder::new().name("fileserver".into()).spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (f, r) = (f.clone(), r.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, &f, &r);
                });
            }
        })?;
        Ok(FileServer {
            addr,
            files,
            requests,
            stop,
        })
    }
    /// Serve `served` at `path` (e.g. `/images/debian.qcow2`).
    pub fn add(&self, path: &str, served: Served) {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.to_string(), served);
    }
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    /// `METHOD /path` of every request so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(conn: TcpStream, files: &Mutex<BTreeMap<String, Served>>, log: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("/").to_string(),
    );
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
    }
    let path = target.split('?').next().unwrap_or("/").to_string();
    log.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(format!("{method} {path}"));
    let served = files
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&path)
        .cloned()
        .unwrap_or_else(|| Served::status(404));
    let served = match served.head_status.filter(|_| method == "HEAD") {
        Some(code) => Served::status(code),
        None => served,
    };
    let mut out = std::io::BufWriter::with_capacity(64 << 10, conn);
    let reason = match served.status {
        200 => "OK",
        302 => "Found",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Unknown",
    };
    write!(
        out,
        "HTTP/1.1 {} {reason}\r\nServer: pvesim-fileserver\r\nConnection: close\r\n",
        served.status
    )?;
    if !served.no_length {
        write!(out, "Content-Length: {}\r\n", served.size)?;
    }
    if let Some(t) = &served.content_type {
        write!(out, "Content-Type: {t}\r\n")?;
    }
    if let Some(d) = &served.disposition {
        write!(out, "Content-Disposition: {d}\r\n")?;
    }
    if let Some(l) = &served.redirect {
        write!(out, "Location: {l}\r\n")?;
    }
    write!(out, "\r\n")?;
    if method == "GET" {
        let started = std::time::Instant::now();
        let mut sent = 0u64;
        served.each_chunk(|c| {
            out.write_all(c)?;
            sent += c.len() as u64;
            if let Some(rate) = served.bytes_per_sec.filter(|r| *r > 0) {
                out.flush()?;
                let due = std::time::Duration::from_secs_f64(sent as f64 / rate as f64);
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    std::thread::sleep(wait);
                }
            }
            Ok(())
        })?;
    }
    out.flush()
}
