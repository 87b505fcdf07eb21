//! The simulated node's HTTP client: what `wget` (download-url) and LWP
//! (query-url-metadata) do on a real node, over plain HTTP or HTTPS, streaming.

use std::io::Read;
use std::time::Duration;

/// Why a request got no HTTP answer, in the words of the C library / TLS stack.
#[derive(Debug, Clone, PartialEq)]
pub enum NoAnswer {
    /// The host name does not resolve.
    Unresolved,
    /// The TCP connection or TLS handshake failed: the reason (`Connection refused`,
    /// `certificate verify failed`, …).
    Connect(String),
    /// The connection broke or timed out after it was made.
    Broken(String),
}

/// The host and port a URL names (port defaulted by scheme).
pub fn host_port(url: &str) -> (String, u16) {
    let uri: Option<ureq::http::Uri> = url.parse().ok();
    let host = uri
        .as_ref()
        .and_then(|u| u.host())
        .unwrap_or("")
        .trim_matches(['[', ']'])
        .to_string();
    let https = url.starts_with("https");
    let port = uri
        .as_ref()
        .and_then(|u| u.port_u16())
        .unwrap_or(if https { 443 } else { 80 });
    (host, port)
}

/// An agent as the node's tools use it: redirects followed (`max_redirects`), certificates
/// checked unless `verify` is off, bodies as sent (no transparent decompression).
pub fn agent(verify: bool, max_redirects: u32) -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder().disable_verification(!verify).build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .max_redirects(max_redirects)
        .max_redirects_will_error(true)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_body(Some(Duration::from_secs(900)))
        .accept_encoding("identity")
        .build()
        .new_agent()
}

fn classify(e: ureq::Error) -> NoAnswer {
    use std::io::ErrorKind;
    match e {
        ureq::Error::HostNotFound => NoAnswer::Unresolved,
        ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => {
            NoAnswer::Connect("Connection refused".into())
        }
        ureq::Error::Io(io)
            if io
                .get_ref()
                .is_some_and(|e| e.downcast_ref::<rustls::Error>().is_some()) =>
        {
            let cert = matches!(
                io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()),
                Some(rustls::Error::InvalidCertificate(_))
            );
            NoAnswer::Connect(
                if cert {
                    "certificate verify failed"
                } else {
                    "SSL connect attempt failed"
                }
                .into(),
            )
        }
        ureq::Error::Io(io) if io.kind() == ErrorKind::NotFound => NoAnswer::Unresolved,
        ureq::Error::Io(io) => NoAnswer::Broken(io.to_string()),
        ureq::Error::ConnectionFailed => NoAnswer::Connect("Connection refused".into()),
        ureq::Error::Timeout(_) => NoAnswer::Connect("Connection timed out".into()),
        ureq::Error::Rustls(_) | ureq::Error::Tls(_) => NoAnswer::Connect("certificate verify failed".into()),
        ureq::Error::TooManyRedirects => NoAnswer::Broken("20 redirections exceeded.".into()),
        other => NoAnswer::Broken(other.to_string()),
    }
}

/// An answer's status line and the headers the node's tools read.
pub struct Head {
    pub status: u16,
    pub reason: String,
    pub content_length: Option<u64>,
    pub content_type: Option<String>,
    pub disposition: Option<String>,
}

fn head_of(r: &ureq::http::Response<ureq::Body>) -> Head {
    let h = |k: &str| r.headers().get(k).and_then(|v| v.to_str().ok()).map(str::to_string);
    Head {
        status: r.status().as_u16(),
        reason: r.status().canonical_reason().unwrap_or("").to_string(),
        content_length: h("content-length").and_then(|v| v.trim().parse().ok()),
        content_type: h("content-type"),
        disposition: h("content-disposition"),
    }
}

/// `HEAD url`, following up to 7 redirects (LWP::UserAgent's default).
pub fn head(url: &str, verify: bool) -> Result<Head, NoAnswer> {
    let r = agent(verify, 7)
        .head(url)
        .header("user-agent", "Proxmox VE")
        .call()
        .map_err(classify)?;
    Ok(head_of(&r))
}

/// `GET url` (wget follows up to 20 redirects): the head and a reader of the body.
pub fn get(url: &str, verify: bool) -> Result<(Head, Box<dyn Read + Send>), NoAnswer> {
    let r = agent(verify, 20)
        .get(url)
        .header("user-agent", "Wget/1.25.0")
        .call()
        .map_err(classify)?;
    let head = head_of(&r);
    Ok((head, Box::new(r.into_body().into_reader())))
}
