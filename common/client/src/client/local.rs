//! Local mode: the API reached through `pvesh` on the Proxmox VE node the module runs on,
//! as root, with no credentials, ticket or TLS (community.proxmox's `local` backend,
//! proxmoxer's `backends/local.py` and `command_base.py`).
//!
//! What is sent and read follows pvesh itself (pve-manager `PVE/CLI/pvesh.pm`, pve-common
//! `PVE/CLIHandler.pm`, `PVE/JSONSchema.pm` `get_options`, `PVE/CLIFormatter.pm`
//! `print_api_result`):
//! - the verb is the method's (`get`, `create` for POST, `set` for PUT, `delete`), then the
//!   API path, then `--output-format json`, then each field as `--name value`; a field given
//!   twice is passed twice, which Getopt reads as an array (as pvesh's own `proxy_handler`
//!   passes one when it proxies a call). Values are PVE's own strings (booleans `0`/`1`,
//!   property strings as they are): an option taking a string takes the next argument
//!   even when it starts with `-`.
//! - on success pvesh exits 0 and prints the method's `data` as one line of JSON, or nothing
//!   for a method returning null. A task-creating call runs the task in the foreground
//!   (`RESTEnvironment::fork_worker`, `$sync` in the CLI), prints its log to stdout, its
//!   error (if any) to stderr, and then the UPID as JSON: the answer is the last line.
//! - on a PVE error pvesh dies: exit status 255 and PVE's exception on stderr, which
//!   starts with the HTTP status when PVE raised one (`400 Parameter verification
//!   failed.` then `name: problem` lines, `PVE::Exception::stringify`), and is the bare
//!   message otherwise (PVE's 500 over HTTPS).
//! - a call for another node is proxied by pvesh itself (`check_proxyto`, over SSH), so the
//!   client sends every path as it would over HTTPS.
//!
//! The answer is handed back to the client as the envelope PVE sends over HTTPS
//! (`{"data": …}`, or an error's `message` and `errors`), so everything above the
//! transport — retries, error texts, task waiting — is the same in both modes.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::{ApiError, ApiErrorKind, Method};

/// The program community.proxmox's local backend runs (`f"{service}sh"`).
pub const PVESH: &str = "pvesh";

/// How pvesh is reached: the program found on PATH.
#[derive(Debug, Clone)]
pub struct Pvesh {
    /// The `pvesh` to run.
    pub program: PathBuf,
}

/// The verb pvesh takes for an HTTP method (`$method_map` in pvesh.pm).
pub fn verb(method: &str) -> &'static str {
    match method {
        "POST" => "create",
        "PUT" => "set",
        "DELETE" => "delete",
        _ => "get",
    }
}

/// The arguments of one call: verb, path, `--output-format json`, then `--name value`
/// for each field in order (a repeated name is an array to pvesh).
pub fn pvesh_args(method: &str, path: &str, fields: &[(&str, String)]) -> Vec<String> {
    let mut args = vec![
        verb(method).to_string(),
        path.to_string(),
        "--output-format".to_string(),
        "json".to_string(),
    ];
    for (name, value) in fields {
        args.push(format!("--{name}"));
        args.push(value.clone());
    }
    args
}

/// What one pvesh run printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    /// The exit status (`None`: killed by a signal).
    pub status: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// What pvesh's output means, in the terms of an HTTPS answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// PVE's `data`, as the envelope `{"data": …}` an HTTPS answer carries.
    Envelope(Value),
    /// PVE's error: the HTTP status it raised (500 when it raised none) and the error body
    /// (`message`, and for a 400 the `errors` by parameter).
    Error(u16, Value),
    /// Exit 0 but the output is not JSON: the first characters, for the message.
    Undecodable(String),
}

/// Reads pvesh's output (see the module doc for what pvesh prints).
pub fn interpret(printed: &Printed) -> Answer {
    if printed.status != Some(0) {
        return error_answer(&printed.stderr, printed.status);
    }
    let out = printed.stdout.trim();
    if out.is_empty() {
        return Answer::Envelope(serde_json::json!({ "data": null }));
    }
    if let Ok(data) = serde_json::from_str::<Value>(out) {
        return Answer::Envelope(serde_json::json!({ "data": data }));
    }
    // A task run in the foreground: its log, then the UPID as the last line.
    let last = out.lines().next_back().unwrap_or_default().trim();
    match serde_json::from_str::<Value>(last) {
        Ok(upid @ Value::String(_)) if upid.as_str().is_some_and(|s| s.starts_with("UPID:")) => {
            Answer::Envelope(serde_json::json!({ "data": upid }))
        }
        _ => Answer::Undecodable(out.chars().take(120).collect()),
    }
}

