//! `state: present` on a VM that exists, decided. Either way, what is warned of: a
//! `node` or `ha_managed` that applies only to a new VM. Without `update`, the VM is
//! left as it is with what differs named ([`left_alone`]). Brought to the task
//! (`update: true`, and a clone task whose clone exists): up to date, cloud-init
//! changes still to reach the guest (listed, or brought by a reboot), or the update's
//! actions: the config keys that differ under the digest, the pool move, the reboot for
//! what stays pending; refused when the VM is locked (the wording [`lock_prefix`]'s, the
//! refusal the driver's). Pure: the table is
//! `update_tests.rs`; the checks that read the cluster (bridges, volumes, pool) run on
//! the decision before the first write ([`crate::checks`]).
//!
//! The comparison ([`compare`]) goes through [`crate::converge`], the library of PVE's
//! value comparisons (disks grow only, NICs keep their MACs, tags by the cluster's
//! `tag-style`: the one value it may read, once, when tags differ only in case; see
//! [`crate::decide`]).

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Failure;
use ferrox_cluster::tags::TagCase;
use ferrox_pve_rules::cloudinit;
use serde_json::{Map, Value};

use crate::api::Vm;
use crate::converge::{self, Changes};
use crate::decide::efi::check_efi_bios;
use crate::observe::UpdateObserved;
use crate::plan::{Action, PowerCall};
use crate::task::{Config, KvmTask, UpdatePassword};

/// What the update does with the VM observed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// Nothing differs (the message is 1.6's per path).
    UpToDate(String),
    /// Nothing to write, but the running VM's cloud-init drive lacks earlier changes:
    /// listed as pending.
    NotInGuest { msg: String, waiting: Map<String, Value> },
    /// Nothing to write; with `apply_pending: reboot`, a reboot brings the cloud-init
    /// changes to the guest (PVE rebuilds the drive at the start a reboot includes).
    RebootForGuest {
        msg: String,
        diff: Diff,
        actions: Vec<Action>,
    },
    /// Keys to write, or a pool to move to.
    Update(Update),
}

/// The update's actions and what its result needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Update {
    pub(crate) actions: Vec<Action>,
    /// The config keys that change (and `pool`), for the `changes` result.
    pub(crate) keys: Vec<String>,
    pub(crate) diff: Diff,
    /// The changes written (also in the `Converge` action): what the checks and the
    /// pending prediction read.
    pub(crate) changes: Changes,
    /// The VM moves to the task's pool (which must exist).
    pub(crate) moves_pool: bool,
    /// Cloud-init keys the drive will lack after the write (a running VM).
    pub(crate) not_in_guest: Map<String, Value>,
    /// `apply_pending: reboot`.
    pub(crate) reboot: bool,
}

/// A `node` other than the VM's: it only says where to create a VM.
pub(crate) fn node_warning(task: &KvmTask, vm: &Vm) -> Option<String> {
    let node = task.node.as_deref().filter(|n| *n != vm.node)?;
    Some(format!(
        "VM {} is on node {}, not {node}: node only says where to create a VM (use migrate: true to move it)",
        vm.vmid, vm.node
    ))
}

/// `ha_managed: true` on a VM that is not HA-managed (`ha_managed`: PVE's `ha.managed`
/// as read; a failed read counts as not): it applies when a VM is created. `hastate`:
/// the state of its HA resource entry as the listing shows it, when it has one; PVE
/// does not manage such a VM while the resource is `ignored` or the HA stack is
/// disarmed with mode `ignore`, and adding it again would be refused.
pub(crate) fn ha_warning(task: &KvmTask, vm: &Vm, ha_managed: bool, hastate: Option<&str>) -> Option<String> {
    if !task.ha_managed || ha_managed {
        return None;
    }
    let id = vm.vmid;
    Some(match hastate {
        None => format!(
            "VM {id} exists and is not HA-managed: ha_managed applies when a VM is created. Add it to HA with ha-manager add vm:{id} (or POST /cluster/ha/resources)"
        ),
        Some("ignored") => format!(
            "VM {id} exists and its HA resource is in state ignored, so PVE does not manage it: ha_managed applies when a VM is created. Set the resource's state with ha-manager set vm:{id} --state started"
        ),
        Some(state) => format!(
            "VM {id} exists and has an HA resource (state {state}) that PVE does not manage now, as the HA stack is disarmed with mode ignore: ha_managed applies when a VM is created. Re-arm the HA stack with ha-manager crm-command arm-ha"
        ),
    })
}

