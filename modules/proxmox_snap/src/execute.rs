//! The writes: each a PVE task, waited on before the next, so a failure is reported
//! with PVE's exit status and the end of its log, never as a timeout, and retention's
//! removals never run into one another's locks.

use std::time::Duration;

use serde_json::Value;

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::vm::Guest;
use ferrox_pve_client::client::ApiError;
use ferrox_pve_client::recover::{self, Search};
use ferrox_pve_client::tasks::{self, TaskDone};
use ferrox_run::driver::Cx;

use crate::plan::{self, Action, Plan};
use crate::task::SnapTask;

/// What the run did (or, in check mode, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Done {
    /// Old snapshots `retention` removed, oldest first.
    pub(crate) removed: Vec<String>,
    /// A rollback stopped the running VM.
    pub(crate) stopped: bool,
    /// A rollback started the VM after it (`start`, or a snapshot with RAM).
    pub(crate) started: bool,
}

impl Done {
    /// What check mode predicts.
    pub(crate) fn predicted(plan: &Plan) -> Done {
        match &plan.action {
            Some(Action::Take { retention_removes }) => Done {
                removed: retention_removes.clone(),
                ..Done::default()
            },
            Some(Action::Rollback { stops, starts, .. }) => Done {
                removed: Vec::new(),
                stopped: *stops,
                started: *starts,
            },
            _ => Done::default(),
        }
    }
}

pub(crate) fn execute(cx: &mut Cx<'_>, task: &SnapTask, guest: &Guest, plan: &Plan) -> Result<Done, Failure> {
    let (node, vmid) = (guest.node.to_string(), guest.vmid);
    let base = format!("/nodes/{node}/qemu/{vmid}/snapshot");
    let name = task.snapname.as_str();
    let timeout = Duration::from_secs(task.timeout_secs);
    let fail = |what: String, e: &dyn std::fmt::Display| Failure::new(format!("{what}: {e}")).with("vmid", vmid);
    let call = |kind: &'static str| TaskCall {
        kind,
        node: &node,
        vmid,
        timeout,
    };
    match &plan.action {
        Some(Action::Take { .. }) => {
            let mut form: Vec<(&str, String)> = vec![("snapname", name.to_string())];
            if let Some(d) = &task.description {
                form.push(("description", d.clone()));
            }
            form.push(("vmstate", u8::from(task.vmstate).to_string()));
            let creating = format!("Creating snapshot {name} of VM {vmid} failed");
            let client = cx.client;
            run_task(cx, call("qmsnapshot"), || client.post(&base, &form)).map_err(|e| fail(creating, &e))?;
            let removed = retention(cx, task, &base, (&node, vmid), timeout)?;
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
            let client = cx.client;
            run_task(cx, call("qmdelsnapshot"), || {
                client.delete(&format!("{base}/{name}"), &query)
            })
            .map_err(|e| fail(removing, &e))?;
            Ok(Done::default())
        }
        Some(Action::Rollback { stops, starts, ram }) => {
            let form: Vec<(&str, String)> = if task.start {
                vec![("start", "1".into())]
            } else {
                vec![]
            };
            let rolling = format!("Rollback of snapshot {name} of VM {vmid} failed");
            let client = cx.client;
            let since = recover::now();
            run_task(cx, call("qmrollback"), || {
                client.post(&format!("{base}/{name}/rollback"), &form)
            })
            .map_err(|e| fail(rolling, &e))?;
            if task.start && !ram {
                let starting = format!("Snapshot {name} of VM {vmid} rolled back, but starting the VM failed");
                wait_for_start(cx, (&node, vmid), since, timeout).map_err(|e| fail(starting, &e))?;
            }
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
    (node, vmid): (&str, u32),
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
        let client = cx.client;
        let call = TaskCall {
            kind: "qmdelsnapshot",
            node,
            vmid,
            timeout,
        };
        run_task(cx, call, || client.delete(&format!("{base}/{old}"), &[])).map_err(|e| {
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

/// After a rollback with `start` to a snapshot without RAM: PVE's rollback task starts a
/// `qmstart` task of its own as it ends (qemu-server `API2/Qemu.pm` `rollback`); it is
/// found in the node's task list and waited on, so `started` is true only once the VM
/// runs and a failed start fails the task. (With RAM the rollback task itself starts
/// the VM and there is no `qmstart` to wait for.) Should the list show none, the VM's
/// status decides.
fn wait_for_start(cx: &mut Cx<'_>, (node, vmid): (&str, u32), since: u64, timeout: Duration) -> Result<(), String> {
    let search = Search {
        node,
        kind: "qmstart",
        vmid,
        since,
    };
    if let Some(done) = recover::find_and_wait(cx.client, &search, timeout).map_err(|e| e.to_string())? {
        warn_task(cx, &done);
        return Ok(());
    }
    let status = cx
        .client
        .get(&format!("/nodes/{node}/qemu/{vmid}/status/current"), &[])
        .map_err(|e| e.to_string())?;
    match status["status"].as_str() {
        Some("running") => Ok(()),
        other => Err(format!(
            "no qmstart task of Proxmox VE's appeared on node {node} and the VM is {}; start it with ferrox.proxmox.proxmox_kvm (state: started)",
            other.unwrap_or("in an unknown state")
        )),
    }
}

/// The task a call starts: its type (`qmsnapshot`, `qmdelsnapshot`, `qmrollback`), the
/// VM's node and vmid, and how long to wait for it.
struct TaskCall<'a> {
    kind: &'static str,
    node: &'a str,
    vmid: u32,
    timeout: Duration,
}

/// Sends the call that starts a PVE task and waits for the task to end; its warnings go
/// to the result. An answer lost on the way back is recovered from the node's task list:
/// the task the call started is found and followed; a call PVE provably did not act on
/// (no task of ours appeared) is sent again.
fn run_task<F>(cx: &mut Cx<'_>, call: TaskCall<'_>, send: F) -> Result<(), String>
where
    F: Fn() -> Result<Value, ApiError>,
{
    for resend in 0.. {
        let since = recover::now();
        let upid = match send() {
            Ok(Value::String(upid)) => upid,
            Ok(other) => return Err(format!("Proxmox VE answered {other} instead of a task id")),
            Err(e) if e.answer_lost() && resend < recover::MAX_RESENDS => {
                let search = Search {
                    node: call.node,
                    kind: call.kind,
                    vmid: call.vmid,
                    since,
                };
                match recover::find_and_wait(cx.client, &search, call.timeout).map_err(|e| e.to_string())? {
                    Some(done) => {
                        cx.warn(recover::warning(
                            &e,
                            &format!("its task {} ended {}", done.upid, done.exitstatus),
                        ));
                        warn_task(cx, &done);
                        return Ok(());
                    }
                    None => {
                        cx.warn(recover::warning(
                            &e,
                            &format!("no {} task was started; sent again", call.kind),
                        ));
                        continue;
                    }
                }
            }
            Err(e) => return Err(e.to_string()),
        };
        let done = tasks::wait(cx.client, &upid, call.timeout).map_err(|e| e.to_string())?;
        warn_task(cx, &done);
        return Ok(());
    }
    unreachable!("the loop returns")
}

/// A task that ended with warnings: each `WARN` line of its log in the result.
fn warn_task(cx: &mut Cx<'_>, done: &TaskDone) {
    for w in done.result_warnings() {
        cx.warn(w);
    }
}
