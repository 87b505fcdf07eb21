//! Waiting on PVE tasks: poll the UPID's node, report a failed task at once with its
//! exit status and log tail, surface `WARNINGS: n`.
//!
//! The cadence is PVE's own: its web UI (the task progress window and task viewer of
//! proxmox-widget-toolkit) and proxmoxer's `blocking_status` read
//! `GET /nodes/{node}/tasks/{upid}/status` once a second. Unlike them we do not poll the
//! instant the UPID arrives — a task just forked has not finished — but after a short
//! first pause that most config, disk-allocation and power tasks end within, so a wait
//! usually costs one request. 1.6 took a failed task for a running one until its
//! timeout; here a task that stopped with an error ends the wait at once.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::{ApiError, ApiErrorKind, Client};

/// Pause before the first poll; most config and power tasks finish within it.
const FIRST_PAUSE: Duration = Duration::from_millis(200);
/// Pause between later polls: PVE's web UI and proxmoxer poll once a second.
const PAUSE: Duration = Duration::from_secs(1);
/// How many log lines a failure shows.
const TAIL_LINES: usize = 5;
/// Lines fetched with the first log request; logs this short need no second one.
const FIRST_PAGE: usize = 50;

/// A task that finished successfully (`OK` or `WARNINGS: n`).
#[derive(Debug, Clone)]
pub struct TaskDone {
    /// The task's UPID.
    pub upid: String,
    /// Its exit status (`OK`, `WARNINGS: 2`).
    pub exitstatus: String,
    /// Log lines starting with `WARN` when the task ended with warnings.
    pub warnings: Vec<String>,
}

impl TaskDone {
    /// What a module's result says of the task's warnings, one entry each, every module
    /// alike: each `WARN` line of its log with the task named, or, when the log could not
    /// be read, the exit status that counted them.
    pub fn result_warnings(&self) -> Vec<String> {
        if self.warnings.is_empty() && self.exitstatus.starts_with("WARNINGS") {
            return vec![format!("Proxmox VE task {} ended with {}", self.upid, self.exitstatus)];
        }
        self.warnings
            .iter()
            .map(|w| format!("Proxmox VE task {}: {w}", self.upid))
            .collect()
    }
}

