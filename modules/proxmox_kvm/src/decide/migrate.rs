//! `migrate: true`, decided: a VM on `node` already is left alone (so the task
//! converges); otherwise one migration, online when the VM runs (a locked VM is refused
//! by the driver, in the words of [`lock_prefix`]). Pure: the table is
//! `migrate_tests.rs`.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Failure;
use serde_json::Value;

use crate::api::Vm;
use crate::observe::MigrateObserved;
use crate::plan::Action;
use crate::task::KvmTask;

/// What `migrate: true` does with the VM observed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// On the target node already.
    AlreadyThere(String),
    /// The migration, its message and the node diff.
    Act(Box<Migration>),
}

/// The migration call, and what the result says of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Migration {
    pub(crate) action: Action,
    pub(crate) msg: String,
    pub(crate) diff: Diff,
}

/// The decision for `migrate: true` on the VM observed.
pub(crate) fn decide(task: &KvmTask, observed: &MigrateObserved) -> Result<Decision, Failure> {
    let vm = &observed.vm;
    let id = vm.vmid;
    let node = task
        .node
        .clone()
        .ok_or("node is mandatory for migrating VM: set node to the target node")?;
    if vm.node == node {
        return Ok(Decision::AlreadyThere(format!("VM {id} is already on {node}")));
    }
    // A status that could not be read is taken as running: PVE refuses an offline
    // migration of a running VM, and migrates a stopped one online anyway.
    let running = observed.running.unwrap_or(true);
    let mut diff = Diff::new(format!("VM {id}"));
    diff.change(
        "node",
        Some(Value::from(vm.node.clone())),
        Some(Value::from(node.clone())),
    );
    Ok(Decision::Act(Box::new(Migration {
        action: Action::Migrate {
            target: node.clone(),
            online: running,
            with_local_disks: task.migration.with_local_disks,
            options: migrate_options(task, running),
        },
        msg: format!("VM {id} has been migrated from {} to {node}", vm.node),
        diff,
    })))
}

/// The start of the refusal of a locked VM's migration to `node` (the lock is refused
/// by the driver, with this wording).
pub(crate) fn lock_prefix(vm: &Vm, node: &str) -> String {
    format!("Unable to migrate VM {} from {} to {node}: ", vm.vmid, vm.node)
}

/// The migration call's optional parameters the task sets; `with-conntrack-state` only
/// for an online migration (PVE ignores it otherwise).
fn migrate_options(task: &KvmTask, online: bool) -> Vec<(String, String)> {
    let m = &task.migration;
    let mut out = Vec::new();
    for (param, value) in [
        ("targetstorage", &m.targetstorage),
        ("migration_network", &m.migration_network),
        ("migration_type", &m.migration_type),
    ] {
        if let Some(v) = value {
            out.push((param.to_string(), v.clone()));
        }
    }
    if let Some(limit) = task.bwlimit {
        out.push(("bwlimit".into(), limit.to_string()));
    }
    if online {
        if let Some(keep) = m.with_conntrack_state {
            out.push(("with-conntrack-state".into(), u8::from(keep).to_string()));
        }
    }
    out
}
