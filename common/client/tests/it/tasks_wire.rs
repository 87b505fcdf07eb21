//! Task waiting on the wire, against a small local HTTPS server that plays a node's
//! task endpoints.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{token_client, Cert, Reply, Seen, TestServer};
use ferrox_pve_client::tasks::{self, TaskError};
use serde_json::{json, Value};

const UPID: &str = "UPID:pve2:000A1B2C:01F3A4B5:6570A1B2:qmclone:9000:ansible@pve!automation:";

/// A task that runs for `polls` status requests, then stops with `exitstatus`; its
/// log has `lines` lines, the last one the usual `TASK ...` line.
fn task_server(polls: usize, exitstatus: &'static str, lines: usize) -> TestServer {
    let count = Arc::new(AtomicUsize::new(0));
    TestServer::start(Cert::SignedByCa, move |req: &Seen| {
        let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
        if path.ends_with("/status") {
            let n = count.fetch_add(1, Ordering::SeqCst);
            return if n < polls {
                Reply::json(json!({"data": {"status": "running", "upid": UPID}}))
            } else {
                Reply::json(json!({"data": {"status": "stopped", "exitstatus": exitstatus, "upid": UPID}}))
            };
        }
        let param = |k: &str| {
            query
                .split('&')
                .find_map(|p| p.strip_prefix(&format!("{k}=")))
                .and_then(|v| v.parse::<usize>().ok())
        };
        let (start, limit) = (param("start").unwrap_or(0), param("limit").unwrap_or(50));
        let text = |i: usize| -> String {
            if i + 1 == lines {
                match exitstatus {
                    "OK" => "TASK OK".into(),
                    s if s.starts_with("WARNINGS") => format!("TASK {s}"),
                    s => format!("TASK ERROR: {s}"),
                }
            } else if i % 7 == 3 {
                format!("WARN: line {}", i + 1)
            } else {
                format!("line {}", i + 1)
            }
        };
        let end = if limit == 0 { lines } else { (start + limit).min(lines) };
        let data: Vec<Value> = (start.min(end)..end)
            .map(|i| json!({"n": i + 1, "t": text(i)}))
            .collect();
        Reply::json(json!({"data": data, "total": lines}))
    })
}

fn log_requests(server: &TestServer) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.target.contains("/log"))
        .map(|r| r.target)
        .collect()
}

#[test]
fn a_task_that_ends_ok_costs_one_poll_on_the_upid_node() {
    let server = task_server(0, "OK", 3);
    let started = Instant::now();
    let done = tasks::wait(&token_client(&server), UPID, Duration::from_secs(10)).unwrap();
    assert_eq!(done.exitstatus, "OK");
    assert!(done.warnings.is_empty());
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(200) && elapsed < Duration::from_millis(900),
        "one short first pause: {elapsed:?}"
    );
    let seen = server.requests();
    assert_eq!(seen.len(), 1, "one status poll, no log read");
    assert!(
        seen[0]
            .target
            .starts_with(&format!("/api2/json/nodes/pve2/tasks/{UPID}/status")),
        "{}",
        seen[0].target
    );
}

#[test]
fn a_longer_task_is_polled_once_a_second_as_pve_clients_do() {
    let server = task_server(2, "OK", 3);
    let started = Instant::now();
    tasks::wait(&token_client(&server), UPID, Duration::from_secs(10)).unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(2200) && elapsed < Duration::from_millis(3200),
        "200 ms, then 1 s, 1 s: {elapsed:?}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_failed_task_fails_at_once_with_its_log_tail() {
    let server = task_server(0, "storage 'nvme-pool' does not exist", 120);
    let started = Instant::now();
    let err = tasks::wait(&token_client(&server), UPID, Duration::from_secs(30)).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    let TaskError::Failed {
        exitstatus, log_tail, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(exitstatus, "storage 'nvme-pool' does not exist");
    assert_eq!(
        log_tail,
        &[
            "WARN: line 116",
            "line 117",
            "line 118",
            "line 119",
            "TASK ERROR: storage 'nvme-pool' does not exist"
        ]
    );
    assert_eq!(
        err.to_string(),
        format!("task {UPID} failed: storage 'nvme-pool' does not exist (task log: WARN: line 116 | line 117 | line 118 | line 119)")
    );
    let logs = log_requests(&server);
    assert_eq!(logs.len(), 2, "first page, then the tail of a long log: {logs:?}");
    assert!(logs[1].ends_with("start=115&limit=5"), "{}", logs[1]);
}

#[test]
fn warnings_are_success_with_the_warning_lines() {
    let server = task_server(1, "WARNINGS: 9", 60);
    let done = tasks::wait(&token_client(&server), UPID, Duration::from_secs(10)).unwrap();
    assert_eq!(done.exitstatus, "WARNINGS: 9");
    let expected: Vec<String> = (0..59)
        .filter(|i| i % 7 == 3)
        .map(|i| format!("WARN: line {}", i + 1))
        .collect();
    assert_eq!(done.warnings, expected);
}

#[test]
fn a_task_still_running_at_the_timeout_reports_its_last_log_line() {
    let server = task_server(usize::MAX, "OK", 4);
    let started = Instant::now();
    let err = tasks::wait(&token_client(&server), UPID, Duration::from_secs(1)).unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed < Duration::from_millis(1800),
        "{elapsed:?}"
    );
    let TaskError::Timeout { last_line, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(last_line.as_deref(), Some("TASK OK"));
    assert!(
        err.to_string().starts_with(&format!(
            "timed out after 1s waiting for task {UPID} (last log line: TASK OK)"
        )),
        "{err}"
    );
}

#[test]
fn a_poll_error_is_an_api_error() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::status(
            400,
            "Parameter verification failed.",
            "{\"data\":null,\"errors\":{\"upid\":\"no such task\"},\"message\":\"Parameter verification failed.\\n\"}",
        )
    });
    let err = tasks::wait(&token_client(&server), UPID, Duration::from_secs(5)).unwrap_err();
    assert!(matches!(err, TaskError::Api(_)));
    assert_eq!(
        err.to_string(),
        "400 Bad Request: Parameter verification failed. - {'upid': 'no such task'}"
    );
}

#[test]
fn a_malformed_upid_is_refused_without_a_request() {
    let server = task_server(0, "OK", 1);
    let err = tasks::wait(&token_client(&server), "not-a-upid", Duration::from_secs(5)).unwrap_err();
    assert!(err.to_string().contains("not a Proxmox VE task id"), "{err}");
    assert!(server.requests().is_empty());
}

#[test]
fn a_failed_task_stays_failed_when_its_log_cannot_be_read() {
    let server = TestServer::start(Cert::SignedByCa, |req: &Seen| {
        if req.target.contains("/status") {
            Reply::json(json!({"data": {"status": "stopped", "exitstatus": "migration aborted"}}))
        } else {
            Reply::status(403, "Permission check failed (/nodes/pve2, Sys.Audit)", "")
        }
    });
    let err = tasks::wait(&token_client(&server), UPID, Duration::from_secs(5)).unwrap_err();
    let TaskError::Failed {
        exitstatus, log_tail, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((exitstatus.as_str(), log_tail.len()), ("migration aborted", 0));
    assert_eq!(err.to_string(), format!("task {UPID} failed: migration aborted"));
}
