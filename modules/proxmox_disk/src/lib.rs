//! The `ferrox.proxmox.proxmox_disk` module: one disk of a QEMU VM.
//!
//! Flow: read the task ([`task`]), find the VM and its node (one unfiltered
//! `GET /cluster/resources`, which also lists the storages), read its config (one
//! GET), compute the [`plan`] (pure),
//! then report it (check mode, or nothing to do) or [`apply`] it and read the config
//! back once for the result ([`report`]).

pub mod apply;
pub mod current;
pub mod disk_key;
mod docs;
pub mod options;
pub mod plan;
pub mod planned;
pub mod report;
pub mod task;

use ferrox_common::api::client::Client;
use ferrox_common::api::connection::ConnectionParams;
use ferrox_common::cluster::duplicates;
use ferrox_common::ansible::options::{ModuleSpec, Support};
use ferrox_common::pve::privileges::{Gate, Target, Write};
use ferrox_common::ansible::protocol::{Failure, Module, Output};
use ferrox_common::api::recover;
use ferrox_common::cluster::references;
use ferrox_common::cluster::listing_probe::Sought;
use ferrox_common::cluster::vm::{self, Guest};

use current::VmConfig;
use task::{DiskTask, MoveTarget, State};

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_disk",
        short_description: "Manage one disk of a QEMU VM in Proxmox VE",
        description: docs::description(),
        version_added: "0.1.0",
        options: options::options(),
        rules: options::rules(),
        check_mode: (Support::Full, "Reads the VM's live configuration and reports exactly what a real run would change, writing nothing."),
        diff_mode: (Support::Full, "Shows the disk's config entry (and any C(unusedN) entry that keeps a volume) before and after."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_kvm", "ferrox.proxmox.proxmox_nic"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = DiskTask::from_params(&m.params)?;
    let conn = ConnectionParams::from_params(&m.params)?;
    let client = Client::connect(&conn)?.seeing(m.plan());
    client.set_retry_budget(task.timeout);
    // Only the guests the task names are decoded: thousands of others are skipped unread.
    let mut sought = Sought::lookup(task.vmid, task.name.as_deref());
    if let (State::Moved, Some(MoveTarget::Vm { vmid: t, .. })) = (&task.state, &task.target) {
        sought = sought.and_vmid(*t);
    }
    let cluster = vm::cluster_of(&client, &sought).map_err(|e| {
        let what = match (&task.vmid, &task.name) {
            (Some(id), _) => format!("vmid {id}"),
            (None, Some(name)) => format!("name {name}"),
            _ => String::new(),
        };
        Failure::new(format!("Unable to retrieve list of VMs filtered by {what}: {e}"))
    })?;
    let guests = &cluster.guests;
    let guest = vm::locate_qemu(guests, task.vmid, task.name.as_deref(), "proxmox_disk manages disks of QEMU VMs")
        .map_err(|f| duplicates::explain(&client, guests, task.name.as_deref(), f))?;
    let vmid = guest.vmid;
    let vm = read_config(&client, guest)?;
    let target_vm = match (&task.state, &task.target) {
        (State::Moved, Some(MoveTarget::Vm { vmid: t, .. })) if *t != vmid => {
            let target = vm::locate_qemu(guests, Some(*t), None, "target_vmid must name a QEMU VM")
                .map_err(|e| Failure::new(e.msg).with("vmid", vmid))?;
            Some(read_config(&client, target)?)
        }
        _ => None,
    };

    let plan = plan::plan(&task, &vm, target_vm.as_ref()).map_err(|e| Failure::new(e).with("vmid", vmid))?;
    for w in &plan.warnings {
        m.warn(w.clone());
    }
    // An ISO image or an import source the task names must be there (references.rs).
    let named: Vec<references::DriveRef> = plan
        .actions
        .iter()
        .filter_map(|a| match a {
            plan::Action::SetDrive { key, value } => Some(references::drive_refs(key, value)),
            _ => None,
        })
        .flatten()
        // The volume already attached there is no new reference.
        .filter(|r| !matches!(r, references::DriveRef::Volume { key, volid, .. } if vm.text(key).is_some_and(|t| t.split(',').next() == Some(volid.as_str()))))
        .collect();
    let assume = ferrox_common::ansible::assume::Assume::from_params(&m.params, m.check_mode);
    references::verify_volumes(&client, &vm.node, &named, &assume).map_err(|e| Failure::new(e).with("vmid", vmid))?;
    for w in assume.warnings() {
        m.warn(w);
    }
    if let (true, Some(storage)) = (plan.changed(), &plan.allocates_on) {
        check_storage(&client, &cluster, &vm.node, storage).map_err(|e| Failure::new(e).with("vmid", vmid))?;
    }
    let running = guest.status.as_deref() == Some("running");
    if !plan.changed() {
        return Ok(report::predicted(&plan, &vm));
    }
    // Whether PVE will let the caller do all of it, before the first write.
    let gate = Gate::new(&client, &conn);
    let target = Target { vmid, node: &vm.node, planned: m.plan().is_some_and(|p| p.is_planned(vmid)) };
    gate.require(m, &target, &writes(&plan.actions, &vm))?;
    if m.check_mode {
        // What a real run would read back: whether the running VM keeps it pending.
        let pending = planned::stays_pending(&plan, &vm, &task.disk.key, running);
        for effect in planned::effects(&plan, &vm, target_vm.as_ref(), &task.disk.key, pending) {
            m.plan_effect(effect);
        }
        return Ok(report::predicted(&plan, &vm).with("pending", pending));
    }

    // A lost answer: re-read the VM(s) and re-plan; what was applied drops out of the plan.
    let mut actions = plan.actions.clone();
    let mut current = vm.clone();
    for resend in 0.. {
        match apply::apply(&client, &current, &task.disk.key, task.state, &actions, task.timeout) {
            Ok(applied) => {
                for w in applied.warnings {
                    m.warn(w);
                }
                break;
            }
            Err(apply::Stop::Lost(e)) if resend < recover::MAX_RESENDS => {
                current = read_config(&client, guest)?;
                let target = match &target_vm {
                    Some(t) => Some(VmConfig::new(t.vmid, t.node.clone(), read_raw_config(&client, t.vmid, &t.node)?)),
                    None => None,
                };
                let again = plan::plan(&task, &current, target.as_ref()).map_err(|e| Failure::new(e).with("vmid", vmid))?;
                actions = again.actions;
                let found = if actions.is_empty() {
                    format!("the config of VM {vmid} shows the change made")
                } else {
                    format!("the config of VM {vmid} lacks part of the change; the rest is sent again")
                };
                m.warn(recover::warning(&e, &found));
                if actions.is_empty() {
                    break;
                }
            }
            Err(apply::Stop::Lost(e)) => return Err(Failure::new(e.to_string()).with("vmid", vmid)),
            Err(apply::Stop::Failed(msg)) => return Err(Failure::new(msg).with("vmid", vmid)),
        }
    }
    if plan.after.is_none() && plan.kept_as.is_none() && !running {
        // A deleted disk of a stopped VM: gone at once, nothing to read back.
        return Ok(report::predicted(&plan, &vm).with("pending", false));
    }
    let after_vm = match (&target_vm, &plan.after) {
        (Some(t), Some((loc, _))) if loc.vmid == t.vmid => t,
        _ => &vm,
    };
    let after_vm = read_back(&client, after_vm.vmid, &after_vm.node)?;
    let out = report::actual(&plan, &vm, &after_vm, &task.disk.key);
    if out.get("pending") == Some(&serde_json::Value::Bool(true)) {
        m.warn(format!(
            "The change of {} waits for the next restart of VM {}: Proxmox VE could not apply it to the running VM",
            task.disk.key, after_vm.vmid
        ));
    }
    Ok(out)
}

