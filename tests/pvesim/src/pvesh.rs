//! pvesim's `pvesh`: the command line a Proxmox VE node offers for its API, as the
//! `pvesh` binary of this crate (`src/bin/pvesh.rs`) speaks it to a running simulator as
//! `root@pam`. Tests put it on PATH to run modules in local mode.
//!
//! Its syntax and output are pvesh's (pve-manager `PVE/CLI/pvesh.pm`, pve-common
//! `PVE/CLIHandler.pm`, `PVE/JSONSchema.pm` `get_options`, `PVE/CLIFormatter.pm`
//! `print_api_result`, `PVE/Exception.pm` `stringify`, `PVE/RESTEnvironment.pm`
//! `fork_worker`); what is and is not modelled is in FIDELITY.md ("pvesh"). This module
//! holds the decisions (reading the command line against the method's schema, printing
//! an answer, an error, a task run in the foreground) and the calls to the simulator
//! ([`run`]); [`cli`] prints what it returns, and both binaries are that one call
//! (`src/bin/pvesh.rs` here, and ferrox-integration's `pvesim-pvesh`, whose tests get its
//! path from Cargo).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::schema::validate::find_prop;
use crate::schema::Schema;

/// Where the stand-in finds the simulator: `https://127.0.0.1:PORT`.
pub const URL_ENV: &str = "PVESIM_URL";
/// The simulator's CA certificate (PEM file), to verify its TLS certificate.
pub const CA_ENV: &str = "PVESIM_CA";
/// The password of `root@pam` (default: pvesim's `pvesim-root`).
pub const ROOT_PASSWORD_ENV: &str = "PVESIM_ROOT_PASSWORD";

/// How a pvesh run ends early: what it prints on stderr and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    pub code: i32,
    pub stderr: String,
}

impl Exit {
    /// A Perl `die` at the top level: the message on stderr, exit status 255.
    pub fn die(stderr: impl Into<String>) -> Exit {
        let mut stderr = stderr.into();
        if !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        Exit { code: 255, stderr }
    }
}

/// One API call read off the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// `GET`, `POST`, `PUT` or `DELETE`.
    pub method: &'static str,
    /// The API path as given (`/nodes/pve1/qemu`).
    pub path: String,
    /// The method's parameters, in order; an array parameter repeats its name.
    pub params: Vec<(String, String)>,
    /// `--output-format` (`text` when not given, as pvesh's default).
    pub output_format: String,
    /// `--quiet`, or the leading `--nooutput`: print nothing.
    pub quiet: bool,
    /// What the method returns (its schema's `returns`).
    pub returns: Value,
}

/// `$method_map` of pvesh.pm.
fn method_of(verb: &str) -> Option<&'static str> {
    match verb {
        "get" => Some("GET"),
        "create" => Some("POST"),
        "set" => Some("PUT"),
        "delete" => Some("DELETE"),
        _ => None,
    }
}

/// pvesh's own options and the standard output options
/// (`$our_properties`, `PVE::RESTHandler::standard_output_options`), with whether they are boolean.
const OWN_OPTIONS: [(&str, bool); 6] = [
    ("noproxy", true),
    ("output-format", false),
    ("quiet", true),
    ("noborder", true),
    ("noheader", true),
    ("human-readable", true),
];

/// `PVE::JSONSchema::parse_boolean`.
fn parse_boolean(v: &str) -> Option<&'static str> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some("1"),
        "0" | "off" | "no" | "false" => Some("0"),
        _ => None,
    }
}

