//! Worker tasks: UPIDs, durations, logs, exit statuses. The work of a task runs when
//! its (simulated) duration has passed, under the cluster lock, like a worker that
//! finishes; until then the task is `running`.

use crate::auth::Identity;
use crate::control::Leave;
use crate::error::{ApiError, ApiResult};
use crate::sim::SimInner;
use crate::state::{Cluster, Task};
use crate::util::{now_ms, now_secs};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// What a task's work sees: its log and an injected failure (from `/_pvesim/faults`).
pub struct TaskCtx {
    pub log: Vec<String>,
    pub fault: Option<String>,
    /// The fault strikes at the config lock, before any work (see [`crate::control::TaskFault::at_lock`]).
    pub at_lock: bool,
    /// What a failed create or clone leaves behind (see [`crate::control::TaskFault::leave`]).
    pub leave: Option<Leave>,
    pub warnings: u32,
}

/// Task types whose work undoes what their API call prepared when the config lock fails
/// (the new VM's `lock: create|clone` config); any other task's work is not run at all.
const OWN_LOCK_FAULT: [&str; 2] = ["qmcreate", "qmclone"];

impl TaskCtx {
    /// The error of a fault at the config lock, logged as PVE's `lock_file_full` logs a
    /// contended lock; `None` when the work is to run.
    pub fn lock_fault(&mut self) -> Option<String> {
        let fault = self.fault.clone().filter(|_| self.at_lock)?;
        self.log.push("trying to acquire lock...".into());
        Some(fault)
    }
    /// Work calls this where a real failure would happen (after its own checks).
    pub fn check_fault(&self) -> Result<(), String> {
        match &self.fault {
            Some(m) => Err(m.clone()),
            None => Ok(()),
        }
    }
    pub fn warn(&mut self, msg: impl Into<String>) {
        self.warnings += 1;
        self.log.push(format!("WARN: {}", msg.into()));
    }
}

pub type Work = Box<dyn FnOnce(&mut Cluster, &mut TaskCtx) -> Result<(), String> + Send + 'static>;

/// Relative duration of task types (clones and moves copy data).
pub fn duration_factor(kind: &str) -> f64 {
    match kind {
        "qmclone" | "qmmove" | "qmigrate" | "qmrestore" => 3.0,
        "qmcreate" | "qmdestroy" | "qmtemplate" | "qmshutdown" | "qmreboot" => 1.0,
        "qmstart" => 1.0,
        _ => 0.5,
    }
}

pub fn upid(node: &str, pid: u32, pstart: u64, start: u64, kind: &str, id: &str, user: &str) -> String {
    format!("UPID:{node}:{pid:08X}:{pstart:08X}:{start:08X}:{kind}:{id}:{user}:")
}

pub struct ParsedUpid {
    pub node: String,
    pub pid: u32,
    pub pstart: u64,
    pub starttime: u64,
    pub kind: String,
    pub id: String,
    pub user: String,
}

pub fn parse_upid(s: &str) -> Option<ParsedUpid> {
    let p: Vec<&str> = s.split(':').collect();
    if p.len() != 9 || p[0] != "UPID" || !p[8].is_empty() {
        return None;
    }
    Some(ParsedUpid {
        node: p[1].to_string(),
        pid: u32::from_str_radix(p[2], 16).ok()?,
        pstart: u64::from_str_radix(p[3], 16).ok()?,
        starttime: u64::from_str_radix(p[4], 16).ok()?,
        kind: p[5].to_string(),
        id: p[6].to_string(),
        user: p[7].to_string(),
    })
}

/// Finished tasks kept (like PVE's task index, older ones are forgotten).
pub const KEEP_FINISHED: usize = 10_000;

