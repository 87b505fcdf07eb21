//! Converging an existing VM: the one update path, of `update: true` and of a clone
//! task whose clone exists ([`converge_existing`]). Config changes under the digest,
//! the pool move, the cloud-init drive and what has not reached the guest, password
//! rotation, `apply_pending`, check-mode predictions and the diff.

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::cluster::vm::Guest;
use ferrox_common::run::vm_task::{self, InfoWording, LockWording};
use serde_json::{Map, Value};

use crate::api::{self, Vm};
use crate::checks::{check_bridges, check_drives, check_efi_bios, check_pool, newly_referenced};
use crate::context::{vm_of, Ctx};
use crate::converge::{self, Changes};
use crate::plan::{Action, Plan};
use crate::task::{Config, UpdatePassword};

/// The task's pool, when the VM is listed in another one (or none): `(from, to)`.
pub(crate) fn pool_move(ctx: &Ctx, guest: &Guest) -> Option<(Option<String>, String)> {
    ctx.task
        .pool
        .as_ref()
        .filter(|want| guest.pool.as_ref() != Some(*want))
        .map(|want| (guest.pool.clone(), want.clone()))
}

/// Brings an existing VM to what the task asks: the one update path, of `update: true`
/// and of a clone task whose clone exists. Checks, config changes under the digest, the
/// pool move, the cloud-init drive and what has not reached the guest, password
/// rotation, `apply_pending`, check-mode predictions and the diff. `up_to_date` is the
/// message when nothing differs (1.6 words it per path).
pub(crate) fn converge_existing(
    ctx: &mut Ctx,
    guest: &Guest,
    name: String,
    current: Map<String, Value>,
    wanted: Config,
    up_to_date: String,
) -> Result<Output, Failure> {
    let vm = vm_of(guest);
    let pool_move = pool_move(ctx, guest);
    check_efi_bios(ctx, &wanted, Some(&current))?;
    let mut changes = converge::changes(&current, &wanted, vm.vmid, &ctx.tag_case)
        .map_err(|e| Failure::new(e).with("vmid", vm.vmid))?;
    rotate_password(ctx, &wanted, &mut changes);
    let running = guest.status.as_deref() == Some("running");
    warn_without_drive(ctx, &format!("VM {}", vm.vmid), &wanted, &current);
    let drive = cloud_init_drive(ctx, &vm, &current, &wanted, running)?;
    let mut plan = Plan::new(vm.clone());
    if changes.is_empty() && pool_move.is_none() {
        let waiting = drive.map(|d| d.waiting).unwrap_or_default();
        if !waiting.is_empty() {
            return bring_to_guest(ctx, &vm, name, waiting, &current);
        }
        let out = Output::unchanged(up_to_date)
            .with("vmid", vm.vmid)
            .with("changes", Vec::<String>::new())
            .with("actions", Vec::<String>::new());
        return ctx.with_mac_and_devices(out, &vm, Some(&current));
    }
    vm_task::refuse_locked(
        vm.vmid,
        current.get("lock").and_then(Value::as_str),
        ctx.task.skiplock,
        LockWording::Action {
            prefix: &format!("Unable to update vm {name} with vmid {}: ", vm.vmid),
        },
    )?;
    check_bridges(ctx, &vm.node, changes.set.iter())?;
    check_drives(ctx, &vm.node, newly_referenced(&changes, &current))?;
    if pool_move.is_some() {
        check_pool(ctx)?;
    }
    let mut diff = changes_diff(&vm, &changes);
    let mut keys = changes.keys();
    if let Some((from, to)) = &pool_move {
        diff.change("pool", from.clone().map(Value::String), Some(Value::String(to.clone())));
        keys.push("pool".to_string());
    }
    let not_in_guest = drive.map(|d| d.after_writing(changes.set.iter())).unwrap_or_default();
    let predicted = if running && ctx.check_mode {
        predict_pending(ctx, &vm, &changes, &current)?
    } else {
        Map::new()
    };
    let reboot = ctx.task.reboots_for_pending();
    let digest = ctx
        .task
        .digest
        .clone()
        .or_else(|| current.get("digest").and_then(Value::as_str).map(str::to_string));
    if !changes.is_empty() {
        plan.push(Action::Converge {
            wanted,
            changes,
            digest,
            recompute: false,
        });
    }
    if let Some((from, to)) = pool_move {
        plan.push(Action::PoolMove { from, to });
    }
    if reboot {
        plan.push(Action::RebootIfPending {
            cloud_init: !not_in_guest.is_empty(),
        });
    }
    ctx.known.current = Some(current.clone());
    ctx.known.pending = predicted.clone();
    let mut outcome = ctx.execute(&mut plan, name.clone())?;
    if ctx.check_mode {
        // Nothing was written: report what PVE's hotplug rules would leave pending.
        outcome.rebooted_for_pending = reboot && !(predicted.is_empty() && not_in_guest.is_empty());
        outcome.pending = predicted;
    }
    let mut msg = format!("VM {name} with vmid {} updated", vm.vmid);
    let key_list = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>().join(", ");
    let mut pending = Map::new();
    if outcome.rebooted_for_pending {
        let mut applied = outcome.pending.clone();
        applied.extend(not_in_guest);
        msg.push_str(&format!("; rebooted to apply {}", key_list(&sorted(applied))));
    } else {
        if !outcome.pending.is_empty() {
            msg.push_str(&format!(
                "; pending until the VM restarts: {} (restart it, or use apply_pending: reboot)",
                key_list(&outcome.pending)
            ));
        }
        if !not_in_guest.is_empty() {
            msg.push_str(&format!("; {}", not_in_guest_clause(&not_in_guest)));
        }
        pending.extend(outcome.pending.clone());
        pending.extend(not_in_guest);
    }
    let pending = sorted(pending);
    let out = Output::changed(msg)
        .with("vmid", vm.vmid)
        .with("changes", keys)
        .with("pending", pending)
        .with("actions", plan.describe())
        .with_diff(diff);
    let config = outcome.config.as_ref().unwrap_or(&current);
    ctx.with_mac_and_devices(out, &vm, Some(config))
}

