//! Every read a task makes before it decides, in one place and in one value per
//! operation: the cluster's listing, read once at the start ([`listing`]), the VM the
//! task names (located in it: [`target`]; a clone's source and the clone), and then
//! only what the decision needs of the VM. A read needed only in some cases stays
//! conditional (the API call counts are pinned); [`reads`] says which, and
//! [`Now`] what a power state is. [`vmid`]: the vmid of a VM the task creates or clones.

pub(crate) mod listing;
mod now;
pub(crate) mod reads;
pub(crate) mod vmid;

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::cloudinit;
use ferrox_cluster::vm::{Guest, GuestType};
use ferrox_pve_client::client::Client;
use ferrox_pve_rules::cloudinit::DriveState;
use ferrox_run::vm_task::{self, InfoWording, Lookup};
use serde_json::{Map, Value};

use crate::api::{self, Vm};
use crate::guest_wait;
use crate::step::Run;
use crate::task::{Config, GuestWait, KeyEdit, KvmTask, Operation, State};
use listing::Listing;
pub(crate) use now::Now;

/// The VM the task names: by `vmid`, else by `name` (QEMU VMs only; when several
/// share the name, the one on `node`, except for `migrate`, whose `node` is the
/// destination).
pub(crate) fn target(run: &Run, listing: &Listing) -> Result<Option<Guest>, Failure> {
    let task = run.task;
    let prefer_node = task.node.as_deref().filter(|_| task.operation != Operation::Migrate);
    let lookup = Lookup {
        vmid: task.vmid,
        name: task.name.as_deref(),
        prefer_node,
    };
    locate(run.client, listing, &lookup)
}

/// The VM the task names, which must exist (`delete`, `revert`, `migrate`).
pub(crate) fn existing_target(run: &Run, listing: &Listing) -> Result<Guest, Failure> {
    target(run, listing)?.ok_or_else(|| match run.task.vmid {
        Some(id) => Failure::new(format!("VM with vmid {id} does not exist in cluster")).with("vmid", id),
        None => Failure::new(format!(
            "VM with name = {} does not exist in cluster",
            run.task.name.as_deref().unwrap_or_default()
        )),
    })
}

/// The guest `lookup` names ([`vm_task::locate`], a shared name explained); a vmid of a
/// container is refused.
pub(crate) fn locate(client: &Client, listing: &Listing, lookup: &Lookup) -> Result<Option<Guest>, Failure> {
    match vm_task::locate(client, &listing.guests, lookup)? {
        Some(g) if g.kind == GuestType::Lxc => Err(Failure::new(format!(
            "vmid {} belongs to a container (LXC) on node {}, not a QEMU VM; choose another vmid",
            g.vmid, g.node
        ))
        .with("vmid", g.vmid)),
        other => Ok(other.cloned()),
    }
}

/// The QEMU VM with this vmid.
pub(crate) fn qemu_by_vmid(client: &Client, listing: &Listing, id: u32) -> Result<Option<Guest>, Failure> {
    let lookup = Lookup {
        vmid: Some(id),
        ..Lookup::default()
    };
    locate(client, listing, &lookup)
}

/// The QEMU VM with this name; when several have it, the one on `node` (if given).
pub(crate) fn qemu_named(
    client: &Client,
    listing: &Listing,
    name: Option<&str>,
    node: Option<&str>,
) -> Result<Option<Guest>, Failure> {
    let lookup = Lookup {
        vmid: None,
        name,
        prefer_node: node,
    };
    locate(client, listing, &lookup)
}

/// The node the clone is to be made on: it picks among same-named templates.
fn clone_node<'c>(run: &'c Run) -> Option<&'c str> {
    run.task.clone.target.as_deref().or(run.task.node.as_deref())
}

/// The VM a clone is made from: `vmid`, else the VM named `clone`.
pub(crate) fn clone_source(run: &Run, listing: &Listing) -> Result<Guest, Failure> {
    let source_name = &run.task.clone.source;
    match run.task.vmid {
        Some(id) => qemu_by_vmid(run.client, listing, id)?,
        None => qemu_named(run.client, listing, Some(source_name), clone_node(run))?,
    }
    .ok_or_else(|| Failure::new(format!("VM with name = {source_name} does not exist in cluster")))
}

/// The clone of `source`, when it exists: `newid`, else a VM named `name` other than the source.
pub(crate) fn existing_clone(run: &Run, listing: &Listing, source: &Guest) -> Result<Option<Guest>, Failure> {
    match run.task.clone.newid {
        Some(id) => qemu_by_vmid(run.client, listing, id),
        None => Ok(
            qemu_named(run.client, listing, run.task.name.as_deref(), clone_node(run))?
                .filter(|g| g.vmid != source.vmid),
        ),
    }
}

/// The `Vm` of a listed guest.
pub(crate) fn vm_of(g: &Guest) -> Vm {
    Vm {
        node: g.node.to_string(),
        vmid: g.vmid,
    }
}