fn prune(c: &mut Cluster) {
    let finished = c.tasks.values().filter(|t| !t.running).count();
    if finished <= KEEP_FINISHED {
        return;
    }
    let mut old: Vec<(u32, String)> = c
        .tasks
        .values()
        .filter(|t| !t.running)
        .map(|t| (t.pid, t.upid.clone()))
        .collect();
    old.sort();
    for (_, upid) in old.into_iter().take(finished - KEEP_FINISHED) {
        c.tasks.remove(&upid);
    }
}

/// Registers a task as running now and returns its UPID and the task fault to apply
/// (`fail`, `warnings`). [`spawn`] schedules the work of one; a task whose work runs on
/// its own (a download, an upload) appends to its log as it goes and ends with [`finish`].
pub fn register(
    sim: &Arc<SimInner>,
    c: &mut Cluster,
    node: &str,
    kind: &str,
    id: &str,
    who: &Identity,
) -> (String, crate::control::TaskFaultAction) {
    prune(c);
    c.next_pid = c.next_pid.wrapping_add(1);
    let pid = 0x0010_0000 + c.next_pid;
    let pstart = 0x0100_0000 + now_ms() / 10 % 0x0F00_0000;
    let start = now_secs();
    let user = who.authuser();
    let upid = upid(node, pid, pstart, start, kind, id, &user);
    let action = sim.faults().take_task_fault(kind, id);
    c.tasks.insert(
        upid.clone(),
        Task {
            upid: upid.clone(),
            node: node.into(),
            kind: kind.into(),
            id: id.into(),
            user,
            pid,
            pstart,
            starttime: start,
            running: true,
            exitstatus: None,
            endtime: None,
            log: vec![],
        },
    );
    (upid, action)
}

/// End a task registered with [`register`]: `TASK OK`, `TASK WARNINGS: n` or `TASK ERROR: …`.
pub fn finish(c: &mut Cluster, upid: &str, res: Result<(), String>, warnings: u32) {
    let Some(t) = c.tasks.get_mut(upid) else { return };
    t.running = false;
    t.endtime = Some(now_secs());
    match res {
        Ok(()) if warnings > 0 => {
            t.log.push(format!("TASK WARNINGS: {warnings}"));
            t.exitstatus = Some(format!("WARNINGS: {warnings}"));
        }
        Ok(()) => {
            t.log.push("TASK OK".into());
            t.exitstatus = Some("OK".into());
        }
        Err(e) => {
            let e = e.trim_end_matches('\n').replace('\n', " ");
            t.log.push(format!("TASK ERROR: {e}"));
            t.exitstatus = Some(e);
        }
    }
}

/// Register a task and schedule its work; returns the UPID.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    sim: &Arc<SimInner>,
    c: &mut Cluster,
    node: &str,
    kind: &str,
    id: &str,
    who: &Identity,
    first_log: Vec<String>,
    work: Work,
) -> String {
    let (upid, action) = register(sim, c, node, kind, id, who);
    let (fault, extra_warnings, at_lock, leave) = (action.fail, action.warnings, action.at_lock, action.leave);
    // A task held at its lock has not got to the work its first log line is from.
    if !(at_lock && fault.is_some()) {
        if let Some(t) = c.tasks.get_mut(&upid) {
            t.log = first_log;
        }
    }
    let dur = action
        .duration_ms
        .unwrap_or((sim.cfg.task_ms as f64 * duration_factor(kind)) as u64);
    let sim2 = sim.clone();
    let upid2 = upid.clone();
    let kind2 = kind.to_string();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(dur)).await;
        let mut c = sim2.cluster();
        if !c.tasks.contains_key(&upid2) {
            return; // state was reset or replaced meanwhile
        }
        let mut ctx = TaskCtx {
            log: vec![],
            fault,
            at_lock,
            leave,
            warnings: 0,
        };
        let fails_at_lock = if OWN_LOCK_FAULT.contains(&kind2.as_str()) {
            None
        } else {
            ctx.lock_fault()
        };
        let res = match fails_at_lock {
            Some(e) => Err(e),
            None => work(&mut c, &mut ctx),
        };
        if res.is_ok() {
            for i in 0..extra_warnings {
                ctx.warn(format!("simulated warning {}", i + 1));
            }
        }
        if let Some(t) = c.tasks.get_mut(&upid2) {
            t.log.extend(ctx.log);
        }
        finish(&mut c, &upid2, res, ctx.warnings);
        sim2.persist(&c);
    });
    upid
}