/// What a real update of the running `vm` would report as pending: the changes PVE's
/// hotplug rules keep pending, plus the changes already pending that the task leaves
/// alone (a real run reads them back with its own, and a reboot applies them too).
fn predict_pending(
    ctx: &Ctx,
    vm: &Vm,
    changes: &Changes,
    current: &Map<String, Value>,
) -> Result<Map<String, Value>, Failure> {
    let already = api::pending(ctx.client, vm)
        .map_err(|e| vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e))?
        .waiting;
    let mut predicted: std::collections::BTreeMap<String, Value> =
        changes.predicted_pending(current).into_iter().collect();
    for (key, value) in already {
        if !changes.set.contains_key(&key) {
            predicted.entry(key).or_insert(value);
        }
    }
    // In key order, as PVE lists pending changes.
    Ok(predicted.into_iter().collect())
}

/// The message clause for cloud-init changes the drive lacks.
fn not_in_guest_clause(keys: &Map<String, Value>) -> String {
    format!(
        "not yet in the guest: {} (cloud-init reads them from its drive, which PVE rebuilds when the VM starts: restart the VM with state: restarted, or use apply_pending: reboot)",
        keys.keys().cloned().collect::<Vec<_>>().join(", ")
    )
}

fn sorted(map: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

/// With `update_password: always`, the task's `cipassword` is sent though the VM has
/// one (PVE never shows it, so it cannot be compared).
fn rotate_password(ctx: &Ctx, wanted: &Config, changes: &mut Changes) {
    if ctx.task.update_password != UpdatePassword::Always || changes.set.contains_key("cipassword") {
        return;
    }
    if let Some(password) = wanted.get("cipassword") {
        changes.before.insert(
            "cipassword".into(),
            Some(ferrox_common::pve::cloudinit::PASSWORD_MASK.into()),
        );
        changes.set.insert("cipassword".into(), password.clone());
    }
}

/// The task sets cloud-init keys on a VM without a cloud-init drive: no guest reads them.
pub(crate) fn warn_without_drive(ctx: &mut Ctx, vm: &str, wanted: &Config, current: &Map<String, Value>) {
    use ferrox_common::pve::cloudinit;
    let keys: Vec<&str> = wanted
        .keys()
        .map(String::as_str)
        .filter(|k| cloudinit::is_key(k))
        .collect();
    if keys.is_empty() {
        return;
    }
    let current = current.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)));
    let wanted_drives = wanted.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    if cloudinit::has_drive(current.chain(wanted_drives)) {
        return;
    }
    ctx.warnings.push(format!(
        "{vm} has no cloud-init drive, so {} reach no guest: add one (for example ide: {{ide2: 'local-lvm:cloudinit'}}) or leave the cloud-init options out",
        keys.join(", ")
    ));
}