/// The name for messages: the task's, else the VM's.
pub(crate) fn name_of(task: &KvmTask, guest: Option<&Guest>) -> String {
    task.name
        .clone()
        .or_else(|| guest.and_then(|g| g.name.clone()))
        .unwrap_or_default()
}

/// The VM's config, failing as 1.6 words it.
pub(crate) fn config(client: &Client, vm: &Vm) -> Result<Map<String, Value>, Failure> {
    api::config(client, vm).map_err(|e| vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e))
}

/// What a clone of `vm` starts from (the section of `snapshot`, when one is named). A
/// failed read of the VM fails as 1.6 words it; a failed read of the snapshot (PVE's
/// `snapshot '<name>' does not exist`) as the clone call's own failure would, so a check
/// run and a real one say the same.
pub(crate) fn clone_source_config(
    client: &Client,
    vm: &Vm,
    snapshot: Option<&str>,
    clone_name: &str,
) -> Result<Map<String, Value>, Failure> {
    api::clone_source_config(client, vm, snapshot).map_err(|e| match snapshot {
        Some(_) if e.is_status(500) => {
            Failure::new(format!("Unable to clone vm {clone_name} from vmid {}: {e}", vm.vmid)).with("vmid", vm.vmid)
        }
        _ => vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e),
    })
}

/// The config of a VM a create or clone just made, for `mac` and `devices`: the one the
/// update read back; else, in check mode for a VM not listed, none (the run's effects
/// predict it); else read now.
pub(crate) fn made_config(
    run: &Run,
    listing: &Listing,
    vm: &Vm,
    read_back: Option<Map<String, Value>>,
) -> Result<Option<Map<String, Value>>, Failure> {
    match read_back {
        Some(c) => Ok(Some(c)),
        None if run.task.check_mode && listing.listed_name(vm.vmid).is_none() => Ok(None),
        None => config(run.client, vm).map(Some),
    }
}

/// The changes already pending on a running VM that a check-mode update leaves alone
/// (what a real run reads back with its own); `None`, unread, otherwise.
pub(crate) fn pending_before_update(
    run: &Run,
    observed: &UpdateObserved,
) -> Result<Option<Map<String, Value>>, Failure> {
    if !(observed.running && run.task.check_mode) {
        return Ok(None);
    }
    let vm = &observed.vm;
    let pending =
        api::pending(run.client, vm).map_err(|e| vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e))?;
    Ok(Some(pending.waiting))
}

/// The changes a running VM keeps pending, read back after a `delete` or `revert`.
pub(crate) fn pending_after_keys(
    run: &Run,
    edit: KeyEdit,
    observed: &KeysObserved,
) -> Result<Map<String, Value>, Failure> {
    let (vm, name) = (&observed.vm, &observed.name);
    api::pending(run.client, vm).map(|p| p.waiting).map_err(|e| {
        Failure::new(format!(
            "{} {name} with vmid {}: the change was made, but reading it back failed: {e}",
            edit.unable(),
            vm.vmid
        ))
        .with("vmid", vm.vmid)
    })
}

/// A power state's, `current`'s, `template`'s or `absent`'s view of the VM.
pub(crate) struct PowerObserved {
    pub(crate) vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub(crate) name: String,
    /// Its power state (`status/current`).
    pub(crate) now: Now,
    /// With `wait_for_agent`/`wait_for_ip`: the wait and what it relies on, read (and
    /// checked) before any write.
    pub(crate) waiting: Option<(GuestWait, guest_wait::Guest)>,
}

/// The VM a power state acts on (`None`: not in the cluster) and its power state; with a
/// guest wait, the config the guest runs with and the caller's right to read its agent
/// (the privilege gate's warnings go to `warnings`).
pub(crate) fn power_state(
    run: &Run,
    listing: &Listing,
    state: State,
    warnings: &mut Vec<String>,
) -> Result<Option<PowerObserved>, Failure> {
    let Some(guest) = target(run, listing)? else {
        return Ok(None);
    };
    let vm = vm_of(&guest);
    let id = vm.vmid;
    let name = name_of(run.task, Some(&guest));
    let status = api::power(run.client, &vm)
        .map_err(|e| Failure::new(format!("Unable to read the status of VM {id}: {e}")).with("vmid", id))?;
    let now = Now::of(&status, guest.template).with_ha_resource(guest.hastate.clone());
    let waiting = match guest_wait::of_state(run.task, state).cloned() {
        None => None,
        Some(wait) => {
            if let Some(refused) = guest_wait::wait_refusal(run.task, state, id, now.running) {
                return Err(refused);
            }
            let running_config = guest_wait::waits_on_running_config(run.task, state, now.running);
            let reachable = guest_wait::prepare(run, warnings, &wait, &vm, running_config)?;
            Some((wait, reachable))
        }
    };
    Ok(Some(PowerObserved { vm, name, now, waiting }))
}

