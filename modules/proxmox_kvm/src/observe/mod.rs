//! Every read a task makes before it decides, in one place and in one value per
//! operation: the cluster's listing, read once at the start ([`listing`]), the VM the
//! task names (located in it), and then only what the decision needs of the VM. A read needed only in some cases
//! stays conditional (the API call counts are pinned); the pure helpers of
//! [`crate::decide`] say which.

pub mod listing;
pub mod locate;

use ferrox_common::ansible::protocol::Failure;
use ferrox_common::cluster::vm::Guest;
use ferrox_common::pve::cloudinit::{self, DriveState};
use ferrox_common::run::vm_task::{self, InfoWording};
use serde_json::{Map, Value};

use crate::api::{self, Vm};
use crate::context::{vm_of, Ctx};
use crate::decide::config_keys::KeyEdit;
use crate::decide::power::{self, Now};
use crate::decide::{existing, migrate, update};
use crate::guest_wait;
use crate::task::{Config, GuestWait, State};

/// A power state's, `current`'s, `template`'s or `absent`'s view of the VM.
pub struct PowerObserved {
    pub vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub name: String,
    /// Its power state (`status/current`).
    pub now: Now,
    /// With `wait_for_agent`/`wait_for_ip`: the wait and what it relies on, read (and
    /// checked) before any write.
    pub waiting: Option<(GuestWait, guest_wait::Guest)>,
}

/// The VM a power state acts on (`None`: not in the cluster) and its power state; with a
/// guest wait, the config the guest runs with and the caller's right to read its agent.
pub fn power_state(ctx: &mut Ctx, state: State) -> Result<Option<PowerObserved>, Failure> {
    let Some(guest) = locate::target(ctx)? else {
        return Ok(None);
    };
    let vm = vm_of(&guest);
    let id = vm.vmid;
    let name = ctx.name_of(Some(&guest));
    let status = api::power(ctx.client, &vm)
        .map_err(|e| Failure::new(format!("Unable to read the status of VM {id}: {e}")).with("vmid", id))?;
    let now = Now::of(&status, guest.template);
    let waiting = match power::guest_wait(ctx.task, state).cloned() {
        None => None,
        Some(wait) => {
            if let Some(refused) = power::wait_refusal(ctx.task, state, id, &now) {
                return Err(refused);
            }
            let running_config = power::waits_on_running_config(ctx.task, state, &now);
            let reachable = guest_wait::prepare(ctx, &wait, &vm, running_config)?;
            Some((wait, reachable))
        }
    };
    Ok(Some(PowerObserved { vm, name, now, waiting }))
}

/// `delete`'s or `revert`'s view of the VM.
pub struct KeysObserved {
    pub vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub name: String,
    /// The lock the listing shows.
    pub lock: Option<String>,
    /// Whether the listing shows it running (its hotplug rules keep changes pending).
    pub running: bool,
    /// `delete`: the VM's config; `revert`: its pending values.
    pub found: Map<String, Value>,
}

/// The VM the task names, which must exist, and its config (`delete`) or pending
/// changes (`revert`), each read failing in 1.6's words.
pub fn config_keys(ctx: &Ctx, edit: KeyEdit) -> Result<KeysObserved, Failure> {
    let guest = locate::existing_target(ctx)?;
    let vm = vm_of(&guest);
    let name = ctx.name_of(Some(&guest));
    let id = vm.vmid;
    let found = match edit {
        KeyEdit::Delete => api::config(ctx.client, &vm).map_err(|e| {
            Failure::new(format!("Unable to delete settings on VM {name} with vmid {id}: {e}")).with("vmid", id)
        })?,
        KeyEdit::Revert => {
            api::pending(ctx.client, &vm)
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
pub struct MigrateObserved {
    pub vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub name: String,
    /// The lock the listing shows.
    pub lock: Option<String>,
    /// Whether it runs (`status/current`), read only when it is to be migrated; `None`:
    /// not read, or the read failed.
    pub running: Option<bool>,
}

/// The VM the task names, which must exist, and, when it is to move, whether it runs.
pub fn migration(ctx: &Ctx) -> Result<MigrateObserved, Failure> {
    let guest = locate::existing_target(ctx)?;
    let vm = vm_of(&guest);
    let running = migrate::reads_power(ctx.task, &vm, guest.lock.as_deref())
        .then(|| api::power(ctx.client, &vm).map(|p| p.status == "running").ok())
        .flatten();
    Ok(MigrateObserved {
        name: ctx.name_of(Some(&guest)),
        vm,
        lock: guest.lock.clone(),
        running,
    })
}

/// `present`'s view of a VM that exists: its config, read once, and its HA state where
/// a warning needs it.
pub struct ExistingObserved {
    pub vm: Vm,
    /// The name for messages: the task's, else the VM's.
    pub name: String,
    pub config: Map<String, Value>,
    /// Whether PVE manages it as an HA resource (read only with `ha_managed: true`; a
    /// failed read counts as not).
    pub ha_managed: bool,
}

/// The config of the VM `guest` (failing as 1.6 words it), and its HA state when the
/// task sets `ha_managed`.
pub fn existing(ctx: &Ctx, guest: &Guest) -> Result<ExistingObserved, Failure> {
    let vm = vm_of(guest);
    let config = ctx.read_config(&vm)?;
    let ha_managed = existing::reads_ha_state(ctx.task) && api::power(ctx.client, &vm).is_ok_and(|p| p.ha_managed);
    Ok(ExistingObserved {
        name: ctx.name_of(Some(guest)),
        vm,
        config,
        ha_managed,
    })
}

/// The update's view of a VM that exists.
pub struct UpdateObserved {
    pub vm: Vm,
    /// The name for messages.
    pub name: String,
    /// Its config, read once.
    pub config: Map<String, Value>,
    /// Whether the listing shows it running.
    pub running: bool,
    /// The pool the listing shows it in.
    pub pool: Option<String>,
    /// What its cloud-init drive lacks (`GET .../cloudinit`), read only where
    /// [`crate::decide::update::reads_drive_state`] says it matters.
    pub cloud_init: Option<DriveState>,
}

/// The update's view of `guest`, whose config `config` was read already, for the
/// config keys `wanted`.
pub fn for_update(
    ctx: &Ctx,
    guest: &Guest,
    name: String,
    config: Map<String, Value>,
    wanted: &Config,
) -> Result<UpdateObserved, Failure> {
    let vm = vm_of(guest);
    let running = guest.status.as_deref() == Some("running");
    let cloud_init = if update::reads_drive_state(&config, wanted, running) {
        let state = cloudinit::read(ctx.client, &vm.node, vm.vmid)
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