/// What the cloud-init drive of a running VM lacks (`GET .../cloudinit`), when the VM
/// has a drive PVE does not rebuild at once and cloud-init keys are involved.
fn cloud_init_drive(
    ctx: &Ctx,
    vm: &Vm,
    current: &Map<String, Value>,
    wanted: &Config,
    running: bool,
) -> Result<Option<ferrox_common::pve::cloudinit::DriveState>, Failure> {
    use ferrox_common::pve::cloudinit;
    let involved = wanted.keys().chain(current.keys()).any(|k| cloudinit::is_key(k));
    let hotplug = current.get("hotplug").map(converge::text_of);
    if !running
        || !involved
        || !cloudinit::config_has_drive(current)
        || cloudinit::regenerated_at_once(hotplug.as_deref())
    {
        return Ok(None);
    }
    cloudinit::read(ctx.client, &vm.node, vm.vmid)
        .map(Some)
        .map_err(|e| vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e))
}

/// Nothing to write, but the running VM's cloud-init drive lacks earlier changes: listed
/// as pending, or with `apply_pending: reboot` brought to the guest by a reboot (PVE
/// rebuilds the drive at the start that an API reboot includes).
fn bring_to_guest(
    ctx: &mut Ctx,
    vm: &Vm,
    name: String,
    waiting: Map<String, Value>,
    current: &Map<String, Value>,
) -> Result<Output, Failure> {
    let id = vm.vmid;
    if !ctx.task.reboots_for_pending() {
        let out = Output::unchanged(format!(
            "VM {name} with vmid {id} is up to date; {}",
            not_in_guest_clause(&waiting)
        ))
        .with("vmid", id)
        .with("changes", Vec::<String>::new())
        .with("pending", waiting)
        .with("actions", Vec::<String>::new());
        return ctx.with_mac_and_devices(out, vm, Some(current));
    }
    vm_task::refuse_locked(
        id,
        current.get("lock").and_then(Value::as_str),
        ctx.task.skiplock,
        LockWording::Action {
            prefix: &format!("Unable to reboot VM {id}: "),
        },
    )?;
    let mut plan = Plan::new(vm.clone());
    plan.push(Action::Power(crate::plan::PowerCall::Reboot));
    let mut diff = Diff::new(format!("VM {id}"));
    diff.change(
        "cloud-init drive",
        Some(Value::from(
            "lacks ".to_string() + &waiting.keys().cloned().collect::<Vec<_>>().join(", "),
        )),
        Some(Value::from("rebuilt at the reboot")),
    );
    ctx.execute(&mut plan, name.clone())?;
    let out = Output::changed(format!(
        "VM {name} with vmid {id} rebooted to bring its cloud-init changes to the guest: {}",
        waiting.keys().cloned().collect::<Vec<_>>().join(", ")
    ))
    .with("vmid", id)
    .with("changes", Vec::<String>::new())
    .with("pending", Map::new())
    .with("actions", plan.describe())
    .with_diff(diff);
    ctx.with_mac_and_devices(out, vm, Some(current))
}

fn changes_diff(vm: &Vm, changes: &Changes) -> Diff {
    let mut diff = Diff::new(format!("VM {}", vm.vmid));
    for (k, v) in &changes.set {
        diff.change(
            k,
            changes.before[k].clone().map(Value::String),
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