/// `delete`'s or `revert`'s view of the VM.
pub(crate) struct KeysObserved {
    pub(crate) vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub(crate) name: String,
    /// The lock the listing shows.
    pub(crate) lock: Option<String>,
    /// Whether the listing shows it running (its hotplug rules keep changes pending).
    pub(crate) running: bool,
    /// `delete`: the VM's config; `revert`: its pending values.
    pub(crate) found: Map<String, Value>,
}

/// The VM the task names, which must exist, and its config (`delete`) or pending
/// changes (`revert`), each read failing in 1.6's words.
pub(crate) fn config_keys(run: &Run, listing: &Listing, edit: KeyEdit) -> Result<KeysObserved, Failure> {
    let guest = existing_target(run, listing)?;
    let vm = vm_of(&guest);
    let name = name_of(run.task, Some(&guest));
    let id = vm.vmid;
    let found = match edit {
        KeyEdit::Delete => api::config(run.client, &vm).map_err(|e| {
            Failure::new(format!("Unable to delete settings on VM {name} with vmid {id}: {e}")).with("vmid", id)
        })?,
        KeyEdit::Revert => {
            api::pending(run.client, &vm)
                .map_err(|e| {
                    Failure::new(format!(
                        "Unable to revert settings on VM {name} with vmid {id}: Maybe is not a pending task...   {e}"
                    ))
                    .with("vmid", id)
                })?
                .waiting
        }
    };
    Ok(KeysObserved {
        vm,
        name,
        lock: guest.lock.clone(),
        running: guest.status.as_deref() == Some("running"),
        found,
    })
}

/// `migrate: true`'s view of the VM.
pub(crate) struct MigrateObserved {
    pub(crate) vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub(crate) name: String,
    /// The lock the listing shows.
    pub(crate) lock: Option<String>,
    /// Whether it runs (`status/current`), read only when it is to be migrated; `None`:
    /// not read, or the read failed.
    pub(crate) running: Option<bool>,
}

/// The VM the task names, which must exist, and, when it is to move, whether it runs.
pub(crate) fn migration(run: &Run, listing: &Listing) -> Result<MigrateObserved, Failure> {
    let guest = existing_target(run, listing)?;
    let vm = vm_of(&guest);
    let running = reads::reads_power(run.task, &vm, guest.lock.as_deref())
        .then(|| api::power(run.client, &vm).map(|p| p.status == "running").ok())
        .flatten();
    Ok(MigrateObserved {
        name: name_of(run.task, Some(&guest)),
        vm,
        lock: guest.lock.clone(),
        running,
    })
}

/// `present`'s view of a VM that exists: its config, read once, and its HA state where
/// a warning needs it.
pub(crate) struct ExistingObserved {
    pub(crate) vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub(crate) name: String,
    pub(crate) config: Map<String, Value>,
    /// Whether PVE manages it as an HA resource (read only with `ha_managed: true`; a
    /// failed read counts as not).
    pub(crate) ha_managed: bool,
}

/// The config of the VM `guest` (failing as 1.6 words it), and its HA state when the
/// task sets `ha_managed`.
pub(crate) fn existing(run: &Run, guest: &Guest) -> Result<ExistingObserved, Failure> {
    let vm = vm_of(guest);
    let config = config(run.client, &vm)?;
    let ha_managed = reads::reads_ha_state(run.task) && api::power(run.client, &vm).is_ok_and(|p| p.ha_managed);
    Ok(ExistingObserved {
        name: name_of(run.task, Some(guest)),
        vm,
        config,
        ha_managed,
    })
}

/// The update's view of a VM that exists.
pub(crate) struct UpdateObserved {
    pub(crate) vm: Vm,
    /// The name for messages.
    pub(crate) name: String,
    /// Its config, read once.
    pub(crate) config: Map<String, Value>,
    /// Whether the listing shows it running.
    pub(crate) running: bool,
    /// The pool the listing shows it in.
    pub(crate) pool: Option<String>,
    /// What its cloud-init drive lacks (`GET .../cloudinit`), read only where
    /// [`reads::reads_drive_state`] says it matters.
    pub(crate) cloud_init: Option<DriveState>,
}

/// The update's view of `guest`, whose config `config` was read already, for the
/// config keys `wanted`.
pub(crate) fn for_update(
    run: &Run,
    guest: &Guest,
    name: String,
    config: Map<String, Value>,
    wanted: &Config,
) -> Result<UpdateObserved, Failure> {
    let vm = vm_of(guest);
    let running = guest.status.as_deref() == Some("running");
    let cloud_init = if reads::reads_drive_state(&config, wanted, running) {
        let state = cloudinit::read(run.client, &vm.node, vm.vmid)
            .map_err(|e| vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e))?;
        Some(state)
    } else {
        None
    };
    Ok(UpdateObserved {
        vm,
        name,
        config,
        running,
        pool: guest.pool.clone(),
        cloud_init,
    })
}
