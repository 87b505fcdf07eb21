//! pvesim's `pvesh`: Proxmox VE's API command line, speaking to a running pvesim as
//! `root@pam` (see `pvesim::pvesh` for what it reads and prints). Tests put this binary's
//! directory on PATH to run the modules in local mode.
//!
//! Environment: `PVESIM_URL` (`https://127.0.0.1:PORT`), `PVESIM_CA` (the simulator's CA
//! certificate, a PEM file), `PVESIM_ROOT_PASSWORD` (default `pvesim-root`).

// A command line: what it prints is its output, its exit status its verdict.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use pvesim::pvesh::{self, Exit, CA_ENV, ROOT_PASSWORD_ENV, URL_ENV};
use pvesim::schema::Schema;
use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match run(&args) {
        Ok((stdout, stderr)) => {
            print!("{stdout}");
            eprint!("{stderr}");
            0
        }
        Err(exit) => {
            eprint!("{}", exit.stderr);
            exit.code
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code);
}

fn run(args: &[String]) -> Result<(String, String), Exit> {
    let call = pvesh::parse(args, &Schema::embedded())?;
    let api = Api::from_env()?;
    let data = api.call(call.method, &call.path, &call.params)?;
    match data.as_str().filter(|s| s.starts_with("UPID:") && call.method != "GET") {
        Some(upid) => {
            let log = api.wait_for_task(upid)?;
            pvesh::foreground_task(&call, upid, &log)
        }
        None => Ok((pvesh::render(&call, &data)?, String::new())),
    }
}

/// The simulator, logged in as root@pam.
struct Api {
    agent: ureq::Agent,
    url: String,
    ticket: String,
    csrf: String,
}

impl Api {
    fn from_env() -> Result<Api, Exit> {
        let url = std::env::var(URL_ENV).map_err(|_| {
            Exit::die(format!(
                "pvesim's pvesh needs {URL_ENV} (https://127.0.0.1:PORT of a running pvesim)"
            ))
        })?;
        let ca_path = std::env::var(CA_ENV).map_err(|_| {
            Exit::die(format!(
                "pvesim's pvesh needs {CA_ENV} (the simulator's CA certificate file)"
            ))
        })?;
        let password = std::env::var(ROOT_PASSWORD_ENV).unwrap_or_else(|_| "pvesim-root".into());
        let pem = std::fs::read(&ca_path).map_err(|e| Exit::die(format!("{CA_ENV} {ca_path}: {e}")))?;
        let certs: Vec<_> = ureq::tls::parse_pem(&pem)
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect();
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::Specific(Arc::new(certs)))
            .build();
        let config = ureq::Agent::config_builder()
            .tls_config(tls)
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build();
        let mut api = Api {
            agent: ureq::Agent::new_with_config(config),
            url: url.trim_end_matches('/').to_string(),
            ticket: String::new(),
            csrf: String::new(),
        };
        let login = api.call(
            "POST",
            "/access/ticket",
            &[("username".into(), "root@pam".into()), ("password".into(), password)],
        )?;
        api.ticket = login["ticket"].as_str().unwrap_or_default().to_string();
        api.csrf = login["CSRFPreventionToken"].as_str().unwrap_or_default().to_string();
        Ok(api)
    }

    /// One request; PVE's error as pvesh prints it.
    fn call(&self, method: &str, path: &str, params: &[(String, String)]) -> Result<Value, Exit> {
        let url = format!("{}/api2/json{path}", self.url);
        let pairs = params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let cookie = format!("PVEAuthCookie={}", self.ticket);
        let sent = match method {
            "POST" | "PUT" => {
                let request = if method == "POST" {
                    self.agent.post(&url)
                } else {
                    self.agent.put(&url)
                };
                request
                    .header("Cookie", &cookie)
                    .header("CSRFPreventionToken", &self.csrf)
                    .send_form(pairs)
            }
            _ => {
                let request = if method == "DELETE" {
                    self.agent.delete(&url)
                } else {
                    self.agent.get(&url)
                };
                request
                    .header("Cookie", &cookie)
                    .header("CSRFPreventionToken", &self.csrf)
                    .query_pairs(pairs)
                    .call()
            }
        };
        let mut response = sent.map_err(|e| Exit::die(format!("pvesim's pvesh could not reach {}: {e}", self.url)))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status >= 400 {
            return Err(pvesh::error(status, &body));
        }
        Ok(body.get("data").cloned().unwrap_or(Value::Null))
    }

    /// Waits for the task to stop and returns its log, as pvesh does for a task it starts.
    fn wait_for_task(&self, upid: &str) -> Result<Vec<String>, Exit> {
        let node = upid.split(':').nth(1).unwrap_or_default();
        let base = format!("/nodes/{node}/tasks/{}", encode(upid));
        loop {
            let status = self.call("GET", &format!("{base}/status"), &[])?;
            if status["status"] == "stopped" {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let log = self.call(
            "GET",
            &format!("{base}/log"),
            &[("start".into(), "0".into()), ("limit".into(), "100000".into())],
        )?;
        Ok(log
            .as_array()
            .map(|lines| lines.iter().filter_map(|l| l["t"].as_str().map(String::from)).collect())
            .unwrap_or_default())
    }
}

/// A UPID as one path segment.
fn encode(upid: &str) -> String {
    percent_encoding::utf8_percent_encode(upid, percent_encoding::NON_ALPHANUMERIC).to_string()
}
