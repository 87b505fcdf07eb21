//! The read-only HTTPS client of `pvesim import`: GET with an API token, nothing else.
//! Written here on rustls rather than shared with the modules' client, because the
//! simulator shares no code with what it tests. One connection per request
//! (`Connection: close`), so a body ends at EOF or at its chunked terminator.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// How the server's certificate is trusted.
#[derive(Debug, Clone)]
pub enum Trust {
    /// The public web PKI roots.
    WebPki,
    /// A CA file (`/etc/pve/pve-root-ca.pem`).
    Ca(PathBuf),
    /// Exactly this certificate: SHA-256, 64 hex digits (colons allowed).
    Fingerprint(String),
    /// No verification at all.
    Insecure,
}

/// A GET that did not answer 200, with PVE's status (none: the connection failed).
#[derive(Debug)]
pub struct GetError {
    pub status: Option<u16>,
    pub message: String,
}

impl std::fmt::Display for GetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub struct Reader {
    config: Arc<ClientConfig>,
    host: String,
    port: u16,
    authorization: String,
}

impl Reader {
    /// `url`: `https://host[:port]` (port 8006 when not given).
    pub fn new(url: &str, token_id: &str, token_secret: &str, trust: Trust) -> anyhow::Result<Reader> {
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| anyhow::anyhow!("--url must start with https://, got {url}"))?;
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) =
            split_authority(authority).ok_or_else(|| anyhow::anyhow!("--url {url}: no host[:port] in it"))?;
        let (user, id) = token_id.split_once('!').ok_or_else(|| {
            anyhow::anyhow!("--token-id must be USER@REALM!TOKENNAME (like ansible@pve!readonly), got {token_id}")
        })?;
        anyhow::ensure!(
            user.contains('@') && !id.is_empty(),
            "--token-id must be USER@REALM!TOKENNAME, got {token_id}"
        );
        Ok(Reader {
            config: tls_config(&trust)?,
            host,
            port,
            authorization: format!("PVEAPIToken={token_id}={token_secret}"),
        })
    }

    /// `GET /api2/json<path>` and its `data`.
    pub fn get(&self, path: &str) -> Result<Value, GetError> {
        let fail = |message: String| GetError { status: None, message };
        let (status, body) = self.exchange(path).map_err(|e| {
            let text = e.to_string();
            let hint = if text.contains("certificate") || text.contains("UnknownIssuer") {
                " (a node's own certificate: pass --fingerprint with the SHA-256 of `pvenode cert info`, or --ca with /etc/pve/pve-root-ca.pem)"
            } else {
                ""
            };
            fail(format!("GET {path} at {}:{}: {text}{hint}", self.host, self.port))
        })?;
        if status != 200 {
            let json: Option<Value> = serde_json::from_slice(&body).ok();
            let text = json
                .as_ref()
                .and_then(|j| j["message"].as_str())
                .map(str::trim)
                .unwrap_or("")
                .to_string();
            let hint = match status {
                401 => " (authentication failed: check --token-id and --token-secret)",
                403 => " (the token lacks a privilege: give it the role PVEAuditor on /)",
                _ => "",
            };
            return Err(GetError {
                status: Some(status),
                message: format!("GET {path}: HTTP {status} {text}{hint}"),
            });
        }
        let json: Value =
            serde_json::from_slice(&body).map_err(|e| fail(format!("GET {path}: the answer is not JSON ({e})")))?;
        Ok(json.get("data").cloned().unwrap_or(Value::Null))
    }

    fn exchange(&self, path: &str) -> anyhow::Result<(u16, Vec<u8>)> {
        let addr = (self.host.as_str(), self.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| anyhow::anyhow!("{} does not resolve", self.host))?;
        let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(15))?;
        tcp.set_read_timeout(Some(Duration::from_secs(60)))?;
        let name = ServerName::try_from(self.host.clone())?;
        let conn = rustls::ClientConnection::new(self.config.clone(), name)?;
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let request = format!(
            "GET /api2/json{path} HTTP/1.1\r\nHost: {host}:{}\r\nAuthorization: {}\r\nAccept: application/json\r\nUser-Agent: pvesim-import\r\nConnection: close\r\n\r\n",
            self.port, self.authorization
        );
        tls.write_all(request.as_bytes())?;
        let mut raw = Vec::new();
        match tls.read_to_end(&mut raw) {
            Ok(_) => {}
            // A server that closes without close_notify: what arrived is the answer.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => {}
            Err(e) => return Err(e.into()),
        }
        parse_response(&raw)
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_authority(a: &str) -> Option<(String, u16)> {
    if let Some(rest) = a.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after
            .strip_prefix(':')
            .map(str::parse)
            .transpose()
            .ok()?
            .unwrap_or(8006);
        return Some((host.to_string(), port));
    }
    let (host, port) = match a.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().ok()?),
        None => (a, 8006),
    };
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// Status and body of an HTTP/1.1 response (Content-Length, chunked, or up to EOF).
fn parse_response(raw: &[u8]) -> anyhow::Result<(u16, Vec<u8>)> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow::anyhow!("no HTTP response"))?;
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let body = &raw[end + 4..];
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no HTTP status line"))?;
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.trim().eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        return Ok((status, dechunk(body)?));
    }
    let len = header("content-length")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(body.len());
    Ok((status, body[..len.min(body.len())].to_vec()))
}