/// `409 VM 100 is locked` or `400 Parameter verification failed.` followed by
/// `name: problem` lines, or a message without a status (PVE's 500).
fn error_answer(stderr: &str, status: Option<i32>) -> Answer {
    let lines: Vec<&str> = stderr
        .lines()
        .map(|l| l.strip_prefix("trying to acquire lock...").unwrap_or(l).trim_end())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let status_line = lines.iter().position(|l| http_status(l).is_some());
    let Some(at) = status_line else {
        let message = if lines.is_empty() {
            match status {
                Some(code) => format!("pvesh exited with status {code} and printed no error"),
                None => "pvesh was killed by a signal".to_string(),
            }
        } else {
            lines.join("\n")
        };
        return Answer::Error(500, serde_json::json!({ "message": message }));
    };
    let (code, text) = http_status(lines[at]).unwrap_or((500, lines[at]));
    let mut message = text.to_string();
    let before: Vec<&str> = lines[..at].to_vec();
    if !before.is_empty() {
        message = format!("{message} ({})", before.join("; "));
    }
    let mut errors = Map::new();
    for line in &lines[at + 1..] {
        match line.split_once(": ") {
            Some((name, problem)) if !name.contains(' ') && !name.is_empty() => {
                errors.insert(name.to_string(), Value::from(problem));
            }
            _ => break,
        }
    }
    let mut body = serde_json::json!({ "message": message });
    if !errors.is_empty() {
        body["errors"] = Value::Object(errors);
    }
    Answer::Error(code, body)
}

/// `400 Parameter verification failed.` to `(400, "Parameter verification failed.")`:
/// three digits, a space and a letter, as proxmoxer's `is_http_status_string` reads it.
fn http_status(line: &str) -> Option<(u16, &str)> {
    let (code, rest) = line.split_at_checked(3)?;
    let text = rest.strip_prefix(' ')?;
    if !code.bytes().all(|b| b.is_ascii_digit()) || !text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    Some((code.parse().ok()?, text))
}

impl Pvesh {
    /// Runs one call and waits at most `window` for it (a task-creating call includes its
    /// task, which pvesh runs in the foreground).
    pub(super) fn run(
        &self,
        method: Method,
        path: &str,
        fields: &[(&str, String)],
        window: Duration,
    ) -> Result<Printed, ApiError> {
        let args = pvesh_args(method.as_str(), path, fields);
        let mut child = Command::new(&self.program)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| not_started(&self.program, &e))?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let started = Instant::now();
        let mut pause = Duration::from_millis(2);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= window => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ApiError::other(
                        ApiErrorKind::Timeout,
                        format!(
                            "pvesh {} {path} did not finish within {}s; it was stopped, and whether Proxmox VE carried it out is unknown. Raise the module's timeout (or api_timeout) if this node is slow to answer.",
                            verb(method.as_str()),
                            window.as_secs()
                        ),
                    ));
                }
                Ok(None) => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(e) => return Err(not_started(&self.program, &e)),
            }
        };
        Ok(Printed {
            status: status.code(),
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        })
    }
}

/// Reads a pipe to its end on a thread of its own, so a full pipe never blocks pvesh.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut text);
        }
        String::from_utf8_lossy(&text).into_owned()
    })
}