/// Reads `pvesh [--noproxy|--nooutput] VERB PATH [OPTIONS]` against the method's schema,
/// as pvesh does: the path's own parameters are not options, a boolean takes an
/// optional value (Getopt `:s`, `1` when none), any other option a mandatory one (the
/// next argument, even one starting with `-`), an array or `-list` option may repeat
/// (a `-list` one is joined with commas), and an unknown option is refused.
pub fn parse(args: &[String], schema: &Schema) -> Result<Call, Exit> {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut quiet = false;
    while let Some(first) = args.first() {
        match *first {
            "--noproxy" => {}
            "--nooutput" => quiet = true,
            _ => break,
        }
        args.remove(0);
    }
    let Some(verb) = args.first().copied() else {
        return Err(Exit::die("400 no command specified"));
    };
    let Some(method) = method_of(verb) else {
        return Err(Exit::die(format!(
            "unknown command 'pvesh {verb}' (pvesim's pvesh models get, create, set and delete)"
        )));
    };
    let Some(path) = args.get(1).copied().filter(|p| !p.starts_with('-')) else {
        return Err(Exit::die("400 not enough arguments"));
    };
    let route = schema.route(path);
    let info = route.as_ref().and_then(|r| r.endpoint.info.get(method));
    let (Some(route), Some(info)) = (route.as_ref(), info) else {
        // extract_path_info: before any option is read.
        return Err(Exit {
            code: 1,
            stderr: format!("No '{verb}' handler defined for '{path}'\n"),
        });
    };
    let empty = Map::new();
    let props = info["parameters"]["properties"].as_object().unwrap_or(&empty);
    let mut call = Call {
        method,
        path: path.to_string(),
        params: Vec::new(),
        output_format: "text".into(),
        quiet,
        returns: info.get("returns").cloned().unwrap_or(Value::Null),
    };
    read_options(&args[2..], props, &route.path_params, &mut call)?;
    Ok(call)
}

/// The options after the path, into `call` (see [`parse`]): `props` are the method's
/// parameters, `path_params` the path's own, which are not options.
fn read_options(
    args: &[&str],
    props: &Map<String, Value>,
    path_params: &std::collections::BTreeMap<String, String>,
    call: &mut Call,
) -> Result<(), Exit> {
    let mut rest = args.iter().copied().peekable();
    let mut unknown: Vec<String> = Vec::new();
    let mut list_values: Vec<(String, Vec<String>)> = Vec::new();
    let mut extra = 0;
    while let Some(arg) = rest.next() {
        let Some(option) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            // Getopt passes a non-option on; it is refused once the options are read.
            extra += 1;
            continue;
        };
        let (name, inline) = match option.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (option, None),
        };
        let own = OWN_OPTIONS.iter().find(|(n, _)| *n == name);
        let prop = if path_params.contains_key(name) {
            None
        } else {
            find_prop(props, name)
        };
        let boolean = match (own, prop) {
            (Some((_, b)), _) => *b,
            (None, Some(p)) => p["type"] == "boolean",
            (None, None) => {
                unknown.push(format!("Unknown option: {name}"));
                continue;
            }
        };
        let value = match inline {
            Some(v) => v,
            None if boolean => match rest.peek() {
                Some(next) if !next.starts_with('-') => rest.next().unwrap_or_default().to_string(),
                _ => String::new(),
            },
            None => match rest.next() {
                Some(v) => v.to_string(),
                None => {
                    unknown.push(format!("Option {name} requires an argument"));
                    continue;
                }
            },
        };
        let value = if boolean {
            if value.is_empty() {
                "1".to_string()
            } else {
                parse_boolean(&value)
                    .ok_or_else(|| Exit::die("400 unable to parse boolean option"))?
                    .to_string()
            }
        } else {
            value
        };
        match name {
            "output-format" => call.output_format = value,
            "quiet" => call.quiet |= value == "1",
            "noproxy" | "noborder" | "noheader" | "human-readable" => {}
            _ => {
                let is_list = prop.is_some_and(|p| p["format"].as_str().is_some_and(|f| f.contains("-list")));
                if is_list {
                    match list_values.iter_mut().find(|(n, _)| n == name) {
                        Some((_, values)) => values.push(value),
                        None => list_values.push((name.to_string(), vec![value])),
                    }
                } else {
                    call.params.push((name.to_string(), value));
                }
            }
        }
    }
    if !unknown.is_empty() {
        return Err(Exit::die(format!("{}\n400 unable to parse option", unknown.join("\n"))));
    }
    if extra > 0 {
        return Err(Exit::die("400 too many arguments"));
    }
    for (name, values) in list_values {
        call.params.push((name, values.join(",")));
    }
    Ok(())
}