/// The writes of `actions` as PVE checks them (privileges.rs).
fn writes(actions: &[plan::Action], vm: &VmConfig) -> Vec<Write> {
    let storage_of = |key: &str| vm.text(key).and_then(|v| v.split(',').next().and_then(|f| f.split_once(':')).map(|(s, _)| s.to_string()));
    actions
        .iter()
        .map(|a| match a {
            plan::Action::SetDrive { key, value } => Write::Config { vmid: vm.vmid, set: vec![(key.clone(), value.clone(), vm.text(key))], delete: vec![] },
            plan::Action::Resize { key, .. } => Write::Resize { vmid: vm.vmid, storage: storage_of(key).unwrap_or_default() },
            plan::Action::Move { target: MoveTarget::Storage(s), .. } => Write::MoveDisk { vmid: vm.vmid, storage: s.clone() },
            plan::Action::Move { key, target: MoveTarget::Vm { vmid: other, .. }, .. } => {
                Write::Reassign { vmid: vm.vmid, target: *other, storage: storage_of(key).unwrap_or_default() }
            }
            plan::Action::Unlink { .. } => Write::Unlink { vmid: vm.vmid },
        })
        .collect()
}

/// A storage that does not exist on the node, or holds no disk images, fails before
/// anything is written (in check mode too). The cluster listing already names the
/// storages the caller may audit; only a storage missing there is looked up on the node
/// (`GET /nodes/{node}/storage` also shows storages the caller may only allocate on).
/// When that listing is refused, the check is skipped and PVE's own error applies.
fn check_storage(client: &Client, cluster: &vm::Cluster, node: &str, storage: &str) -> Result<(), String> {
    let listed: Vec<(String, Vec<String>)> = match cluster.storages_on(node).find(|s| s.storage == storage) {
        Some(_) => cluster.storages_on(node).map(|s| (s.storage.clone(), s.content.clone())).collect(),
        None => match client.get(&format!("/nodes/{node}/storage"), &[]) {
            Ok(serde_json::Value::Array(list)) => list
                .iter()
                .filter_map(|s| {
                    let content = s["content"].as_str().unwrap_or("").split(',').map(str::to_string).collect();
                    Some((s["storage"].as_str()?.to_string(), content))
                })
                .collect(),
            _ => return Ok(()),
        },
    };
    storage_verdict(&listed, node, storage)
}