/// Convert a handler-style error to the task error text.
pub fn task_err(e: ApiError) -> String {
    e.task_text()
}

fn find<'a>(c: &'a Cluster, node: &str, upid: &str) -> ApiResult<&'a Task> {
    let Some(p) = parse_upid(upid) else {
        return Err(ApiError::param("upid", "unable to parse worker upid"));
    };
    match c.tasks.get(upid) {
        Some(t) if p.node == node => Ok(t),
        _ => Err(ApiError::param("upid", "no such task")),
    }
}

/// Owner sees own tasks; others need Sys.Audit on the node.
fn check_owner(c: &Cluster, who: &Identity, t: &Task, node: &str) -> ApiResult<()> {
    let owner = t.user.split('!').next().unwrap_or("");
    if t.user == who.authuser() || (who.tokenid.is_none() && owner == who.userid) {
        return Ok(());
    }
    crate::auth::require(c, who, &format!("/nodes/{node}"), "Sys.Audit")
}

pub fn status(c: &Cluster, who: &Identity, node: &str, upid: &str) -> ApiResult<Value> {
    let t = find(c, node, upid)?;
    check_owner(c, who, t, node)?;
    let (user, tokenid) = match t.user.split_once('!') {
        Some((u, tok)) => (u.to_string(), Some(tok.to_string())),
        None => (t.user.clone(), None),
    };
    let mut v = json!({
        "upid": t.upid, "node": t.node, "pid": t.pid, "pstart": t.pstart, "starttime": t.starttime,
        "type": t.kind, "id": t.id, "user": user,
        "status": if t.running { "running" } else { "stopped" },
    });
    if let Some(tok) = tokenid {
        v["tokenid"] = json!(tok);
    }
    if !t.running {
        v["exitstatus"] = json!(t.exitstatus.clone().unwrap_or_else(|| "unexpected status".into()));
    }
    Ok(v)
}

/// Filters of `GET /nodes/{node}/tasks`, as PVE's `node_tasks` applies them.
#[derive(Debug, Default)]
pub struct ListFilter {
    pub start: usize,
    pub limit: usize,
    /// Case-insensitive substring of the task's user.
    pub userfilter: Option<String>,
    pub typefilter: Option<String>,
    pub vmid: Option<String>,
    pub since: Option<u64>,
    pub until: Option<u64>,
    /// `ok`, `warning`, `error`, `unknown` (lower case); `None` = all.
    pub statuses: Option<Vec<String>>,
    /// `archive` (finished), `active` (running) or `all`.
    pub source: String,
}

/// PVE's `upid_normalize_status_type`: OK, WARNINGS: n, anything else is an error.
fn status_type(status: Option<&str>) -> &'static str {
    match status {
        None | Some("") => "unknown",
        Some("OK") => "ok",
        Some(s) if s.starts_with("WARNINGS: ") => "warning",
        Some(_) => "error",
    }
}

