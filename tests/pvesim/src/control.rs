//! `/_pvesim/...`: measurement (request log) and control (faults, state, reset).
//! No authentication; not logged.

use crate::sim::SimInner;
use crate::state::Cluster;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub method: String,
    pub path: String,
    pub query: String,
    pub status: u16,
    pub ms: f64,
}

/// Requests served under `/api2`: counts by `METHOD path` and the ordered log; and the
/// tickets `POST /access/ticket` gave: `logins` (a password, with its second factor if
/// the user has one) and `renewals` (a valid ticket as the password); second-factor
/// answers: `totp_accepted` (TOTP codes accepted, each used up), `codes_refused` (answers
/// refused: wrong, reused, untyped, locked) and `totp_failures` (what raised a user's TOTP
/// failure count, 8 of which lock TOTP).
#[derive(Debug, Default)]
pub struct RequestLog {
    pub total: u64,
    pub counts: BTreeMap<String, u64>,
    pub log: Vec<LogEntry>,
    pub logins: u64,
    pub renewals: u64,
    pub totp_accepted: u64,
    pub codes_refused: u64,
    pub totp_failures: u64,
    /// Every ticket and CSRF token handed out, so a test can check no output shows one.
    pub issued: Vec<String>,
}

/// Entries kept in `log` (counts are unbounded).
const LOG_CAP: usize = 100_000;

