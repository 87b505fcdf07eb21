//! Test client: ureq 3 over rustls trusting the simulator's CA, plus a raw TLS client
//! for what ureq hides (reason phrases, malformed requests).
#![allow(dead_code)]

use pvesim::{SimConfig, Simulator};
use serde_json::Value;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const TOKEN: &str = "PVEAPIToken=ansible@pve!automation=5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";
pub const READONLY: &str = "PVEAPIToken=ansible@pve!readonly=0a6b2d4c-3e8f-4a1b-9c7d-5e2f1a0b3c4d";

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
    pub raw: String,
}

impl Resp {
    pub fn data(&self) -> &Value {
        &self.body["data"]
    }
    pub fn message(&self) -> String {
        self.body["message"].as_str().unwrap_or("").to_string()
    }
    pub fn error(&self, key: &str) -> String {
        self.body["errors"][key].as_str().unwrap_or("").to_string()
    }
}

pub struct Api {
    pub sim: Simulator,
    pub agent: ureq::Agent,
    pub auth: Vec<(String, String)>,
}

pub fn agent_for(sim: &Simulator) -> ureq::Agent {
    let cert = ureq::tls::Certificate::from_pem(sim.ca_pem().as_bytes()).unwrap();
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::Specific(Arc::new(vec![cert])))
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .build()
        .new_agent()
}

pub fn quick() -> SimConfig {
    SimConfig {
        task_ms: 60,
        resources_lag_ms: 200,
        agent_delay_ms: 100,
        ..SimConfig::default()
    }
}

