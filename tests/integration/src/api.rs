//! Direct HTTPS calls to the simulator, as `root@pam`, for setting up and asserting
//! state around a play (never used by the modules themselves).

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use ureq::tls::{Certificate, RootCerts, TlsConfig};

/// A root session with the simulator: trusts only its CA, logs in on first use.
pub struct SimApi {
    base: String,
    agent: ureq::Agent,
    ticket: OnceLock<(String, String)>,
    root_password: String,
}

impl SimApi {
    pub fn new(port: u16, ca_pem: &[u8], root_password: &str) -> SimApi {
        let ca = Certificate::from_pem(ca_pem)
            .expect("the simulator's CA is valid PEM")
            .to_owned();
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::Specific(Arc::new(vec![ca])))
            .build();
        let agent = ureq::Agent::config_builder()
            .tls_config(tls)
            .http_status_as_error(false)
            .timeout_global(Some(std::time::Duration::from_secs(30)))
            .build()
            .new_agent();
        SimApi {
            base: format!("https://127.0.0.1:{port}"),
            agent,
            ticket: OnceLock::new(),
            root_password: root_password.to_string(),
        }
    }

    /// `(ticket, CSRFPreventionToken)` of a root@pam login, requested once.
    fn session(&self) -> &(String, String) {
        self.ticket.get_or_init(|| {
            let (status, body) = self.raw(
                "POST",
                "/api2/json/access/ticket",
                &[("username", "root@pam"), ("password", &self.root_password)],
                false,
            );
            let data = &body["data"];
            match (data["ticket"].as_str(), data["CSRFPreventionToken"].as_str()) {
                (Some(t), Some(c)) => (t.to_string(), c.to_string()),
                _ => panic!("root login to the simulator failed ({status}): {body}"),
            }
        })
    }

    /// One request; returns the status and the parsed body (`Value::Null` when not JSON).
    pub fn raw(&self, method: &str, path: &str, form: &[(&str, &str)], auth: bool) -> (u16, Value) {
        let url = format!("{}{}", self.base, path);
        let cookie = auth.then(|| {
            let (ticket, csrf) = self.session();
            (format!("PVEAuthCookie={ticket}"), csrf.clone())
        });
        let query: Vec<(&str, &str)> = form.to_vec();
        let result = match method {
            "GET" | "DELETE" => {
                let mut req = if method == "GET" {
                    self.agent.get(&url)
                } else {
                    self.agent.delete(&url)
                };
                req = req.query_pairs(query);
                if let Some((c, csrf)) = &cookie {
                    req = req.header("Cookie", c).header("CSRFPreventionToken", csrf);
                }
                req.call()
            }
            "POST" | "PUT" => {
                let mut req = if method == "POST" {
                    self.agent.post(&url)
                } else {
                    self.agent.put(&url)
                };
                if let Some((c, csrf)) = &cookie {
                    req = req.header("Cookie", c).header("CSRFPreventionToken", csrf);
                }
                if form.is_empty() {
                    req.send_empty()
                } else {
                    req.send_form(query)
                }
            }
            other => panic!("unsupported method {other}"),
        };
        let mut resp = result.unwrap_or_else(|e| panic!("{method} {url} failed: {e}"));
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A JSON body sent to a control endpoint (`/_pvesim/...`).
    pub fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        let url = format!("{}{}", self.base, path);
        let (ticket, csrf) = self.session();
        let mut resp = self
            .agent
            .post(&url)
            .header("Cookie", &format!("PVEAuthCookie={ticket}"))
            .header("CSRFPreventionToken", csrf)
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .unwrap_or_else(|e| panic!("POST {url} failed: {e}"));
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}