/// pvesh could not be run at all: nothing reached Proxmox VE.
fn not_started(program: &Path, e: &std::io::Error) -> ApiError {
    ApiError::other(
        ApiErrorKind::Connect,
        format!(
            "Could not run {} ({e}). Without api_host the module talks to Proxmox VE through pvesh on the node it runs on: delegate the task to a Proxmox VE node, or give api_host.",
            program.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn printed(status: i32, stdout: &str, stderr: &str) -> Printed {
        Printed {
            status: Some(status),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    /// Method, path, fields, and the arguments pvesh gets.
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, String)>, &'a [&'a str]);

    #[test]
    fn arguments_are_verb_path_json_then_each_field() {
        let table: &[Case] = &[
            (
                "GET",
                "/cluster/resources",
                vec![("type", "vm".into())],
                &["get", "/cluster/resources", "--output-format", "json", "--type", "vm"],
            ),
            (
                "POST",
                "/nodes/pve1/qemu",
                vec![("vmid", "100".into()), ("net0", "virtio,bridge=vmbr0".into())],
                &[
                    "create",
                    "/nodes/pve1/qemu",
                    "--output-format",
                    "json",
                    "--vmid",
                    "100",
                    "--net0",
                    "virtio,bridge=vmbr0",
                ],
            ),
            (
                "PUT",
                "/nodes/pve1/qemu/100/config",
                vec![("onboot", "1".into()), ("delete", "ide2,tags".into())],
                &[
                    "set",
                    "/nodes/pve1/qemu/100/config",
                    "--output-format",
                    "json",
                    "--onboot",
                    "1",
                    "--delete",
                    "ide2,tags",
                ],
            ),
            (
                "DELETE",
                "/nodes/pve1/qemu/100",
                vec![("purge", "1".into())],
                &[
                    "delete",
                    "/nodes/pve1/qemu/100",
                    "--output-format",
                    "json",
                    "--purge",
                    "1",
                ],
            ),
            // An array is its name repeated; a value starting with '-' stays one argument.
            (
                "POST",
                "/nodes/pve1/qemu/100/agent/exec",
                vec![("command", "ls".into()), ("command", "-l".into())],
                &[
                    "create",
                    "/nodes/pve1/qemu/100/agent/exec",
                    "--output-format",
                    "json",
                    "--command",
                    "ls",
                    "--command",
                    "-l",
                ],
            ),
            (
                "PUT",
                "/nodes/pve1/qemu/100/config",
                vec![("description", "".into())],
                &[
                    "set",
                    "/nodes/pve1/qemu/100/config",
                    "--output-format",
                    "json",
                    "--description",
                    "",
                ],
            ),
        ];
        for (method, path, fields, want) in table {
            assert_eq!(pvesh_args(method, path, fields), *want, "{method} {path}");
        }
    }

    #[test]
    fn success_is_the_data_in_pves_envelope() {
        assert_eq!(
            interpret(&printed(0, "{\"a\":1}\n", "")),
            Answer::Envelope(json!({"data": {"a": 1}}))
        );
        assert_eq!(
            interpret(&printed(0, "[]\n", "")),
            Answer::Envelope(json!({"data": []}))
        );
        // A method returning null prints nothing.
        assert_eq!(interpret(&printed(0, "", "")), Answer::Envelope(json!({"data": null})));
        // Lock noise on stderr of a call that succeeded changes nothing.
        assert_eq!(
            interpret(&printed(0, "", "trying to acquire lock...\n OK\n")),
            Answer::Envelope(json!({"data": null}))
        );
    }

    #[test]
    fn a_task_run_in_the_foreground_answers_its_upid() {
        let upid = "UPID:pve1:00001234:00005678:65000000:qmcreate:100:root@pam:";
        let out = format!("Formatting '/var/lib/vz/images/100/vm-100-disk-0.raw'\n\"{upid}\"\n");
        assert_eq!(
            interpret(&printed(0, &out, "")),
            Answer::Envelope(json!({"data": upid}))
        );
        // A failed task: its error on stderr, the UPID still printed, exit 0.
        assert_eq!(
            interpret(&printed(
                0,
                &format!("\"{upid}\"\n"),
                "unable to create VM 100 - disk full\n"
            )),
            Answer::Envelope(json!({"data": upid}))
        );
        assert!(matches!(
            interpret(&printed(0, "log line\nmore\n", "")),
            Answer::Undecodable(_)
        ));
    }

    #[test]
    fn pve_errors_keep_their_status_message_and_parameters() {
        assert_eq!(
            interpret(&printed(
                255,
                "",
                "400 Parameter verification failed.\nnet0: invalid format - unknown model\n"
            )),
            Answer::Error(
                400,
                json!({"message": "Parameter verification failed.", "errors": {"net0": "invalid format - unknown model"}})
            )
        );
        assert_eq!(
            interpret(&printed(255, "", "Unknown option: bogus\n400 unable to parse option\n")),
            Answer::Error(
                400,
                json!({"message": "unable to parse option (Unknown option: bogus)"})
            )
        );
        assert_eq!(
            interpret(&printed(
                255,
                "",
                "403 Permission check failed (/vms/100, VM.Config.CPU)\n"
            )),
            Answer::Error(
                403,
                json!({"message": "Permission check failed (/vms/100, VM.Config.CPU)"})
            )
        );
        // A plain die is PVE's 500; lock noise is not part of the message.
        assert_eq!(
            interpret(&printed(
                255,
                "",
                "trying to acquire lock...\ncan't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout\n"
            )),
            Answer::Error(
                500,
                json!({"message": "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"})
            )
        );
        assert_eq!(
            interpret(&printed(255, "", "")),
            Answer::Error(
                500,
                json!({"message": "pvesh exited with status 255 and printed no error"})
            )
        );
    }
}