/// Why waiting on a task did not end in success.
#[derive(Debug, Clone)]
pub enum TaskError {
    /// The task ended with an error: its exit status and the last lines of its log.
    Failed {
        /// The task's UPID.
        upid: String,
        /// Its exit status: PVE's error.
        exitstatus: String,
        /// The last lines of its log.
        log_tail: Vec<String>,
    },
    /// Still running after the timeout: the last line of its log so far.
    Timeout {
        /// The task's UPID.
        upid: String,
        /// How long it was waited on.
        waited: Duration,
        /// The last line of its log so far, if any.
        last_line: Option<String>,
    },
    /// Polling itself failed.
    Api(ApiError),
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskError::Failed { upid, exitstatus, log_tail } => {
                write!(f, "task {upid} failed: {exitstatus}")?;
                // The log's last line repeats the exit status; show only what it adds.
                let repeated = format!("TASK ERROR: {exitstatus}");
                let context: Vec<&str> =
                    log_tail.iter().map(String::as_str).filter(|l| l.trim_end() != repeated).collect();
                if !context.is_empty() {
                    write!(f, " (task log: {})", context.join(" | "))?;
                }
                Ok(())
            }
            TaskError::Timeout { upid, waited, last_line } => write!(
                f,
                "timed out after {}s waiting for task {upid} (last log line: {}); the task keeps running on the node — raise timeout or check it in the Proxmox VE task log",
                waited.as_secs(),
                last_line.as_deref().unwrap_or("none yet")
            ),
            TaskError::Api(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TaskError {}

impl From<ApiError> for TaskError {
    fn from(e: ApiError) -> TaskError {
        TaskError::Api(e)
    }
}

/// The node a UPID belongs to (`UPID:<node>:...`).
pub fn node_of(upid: &str) -> Option<&str> {
    upid.strip_prefix("UPID:")?.split(':').next().filter(|n| !n.is_empty())
}

/// How a stopped task ended, from its `exitstatus`.
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// `OK`.
    Ok,
    /// `WARNINGS: n`: done, with warnings in its log.
    Warnings,
    /// Anything else: the exit status is PVE's error.
    Failed,
}

/// How a stopped task ended, from its `exitstatus`.
pub fn ending(exitstatus: &str) -> Ending {
    match exitstatus {
        "OK" => Ending::Ok,
        s if s.starts_with("WARNINGS") => Ending::Warnings,
        _ => Ending::Failed,
    }
}

/// The pause before status request number `poll` (0-based).
pub fn pause_before(poll: u32) -> Duration {
    if poll == 0 {
        FIRST_PAUSE
    } else {
        PAUSE
    }
}

/// Waits until the task stops or `timeout` passes.
pub fn wait(client: &Client, upid: &str, timeout: Duration) -> Result<TaskDone, TaskError> {
    let node = node_of(upid).ok_or_else(|| {
        TaskError::Api(ApiError::other(
            ApiErrorKind::Other,
            format!("{upid:?} is not a Proxmox VE task id (UPID:<node>:...)"),
        ))
    })?;
    let log = TaskLog { client, node, upid };
    let status_path = format!("/nodes/{node}/tasks/{upid}/status");
    let started = Instant::now();
    for poll in 0.. {
        std::thread::sleep(pause_before(poll).min(timeout.saturating_sub(started.elapsed())));
        let status = client.get(&status_path, &[])?;
        if status.get("status").and_then(Value::as_str) == Some("stopped") {
            let exitstatus = status
                .get("exitstatus")
                .and_then(Value::as_str)
                .unwrap_or("unexpected status")
                .to_string();
            return match ending(&exitstatus) {
                Ending::Ok => Ok(TaskDone {
                    upid: upid.to_string(),
                    exitstatus,
                    warnings: Vec::new(),
                }),
                // The log only adds detail: if it cannot be read, the outcome still stands.
                Ending::Warnings => {
                    let lines = log.all().unwrap_or_default();
                    let warnings = lines.into_iter().filter(|l| l.starts_with("WARN")).collect();
                    Ok(TaskDone {
                        upid: upid.to_string(),
                        exitstatus,
                        warnings,
                    })
                }
                Ending::Failed => Err(TaskError::Failed {
                    upid: upid.to_string(),
                    exitstatus,
                    log_tail: log.tail(TAIL_LINES).unwrap_or_default(),
                }),
            };
        }
        let waited = started.elapsed();
        if waited >= timeout {
            let last_line = log.tail(1).unwrap_or_default().pop();
            return Err(TaskError::Timeout {
                upid: upid.to_string(),
                waited,
                last_line,
            });
        }
    }
    unreachable!("the poll loop returns")
}

/// Reading a task's log (`GET /nodes/{node}/tasks/{upid}/log`).
struct TaskLog<'a> {
    client: &'a Client,
    node: &'a str,
    upid: &'a str,
}

impl TaskLog<'_> {
    /// Lines `start..start+limit` and the log's total line count, when PVE told it (over
    /// HTTPS it does; pvesh prints the `data` alone, so in local mode it is not known).
    fn page(&self, start: usize, limit: usize) -> Result<(Vec<String>, Option<usize>), ApiError> {
        let path = format!("/nodes/{}/tasks/{}/log", self.node, self.upid);
        let envelope = self
            .client
            .get_envelope(&path, &[("start", start.to_string()), ("limit", limit.to_string())])?;
        let lines = log_lines(envelope.get("data").unwrap_or(&Value::Null));
        let total = envelope.get("total").and_then(lenient_usize);
        Ok((lines, total))
    }

    /// Without a total: the pages after `lines` (a full first page) until one comes back
    /// short, keeping the last `keep` lines (all of them with `None`).
    fn rest_paged(&self, mut lines: Vec<String>, keep: Option<usize>) -> Result<Vec<String>, ApiError> {
        let mut start = lines.len();
        let mut last_page = lines.len();
        while last_page == FIRST_PAGE {
            let (page, _) = self.page(start, FIRST_PAGE)?;
            last_page = page.len();
            start += page.len();
            lines.extend(page);
            if let Some(keep) = keep {
                let skip = lines.len().saturating_sub(keep);
                lines.drain(..skip);
            }
        }
        Ok(lines)
    }

    /// The last `n` lines: one request for a short log, two for a long one (without a
    /// total, one per page).
    fn tail(&self, n: usize) -> Result<Vec<String>, ApiError> {
        let (mut lines, total) = self.page(0, FIRST_PAGE)?;
        match total {
            Some(total) if total > lines.len() => lines = self.page(total.saturating_sub(n), n)?.0,
            None if lines.len() == FIRST_PAGE => lines = self.rest_paged(lines, Some(n))?,
            _ => {}
        }
        let skip = lines.len().saturating_sub(n);
        Ok(lines.split_off(skip))
    }

    /// Every line.
    fn all(&self) -> Result<Vec<String>, ApiError> {
        let (mut lines, total) = self.page(0, FIRST_PAGE)?;
        match total {
            Some(total) if total > lines.len() => {
                let start = lines.len();
                lines.extend(self.page(start, total - start)?.0);
            }
            None if lines.len() == FIRST_PAGE => lines = self.rest_paged(lines, None)?,
            _ => {}
        }
        Ok(lines)
    }
}