/// Whether `storage` is among the node's `listed` storages (name, content types) and
/// holds disk images.
fn storage_verdict(listed: &[(String, Vec<String>)], node: &str, storage: &str) -> Result<(), String> {
    let holds_images = |content: &[String]| content.iter().any(|c| c == "images");
    let usable: Vec<&str> = listed.iter().filter(|(_, c)| holds_images(c)).map(|(s, _)| s.as_str()).collect();
    match listed.iter().find(|(s, _)| s == storage) {
        Some((_, content)) if holds_images(content) => Ok(()),
        Some((_, content)) => Err(format!(
            "storage {storage} on node {node} does not hold disk images (content: {}); use one of: {}",
            content.join(","),
            usable.join(", ")
        )),
        None => Err(format!("storage {storage} does not exist on node {node}; storages for disk images there: {}", usable.join(", "))),
    }
}

fn read_config(client: &Client, guest: &Guest) -> Result<VmConfig, Failure> {
    Ok(VmConfig::new(guest.vmid, guest.node.to_string(), read_raw_config(client, guest.vmid, &guest.node)?))
}

/// The config after the writes, from `GET .../pending`, so a change that waits for a
/// restart is known as such.
fn read_back(client: &Client, vmid: u32, node: &str) -> Result<VmConfig, Failure> {
    let items = client
        .get(&format!("/nodes/{node}/qemu/{vmid}/pending"), &[])
        .map_err(|e| Failure::new(format!("The change was made, but reading VM {vmid} back failed: {e}")).with("vmid", vmid))?;
    Ok(VmConfig::from_pending(vmid, node, &items))
}

fn read_raw_config(client: &Client, vmid: u32, node: &str) -> Result<serde_json::Value, Failure> {
    client
        .get(&format!("/nodes/{node}/qemu/{vmid}/config"), &[])
        .map_err(|e| Failure::new(format!("Getting information for VM {vmid} failed with exception: {e}")).with("vmid", vmid))
}