/// Without `update`: the VM is left alone; the message, and the warnings of what
/// differs (`differ`: the config keys that differ, or why they could not be compared;
/// `listed_pool`: the pool the listing shows it in).
pub(crate) fn left_alone(
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

/// The VM's config `current` compared with the config keys `wanted` (after the check
/// of a new EFI disk), with the warning of cloud-init keys on a VM without a drive.
pub(crate) fn compare(
    task: &KvmTask,
    vmid: u32,
    current: &Map<String, Value>,
    wanted: &Config,
    tag_case: &TagCase,
) -> Result<(Changes, Option<String>), Failure> {
    check_efi_bios(task, wanted, Some(current))?;
    let changes = converge::changes(current, wanted, vmid, tag_case).map_err(|e| Failure::new(e).with("vmid", vmid))?;
    Ok((changes, without_drive_warning(&format!("VM {vmid}"), wanted, current)))
}

/// The task's pool, when the VM is listed in another one (or none): `(from, to)`.
pub(crate) fn pool_move(task: &KvmTask, listed_pool: Option<&String>) -> Option<(Option<String>, String)> {
    task.pool
        .as_ref()
        .filter(|want| listed_pool != Some(*want))
        .map(|want| (listed_pool.cloned(), want.clone()))
}

/// The decision for bringing the VM observed to the config keys `wanted`; `changes`:
/// its config compared with them, `up_to_date`: the message when nothing differs.
pub(crate) fn decide(
    task: &KvmTask,
    observed: &UpdateObserved,
    wanted: Config,
    mut changes: Changes,
    up_to_date: String,
) -> Result<Decision, Failure> {
    let (vm, current) = (&observed.vm, &observed.config);
    let pool_move = pool_move(task, observed.pool.as_ref());
    rotate_password(task, &wanted, &mut changes);
    if changes.is_empty() && pool_move.is_none() {
        let waiting = observed
            .cloud_init
            .as_ref()
            .map(|d| d.waiting.clone())
            .unwrap_or_default();
        if !waiting.is_empty() {
            return bring_to_guest(task, observed, waiting);
        }
        return Ok(Decision::UpToDate(up_to_date));
    }
    let mut diff = changes_diff(vm.vmid, &changes);
    let mut keys = changes.keys();
    if let Some((from, to)) = &pool_move {
        diff.change("pool", from.clone().map(Value::String), Some(Value::String(to.clone())));
        keys.push("pool".to_string());
    }
    let not_in_guest = observed
        .cloud_init
        .as_ref()
        .map(|d| d.after_writing(changes.set.iter()))
        .unwrap_or_default();
    let reboot = task.reboots_for_pending();
    let digest = task
        .digest
        .clone()
        .or_else(|| current.get("digest").and_then(Value::as_str).map(str::to_string));
    let mut actions = Vec::new();
    if !changes.is_empty() {
        actions.push(Action::Converge {
            wanted,
            changes: changes.clone(),
            digest,
            recompute: false,
        });
    }
    let moves_pool = pool_move.is_some();
    if let Some((from, to)) = pool_move {
        actions.push(Action::PoolMove { from, to });
    }
    if reboot {
        actions.push(Action::RebootIfPending {
            cloud_init: !not_in_guest.is_empty(),
        });
    }
    Ok(Decision::Update(Update {
        actions,
        keys,
        diff,
        changes,
        moves_pool,
        not_in_guest,
        reboot,
    }))
}

/// How a refusal of the VM locked starts: an update's (`Update`), a reboot's for the
/// guest's cloud-init changes (`RebootForGuest`); the driver refuses the lock
/// ([`ferrox_run::driver`]), root@pam's `skiplock` overriding it.
pub(crate) fn lock_prefix(rebooting: bool, name: &str, vmid: u32) -> String {
    if rebooting {
        format!("Unable to reboot VM {vmid}: ")
    } else {
        format!("Unable to update vm {name} with vmid {vmid}: ")
    }
}

/// The lock the VM's config holds, if any.
pub(crate) fn held_lock(config: &Map<String, Value>) -> Option<&str> {
    config.get("lock").and_then(Value::as_str)
}

/// Nothing to write, but the running VM's cloud-init drive lacks earlier changes.
fn bring_to_guest(task: &KvmTask, observed: &UpdateObserved, waiting: Map<String, Value>) -> Result<Decision, Failure> {
    let (id, name) = (observed.vm.vmid, &observed.name);
    if !task.reboots_for_pending() {
        return Ok(Decision::NotInGuest {
            msg: format!(
                "VM {name} with vmid {id} is up to date; {}",
                not_in_guest_clause(&waiting)
            ),
            waiting,
        });
    }
    let lacking = waiting.keys().cloned().collect::<Vec<_>>().join(", ");
    let mut diff = Diff::new(format!("VM {id}"));
    diff.change(
        "cloud-init drive",
        Some(Value::from(format!("lacks {lacking}"))),
        Some(Value::from("rebuilt at the reboot")),
    );
    Ok(Decision::RebootForGuest {
        msg: format!("VM {name} with vmid {id} rebooted to bring its cloud-init changes to the guest: {lacking}"),
        diff,
        actions: vec![Action::Power(PowerCall::Reboot)],
    })
}

/// With `update_password: always`, the task's `cipassword` is sent though the VM has
/// one (PVE never shows it, so it cannot be compared).
fn rotate_password(task: &KvmTask, wanted: &Config, changes: &mut Changes) {
    if task.update_password != UpdatePassword::Always || changes.set.contains_key("cipassword") {
        return;
    }
    if let Some(password) = wanted.get("cipassword") {
        changes
            .before
            .insert("cipassword".into(), Some(cloudinit::PASSWORD_MASK.into()));
        changes.set.insert("cipassword".into(), password.clone());
    }
}

/// The task sets cloud-init keys on a VM (`vm`: how the warning names it) without a
/// cloud-init drive: no guest reads them.
pub(crate) fn without_drive_warning(vm: &str, wanted: &Config, current: &Map<String, Value>) -> Option<String> {
    let keys: Vec<&str> = wanted
        .keys()
        .map(String::as_str)
        .filter(|k| cloudinit::is_key(k))
        .collect();
    if keys.is_empty() {
        return None;
    }
    let current = current.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)));
    let wanted_drives = wanted.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    if cloudinit::has_drive(current.chain(wanted_drives)) {
        return None;
    }
    Some(format!(
        "{vm} has no cloud-init drive, so {} reach no guest: add one (for example ide: {{ide2: 'local-lvm:cloudinit'}}) or leave the cloud-init options out",
        keys.join(", ")
    ))
}