/// The texts of `[{"n": 1, "t": "..."}]`, in line order.
fn log_lines(data: &Value) -> Vec<String> {
    let mut numbered: Vec<(u64, String)> = data
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    let text = item.get("t")?.as_str()?.to_string();
                    let n = item.get("n").and_then(lenient_usize).unwrap_or(0) as u64;
                    Some((n, text))
                })
                .collect()
        })
        .unwrap_or_default();
    numbered.sort_by_key(|(n, _)| *n);
    numbered.into_iter().map(|(_, t)| t).collect()
}

/// A count that PVE may send as a number or a string.
fn lenient_usize(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n.as_u64().map(|n| n as usize),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const UPID: &str = "UPID:pve1:000A1B2C:01F3A4B5:6570A1B2:qmstart:100:root@pam!automation:";

    #[test]
    fn a_task_s_warnings_are_worded_once_for_every_module() {
        let done = |exitstatus: &str, warnings: &[&str]| TaskDone {
            upid: UPID.into(),
            exitstatus: exitstatus.into(),
            warnings: warnings.iter().map(|w| w.to_string()).collect(),
        };
        assert_eq!(done("OK", &[]).result_warnings(), Vec::<String>::new());
        assert_eq!(
            done("WARNINGS: 1", &["WARN: disk is busy"]).result_warnings(),
            [format!("Proxmox VE task {UPID}: WARN: disk is busy")]
        );
        assert_eq!(
            done("WARNINGS: 2", &[]).result_warnings(),
            [format!("Proxmox VE task {UPID} ended with WARNINGS: 2")],
            "a log that could not be read still leaves the count"
        );
    }

    #[test]
    fn upid_names_its_node() {
        assert_eq!(node_of(UPID), Some("pve1"));
        assert_eq!(node_of("UPID::x"), None);
        assert_eq!(node_of("pve1:x"), None);
    }

    #[test]
    fn exit_statuses() {
        assert_eq!(ending("OK"), Ending::Ok);
        assert_eq!(ending("WARNINGS: 2"), Ending::Warnings);
        assert_eq!(
            ending("unable to create VM 108 - VM 108 already exists on node 'pve1'"),
            Ending::Failed
        );
        assert_eq!(ending("unexpected status"), Ending::Failed);
    }

    #[test]
    fn a_short_first_pause_then_once_a_second() {
        let ms: Vec<u128> = (0..4).map(|poll| pause_before(poll).as_millis()).collect();
        assert_eq!(ms, vec![200, 1000, 1000, 1000]);
    }

    #[test]
    fn log_lines_are_ordered_by_number() {
        let data = json!([{"n": 2, "t": "b"}, {"n": "1", "t": "a"}, {"n": 3}]);
        assert_eq!(log_lines(&data), vec!["a", "b"]);
    }

    #[test]
    fn failure_text_shows_exit_status_and_new_log_context() {
        let e = TaskError::Failed {
            upid: "UPID:pve1:x:".into(),
            exitstatus: "storage 'nvme-pool' does not exist".into(),
            log_tail: vec![
                "create full clone of drive scsi0".into(),
                "TASK ERROR: storage 'nvme-pool' does not exist".into(),
            ],
        };
        assert_eq!(
            e.to_string(),
            "task UPID:pve1:x: failed: storage 'nvme-pool' does not exist (task log: create full clone of drive scsi0)"
        );
        let bare = TaskError::Failed {
            upid: "U".into(),
            exitstatus: "boom".into(),
            log_tail: vec!["TASK ERROR: boom".into()],
        };
        assert_eq!(bare.to_string(), "task U failed: boom");
    }

    #[test]
    fn timeout_text_says_the_task_keeps_running() {
        let e = TaskError::Timeout {
            upid: "U".into(),
            waited: Duration::from_secs(30),
            last_line: Some("transferred 1 GiB".into()),
        };
        assert_eq!(
            e.to_string(),
            "timed out after 30s waiting for task U (last log line: transferred 1 GiB); the task keeps running on the node — raise timeout or check it in the Proxmox VE task log"
        );
    }
}
