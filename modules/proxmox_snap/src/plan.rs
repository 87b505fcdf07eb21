//! The decision, pure: from the VM's snapshot list, its config's template flag and its
//! power state, what the task does — nothing (the snapshot is already as asked), take,
//! remove, or roll back — and which old snapshots `retention` removes. Check mode and the
//! real run both read it, so a prediction and the run cannot disagree.

use serde_json::{json, Map, Value};

use ferrox_ansible::diff::Diff;

use crate::options::State;
use crate::task::SnapTask;

/// One entry of PVE's snapshot list (`current` left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) name: String,
    /// `None`: only PVE will decide it (a snapshot the run's plan takes).
    pub(crate) snaptime: Option<u64>,
    pub(crate) parent: Option<String>,
    pub(crate) vmstate: bool,
    /// `prepare` or `delete` while a task makes or removes it.
    pub(crate) snapstate: Option<String>,
}

/// The snapshots of `list` (PVE's `GET .../snapshot`), without `current`, and the
/// `current` entry's parent.
pub(crate) fn read_list(list: &Value) -> Vec<Snapshot> {
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter(|i| i["name"] != "current")
        .filter_map(|i| {
            Some(Snapshot {
                name: i["name"].as_str()?.to_string(),
                snaptime: i["snaptime"].as_u64(),
                parent: i["parent"].as_str().map(str::to_string),
                vmstate: i["vmstate"].as_u64().is_some_and(|v| v != 0) || i["vmstate"] == true,
                snapstate: i["snapstate"].as_str().map(str::to_string),
            })
        })
        .collect()
}

/// What the task does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Take the snapshot, then remove `retention_removes` (oldest first).
    Take { retention_removes: Vec<String> },
    /// Remove the snapshot.
    Remove,
    /// Roll back: `stops` a running VM first, `starts` it after (`start`, or RAM saved);
    /// with `ram` the rollback task starts it itself, else `start` makes PVE start it
    /// with a `qmstart` task of its own once the rollback ends.
    Rollback { stops: bool, starts: bool, ram: bool },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub(crate) action: Option<Action>,
    /// 1.6's message for a real run (`Snapshot s created`).
    pub(crate) msg: String,
    /// 1.6's message for check mode (`Snapshot s would be created`).
    pub(crate) predicted_msg: String,
    pub(crate) diff: Diff,
    pub(crate) warnings: Vec<String>,
}

/// What the VM is, as the decision needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vm<'a> {
    pub(crate) vmid: u32,
    pub(crate) template: bool,
    pub(crate) running: bool,
    pub(crate) snapshots: &'a [Snapshot],
}

