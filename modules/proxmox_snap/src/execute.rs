//! The writes: each a PVE task, waited on before the next, so a failure is reported
//! with PVE's exit status and the end of its log, never as a timeout, and retention's
//! removals never run into one another's locks.

use std::time::Duration;

use serde_json::Value;

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::vm::Guest;
use ferrox_pve_client::client::Client;
use ferrox_pve_client::tasks;
use ferrox_run::driver::Cx;

use crate::plan::{self, Action, Plan};
use crate::task::SnapTask;

/// What the run did (or, in check mode, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Done {
    /// Old snapshots `retention` removed, oldest first.
    pub removed: Vec<String>,
    /// A rollback stopped the running VM.
    pub stopped: bool,
    /// A rollback started the VM after it (`start`, or a snapshot with RAM).
    pub started: bool,
}

impl Done {
    /// What check mode predicts.
    pub fn predicted(plan: &Plan) -> Done {
        match &plan.action {
            Some(Action::Take { retention_removes }) => Done {
                removed: retention_removes.clone(),
                ..Done::default()
            },
            Some(Action::Rollback { stops, starts }) => Done {
                removed: Vec::new(),
                stopped: *stops,
                started: *starts,
            },
            _ => Done::default(),
        }
    }
}

pub fn execute(cx: &mut Cx<'_>, task: &SnapTask, guest: &Guest, plan: &Plan) -> Result<Done, Failure> {
    let (node, vmid) = (guest.node.to_string(), guest.vmid);
    let base = format!("/nodes/{node}/qemu/{vmid}/snapshot");
    let name = task.snapname.as_str();
    let timeout = Duration::from_secs(task.timeout_secs);
    let fail = |what: String, e: &dyn std::fmt::Display| Failure::new(format!("{what}: {e}")).with("vmid", vmid);
    match &plan.action {
        Some(Action::Take { .. }) => {
            let mut form: Vec<(&str, String)> = vec![("snapname", name.to_string())];
            if let Some(d) = &task.description {
                form.push(("description", d.clone()));
            }
            form.push(("vmstate", u8::from(task.vmstate).to_string()));
            let creating = format!("Creating snapshot {name} of VM {vmid} failed");
            run_task(cx.client, || cx.client.post(&base, &form), timeout).map_err(|e| fail(creating, &e))?;
            let removed = retention(cx, task, &base, vmid, timeout)?;
            Ok(Done {
                removed,
                ..Done::default()
            })
        }
        Some(Action::Remove) => {
            let query: Vec<(&str, String)> = if task.force {
                vec![("force", "1".into())]
            } else {
                vec![]
            };
            let removing = format!("Removing snapshot {name} of VM {vmid} failed");
            run_task(
                cx.client,
                || cx.client.delete(&format!("{base}/{name}"), &query),
                timeout,
            )
            .map_err(|e| fail(removing, &e))?;
            Ok(Done::default())
        }
        Some(Action::Rollback { stops, starts }) => {
            let form: Vec<(&str, String)> = if task.start {
                vec![("start", "1".into())]
            } else {
                vec![]
            };
            let rolling = format!("Rollback of snapshot {name} of VM {vmid} failed");
            run_task(
                cx.client,
                || cx.client.post(&format!("{base}/{name}/rollback"), &form),
                timeout,
            )
            .map_err(|e| fail(rolling, &e))?;
            Ok(Done {
                removed: Vec::new(),
                stopped: *stops,
                started: *starts,
            })
        }
        None => Ok(Done::default()),
    }
}

/// After a snapshot was taken: the oldest beyond `retention`, by the list as it is now,
/// each removed and waited on before the next.
fn retention(
    cx: &mut Cx<'_>,
    task: &SnapTask,
    base: &str,
    vmid: u32,
    timeout: Duration,
) -> Result<Vec<String>, Failure> {
    if task.retention == 0 {
        return Ok(Vec::new());
    }
    let name = task.snapname.as_str();
    let list = cx.client.get(base, &[]).map_err(|e| {
        Failure::new(format!(
            "Snapshot {name} created, but listing the snapshots of VM {vmid} for retention failed: {e}"
        ))
        .with("vmid", vmid)
    })?;
    let mut removed = Vec::new();
    for old in plan::retention_removals(&plan::read_list(&list), task.retention, false) {
        run_task(cx.client, || cx.client.delete(&format!("{base}/{old}"), &[]), timeout).map_err(|e| {
            Failure::new(format!(
                "Snapshot {name} created, but removing the old snapshot {old} (retention: {}) failed: {e}",
                task.retention
            ))
            .with("vmid", vmid)
            .with("removed", &removed)
        })?;
        removed.push(old);
    }
    Ok(removed)
}

/// Sends the call that starts a PVE task and waits for the task to end.
fn run_task<F>(client: &Client, send: F, timeout: Duration) -> Result<(), String>
where
    F: FnOnce() -> Result<Value, ferrox_pve_client::client::ApiError>,
{
    let upid = send().map_err(|e| e.to_string())?;
    let upid = upid
        .as_str()
        .ok_or_else(|| format!("Proxmox VE answered {upid} instead of a task id"))?;
    tasks::wait(client, upid, timeout)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
