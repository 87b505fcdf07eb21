//! `state: present` on a VM that exists, decided: what is warned of (a `node` or
//! `ha_managed` that applies only to a new VM), and, without `update`, the VM left as it
//! is with what differs named. With `update: true`, [`crate::decide::update`] decides.
//! Pure: the table is `existing_tests.rs`.

use crate::api::Vm;
use crate::decide::update::pool_move;
use crate::task::KvmTask;

/// A `node` other than the VM's: it only says where to create a VM.
pub fn node_warning(task: &KvmTask, vm: &Vm) -> Option<String> {
    let node = task.node.as_deref().filter(|n| *n != vm.node)?;
    Some(format!(
        "VM {} is on node {}, not {node}: node only says where to create a VM (use migrate: true to move it)",
        vm.vmid, vm.node
    ))
}

/// Whether the VM's HA state must be read: only `ha_managed: true` warns of it.
pub fn reads_ha_state(task: &KvmTask) -> bool {
    task.ha_managed
}

/// `ha_managed: true` on a VM that is not HA-managed (`ha_managed`: as read; a failed
/// read counts as not): it applies when a VM is created.
pub fn ha_warning(task: &KvmTask, vm: &Vm, ha_managed: bool) -> Option<String> {
    (task.ha_managed && !ha_managed).then(|| {
        format!(
            "VM {} exists and is not HA-managed: ha_managed applies when a VM is created. Add it to HA with ha-manager add vm:{} (or POST /cluster/ha/resources)",
            vm.vmid, vm.vmid
        )
    })
}

/// Without `update`: the VM is left alone; the message, and the warnings of what
/// differs (`differ`: the config keys that differ, or why they could not be compared;
/// `listed_pool`: the pool the listing shows it in).
pub fn left_alone(
    task: &KvmTask,
    vm: &Vm,
    listed_pool: Option<&String>,
    differ: Result<Vec<String>, String>,
) -> (String, Vec<String>) {
    let mut warnings = Vec::new();
    let mut differ = differ.unwrap_or_else(|e| {
        warnings.push(format!("VM {} differs from the task: {e}", vm.vmid));
        Vec::new()
    });
    if pool_move(task, listed_pool).is_some() {
        differ.push("pool".to_string());
    }
    if !differ.is_empty() {
        warnings.push(format!(
            "VM {} differs from the task in: {}. Nothing was changed: add update: true to converge it.",
            vm.vmid,
            differ.join(", ")
        ));
    }
    (format!("VM with vmid <{}> already exists", vm.vmid), warnings)
}