impl Api {
    pub fn start(cfg: SimConfig) -> Api {
        let sim = Simulator::start(cfg).expect("simulator starts");
        let agent = agent_for(&sim);
        Api {
            sim,
            agent,
            auth: vec![("Authorization".into(), TOKEN.into())],
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{}", self.sim.port(), path)
    }

    pub fn with_auth(&mut self, headers: Vec<(&str, &str)>) {
        self.auth = headers
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    }

    fn finish(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Resp {
        let mut r = r.expect("HTTP exchange");
        let status = r.status().as_u16();
        let raw = r.body_mut().read_to_string().unwrap_or_default();
        let body = serde_json::from_str(&raw).unwrap_or(Value::Null);
        Resp { status, body, raw }
    }

    pub fn get(&self, path: &str) -> Resp {
        let mut rb = self.agent.get(self.url(&format!("/api2/json{path}")));
        for (k, v) in &self.auth {
            rb = rb.header(k, v);
        }
        Self::finish(rb.call())
    }

    pub fn send(&self, method: &str, path: &str, form: &[(&str, &str)]) -> Resp {
        let url = self.url(&format!("/api2/json{path}"));
        let pairs: Vec<(&str, &str)> = form.to_vec();
        match method {
            "POST" | "PUT" => {
                let mut rb = if method == "POST" {
                    self.agent.post(url)
                } else {
                    self.agent.put(url)
                };
                for (k, v) in &self.auth {
                    rb = rb.header(k, v);
                }
                Self::finish(rb.send_form(pairs))
            }
            _ => {
                let q: String = form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(pairs)
                    .finish();
                let full = if q.is_empty() { url } else { format!("{url}?{q}") };
                let mut rb = self.agent.delete(full);
                for (k, v) in &self.auth {
                    rb = rb.header(k, v);
                }
                Self::finish(rb.call())
            }
        }
    }

    /// A `POST` or `PUT` with a JSON body (where a form cannot send a value, e.g. `""`).
    pub fn send_json(&self, method: &str, path: &str, body: &Value) -> Resp {
        let url = self.url(&format!("/api2/json{path}"));
        let mut rb = if method == "POST" {
            self.agent.post(url)
        } else {
            self.agent.put(url)
        };
        for (k, v) in &self.auth {
            rb = rb.header(k, v);
        }
        Self::finish(
            rb.header("Content-Type", "application/json")
                .send(serde_json::to_vec(body).unwrap()),
        )
    }

    pub fn post(&self, path: &str, form: &[(&str, &str)]) -> Resp {
        self.send("POST", path, form)
    }
    pub fn put(&self, path: &str, form: &[(&str, &str)]) -> Resp {
        self.send("PUT", path, form)
    }
    pub fn delete(&self, path: &str, q: &[(&str, &str)]) -> Resp {
        self.send("DELETE", path, q)
    }

    /// Control endpoint (JSON, no auth).
    pub fn control(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = self.url(path);
        let r = match method {
            "GET" => self.agent.get(url).call(),
            "DELETE" => self.agent.delete(url).call(),
            _ => self
                .agent
                .post(url)
                .header("content-type", "application/json")
                .send(body.unwrap_or(Value::Null).to_string()),
        };
        let mut r = r.expect("control call");
        serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// Poll a task until it stops; returns its status object.
    pub fn wait_task(&self, upid: &str) -> Value {
        let node = upid.split(':').nth(1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let r = self.get(&format!("/nodes/{node}/tasks/{}/status", urlencode(upid)));
            assert_eq!(r.status, 200, "task status: {}", r.raw);
            if r.data()["status"] == "stopped" {
                return r.data().clone();
            }
            assert!(Instant::now() < deadline, "task {upid} did not finish");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// POST something returning a UPID and wait; returns the exit status.
    pub fn run_task(&self, method: &str, path: &str, form: &[(&str, &str)]) -> String {
        let r = self.send(method, path, form);
        assert_eq!(r.status, 200, "{method} {path}: {}", r.raw);
        let upid = r.data().as_str().expect("UPID").to_string();
        self.wait_task(&upid)["exitstatus"].as_str().unwrap().to_string()
    }

    pub fn task_log(&self, upid: &str) -> Vec<String> {
        let node = upid.split(':').nth(1).unwrap();
        let r = self.get(&format!("/nodes/{node}/tasks/{}/log?limit=0", urlencode(upid)));
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["t"].as_str().unwrap().to_string())
            .collect()
    }

    pub fn config(&self, node: &str, vmid: u32) -> Value {
        let r = self.get(&format!("/nodes/{node}/qemu/{vmid}/config"));
        assert_eq!(r.status, 200, "{}", r.raw);
        r.data().clone()
    }
}

/// The token of `tmpl@pve!t` (see [`with_template_user`]).
pub const TEMPLATE_TOKEN: &str = "PVEAPIToken=tmpl@pve!t=22222222-3333-4444-5555-666666666666";

/// Adds `tmpl@pve` and its token `t`: what storing templates and images takes
/// (Datastore.AllocateTemplate and Datastore.Audit on `/storage`, Sys.AccessNetwork on `/nodes`).
pub fn with_template_user(s: &mut pvesim::Scenario) {
    use pvesim::state::{AclDef, TokenDef, UserDef};
    s.users.push(UserDef {
        userid: "tmpl@pve".into(),
        password: None,
        enable: true,
        totp_secret: None,
        tokens: vec![TokenDef {
            id: "t".into(),
            secret: "22222222-3333-4444-5555-666666666666".into(),
            privsep: true,
        }],
    });
    s.roles.insert(
        "Templates".into(),
        vec!["Datastore.AllocateTemplate".into(), "Datastore.Audit".into()],
    );
    s.roles.insert("Network".into(), vec!["Sys.AccessNetwork".into()]);
    for ugid in ["tmpl@pve", "tmpl@pve!t"] {
        s.acls.push(AclDef {
            path: "/storage".into(),
            ugid: ugid.into(),
            roles: vec!["Templates".into()],
            propagate: true,
        });
        s.acls.push(AclDef {
            path: "/nodes".into(),
            ugid: ugid.into(),
            roles: vec!["Network".into()],
            propagate: true,
        });
    }
}

impl Api {
    /// Authenticate as `root@pam` with a ticket (and its CSRF token) from now on.
    pub fn login_root(&mut self) {
        let t = self.post(
            "/access/ticket",
            &[("username", "root@pam"), ("password", "pvesim-root")],
        );
        let ticket = format!("PVEAuthCookie={}", t.data()["ticket"].as_str().expect("ticket"));
        let csrf = t.data()["CSRFPreventionToken"].as_str().unwrap().to_string();
        self.with_auth(vec![("Cookie", &ticket), ("CSRFPreventionToken", &csrf)]);
    }
}

pub fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Send raw bytes over TLS and return the server's first answer (or what came before a
/// close or the read timeout).
pub fn raw_tls(sim: &Simulator, request: &[u8]) -> String {
    read_raw(sim, request, response_complete).0
}

/// Send raw bytes over TLS (several requests, pipelined) and return everything the server
/// answers, and whether the server then closed the connection (false: the read timed out
/// with the connection still open).
pub fn raw_tls_until_close(sim: &Simulator, request: &[u8]) -> (String, bool) {
    read_raw(sim, request, |_| false)
}

fn read_raw(sim: &Simulator, request: &[u8], done: impl Fn(&[u8]) -> bool) -> (String, bool) {
    use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName};
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(sim.ca_pem().as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let conn = rustls::ClientConnection::new(Arc::new(cfg), ServerName::try_from("localhost").unwrap()).unwrap();
    let tcp = std::net::TcpStream::connect(sim.addr()).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    // The server may answer (and stop reading) before the whole request is sent.
    let _ = tls.write_all(request);
    let _ = tls.flush();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let closed = loop {
        match tls.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if done(&out) {
                    break false;
                }
            }
            // A close without TLS's close_notify is a close too; a timeout is not.
            Err(e) => break !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
        }
    };
    (String::from_utf8_lossy(&out).into_owned(), closed)
}

/// Headers seen and Content-Length bytes of body received.
fn response_complete(buf: &[u8]) -> bool {
    let text = String::from_utf8_lossy(buf);
    let Some(end) = text.find("\r\n\r\n") else { return false };
    let len = text[..end]
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0);
    buf.len() >= end + 4 + len
}

/// The status line of a raw response.
pub fn status_line(resp: &str) -> &str {
    resp.lines().next().unwrap_or("")
}

/// Where `data` departs from the `returns` schema of `METHOD template` in the official
/// schema subset: a declared property of the wrong type, or a required one (no
/// `optional: 1`) missing. Keys the schema does not declare are allowed, as PVE sends
/// some (`digest`, `running` of a snapshot list's `current`).
pub fn returns_mismatches(method: &str, template: &str, data: &Value) -> Vec<String> {
    let subset: Value = serde_json::from_str(pvesim::schema::EMBEDDED_SUBSET).unwrap();
    let entry = subset
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == template)
        .unwrap_or_else(|| panic!("{template} not in the subset"));
    let returns = &entry["info"][method]["returns"];
    assert!(returns.is_object(), "{method} {template} has no returns schema");
    let mut out = Vec::new();
    conforms(returns, data, "data", &mut out);
    out
}

fn conforms(schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    let ok = match schema["type"].as_str() {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean() || v == 0 || v == 1,
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        Some("null") => v.is_null(),
        _ => true,
    };
    if !ok {
        out.push(format!("{at}: {v} is not {}", schema["type"]));
        return;
    }
    if let (Some(items), Some(list)) = (schema.get("items"), v.as_array()) {
        for (i, e) in list.iter().enumerate() {
            conforms(items, e, &format!("{at}[{i}]"), out);
        }
    }
    if let (Some(props), Some(obj)) = (schema.get("properties").and_then(Value::as_object), v.as_object()) {
        for (k, s) in props {
            match obj.get(k) {
                Some(x) => conforms(s, x, &format!("{at}.{k}"), out),
                None if s["optional"] != 1 => out.push(format!("{at}.{k} is required")),
                None => {}
            }
        }
    }
}
