//! `state: present`: create (or restore), converge an existing VM (`update: true`),
//! or report it. Clones are in [`crate::clone`], which shares the helpers here, and
//! converges a clone that exists through the same [`converge_existing`].

use ferrox_common::diff::Diff;
use ferrox_common::references;
use ferrox_common::protocol::{Failure, Output};
use ferrox_common::vm::Guest;
use serde_json::{Map, Value};

use crate::api::{self, Vm};
use crate::context::{vm_of, Ctx};
use crate::converge::{self, Changes};
use crate::plan::{Action, Allocation, Plan};
use crate::probe;
use crate::task::{Config, UpdatePassword};

pub fn present(ctx: &mut Ctx) -> Result<Output, Failure> {
    match ctx.target()? {
        Some(guest) => existing(ctx, &guest),
        None => create(ctx),
    }
}

/// An existing VM: converge it with `update`, else leave it and say what differs.
fn existing(ctx: &mut Ctx, guest: &Guest) -> Result<Output, Failure> {
    let vm = vm_of(guest);
    let name = ctx.name_of(Some(guest));
    let current = read_config(ctx, &vm)?;
    let wanted = ctx.task.config.clone();
    if let Some(node) = ctx.task.node.as_deref().filter(|n| *n != vm.node) {
        ctx.warnings.push(format!(
            "VM {} is on node {}, not {node}: node only says where to create a VM (use migrate: true to move it)",
            vm.vmid, vm.node
        ));
    }
    if ctx.task.ha_managed && !api::power(ctx.client, &vm).is_ok_and(|p| p.ha_managed) {
        ctx.warnings.push(format!(
            "VM {} exists and is not HA-managed: ha_managed applies when a VM is created. Add it to HA with ha-manager add vm:{} (or POST /cluster/ha/resources)",
            vm.vmid, vm.vmid
        ));
    }
    if !ctx.task.update {
        let pool_move = pool_move(ctx, guest);
        let out = Output::unchanged(format!("VM with vmid <{}> already exists", vm.vmid))
            .with("vmid", vm.vmid);
        let mut differ = match converge::changes(&current, &wanted, vm.vmid, &ctx.tag_case) {
            Ok(c) => c.keys(),
            Err(e) => {
                ctx.warnings.push(format!("VM {} differs from the task: {e}", vm.vmid));
                Vec::new()
            }
        };
        if pool_move.is_some() {
            differ.push("pool".to_string());
        }
        if !differ.is_empty() {
            ctx.warnings.push(format!(
                "VM {} differs from the task in: {}. Nothing was changed: add update: true to converge it.",
                vm.vmid,
                differ.join(", ")
            ));
        }
        return ctx.with_mac_and_devices(
            out.with("actions", Vec::<String>::new()),
            &vm,
            Some(&current),
        );
    }
    let up_to_date = format!("VM {name} with vmid {} is up to date", vm.vmid);
    converge_existing(ctx, guest, name, current, wanted, up_to_date)
}

