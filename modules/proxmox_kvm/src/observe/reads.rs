//! Which reads an observation makes only in some cases, as data observe owns: pure
//! conditions on the task and on what was read already (a read made in every case would
//! add a call to runs that never need it; the API call counts are pinned). The decisions
//! that rely on what is read hold the same conditions in their tables.

use ferrox_pve_rules::cloudinit;
use serde_json::{Map, Value};

use crate::api::Vm;
use crate::task::{Config, KvmTask};

/// Whether the VM's HA state must be read: only `ha_managed: true` warns of it.
pub(crate) fn reads_ha_state(task: &KvmTask) -> bool {
    task.ha_managed
}

/// Whether `migrate: true` gets as far as the migration, so the VM's power state must be
/// read (`status/current`, read only then): a `node` other than the VM's, and no lock
/// that `skiplock` does not override ([`crate::decide::migrate::decide`] refuses those
/// first; its table holds the two together).
pub(crate) fn reads_power(task: &KvmTask, vm: &Vm, lock: Option<&str>) -> bool {
    let moves = task.node.as_deref().is_some_and(|node| node != vm.node);
    moves && (lock.is_none() || task.skiplock)
}

/// Whether what the cloud-init drive lacks must be read (`GET .../cloudinit`): the VM
/// runs, has a drive PVE does not rebuild at once, and cloud-init keys are involved.
pub(crate) fn reads_drive_state(current: &Map<String, Value>, wanted: &Config, running: bool) -> bool {
    let involved = wanted.keys().chain(current.keys()).any(|k| cloudinit::is_key(k));
    let hotplug = current.get("hotplug").map(crate::converge::text_of);
    running && involved && cloudinit::config_has_drive(current) && !cloudinit::regenerated_at_once(hotplug.as_deref())
}