pub(crate) fn plan(task: &SnapTask, vm: Vm<'_>) -> Result<Plan, String> {
    let name = task.snapname.as_str();
    let existing = vm.snapshots.iter().find(|s| s.name == name);
    let names = |list: &[&str]| -> Value { json!(list) };
    let before: Vec<&str> = vm.snapshots.iter().map(|s| s.name.as_str()).collect();
    let (action, msg, predicted) = match (task.state, existing) {
        (State::Present, Some(_)) => (None, format!("Snapshot {name} is already present"), None),
        (State::Present, None) if vm.template => {
            return Err(format!(
                "VM {} is a template: you can't take a snapshot if it's a template (Proxmox VE); snapshot a clone of it instead",
                vm.vmid
            ))
        }
        (State::Present, None) => {
            let retention_removes = retention_removals(vm.snapshots, task.retention, true);
            (
                Some(Action::Take { retention_removes }),
                format!("Snapshot {name} created"),
                Some(format!("Snapshot {name} would be created")),
            )
        }
        (State::Absent, None) => (None, format!("Snapshot {name} does not exist"), None),
        (State::Absent, Some(_)) => (
            Some(Action::Remove),
            format!("Snapshot {name} removed"),
            Some(format!("Snapshot {name} would be removed")),
        ),
        (State::Rollback, None) => {
            return Err(format!(
                "Snapshot {name} does not exist: VM {} has {}; snapname names the snapshot to roll back to",
                vm.vmid,
                listed(&before)
            ))
        }
        (State::Rollback, Some(s)) if s.snapstate.is_some() => {
            return Err(format!(
                "Snapshot {name} of VM {}: unable to rollback to incomplete snapshot (snapstate = {}) (Proxmox VE); a task is making or removing it, or one failed: check the VM's task log",
                vm.vmid,
                s.snapstate.as_deref().unwrap_or_default()
            ))
        }
        (State::Rollback, Some(s)) => (
            Some(Action::Rollback {
                stops: vm.running,
                starts: task.start || s.vmstate,
                ram: s.vmstate,
            }),
            format!("Snapshot {name} rolled back"),
            Some(format!("Snapshot {name} would be rolled back")),
        ),
    };
    let mut after: Vec<&str> = before.clone();
    match &action {
        Some(Action::Take { retention_removes }) => {
            after.push(name);
            after.retain(|n| !retention_removes.iter().any(|r| r == n));
        }
        Some(Action::Remove) => after.retain(|n| *n != name),
        _ => {}
    }
    let mut diff = Diff::new(format!("VM {} snapshots", vm.vmid));
    if before != after {
        diff.before = Map::from_iter([("snapshots".to_string(), names(&before))]);
        diff.after = Map::from_iter([("snapshots".to_string(), names(&after))]);
    }
    let mut warnings = Vec::new();
    if let (
        State::Present,
        Some(Snapshot {
            snapstate: Some(state), ..
        }),
    ) = (task.state, existing)
    {
        warnings.push(format!(
            "Snapshot {name} of VM {} is incomplete (snapstate = {state}): a task is still making or removing it, or one failed; check the VM's task log, and remove it with state: absent if it failed",
            vm.vmid
        ));
    }
    if let Some(Action::Rollback {
        stops: true, starts, ..
    }) = &action
    {
        warnings.push(stop_warning(vm.vmid, *starts));
    }
    Ok(Plan {
        predicted_msg: predicted.unwrap_or_else(|| msg.clone()),
        action,
        msg,
        diff,
        warnings,
    })
}

/// The warning of a rollback that stops a running VM.
pub(crate) fn stop_warning(vmid: u32, starts: bool) -> String {
    if starts {
        format!("VM {vmid} is running: the rollback stops it, then starts it again")
    } else {
        format!(
            "VM {vmid} is running: the rollback stops it (Proxmox VE stops a VM before rolling it back) and leaves it stopped; set start: true to start it again"
        )
    }
}

fn listed(names: &[&str]) -> String {
    if names.is_empty() {
        "no snapshots".into()
    } else {
        format!("the snapshots {}", names.join(", "))
    }
}

/// The snapshots `retention` removes: the oldest beyond the newest `retention`, oldest
/// first; `taking`: a snapshot is about to be taken (it counts, and is the newest). By
/// `snaptime`, then by their place in the parent chain (a parent before its child).
pub(crate) fn retention_removals(snapshots: &[Snapshot], retention: usize, taking: bool) -> Vec<String> {
    let count = snapshots.len() + usize::from(taking);
    if retention == 0 || count <= retention {
        return Vec::new();
    }
    let depth = |s: &Snapshot| {
        let mut d = 0;
        let mut at = s.parent.as_deref();
        while let Some(p) = at.filter(|_| d < snapshots.len()) {
            d += 1;
            at = snapshots.iter().find(|x| x.name == p).and_then(|x| x.parent.as_deref());
        }
        d
    };
    let mut ordered: Vec<&Snapshot> = snapshots.iter().collect();
    ordered.sort_by_key(|s| (s.snaptime.unwrap_or(u64::MAX), depth(s), s.name.clone()));
    ordered
        .into_iter()
        .take(count - retention)
        .map(|s| s.name.clone())
        .collect()
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