/// The task's pool, when the VM is listed in another one (or none): `(from, to)`.
fn pool_move(ctx: &Ctx, guest: &Guest) -> Option<(Option<String>, String)> {
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
    ctx.refuse_locked(
        vm.vmid,
        current.get("lock").and_then(Value::as_str),
        &format!("Unable to update vm {name} with vmid {}: ", vm.vmid),
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
    let digest = ctx.task.digest.clone().or_else(|| {
        current
            .get("digest")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
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
        plan.push(Action::RebootIfPending { cloud_init: !not_in_guest.is_empty() });
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
        .map_err(|e| {
            Failure::new(format!(
                "Getting information for VM with vmid = {} failed with exception: {e}",
                vm.vmid
            ))
            .with("vmid", vm.vmid)
        })?
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
        changes.before.insert("cipassword".into(), Some(ferrox_common::cloudinit::PASSWORD_MASK.into()));
        changes.set.insert("cipassword".into(), password.clone());
    }
}

/// The task sets cloud-init keys on a VM without a cloud-init drive: no guest reads them.
pub(crate) fn warn_without_drive(ctx: &mut Ctx, vm: &str, wanted: &Config, current: &Map<String, Value>) {
    use ferrox_common::cloudinit;
    let keys: Vec<&str> = wanted.keys().map(String::as_str).filter(|k| cloudinit::is_key(k)).collect();
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
) -> Result<Option<ferrox_common::cloudinit::DriveState>, Failure> {
    use ferrox_common::cloudinit;
    let involved = wanted.keys().chain(current.keys()).any(|k| cloudinit::is_key(k));
    let hotplug = current.get("hotplug").map(converge::text_of);
    if !running || !involved || !cloudinit::config_has_drive(current) || cloudinit::regenerated_at_once(hotplug.as_deref()) {
        return Ok(None);
    }
    cloudinit::read(ctx.client, &vm.node, vm.vmid).map(Some).map_err(|e| {
        Failure::new(format!("Getting information for VM with vmid = {} failed with exception: {e}", vm.vmid))
            .with("vmid", vm.vmid)
    })
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
        let out = Output::unchanged(format!("VM {name} with vmid {id} is up to date; {}", not_in_guest_clause(&waiting)))
            .with("vmid", id)
            .with("changes", Vec::<String>::new())
            .with("pending", waiting)
            .with("actions", Vec::<String>::new());
        return ctx.with_mac_and_devices(out, vm, Some(current));
    }
    ctx.refuse_locked(id, current.get("lock").and_then(Value::as_str), &format!("Unable to reboot VM {id}: "))?;
    let mut plan = Plan::new(vm.clone());
    plan.push(Action::Power(crate::plan::PowerCall::Reboot));
    let mut diff = Diff::new(format!("VM {id}"));
    diff.change("cloud-init drive", Some(Value::from("lacks ".to_string() + &waiting.keys().cloned().collect::<Vec<_>>().join(", "))), Some(Value::from("rebuilt at the reboot")));
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

/// A new VM (or a restore from `archive`).
fn create(ctx: &mut Ctx) -> Result<Output, Failure> {
    let task = ctx.task;
    let node = task.node.clone().ok_or("node is mandatory for creating/updating VM")?;
    if !ctx.nodes.contains(&node) {
        return Err(Failure::new(format!(
            "node '{node}' does not exist in cluster (nodes: {})",
            ctx.nodes.join(", ")
        )));
    }
    let wanted = task.config.clone();
    if task.restore.archive.is_none() {
        let who = task.name.as_ref().map_or("The new VM".to_string(), |n| format!("The new VM {n}"));
        warn_without_drive(ctx, &who, &wanted, &Map::new());
    }
    check_bridges(ctx, &node, wanted.iter())?;
    check_drives(ctx, &node, wanted.iter())?;
    check_pool(ctx)?;
    let (vmid, allocation) = choose_vmid(ctx, task.vmid)?;
    let may_race = allocation == Allocation::NextId;
    let vm = Vm { node, vmid };
    let name = ctx.name_of(None);
    let mut plan = Plan::new(vm.clone());
    let mut diff = Diff::new(format!("VM {vmid}"));
    let archive = task.restore.archive.as_deref();
    let mut form: Vec<(String, String)> = Vec::new();
    for (param, value) in [("pool", &task.pool), ("storage", &task.storage), ("archive", &task.restore.archive)] {
        if let Some(v) = value {
            form.push((param.to_string(), v.clone()));
        }
    }
    if task.ha_managed {
        form.push(("ha-managed".into(), "1".into()));
    }
    if archive.is_some() {
        // PVE restores the archive's config and takes no config keys with it: the rest
        // of the task is applied once the restore is done.
        if task.force {
            form.push(("force".into(), "1".into()));
        }
        if let Some(limit) = task.bwlimit {
            form.push(("bwlimit".into(), limit.to_string()));
        }
        for (param, value) in [("unique", task.restore.unique), ("live-restore", task.restore.live_restore)] {
            if let Some(on) = value {
                form.push((param.into(), u8::from(on).to_string()));
            }
        }
        plan.push(Action::Create { form, allocation });
        plan.push(Action::WaitListed { name: None });
        if !wanted.is_empty() {
            let changes = converge::changes(&Map::new(), &wanted, vmid, &ctx.tag_case).unwrap_or_default();
            plan.push(Action::Converge {
                wanted: wanted.clone(),
                changes,
                digest: None,
                recompute: true,
            });
        }
    } else {
        check_efi_bios(ctx, &wanted, None)?;
        if let Some(st) = &task.restore.import_working_storage {
            form.push(("import-working-storage".into(), st.clone()));
        }
        form.extend(wanted.iter().map(|(k, v)| (k.clone(), v.clone())));
        plan.push(Action::Create { form, allocation });
        plan.push(Action::WaitListed { name: task.name.clone() });
    }
    for (k, v) in &wanted {
        diff.change(k, None, Some(Value::String(v.clone())));
    }
    let outcome = ctx.execute(&mut plan, name.clone())?;
    if let Some(found) = outcome.adopted {
        // Another run created this name at the same moment: that VM is the one.
        ctx.learn_name(&found, &name);
        return present(ctx);
    }
    let vm = plan.vm.clone();
    warn_of_twins(ctx, may_race, &vm);
    let out = Output::changed(format!("VM {name} with vmid {} deployed", vm.vmid))
        .with("vmid", vm.vmid)
        .with("actions", plan.describe())
        .with_diff(diff);
    let out = outcome.with_pending(out);
    ctx.with_mac_and_devices(out, &vm, outcome.config.as_ref())
}

/// After a create or clone with PVE's next free id: another VM of the task's name, made
/// by a run at the same moment, is warned of ([`crate::twins`]).
pub(crate) fn warn_of_twins(ctx: &mut Ctx, may_race: bool, vm: &Vm) {
    let Some(name) = ctx.task.given_name().filter(|_| may_race && !ctx.check_mode) else {
        return;
    };
    let others = crate::twins::others_named(ctx.client, name, vm.vmid);
    if !others.is_empty() {
        ctx.warnings.push(crate::twins::warning(name, vm.vmid, &others));
    }
}

/// The vmid for a new VM or clone and how it was chosen.
pub(crate) fn choose_vmid(ctx: &Ctx, given: Option<u32>) -> Result<(u32, Allocation), Failure> {
    if let Some(id) = given {
        return Ok((id, Allocation::Given));
    }
    if let Some((first, last)) = ctx.task.vmid_range {
        let name = ctx.task.name.as_deref();
        let reserved = ctx.client.plan().map(|plan| plan.reserved().clone()).unwrap_or_default();
        let id = probe::first_candidate(name, first, last, |id| {
            let listed = ctx.listed_name(id);
            // In check mode, an id the run's plan took earlier stays taken (as for nextid).
            probe::held_by_other(listed, name) || (listed.is_none() && reserved.contains(&id))
        })
        .ok_or_else(|| Failure::new(probe::range_full(first, last)))?;
        let name = name.map(str::to_string);
        return Ok((id, Allocation::Range { first, last, name }));
    }
    let id = api::next_id(ctx.client)
        .map_err(|e| Failure::new(format!("Unable to retrieve next free vmid: {e}")))?;
    Ok((id, Allocation::NextId))
}

pub(crate) fn read_config(ctx: &Ctx, vm: &Vm) -> Result<Map<String, Value>, Failure> {
    api::config(ctx.client, vm).map_err(|e| {
        Failure::new(format!(
            "Getting information for VM with vmid = {} failed with exception: {e}",
            vm.vmid
        ))
        .with("vmid", vm.vmid)
    })
}

/// A new EFI disk gets the Microsoft 2023 certificates from PVE only with pre-enrolled
/// keys; `ms_cert` cannot say otherwise (PVE would keep a marker that is not true).
fn new_efidisk_certs(ctx: &Ctx) -> Result<(), Failure> {
    let Some(efi) = &ctx.task.efi else { return Ok(()) };
    match efi.ms_cert.as_deref() {
        Some(cert) if cert.starts_with("2023") && efi.pre_enrolled_keys != Some(true) => Err(Failure::new(format!(
            "efidisk0.ms_cert: {cert} needs efidisk0.pre_enrolled_keys: true (PVE enrolls the Microsoft 2023 certificates only into an EFI disk with pre-enrolled keys)"
        ))),
        _ => Ok(()),
    }
}

/// `efidisk0` is only created together with `bios: ovmf` (in the task or the VM).
pub(crate) fn check_efi_bios(
    ctx: &Ctx,
    wanted: &Config,
    current: Option<&Map<String, Value>>,
) -> Result<(), Failure> {
    if !wanted.contains_key("efidisk0") || current.is_some_and(|c| c.contains_key("efidisk0")) {
        return Ok(());
    }
    let vm_bios = current.and_then(|c| c.get("bios")).and_then(Value::as_str);
    let bios = ctx.task.bios.as_deref();
    if bios == Some("ovmf") || (bios.is_none() && vm_bios == Some("ovmf"))
    {
        return new_efidisk_certs(ctx);
    }
    Err(Failure::new(
        "efidisk0 cannot be used if bios is not set to ovmf. ",
    ))
}

/// Bridges named by the NICs the run writes must exist on the node: PVE accepts an
/// unknown bridge and only the next start fails. When the node's bridges cannot be
/// listed (no Sys.Audit), PVE's own checks are left to answer.
pub(crate) fn check_bridges<'v>(
    ctx: &Ctx,
    node: &str,
    nets: impl Iterator<Item = (&'v String, &'v String)>,
) -> Result<(), Failure> {
    let wanted: Vec<(String, String)> = nets
        .filter(|(k, _)| crate::converge::nic::is_net_key(k))
        .filter_map(|(k, v)| crate::converge::nic::bridge_of(v).map(|b| (k.clone(), b)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let Ok(bridges) = api::bridges(ctx.client, node) else {
        return Ok(());
    };
    match unknown_bridge(&wanted, &bridges) {
        // PVE leaves out bridges the caller has no SDN privilege on: say so when it may be why.
        Some((key, bridge)) => match ctx.gate.hidden_bridge_reason(&bridge) {
            Some(why) => Err(Failure::new(format!(
                "{key}: bridge {bridge} is not among the bridges node {node} shows ({}): Proxmox VE hides a bridge from callers without an SDN privilege on it, and {why}",
                bridges.join(", ")
            ))),
            None => Err(Failure::new(format!(
                "{key}: bridge {bridge} does not exist on node {node} (bridges: {})",
                bridges.join(", ")
            ))),
        },
        None => Ok(()),
    }
}

/// The storages, ISO images and volumes the drive entries a run writes name must be
/// there (`common::references`): PVE would fail half-way, and a dry run would say yes.
pub(crate) fn check_drives<'v>(
    ctx: &Ctx,
    node: &str,
    entries: impl Iterator<Item = (&'v String, &'v String)>,
) -> Result<(), Failure> {
    references::verify_listed(ctx.client, node, &ctx.storages, entries.map(|(k, v)| (k.as_str(), v.as_str())), &ctx.task.assume)
        .map_err(Failure::new)
}

/// The entries of `changes` that name a volume the VM does not have there already (an
/// option change of an attached disk references nothing new).
pub(crate) fn newly_referenced<'c>(
    changes: &'c Changes,
    current: &'c Map<String, Value>,
) -> impl Iterator<Item = (&'c String, &'c String)> {
    use crate::converge::disk::volume_of;
    changes.set.iter().filter(move |(k, v)| {
        let now = current.get(*k).map(crate::converge::text_of);
        now.as_deref().and_then(|c| volume_of(k, c)) != volume_of(k, v) || now.is_none()
    })
}

/// The task's `pool` must exist (`GET /pools/{pool}`, only when the task names one).
/// A pool the caller may not audit is left to PVE's own check.
pub(crate) fn check_pool(ctx: &Ctx) -> Result<(), Failure> {
    let Some(pool) = ctx.task.pool.as_deref().filter(|p| !ctx.task.assume.pool(p)) else {
        return Ok(());
    };
    // A nested pool (`parent/child`, PVE 8.1+) has no path of its own: the query form.
    let answer = if pool.contains('/') {
        ctx.client.get("/pools", &[("poolid", pool.to_string())])
    } else {
        ctx.client.get(&format!("/pools/{pool}"), &[])
    };
    match answer {
        Err(e) if e.message.contains("does not exist") => {
            let known: Vec<String> = match ctx.client.get("/pools", &[]) {
                Ok(Value::Array(list)) => list
                    .iter()
                    .filter_map(|p| p["poolid"].as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            };
            Err(Failure::new(format!(
                "pool '{pool}' does not exist (pools: {}); create it first (pveum pool add {pool}) or leave pool out{}",
                if known.is_empty() { "none visible".to_string() } else { known.join(", ") },
                ctx.task.assume.hint("pools", pool)
            )))
        }
        _ => Ok(()),
    }
}

/// The first NIC whose bridge is not among `bridges`.
pub fn unknown_bridge<'a>(
    wanted: &'a [(String, String)],
    bridges: &[String],
) -> Option<&'a (String, String)> {
    wanted.iter().find(|(_, b)| !bridges.contains(b))
}

pub(crate) fn changes_diff(vm: &Vm, changes: &Changes) -> Diff {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_bridges_are_found() {
        let wanted = vec![
            ("net0".to_string(), "vmbr0".to_string()),
            ("net1".to_string(), "vmbr9".to_string()),
        ];
        let bridges = vec!["vmbr0".to_string(), "vmbr1".to_string()];
        assert_eq!(
            unknown_bridge(&wanted, &bridges),
            Some(&("net1".to_string(), "vmbr9".to_string()))
        );
        assert_eq!(unknown_bridge(&wanted[..1], &bridges), None);
    }
}