/// What pvesh prints for an answer (`print_api_result`): nothing for a method that
/// returns null (or an optional nothing) or when quiet; one line of canonical JSON
/// (keys sorted) for `json`, pretty JSON for `json-pretty`.
pub fn render(call: &Call, data: &Value) -> Result<String, Exit> {
    if call.quiet || call.returns["type"] == "null" || (call.returns["optional"] == 1 && data.is_null()) {
        return Ok(String::new());
    }
    let canonical = sorted(data);
    match call.output_format.as_str() {
        "json" => Ok(format!("{canonical}\n")),
        "json-pretty" => Ok(serde_json::to_string_pretty(&canonical).unwrap_or_default()),
        other => Err(Exit::die(format!(
            "pvesim's pvesh prints only --output-format json or json-pretty, not {other}"
        ))),
    }
}

/// The value with every object's keys sorted (`to_json` with `canonical => 1`).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// PVE's error as pvesh prints it (`PVE::Exception::stringify`): the status before the
/// message when PVE raised one (every status but the 500 of a plain `die`), then one
/// `name: problem` line per parameter; exit status 255.
pub fn error(status: u16, body: &Value) -> Exit {
    let message = body["message"].as_str().unwrap_or("").trim_end();
    let mut text = if status == 500 {
        message.to_string()
    } else {
        format!("{status} {message}")
    };
    if let Some(errors) = body["errors"].as_object() {
        for (name, problem) in errors {
            text.push('\n');
            text.push_str(&format!("{name}: {}", problem.as_str().unwrap_or_default().trim_end()));
        }
    }
    Exit::die(text)
}

/// A task started by the call runs in the foreground (`fork_worker` in the CLI): its log
/// goes to stdout but for the final `TASK OK`, a `TASK ERROR: x` line puts `x` on stderr;
/// then the UPID is printed as the answer. Returns (stdout, stderr).
pub fn foreground_task(call: &Call, upid: &str, log: &[String]) -> Result<(String, String), Exit> {
    let mut stdout = String::new();
    let mut stderr = String::new();
    for line in log {
        if line == "TASK OK" {
            continue;
        }
        if let Some(error) = line.strip_prefix("TASK ERROR: ") {
            stderr.push_str(error);
            stderr.push('\n');
            continue;
        }
        stdout.push_str(line);
        stdout.push('\n');
    }
    stdout.push_str(&render(call, &Value::from(upid))?);
    Ok((stdout, stderr))
}

/// The command line of a `pvesh` binary: runs `args`, prints what pvesh prints (stdout,
/// then stderr) and returns its exit status. Both binaries (`src/bin/pvesh.rs`, and
/// ferrox-integration's `pvesim-pvesh`) are this call.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn cli(args: &[String]) -> i32 {
    use std::io::Write;
    let code = match run(args) {
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
    code
}

/// One pvesh run: what it prints on stdout and stderr, or how it ends early.
pub fn run(args: &[String]) -> Result<(String, String), Exit> {
    let call = parse(args, &Schema::embedded())?;
    if crate::pvesh_upload::is_upload(&call) {
        return upload(&call);
    }
    let api = Api::from_env()?;
    let data = api.call(call.method, &call.path, &call.params)?;
    match data.as_str().filter(|s| s.starts_with("UPID:") && call.method != "GET") {
        Some(upid) => {
            let log = api.wait_for_task(upid)?;
            foreground_task(&call, upid, &log)
        }
        None => Ok((render(&call, &data)?, String::new())),
    }
}

