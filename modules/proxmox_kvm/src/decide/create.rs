//! `state: present` of a VM that does not exist, decided: the node it is made on (the
//! task's, which must be in the cluster), the create call's form, and its actions: a
//! create with the task's config, or a restore from `archive` with the rest of the task
//! applied once it exists. Pure: the table is `create_tests.rs`; the checks that read the
//! cluster (bridges, volumes, pool) and the vmid PVE hands out stay with the driver
//! (`present` in [`crate::run`]'s file).

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Failure;
use ferrox_cluster::tags::TagCase;
use serde_json::{Map, Value};

use crate::api::Vm;
use crate::converge;
use crate::decide::efi::check_efi_bios;
use crate::decide::update::without_drive_warning;
use crate::plan::{Action, Allocation, Plan};
use crate::task::KvmTask;

/// The node the new VM is made on: the task's, which must be one of `nodes`.
pub(crate) fn node(task: &KvmTask, nodes: &[String]) -> Result<String, Failure> {
    let node = task.node.clone().ok_or("node is mandatory for creating/updating VM")?;
    if !nodes.contains(&node) {
        return Err(Failure::new(format!(
            "node '{node}' does not exist in cluster (nodes: {})",
            nodes.join(", ")
        )));
    }
    Ok(node)
}

/// Cloud-init keys for a new VM without a cloud-init drive (a restore brings the
/// archive's drives, so it is not warned of).
pub(crate) fn warning(task: &KvmTask) -> Option<String> {
    if task.restore.archive.is_some() {
        return None;
    }
    let who = task
        .name
        .as_ref()
        .map_or("The new VM".to_string(), |n| format!("The new VM {n}"));
    without_drive_warning(&who, &task.config, &Map::new())
}

/// The plan of the new VM `vm` (its vmid chosen by `allocation`) and its diff: every
/// config key the task sets, new.
pub(crate) fn plan(task: &KvmTask, vm: Vm, allocation: Allocation) -> Result<(Plan, Diff), Failure> {
    let wanted = &task.config;
    let mut diff = Diff::new(format!("VM {}", vm.vmid));
    let vmid = vm.vmid;
    let mut plan = Plan::new(vm);
    let mut form = common_form(task);
    if task.restore.archive.is_some() {
        form.extend(restore_form(task));
        plan.push(Action::Create { form, allocation });
        plan.push(Action::WaitListed);
        if !wanted.is_empty() {
            // Against a VM with no config, no tags are compared: the cluster's tag style
            // is not needed, and a known one gives the same changes.
            let changes = converge::changes(&Map::new(), wanted, vmid, &TagCase::known(false)).unwrap_or_default();
            plan.push(Action::Converge {
                wanted: wanted.clone(),
                changes,
                digest: None,
                recompute: true,
            });
        }
    } else {
        check_efi_bios(task, wanted, None)?;
        if let Some(st) = &task.restore.import_working_storage {
            form.push(("import-working-storage".into(), st.clone()));
        }
        form.extend(wanted.iter().map(|(k, v)| (k.clone(), v.clone())));
        plan.push(Action::Create { form, allocation });
        plan.push(Action::WaitListed);
    }
    for (k, v) in wanted {
        diff.change(k, None, Some(Value::String(v.clone())));
    }
    Ok((plan, diff))
}

/// The create call's parameters of a create and a restore alike.
fn common_form(task: &KvmTask) -> Vec<(String, String)> {
    let mut form: Vec<(String, String)> = Vec::new();
    for (param, value) in [
        ("pool", &task.pool),
        ("storage", &task.storage),
        ("archive", &task.restore.archive),
    ] {
        if let Some(v) = value {
            form.push((param.to_string(), v.clone()));
        }
    }
    if task.ha_managed {
        form.push(("ha-managed".into(), "1".into()));
    }
    form
}

/// A restore's parameters: PVE restores the archive's config and takes no config keys
/// with it (the rest of the task is applied once the restore is done).
fn restore_form(task: &KvmTask) -> Vec<(String, String)> {
    let mut form = Vec::new();
    if task.force {
        form.push(("force".into(), "1".into()));
    }
    if let Some(limit) = task.bwlimit {
        form.push(("bwlimit".into(), limit.to_string()));
    }
    for (param, value) in [
        ("unique", task.restore.unique),
        ("live-restore", task.restore.live_restore),
    ] {
        if let Some(on) = value {
            form.push((param.into(), u8::from(on).to_string()));
        }
    }
    form
}