/// `GET /nodes/{node}/tasks`: running tasks first (with `source=active|all`), then finished
/// ones newest first; own tasks unless Sys.Audit on the node. Returns (data, total matched).
///
/// PVE keeps a just-finished task in its `active` file for a while before archiving it,
/// so `source=archive` (the default) can miss it there; here finished tasks are archived at
/// once. Clients looking for a task they may have started must ask `source=all`.
pub fn list(c: &Cluster, who: &Identity, node: &str, f: &ListFilter) -> ApiResult<(Value, usize)> {
    let auditor = crate::auth::require(c, who, &format!("/nodes/{node}"), "Sys.Audit").is_ok();
    let mut ordered: Vec<&Task> = c.tasks.values().filter(|t| t.node == node).collect();
    ordered.sort_by(|a, b| {
        b.running
            .cmp(&a.running)
            .then(b.starttime.cmp(&a.starttime))
            .then(b.pid.cmp(&a.pid))
    });
    let mut matched = 0usize;
    let mut out = Vec::new();
    let mut limit = f.limit;
    for t in ordered {
        let wanted_source = match f.source.as_str() {
            "active" => t.running,
            "all" => true,
            _ => !t.running,
        };
        if !wanted_source {
            continue;
        }
        let (user, tokenid) = match t.user.split_once('!') {
            Some((u, tok)) => (u.to_string(), Some(tok.to_string())),
            None => (t.user.clone(), None),
        };
        if f.userfilter
            .as_ref()
            .is_some_and(|u| !user.to_lowercase().contains(&u.to_lowercase()))
        {
            continue;
        }
        if !auditor && check_owner(c, who, t, node).is_err() {
            continue;
        }
        if f.typefilter.as_ref().is_some_and(|k| *k != t.kind) {
            continue;
        }
        if f.vmid.as_ref().is_some_and(|v| *v != t.id) {
            continue;
        }
        if f.since.is_some_and(|s| t.starttime < s) || f.until.is_some_and(|u| t.starttime > u) {
            continue;
        }
        let status = if t.running {
            Some("RUNNING".to_string())
        } else {
            t.exitstatus.clone()
        };
        if f.statuses
            .as_ref()
            .is_some_and(|s| !s.iter().any(|x| x == status_type(status.as_deref())))
        {
            continue;
        }
        matched += 1;
        if matched <= f.start || limit == 0 {
            continue;
        }
        limit -= 1;
        let mut v = json!({
            "upid": t.upid, "node": t.node, "pid": t.pid, "pstart": t.pstart, "starttime": t.starttime,
            "type": t.kind, "id": t.id, "user": user,
        });
        if let Some(tok) = tokenid {
            v["tokenid"] = json!(tok);
        }
        if let Some(end) = t.endtime.filter(|_| !t.running) {
            v["endtime"] = json!(end);
        }
        if let Some(s) = status {
            v["status"] = json!(s);
        }
        out.push(v);
    }
    Ok((Value::Array(out), matched))
}

/// Log lines `{n,t}` with `start`/`limit`; returns (data, total).
pub fn log(
    c: &Cluster,
    who: &Identity,
    node: &str,
    upid: &str,
    start: usize,
    limit: usize,
) -> ApiResult<(Value, usize)> {
    let t = find(c, node, upid)?;
    check_owner(c, who, t, node)?;
    if t.log.is_empty() {
        return Ok((json!([{"n": 1, "t": "no content"}]), 1));
    }
    let limit = if limit == 0 { usize::MAX } else { limit };
    let lines: Vec<Value> = t
        .log
        .iter()
        .enumerate()
        .skip(start)
        .take(limit)
        .map(|(i, l)| json!({"n": i + 1, "t": l}))
        .collect();
    Ok((Value::Array(lines), t.log.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upid_format_roundtrip() {
        let u = upid(
            "pve1",
            0xA1B2C,
            0x1F3A4B5,
            0x6570A1B2,
            "qmcreate",
            "101",
            "ansible@pve!automation",
        );
        assert_eq!(
            u,
            "UPID:pve1:000A1B2C:01F3A4B5:6570A1B2:qmcreate:101:ansible@pve!automation:"
        );
        let p = parse_upid(&u).unwrap();
        assert_eq!(
            (p.node.as_str(), p.kind.as_str(), p.id.as_str(), p.pid),
            ("pve1", "qmcreate", "101", 0xA1B2C)
        );
        assert!(parse_upid("UPID:pve1:zz").is_none());
        assert!(parse_upid("garbage").is_none());
    }
}
