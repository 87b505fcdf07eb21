//! The JSON report of a conformance run: what was tested where (no secret), each
//! scenario's outcome, time and the API calls its module runs made (from their
//! `FERROX_API_TRACE` lines), for a user to attach to a bug report.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Serialize)]
pub(super) struct Report {
    pub tool: &'static str,
    pub collection_version: String,
    pub started_at: String,
    pub seconds: f64,
    pub pve_version: Value,
    pub ansible: String,
    pub target: Target,
    pub scenarios: Vec<ScenarioResult>,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub interrupted: bool,
    /// VMs of the run the harness itself removed (leftovers), by phase.
    pub cleanup: Vec<Cleanup>,
}

/// Where the run went, without credentials.
#[derive(Debug, Serialize)]
pub(super) struct Target {
    pub host: String,
    pub port: Option<u16>,
    pub user: String,
    pub token_id: Option<String>,
    pub tls: String,
    pub node: String,
    pub storage: String,
    pub bridge: String,
    pub vmid_range: [u32; 2],
    pub prefix: String,
}

#[derive(Debug, Serialize)]
pub(super) struct ScenarioResult {
    pub name: String,
    pub playbook: String,
    /// `passed`, `failed` or `skipped` (after an interruption).
    pub status: &'static str,
    pub seconds: f64,
    /// The PLAY RECAP counts summed over hosts.
    pub tasks: BTreeMap<String, u64>,
    /// The failed tasks' messages, as ansible-playbook printed them.
    pub failures: Vec<String>,
    pub api_calls: ApiCalls,
    pub log: String,
}

#[derive(Debug, Default, Serialize)]
pub(super) struct ApiCalls {
    pub total: usize,
    pub by_method: BTreeMap<String, usize>,
    /// Server-side errors and transport failures are the interesting ones.
    pub errors: usize,
    pub calls: Vec<Value>,
}

#[derive(Debug, Serialize)]
pub(super) struct Cleanup {
    pub phase: String,
    pub removed: Vec<String>,
}

impl ApiCalls {
    /// Reads a trace file (missing: no calls were made).
    pub(super) fn from_trace(path: &Path) -> ApiCalls {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut calls = ApiCalls::default();
        for line in text.lines() {
            let Ok(call) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let method = call["method"].as_str().unwrap_or("?").to_string();
            *calls.by_method.entry(method).or_default() += 1;
            if call["status"].as_u64().is_none_or(|s| s >= 400) {
                calls.errors += 1;
            }
            calls.calls.push(call);
        }
        calls.total = calls.calls.len();
        calls
    }
}

/// The `PLAY RECAP` counts (`ok`, `changed`, `failed`, ...) summed over hosts.
pub(super) fn recap(stdout: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    let Some(at) = stdout.find("PLAY RECAP") else {
        return counts;
    };
    for word in stdout[at..].split_whitespace() {
        if let Some((k, v)) = word.split_once('=') {
            if let Ok(n) = v.parse::<u64>() {
                *counts.entry(k.to_string()).or_default() += n;
            }
        }
    }
    counts
}

/// The lines where ansible-playbook reports a failed task (`fatal: [...]: FAILED! => ...`),
/// each with the task name it belongs to.
pub(super) fn failures(stdout: &str) -> Vec<String> {
    let mut task = String::new();
    let mut out = Vec::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("TASK [") {
            task = rest.split(']').next().unwrap_or_default().to_string();
        } else if (line.starts_with("fatal:") || line.starts_with("failed:")) && line.contains("FAILED!") {
            let detail = line.split_once("=> ").map(|(_, d)| d).unwrap_or(line);
            let msg = serde_json::from_str::<Value>(detail)
                .ok()
                .and_then(|v| v.get("msg").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| detail.chars().take(600).collect());
            out.push(format!("{task}: {msg}"));
        }
    }
    out
}

/// Now as `2026-11-30T13:14:08Z`.
pub(super) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (year, month, day, h, m, s) = ferrox_pve_rules::utc_time::utc_parts(secs);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recap_and_failures_are_read_from_the_output() {
        let out = "TASK [It was created inside the range] ***\nfatal: [localhost]: FAILED! => {\"assertion\": \"created is changed\", \"changed\": false, \"evaluated_to\": false, \"msg\": \"Assertion failed\"}\n\nPLAY RECAP ***\nlocalhost : ok=3 changed=1 unreachable=0 failed=1 skipped=0\nworker1 : ok=2 changed=1 failed=0\n";
        let counts = recap(out);
        assert_eq!((counts["ok"], counts["changed"], counts["failed"]), (5, 2, 1));
        assert_eq!(failures(out), ["It was created inside the range: Assertion failed"]);
    }

    #[test]
    fn trace_counts_by_method_and_errors() {
        let dir = std::env::temp_dir().join(format!("ferrox-trace-test-{}", std::process::id()));
        std::fs::write(&dir, "{\"method\":\"GET\",\"path\":\"/version\",\"status\":200,\"ms\":3}\n{\"method\":\"POST\",\"path\":\"/nodes/pve1/qemu\",\"status\":500,\"ms\":9}\n{\"method\":\"GET\",\"path\":\"/x\",\"status\":null,\"ms\":1}\n").unwrap();
        let calls = ApiCalls::from_trace(&dir);
        let _ = std::fs::remove_file(&dir);
        assert_eq!(
            (
                calls.total,
                calls.errors,
                calls.by_method["GET"],
                calls.by_method["POST"]
            ),
            (3, 2, 2, 1)
        );
    }

    #[test]
    fn utc_now_is_iso8601() {
        let now = utc_now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z'));
    }
}