/// An upload: the file named by `tmpfilename` sent as pve-http-server would have
/// received it, and unlinked once PVE's task ran (see [`crate::pvesh_upload`]).
fn upload(call: &Call) -> Result<(String, String), Exit> {
    let handed = crate::pvesh_upload::handed(call)?;
    let bytes = std::fs::read(&handed.tmpfilename)
        .map_err(|e| Exit::die(format!("temporary file '{}' - {e}", handed.tmpfilename)))?;
    let api = Api::from_env()?;
    let data = api.post_body(
        &call.path,
        &format!("multipart/form-data; boundary={}", crate::pvesh_upload::BOUNDARY),
        crate::pvesh_upload::body(&handed, &bytes),
    )?;
    let Some(upid) = data.as_str().filter(|s| s.starts_with("UPID:")).map(String::from) else {
        return Ok((render(call, &data)?, String::new()));
    };
    let log = api.wait_for_task(&upid)?;
    // The task unlinks the file whether it succeeded or failed.
    let _ = std::fs::remove_file(&handed.tmpfilename);
    foreground_task(call, &upid, &log)
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

    /// A POST of `body` as `content_type`; PVE's error as pvesh prints it (a plain-text
    /// answer, as pve-http-server's multipart reader gives, is the message).
    fn post_body(&self, path: &str, content_type: &str, body: Vec<u8>) -> Result<Value, Exit> {
        let url = format!("{}/api2/json{path}", self.url);
        let mut response = self
            .agent
            .post(&url)
            .header("Cookie", &format!("PVEAuthCookie={}", self.ticket))
            .header("CSRFPreventionToken", &self.csrf)
            .header("Content-Type", content_type)
            .send(&body[..])
            .map_err(|e| Exit::die(format!("pvesim's pvesh could not reach {}: {e}", self.url)))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| serde_json::json!({ "message": text }));
        if status >= 400 {
            return Err(error(status, &body));
        }
        Ok(body.get("data").cloned().unwrap_or(Value::Null))
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
            return Err(error(status, &body));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    fn parsed(line: &str) -> Result<Call, Exit> {
        parse(&args(line), &Schema::embedded())
    }

    #[test]
    fn options_are_read_against_the_methods_schema() {
        let call = parsed("create /nodes/pve1/qemu --output-format json --vmid 100 --name web --net0 virtio,bridge=vmbr0 --onboot --start 0").unwrap();
        assert_eq!(call.method, "POST");
        assert_eq!(call.output_format, "json");
        let want: Vec<(String, String)> = [
            ("vmid", "100"),
            ("name", "web"),
            ("net0", "virtio,bridge=vmbr0"),
            ("onboot", "1"),
            ("start", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(call.params, want);
        // A string option takes the next argument even when it starts with '-'.
        let call = parsed("set /nodes/pve1/qemu/100/config -description -x- --delete=ide2").unwrap();
        assert_eq!(
            call.params,
            vec![("description".into(), "-x-".into()), ("delete".into(), "ide2".into())]
        );
    }

    #[test]
    fn refusals_are_pveshs() {
        let e = parsed("get /nodes/pve1/qemu --output-format json --bogus 1").unwrap_err();
        assert_eq!(e, Exit::die("Unknown option: bogus\n400 unable to parse option"));
        // The path's own parameters are not options.
        let e = parsed("get /nodes/pve1/qemu --node pve2").unwrap_err();
        assert_eq!(e.code, 255);
        let e = parsed("get /nowhere").unwrap_err();
        assert_eq!(
            e,
            Exit {
                code: 1,
                stderr: "No 'get' handler defined for '/nowhere'\n".into()
            }
        );
        let e = parsed("create /nodes/pve1/qemu --vmid 100 --onboot maybe").unwrap_err();
        assert_eq!(e, Exit::die("400 unable to parse boolean option"));
    }

    #[test]
    fn answers_print_as_print_api_result_does() {
        let call = parsed("get /version --output-format json").unwrap();
        let out = render(&call, &serde_json::json!({"version": "9.1.1", "release": "9.1"})).unwrap();
        assert_eq!(out, "{\"release\":\"9.1\",\"version\":\"9.1.1\"}\n");
        let set = parsed("set /nodes/pve1/qemu/100/config --output-format json --onboot 1").unwrap();
        if set.returns["type"] == "null" {
            assert_eq!(render(&set, &Value::Null).unwrap(), "");
        }
        let e = error(
            400,
            &serde_json::json!({"message": "Parameter verification failed.\n", "errors": {"net0": "invalid format\n"}}),
        );
        assert_eq!(e, Exit::die("400 Parameter verification failed.\nnet0: invalid format"));
        assert_eq!(
            error(500, &serde_json::json!({"message": "VM 100 is running\n"})),
            Exit::die("VM 100 is running")
        );
    }

    #[test]
    fn a_task_prints_its_log_then_its_upid() {
        let call = parsed("create /nodes/pve1/qemu --output-format json --vmid 100").unwrap();
        let upid = "UPID:pve1:00000001:00000002:00000003:qmcreate:100:root@pam:";
        let (out, err) = foreground_task(&call, upid, &["creating".into(), "TASK OK".into()]).unwrap();
        assert_eq!(out, format!("creating\n\"{upid}\"\n"));
        assert_eq!(err, "");
        let (_, err) = foreground_task(&call, upid, &["TASK ERROR: disk full".into()]).unwrap();
        assert_eq!(err, "disk full\n");
    }
}