fn dechunk(mut body: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| anyhow::anyhow!("truncated chunked body"))?;
        let size_text = String::from_utf8_lossy(&body[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)?;
        body = &body[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        anyhow::ensure!(body.len() >= size, "truncated chunked body");
        out.extend_from_slice(&body[..size]);
        body = body.get(size + 2..).unwrap_or_default();
    }
}

fn tls_config(trust: &Trust) -> anyhow::Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?;
    let config = match trust {
        Trust::WebPki => {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::Ca(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in
                CertificateDer::pem_file_iter(path).map_err(|e| anyhow::anyhow!("--ca {}: {e}", path.display()))?
            {
                roots.add(cert.map_err(|e| anyhow::anyhow!("--ca {}: {e}", path.display()))?)?;
            }
            anyhow::ensure!(!roots.is_empty(), "--ca {}: no certificate in it", path.display());
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::Fingerprint(fp) => {
            let pin: String = fp
                .chars()
                .filter(|c| *c != ':')
                .collect::<String>()
                .to_ascii_uppercase();
            anyhow::ensure!(
                pin.len() == 64 && pin.chars().all(|c| c.is_ascii_hexdigit()),
                "--fingerprint must be a SHA-256 fingerprint (AB:CD:... 32 bytes), got {fp}"
            );
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Pinned {
                    pin: Some(pin),
                    provider,
                }))
                .with_no_client_auth()
        }
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Pinned { pin: None, provider }))
            .with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// Accepts exactly the certificate with the pinned SHA-256 (or, without a pin, any),
/// still checking the handshake signatures.
#[derive(Debug)]
struct Pinned {
    pin: Option<String>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(pin) = &self.pin else {
            return Ok(ServerCertVerified::assertion());
        };
        let seen: String = Sha256::digest(end_entity.as_ref())
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        if &seen == pin {
            Ok(ServerCertVerified::assertion())
        } else {
            let colons: Vec<String> = seen
                .as_bytes()
                .chunks(2)
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect();
            Err(rustls::Error::General(format!(
                "the server's certificate has the fingerprint {}, not the one of --fingerprint",
                colons.join(":")
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_and_bodies_parse() {
        assert_eq!(split_authority("pve1:8006"), Some(("pve1".into(), 8006)));
        assert_eq!(split_authority("pve1"), Some(("pve1".into(), 8006)));
        assert_eq!(split_authority("[::1]:443"), Some(("::1".into(), 443)));
        assert_eq!(split_authority(":1"), None);
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"da\r\n9\r\nta\":null}\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (200, b"{\"data\":null}".to_vec()));
        let sized = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\n{}xx";
        assert_eq!(parse_response(sized).unwrap(), (403, b"{}".to_vec()));
    }
}