impl RequestLog {
    pub fn record(&mut self, e: LogEntry) {
        self.total += 1;
        *self.counts.entry(format!("{} {}", e.method, e.path)).or_default() += 1;
        if self.log.len() < LOG_CAP {
            self.log.push(e);
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HttpFault {
    #[serde(default)]
    pub method: Option<String>,
    pub path_regex: String,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub latency_ms: u64,
    #[serde(default)]
    pub drop_connection: bool,
    /// The request is carried out first (its state change happens as PVE would make it);
    /// then the answer is lost: the connection is dropped, or, with `latency_ms`, the answer
    /// comes that late (slower than the client's timeout), or `status` replaces it.
    #[serde(default)]
    pub after: bool,
    /// Remaining uses; `None` = forever.
    #[serde(default)]
    pub times: Option<u64>,
    /// Strikes every matching request for this long from the first it strikes (a proxy in
    /// front shedding load, a node restarting pveproxy): a span of time, not a count. With
    /// `times`, whichever runs out first ends it.
    #[serde(default)]
    pub for_ms: Option<u64>,
    #[serde(skip)]
    span: Span,
    #[serde(skip)]
    re: Option<Regex>,
}

/// When a fault with `for_ms` first struck; it strikes until `for_ms` after that.
#[derive(Debug, Clone, Default)]
struct Span {
    since: Option<Instant>,
}

impl Span {
    /// Whether a fault of `for_ms` still strikes at `now` (and starts its span if first).
    fn strikes(&mut self, for_ms: Option<u64>, now: Instant) -> bool {
        let Some(ms) = for_ms else { return true };
        let since = *self.since.get_or_insert(now);
        now.duration_since(since) < Duration::from_millis(ms)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskFault {
    pub task_type: String,
    /// Only tasks with this id, as the UPID carries it (a clone's is its source VM).
    #[serde(default)]
    pub vmid: Option<u32>,
    /// Error text the task ends with.
    #[serde(default)]
    pub fail: Option<String>,
    /// `fail` strikes while the task takes its config lock, before any work (PVE's
    /// `lock_config_full` timing out): nothing is made and the text is the task's error as
    /// given. Otherwise it strikes in the work, worded as the task words its failures
    /// (`clone failed: …`, `unable to create VM <id> - …`).
    #[serde(default)]
    pub at_lock: bool,
    /// What a failed create or clone leaves of the new VM when its cleanup does not get
    /// to run (see [`Leave`]); by default it removes what it made, as PVE's workers do.
    #[serde(default)]
    pub leave: Option<Leave>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Successful tasks end with `WARNINGS: n` instead of `OK`.
    #[serde(default)]
    pub warnings: Option<u32>,
    #[serde(default)]
    pub times: Option<u64>,
}

/// What a failed create or clone leaves behind when its cleanup does not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Leave {
    /// The volumes it allocated: freeing them hit the storage's lock too (PVE's worker
    /// warns with the lock text per volume and goes on); the config file is removed.
    Volumes,
    /// Its config file as last written (a clone's: `lock: clone`, its name and the disks
    /// cloned so far; a create's: the `lock: create` placeholder) and its volumes.
    Config,
}

/// What a task fault does to one task.
#[derive(Debug, Default, Clone)]
pub struct TaskFaultAction {
    pub fail: Option<String>,
    pub at_lock: bool,
    pub leave: Option<Leave>,
    pub duration_ms: Option<u64>,
    pub warnings: u32,
}

/// New TLS connections closed right after the TCP accept, before the handshake (pveproxy
/// restarting or out of workers): the client never got to send a request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConnectionFault {
    pub refuse_connections: bool,
    #[serde(default)]
    pub times: Option<u64>,
}

/// A node out of reach (`unreachable`: off the cluster's membership, its calls 595) and/or
/// without a status broadcast (`no_status`: pvestatd sends nothing, so pmxcfs has no rrd
/// entry for it or its guests). `since_secs`: how long ago it happened; the node's and its
/// guests' last broadcast stays listed until it is older than pmxcfs's 300 s (see
/// [`crate::broadcast`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeFault {
    pub node: String,
    #[serde(default)]
    pub unreachable: bool,
    #[serde(default)]
    pub no_status: bool,
    #[serde(default)]
    pub since_secs: u64,
    /// When it happened, on the simulator's clock (set when the fault is added).
    #[serde(skip)]
    pub at_ms: u64,
}

/// Guest agent of a VM: `not_running` (agent never answers) or an error message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentFault {
    pub agent_vmid: u32,
    #[serde(default)]
    pub not_running: bool,
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct Faults {
    pub http: Vec<HttpFault>,
    pub task: Vec<TaskFault>,
    pub node: Vec<NodeFault>,
    pub agent: Vec<AgentFault>,
    pub connection: Vec<ConnectionFault>,
}

/// What an HTTP fault does to a request.
pub struct HttpAction {
    pub latency_ms: u64,
    pub drop_connection: bool,
    pub after: bool,
    pub reply: Option<(u16, String)>,
}

impl Faults {
    pub fn match_http(&mut self, method: &str, path: &str) -> Option<HttpAction> {
        let now = Instant::now();
        let idx = self.http.iter_mut().position(|f| {
            f.times != Some(0)
                && f.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(method))
                && f.re.as_ref().is_some_and(|r| r.is_match(path))
                && f.span.strikes(f.for_ms, now)
        })?;
        let f = &mut self.http[idx];
        if let Some(t) = f.times.as_mut() {
            *t -= 1;
        }
        let reply = f
            .status
            .map(|s| (s, f.message.clone().unwrap_or_else(|| "simulated failure".into())));
        // `after` alone means the answer is lost: the connection drops.
        let drop_connection = f.drop_connection || (f.after && reply.is_none() && f.latency_ms == 0);
        Some(HttpAction {
            latency_ms: f.latency_ms,
            drop_connection,
            after: f.after,
            reply,
        })
    }

    /// Whether the next new connection is to be closed before its TLS handshake.
    pub fn take_connection_fault(&mut self) -> bool {
        let Some(f) = self
            .connection
            .iter_mut()
            .find(|f| f.refuse_connections && f.times != Some(0))
        else {
            return false;
        };
        if let Some(t) = f.times.as_mut() {
            *t -= 1;
        }
        true
    }

    /// What the next task of `kind` with UPID id `id` suffers (nothing if no fault matches).
    pub fn take_task_fault(&mut self, kind: &str, id: &str) -> TaskFaultAction {
        let matches =
            |f: &TaskFault| f.task_type == kind && f.times != Some(0) && f.vmid.is_none_or(|v| v.to_string() == id);
        let Some(f) = self.task.iter_mut().find(|f| matches(f)) else {
            return TaskFaultAction::default();
        };
        if let Some(t) = f.times.as_mut() {
            *t -= 1;
        }
        TaskFaultAction {
            fail: f.fail.clone(),
            at_lock: f.at_lock,
            leave: f.leave,
            duration_ms: f.duration_ms,
            warnings: f.warnings.unwrap_or(0),
        }
    }

    pub fn node_unreachable(&self, node: &str) -> bool {
        self.node.iter().any(|f| f.node == node && f.unreachable)
    }

    /// When the node's status broadcast stopped by a fault (it went out of reach or its
    /// status daemon stopped), the earliest such fault's time; `None` while it broadcasts.
    pub fn node_silent_since_ms(&self, node: &str) -> Option<u64> {
        self.node
            .iter()
            .filter(|f| f.node == node && (f.unreachable || f.no_status))
            .map(|f| f.at_ms)
            .min()
    }

    /// Whether a fault stopped the node's status daemon (the node itself stays online).
    pub fn node_without_status(&self, node: &str) -> bool {
        self.node.iter().any(|f| f.node == node && f.no_status)
    }

    pub fn agent(&self, vmid: u32) -> Option<&AgentFault> {
        self.agent.iter().find(|f| f.agent_vmid == vmid)
    }

    /// Add a fault from its JSON description (kind recognised by its keys).
    pub fn add(&mut self, v: Value) -> Result<(), String> {
        if v.get("path_regex").is_some() {
            let mut f: HttpFault = serde_json::from_value(v).map_err(|e| e.to_string())?;
            f.re = Some(Regex::new(&f.path_regex).map_err(|e| format!("bad path_regex: {e}"))?);
            self.http.push(f);
        } else if v.get("task_type").is_some() {
            self.task.push(serde_json::from_value(v).map_err(|e| e.to_string())?);
        } else if v.get("agent_vmid").is_some() {
            self.agent.push(serde_json::from_value(v).map_err(|e| e.to_string())?);
        } else if v.get("node").is_some() {
            let mut f: NodeFault = serde_json::from_value(v).map_err(|e| e.to_string())?;
            f.at_ms = crate::util::now_ms().saturating_sub(f.since_secs.saturating_mul(1000));
            self.node.push(f);
        } else if v.get("refuse_connections").is_some() {
            self.connection
                .push(serde_json::from_value(v).map_err(|e| e.to_string())?);
        } else {
            return Err("unknown fault: expected path_regex, task_type, node, agent_vmid or refuse_connections".into());
        }
        Ok(())
    }
}

/// Handle a control request; returns (status, JSON body).
pub fn handle(sim: &Arc<SimInner>, method: &str, path: &str, body: &[u8]) -> (u16, Value) {
    let parse = || -> Result<Value, (u16, Value)> {
        if body.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(body).map_err(|e| (400, json!({"error": format!("invalid JSON: {e}")})))
    };
    match (method, path.trim_end_matches('/')) {
        ("GET", "/_pvesim/requests") => {
            let l = sim.log.lock().unwrap_or_else(|e| e.into_inner());
            (
                200,
                json!({"total": l.total, "counts": l.counts, "log": l.log, "logins": l.logins, "renewals": l.renewals,
                    "totp_accepted": l.totp_accepted, "codes_refused": l.codes_refused, "totp_failures": l.totp_failures}),
            )
        }
        ("DELETE", "/_pvesim/requests") => {
            *sim.log.lock().unwrap_or_else(|e| e.into_inner()) = RequestLog::default();
            (200, json!({"ok": true}))
        }
        ("GET", "/_pvesim/tickets") => {
            let l = sim.log.lock().unwrap_or_else(|e| e.into_inner());
            (200, json!({"issued": l.issued}))
        }
        ("POST", "/_pvesim/rotate-authkey") => {
            sim.keys.rotate();
            (200, json!({"ok": true}))
        }
        ("GET", "/_pvesim/faults") => (200, serde_json::to_value(&*sim.faults()).unwrap_or_default()),
        ("POST", "/_pvesim/faults") => match parse() {
            Err(e) => e,
            Ok(v) => {
                let items = match v {
                    Value::Array(a) => a,
                    other => vec![other],
                };
                let mut f = sim.faults();
                for it in items {
                    if let Err(e) = f.add(it) {
                        return (400, json!({"error": e}));
                    }
                }
                (200, json!({"ok": true}))
            }
        },
        ("DELETE", "/_pvesim/faults") => {
            *sim.faults() = Faults::default();
            (200, json!({"ok": true}))
        }
        ("GET", "/_pvesim/state") => (200, serde_json::to_value(&*sim.cluster()).unwrap_or_default()),
        ("POST", "/_pvesim/state") => match parse() {
            Err(e) => e,
            Ok(v) => match serde_json::from_value::<Cluster>(v) {
                Err(e) => (400, json!({"error": format!("invalid state: {e}")})),
                Ok(mut c) => {
                    c.settle_tasks();
                    let mut g = sim.cluster();
                    *g = c;
                    sim.persist(&g);
                    (200, json!({"ok": true}))
                }
            },
        },
        ("POST", "/_pvesim/reset") => {
            let mut g = sim.cluster();
            *g = sim.initial.clone();
            sim.persist(&g);
            drop(g);
            *sim.faults() = Faults::default();
            sim.tfa().reset();
            (200, json!({"ok": true}))
        }
        ("POST", "/_pvesim/recovery-keys") => match parse() {
            Err(e) => e,
            Ok(v) => match v.get("userid").and_then(Value::as_str) {
                Some(userid) if sim.cluster().user(userid).is_some() => {
                    (200, json!({"keys": sim.tfa().generate_recovery(userid)}))
                }
                _ => (400, json!({"error": "expected {\"userid\": <an existing user>}"})),
            },
        },
        ("GET", "/_pvesim/hold") => (200, sim.hold.status()),
        ("POST", "/_pvesim/hold") => match parse().and_then(|v| {
            serde_json::from_value::<crate::hold::HoldSpec>(v).map_err(|e| (400, json!({"error": e.to_string()})))
        }) {
            Err(e) => e,
            Ok(spec) => match sim.hold.set(spec) {
                Ok(()) => (200, json!({"ok": true})),
                Err(e) => (400, json!({"error": e})),
            },
        },
        ("DELETE", "/_pvesim/hold") => {
            sim.hold.release();
            (200, json!({"ok": true}))
        }
        ("GET", "/_pvesim") | ("GET", "/_pvesim/info") => (
            200,
            json!({"endpoints": ["GET|DELETE /_pvesim/requests", "GET /_pvesim/tickets", "POST /_pvesim/rotate-authkey", "GET|POST|DELETE /_pvesim/faults", "GET|POST /_pvesim/state", "POST /_pvesim/reset", "POST /_pvesim/recovery-keys", "GET|POST|DELETE /_pvesim/hold"]}),
        ),
        _ => (404, json!({"error": format!("no control endpoint {method} {path}")})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_alone_loses_the_answer_and_with_latency_delays_it() {
        let mut f = Faults::default();
        f.add(json!({"path_regex": "^/a$", "after": true, "times": 1})).unwrap();
        f.add(json!({"path_regex": "^/b$", "after": true, "latency_ms": 50, "times": 1}))
            .unwrap();
        let a = f.match_http("POST", "/a").unwrap();
        assert!(a.after && a.drop_connection && a.reply.is_none());
        let b = f.match_http("PUT", "/b").unwrap();
        assert!(b.after && !b.drop_connection && b.latency_ms == 50);
    }

    #[test]
    fn a_span_fault_strikes_from_its_first_match_for_its_time_whatever_the_count() {
        let mut f = Faults::default();
        f.add(json!({"path_regex": "^/r$", "status": 503, "message": "Service Unavailable", "for_ms": 60_000}))
            .unwrap();
        f.add(json!({"path_regex": "^/s$", "status": 595, "for_ms": 0}))
            .unwrap();
        for _ in 0..100 {
            assert_eq!(f.match_http("GET", "/r").and_then(|a| a.reply).map(|r| r.0), Some(503));
        }
        assert!(f.match_http("GET", "/s").is_none(), "a span of 0 ms is over at once");
        let start = Instant::now();
        let mut span = Span::default();
        assert!(
            span.strikes(Some(10), start + Duration::from_millis(5)),
            "the span starts at its first strike"
        );
        assert!(span.strikes(Some(10), start + Duration::from_millis(14)));
        assert!(!span.strikes(Some(10), start + Duration::from_millis(15)));
        assert!(Span::default().strikes(None, start), "no span: only the count ends it");
    }

    #[test]
    fn http_fault_times() {
        let mut f = Faults::default();
        f.add(json!({"method": "POST", "path_regex": "^/api2/json/nodes/pve1/qemu$", "status": 500, "message": "boom", "times": 1})).unwrap();
        assert!(f.match_http("GET", "/api2/json/nodes/pve1/qemu").is_none());
        let a = f.match_http("POST", "/api2/json/nodes/pve1/qemu").unwrap();
        assert_eq!(a.reply, Some((500, "boom".into())));
        assert!(f.match_http("POST", "/api2/json/nodes/pve1/qemu").is_none(), "used up");
        f.add(json!({"task_type": "qmcreate", "fail": "x"})).unwrap();
        assert_eq!(f.take_task_fault("qmcreate", "100").fail.as_deref(), Some("x"));
        assert_eq!(
            f.take_task_fault("qmcreate", "101").fail.as_deref(),
            Some("x"),
            "times null = forever"
        );
        assert_eq!(f.take_task_fault("qmstart", "100").fail, None);
        f.add(json!({"node": "pve2", "unreachable": true})).unwrap();
        assert!(f.node_unreachable("pve2"));
        f.add(json!({"refuse_connections": true, "times": 1})).unwrap();
        assert!(f.take_connection_fault());
        assert!(!f.take_connection_fault(), "used up");
        assert!(f.add(json!({"foo": 1})).is_err());
    }

    #[test]
    fn task_faults_match_by_id_and_say_where_they_strike_and_what_stays() {
        let mut f = Faults::default();
        f.add(json!({"task_type": "qmclone", "vmid": 9001, "fail": "a", "at_lock": true, "times": 1}))
            .unwrap();
        f.add(json!({"task_type": "qmclone", "fail": "b", "leave": "volumes", "times": 1}))
            .unwrap();
        assert!(
            f.add(json!({"task_type": "qmclone", "leave": "disks"})).is_err(),
            "leave is volumes or config"
        );
        let other = f.take_task_fault("qmclone", "9000");
        assert_eq!(
            (other.fail.as_deref(), other.at_lock, other.leave),
            (Some("b"), false, Some(Leave::Volumes))
        );
        let own = f.take_task_fault("qmclone", "9001");
        assert_eq!((own.fail.as_deref(), own.at_lock, own.leave), (Some("a"), true, None));
        assert_eq!(f.take_task_fault("qmclone", "9001").fail, None, "both used up");
    }
}