/// What a real update of the running VM would report as pending: the changes PVE's
/// hotplug rules keep pending, plus the changes already pending (`already`) that the task
/// leaves alone (a real run reads them back with its own, and a reboot applies them too).
/// In key order, as PVE lists pending changes.
pub(crate) fn predicted_pending(
    changes: &Changes,
    current: &Map<String, Value>,
    already: Map<String, Value>,
) -> Map<String, Value> {
    let mut predicted: std::collections::BTreeMap<String, Value> =
        changes.predicted_pending(current).into_iter().collect();
    for (key, value) in already {
        if !changes.set.contains_key(&key) {
            predicted.entry(key).or_insert(value);
        }
    }
    predicted.into_iter().collect()
}

/// The message clause for cloud-init changes the drive lacks.
pub(crate) fn not_in_guest_clause(keys: &Map<String, Value>) -> String {
    format!(
        "not yet in the guest: {} (cloud-init reads them from its drive, which PVE rebuilds when the VM starts: restart the VM with state: restarted, or use apply_pending: reboot)",
        keys.keys().cloned().collect::<Vec<_>>().join(", ")
    )
}

fn changes_diff(vmid: u32, changes: &Changes) -> Diff {
    let mut diff = Diff::new(format!("VM {vmid}"));
    for (k, v) in &changes.set {
        diff.change(
            k,
            changes.before.get(k).cloned().flatten().map(Value::String),
            Some(Value::String(v.clone())),
        );
    }
    for g in &changes.grow {
        diff.change(
            &format!("{} size", g.key),
            Some(Value::String(g.from.clone())),
            Some(Value::String(g.to.clone())),
        );
    }
    diff
}
