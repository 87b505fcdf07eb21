//! A tiny HTTPS server for client tests that need control below the API: certificates
//! (own CA, self-signed), exact status lines, raw bodies, delays. API behaviour itself
//! is tested against the PVE simulator.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// Path with query string.
    pub target: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub reason: String,
    pub body: String,
    pub delay: Duration,
}

impl Reply {
    pub fn json(body: serde_json::Value) -> Reply {
        Reply {
            status: 200,
            reason: "OK".into(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }
    pub fn status(status: u16, reason: &str, body: &str) -> Reply {
        Reply {
            status,
            reason: reason.into(),
            body: body.into(),
            delay: Duration::ZERO,
        }
    }
    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

pub type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

/// Which certificate the server presents.
pub enum Cert {
    /// A leaf for localhost/127.0.0.1 signed by a test CA (like a node's pve-ssl.pem).
    SignedByCa,
    /// A self-signed leaf, no CA.
    SelfSigned,
}

pub struct TestServer {
    pub port: u16,
    /// PEM of the CA that signed the leaf (the leaf itself when self-signed).
    pub ca_pem: String,
    /// DER of the presented leaf certificate.
    pub leaf_der: Vec<u8>,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    accepted: Arc<AtomicUsize>,
}

impl TestServer {
    pub fn start(cert: Cert, handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> TestServer {
        TestServer::start_on("127.0.0.1:0", cert, handler)
    }

    /// Like [`TestServer::start`], listening on `addr` (`[::1]:0` for IPv6).
    pub fn start_on(addr: &str, cert: Cert, handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> TestServer {
        let (chain, key, ca_pem) = certificates(cert);
        let leaf_der = chain[0].to_vec();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind(addr).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let seen2 = seen.clone();
        let accepted = Arc::new(AtomicUsize::new(0));
        let accepted2 = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                accepted2.fetch_add(1, Ordering::SeqCst);
                let (config, handler, seen) = (config.clone(), handler.clone(), seen2.clone());
                std::thread::spawn(move || serve(stream, config, handler, seen));
            }
        });
        TestServer {
            port,
            ca_pem,
            leaf_der,
            seen,
            accepted,
        }
    }

    /// How many TCP connections the server accepted.
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Writes the CA PEM to a file unique to this server.
    pub fn write_ca(&self, name: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!(
            "ferrox-client-test-{}-{}-{name}.pem",
            std::process::id(),
            self.port
        ));
        std::fs::write(&path, &self.ca_pem).unwrap();
        path
    }
}

fn certificates(kind: Cert) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>, String) {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    let leaf_key = KeyPair::generate().unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    match kind {
        Cert::SelfSigned => {
            let leaf = CertificateParams::new(names).unwrap().self_signed(&leaf_key).unwrap();
            let pem = leaf.pem();
            (vec![leaf.der().clone()], key, pem)
        }
        Cert::SignedByCa => {
            let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
            ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            ca_params
                .distinguished_name
                .push(rcgen::DnType::CommonName, "ferrox test CA");
            let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
            let leaf = CertificateParams::new(names)
                .unwrap()
                .signed_by(&leaf_key, &ca)
                .unwrap();
            (vec![leaf.der().clone(), ca.der().clone()], key, ca.pem())
        }
    }
}

fn serve(tcp: TcpStream, config: Arc<ServerConfig>, handler: Handler, seen: Arc<Mutex<Vec<Seen>>>) {
    let Ok(conn) = ServerConnection::new(config) else {
        return;
    };
    let mut reader = BufReader::new(StreamOwned::new(conn, tcp));
    loop {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        seen.lock().unwrap().push(request.clone());
        let reply = handler(&request);
        std::thread::sleep(reply.delay);
        let head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: {}\r\nConnection: Keep-Alive\r\n\r\n",
            reply.status,
            reply.reason,
            reply.body.len()
        );
        let stream = reader.get_mut();
        if stream
            .write_all(head.as_bytes())
            .and_then(|_| stream.write_all(reply.body.as_bytes()))
            .and_then(|_| stream.flush())
            .is_err()
        {
            return;
        }
    }
}

fn read_request(reader: &mut impl BufRead) -> Option<Seen> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// The API token secret of [`token_client`]: no output may show it.
pub const TOKEN_SECRET: &str = "5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";

/// A client of `server` with an API token, not validating the server's certificate.
pub fn token_client(server: &TestServer) -> ferrox_pve_client::client::Client {
    ferrox_pve_client::client::Client::connect(&ferrox_pve_client::connection::ConnectionParams {
        host: "127.0.0.1".into(),
        port: Some(server.port),
        user: "ansible@pve".into(),
        token_id: Some("automation".into()),
        token_secret: Some(TOKEN_SECRET.into()),
        timeout_secs: 5,
        ..Default::default()
    })
    .unwrap()
}
