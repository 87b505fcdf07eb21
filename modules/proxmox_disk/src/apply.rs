//! Executes a plan's actions, in order, waiting for each PVE task. The first write
//! carries the config `digest` read for the plan, so a config changed by someone else
//! in between fails the write instead of being overwritten.
//!
//! A write whose answer was lost stops the run with [`Stop::Lost`] once the task it may
//! have started has been found and waited for; the caller then re-reads the config and
//! re-plans (the new digest keeps a change from being applied twice). Whatever stops it,
//! the warnings of the tasks that ran are handed back ([`apply`]).

use std::time::Duration;

use serde_json::Value;

use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_client::recover::{self, Search};
use ferrox_pve_client::tasks::{self, TaskDone, TaskError};

use crate::current::VmConfig;
use crate::plan::Action;
use crate::task::{MoveTarget, State};

/// Why applying stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A failure, in 1.6's wording for the state.
    Failed(String),
    /// A write's answer was lost (its task, if any, has ended): re-read and re-plan.
    Lost(Box<ApiError>),
}

/// Runs `actions` on `vm`; `warnings` gets what the tasks that ran warned of (those
/// before a stop, and a task found after a lost answer, included) whatever stops it.
pub(crate) fn apply(
    client: &Client,
    vm: &VmConfig,
    disk: &str,
    state: State,
    actions: &[Action],
    timeout: Duration,
    warnings: &mut Vec<String>,
) -> Result<(), Stop> {
    let base = format!("/nodes/{}/qemu/{}", vm.node, vm.vmid);
    let mut digest = vm.digest();
    for action in actions {
        let mut form: Vec<(&str, String)> = Vec::new();
        let (method, path, doing, task_kind) = match action {
            Action::SetDrive { key, value } => {
                form.push((key.as_str(), value.clone()));
                (
                    "POST",
                    format!("{base}/config"),
                    "creating or updating the disk",
                    Some("qmconfig"),
                )
            }
            Action::Resize { key, size } => {
                form.push(("disk", key.clone()));
                form.push(("size", size.clone()));
                ("PUT", format!("{base}/resize"), "resizing disk", Some("resize"))
            }
            Action::Move {
                key,
                target,
                format,
                delete,
                bwlimit,
            } => {
                form.push(("disk", key.clone()));
                match target {
                    MoveTarget::Storage(storage) => form.push(("storage", storage.clone())),
                    MoveTarget::Vm { vmid, disk } => {
                        form.push(("target-vmid", vmid.to_string()));
                        form.push(("target-disk", disk.clone()));
                    }
                }
                if let Some(f) = format {
                    form.push(("format", f.clone()));
                }
                form.push(("delete", if *delete { "1" } else { "0" }.into()));
                if let Some(limit) = bwlimit {
                    form.push(("bwlimit", limit.to_string()));
                }
                // A reassignment's task id is not the vmid: it is not looked up, the
                // re-read config tells.
                let kind = matches!(target, MoveTarget::Storage(_)).then_some("qmmove");
                ("POST", format!("{base}/move_disk"), "waiting for moving VM disk", kind)
            }
            Action::Unlink { key, force } => {
                form.push(("idlist", key.clone()));
                form.push(("force", if *force { "1" } else { "0" }.into()));
                ("PUT", format!("{base}/unlink"), "", None)
            }
        };
        // unlink takes no digest; every other write is guarded by the digest of the read.
        if !matches!(action, Action::Unlink { .. }) {
            if let Some(d) = digest.take() {
                form.push(("digest", d));
            }
        }
        let since = recover::now();
        let reply = if method == "POST" {
            client.post(&path, &form)
        } else {
            client.put(&path, &form)
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) if e.answer_lost() => {
                if let Some(kind) = task_kind {
                    let search = Search {
                        node: &vm.node,
                        kind,
                        vmid: vm.vmid,
                        since,
                    };
                    let found = recover::find_and_wait(client, &search, timeout)
                        .map_err(|e| Stop::Failed(task_failure(doing, &e)))?;
                    warnings.extend(found.iter().flat_map(TaskDone::result_warnings));
                }
                return Err(Stop::Lost(Box::new(e)));
            }
            Err(e) => return Err(Stop::Failed(api_failure(state, disk, vm.vmid, &e))),
        };
        if let Value::String(upid) = reply {
            let done = tasks::wait(client, &upid, timeout).map_err(|e| Stop::Failed(task_failure(doing, &e)))?;
            warnings.extend(done.result_warnings());
        }
        digest = None;
    }
    Ok(())
}

fn api_failure(state: State, disk: &str, vmid: u32, e: &ApiError) -> String {
    match state {
        State::Present => format!("Unable to create/update disk {disk} in VM {vmid}: {e}"),
        State::Resized => format!("Failed to resize disk {disk} in VM {vmid} with exception: {e}"),
        State::Moved => format!("Failed to move disk {disk} in VM {vmid} with exception: {e}"),
        State::Detached => format!("Failed to detach disk {disk} from VM {vmid} with exception: {e}"),
        State::Absent => format!("Unable to remove disk {disk} from VM {vmid}: {e}"),
    }
}

fn task_failure(doing: &str, e: &TaskError) -> String {
    match e {
        TaskError::Failed { exitstatus, .. } => format!("Error occurred on task execution: {exitstatus}"),
        TaskError::Timeout { upid, waited, last_line } => format!(
            "Reached timeout while {doing} ({}s): task {upid} is still running in Proxmox VE; run the task again once it has finished. Last line in task before timeout: {}",
            waited.as_secs(),
            last_line.as_deref().unwrap_or("(no log yet)")
        ),
        TaskError::Api(api) => format!("Unable to follow the Proxmox VE task while {doing}: {api}"),
    }
}
