//! The `ferrox.proxmox.proxmox_disk` module: one disk of a QEMU VM.
//!
//! A [`Task`] the one driver runs ([`driver`]): observe finds the VM and its node (one
//! unfiltered `GET /cluster/resources`, which also lists the storages) and reads its
//! config (one GET); the [`plan`] is pure; the guard is the writes PVE checks; the ISO
//! images, import sources and the storage a volume goes to are checked; the change is
//! predicted in check mode ([`planned`]), else [`apply`]'d and the config read back once
//! for the result ([`report`]).

mod apply;
mod current;
mod disk_key;
mod docs;
mod options;
mod plan;
mod planned;
mod report;
mod task;

use ferrox_ansible::options::{ModuleSpec, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::listing_probe::LookupTargets;
use ferrox_cluster::references;
use ferrox_cluster::vm::{self, Guest, ListingQuery};
use ferrox_pve_client::client::Client;
use ferrox_pve_client::recover;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::connection::ConnectionParams;
use ferrox_run::driver::{self, Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::name_index;
use ferrox_run::vm_task::{self, InfoWording, LockWording, Lookup};
use serde_json::Value;

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
        check_mode: (
            Support::Full,
            "Reads the VM's live configuration and reports exactly what a real run would change, writing nothing.",
        ),
        diff_mode: (
            Support::Full,
            "Shows the disk's config entry (and any C(unusedN) entry that keeps a volume) before and after.",
        ),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_kvm", "ferrox.proxmox.proxmox_nic"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = DiskTask::from_params(&m.params)?;
    driver::run(m, task)
}

/// What a disk task reads: the cluster (its guests and storages), the VM, its config,
/// and the config of the VM a disk moves to.
pub struct Seen {
    cluster: vm::Cluster,
    vm: VmConfig,
    target_vm: Option<VmConfig>,
    running: bool,
}

impl Decided for plan::Plan {
    fn changes(&self) -> bool {
        self.changed()
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Task for DiskTask {
    type Seen = Seen;
    type Plan = plan::Plan;
    /// The VM the disk is on after the writes, read back (`None`: a deleted disk of a
    /// stopped VM, gone at once).
    type Done = Option<VmConfig>;

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        cx.client.set_retry_budget(self.timeout);
        let cluster = read_cluster(cx.m, cx.client, cx.conn, self)?;
        let lookup = Lookup {
            vmid: self.vmid,
            name: self.name.as_deref(),
            prefer_node: None,
        };
        let guest = vm_task::locate_qemu(
            cx.client,
            &cluster.guests,
            &lookup,
            "proxmox_disk manages disks of QEMU VMs",
        )?;
        let vm = read_config(cx.client, guest)?;
        let target_vm = read_target_vm(cx.client, self, &cluster.guests, guest.vmid)?;
        let running = guest.status.as_deref() == Some("running");
        Ok(Seen {
            cluster,
            vm,
            target_vm,
            running,
        })
    }

    fn plan(&self, seen: &Seen) -> Result<plan::Plan, Failure> {
        plan::plan(self, &seen.vm, seen.target_vm.as_ref()).map_err(|e| Failure::new(e).with("vmid", seen.vm.vmid))
    }

    fn guard<'s>(&self, seen: &'s Seen, plan: &plan::Plan) -> Guard<'s> {
        Guard {
            subject: Subject::Vm {
                vmid: seen.vm.vmid,
                node: &seen.vm.node,
            },
            lock: Some(Lock {
                held: seen.vm.config.get("lock").and_then(Value::as_str),
                skiplock: false,
                wording: LockWording::Vmid,
            }),
            writes: writes(&plan.actions, &seen.vm),
        }
    }

    /// The ISO images and import sources the drives name, and the storage a volume is
    /// allocated on.
    fn check(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &plan::Plan) -> Result<(), Failure> {
        verify_references(cx.m, cx.client, plan, &seen.vm)?;
        match &plan.allocates_on {
            Some(storage) => check_storage(cx.client, &seen.cluster, &seen.vm.node, storage)
                .map_err(|e| Failure::new(e).with("vmid", seen.vm.vmid)),
            None => Ok(()),
        }
    }

    /// What a real run would read back: whether the running VM keeps the change pending.
    fn predict(&mut self, _cx: &mut Cx<'_>, seen: &Seen, plan: &plan::Plan) -> Result<Prediction, Failure> {
        let pending = planned::stays_pending(plan, &seen.vm, &self.disk.key, seen.running);
        Ok(Prediction {
            effects: planned::effects(plan, &seen.vm, seen.target_vm.as_ref(), &self.disk.key, pending),
            warnings: Vec::new(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &plan::Plan) -> Result<Option<VmConfig>, Failure> {
        apply_reconciled(cx.m, cx.client, self, plan, &seen.vm, seen.target_vm.as_ref())?;
        let after = read_applied(cx.client, plan, seen)?;
        if let Some(after) = &after {
            if report::actual(plan, &seen.vm, after, &self.disk.key).get("pending") == Some(&Value::Bool(true)) {
                cx.warn(format!(
                    "The change of {} waits for the next restart of VM {}: Proxmox VE could not apply it to the running VM",
                    self.disk.key, after.vmid
                ));
            }
        }
        Ok(after)
    }

    fn report(
        self,
        _cx: &mut Cx<'_>,
        seen: &Seen,
        plan: &plan::Plan,
        outcome: Outcome<Option<VmConfig>>,
    ) -> Result<Output, Failure> {
        let vm = &seen.vm;
        Ok(match outcome {
            Outcome::Unchanged => report::predicted(plan, vm),
            Outcome::Predicted => report::predicted(plan, vm).with(
                "pending",
                planned::stays_pending(plan, vm, &self.disk.key, seen.running),
            ),
            Outcome::Done(None) => report::predicted(plan, vm).with("pending", false),
            Outcome::Done(Some(after)) => report::actual(plan, vm, &after, &self.disk.key),
        })
    }
}

/// The cluster listing with only the guests the task names (the VM, and the VM a disk
/// moves to) decoded: thousands of others are skipped unread. A VM named by `name`
/// alone may be found through the run's name index instead.
fn read_cluster(
    m: &mut Module,
    client: &Client,
    conn: &ConnectionParams,
    task: &DiskTask,
) -> Result<vm::Cluster, Failure> {
    let mut sought = LookupTargets::lookup(task.vmid, task.name.as_deref());
    if let (State::Moved, Some(MoveTarget::Vm { vmid: t, .. })) = (&task.state, &task.target) {
        sought = sought.and_vmid(*t);
    }
    let query = ListingQuery::lookup(task.vmid, task.name.as_deref(), &sought);
    let listing = name_index::read(m, client, conn, &query).map_err(|e| {
        let what = match (&task.vmid, &task.name) {
            (Some(id), _) => format!("vmid {id}"),
            (None, Some(name)) => format!("name {name}"),
            _ => String::new(),
        };
        Failure::new(format!("Unable to retrieve list of VMs filtered by {what}: {e}"))
    })?;
    Ok(listing.cluster)
}

/// The config of the VM the disk moves to, when that is another VM than `vmid`.
fn read_target_vm(client: &Client, task: &DiskTask, guests: &[Guest], vmid: u32) -> Result<Option<VmConfig>, Failure> {
    match (&task.state, &task.target) {
        (State::Moved, Some(MoveTarget::Vm { vmid: t, .. })) if *t != vmid => {
            let lookup = Lookup {
                vmid: Some(*t),
                ..Lookup::default()
            };
            let target = vm_task::locate_qemu(client, guests, &lookup, "target_vmid must name a QEMU VM")
                .map_err(|e| Failure::new(e.msg).with("vmid", vmid))?;
            Ok(Some(read_config(client, target)?))
        }
        _ => Ok(None),
    }
}

/// An ISO image or an import source the plan's drives name must be there
/// (references.rs); what a check run takes as existing instead is warned about.
fn verify_references(m: &mut Module, client: &Client, plan: &plan::Plan, vm: &VmConfig) -> Result<(), Failure> {
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
    let assume = ferrox_run::check_mode_assume::read(&m.params, m.check_mode);
    references::verify_volumes(client, &vm.node, &named, &assume).map_err(|e| Failure::new(e).with("vmid", vm.vmid))?;
    for w in assume.warnings() {
        m.warn(w);
    }
    Ok(())
}

/// Applies the plan. After a lost answer the VM(s) are read again and re-planned: what
/// was applied drops out of the plan, the rest is sent again.
fn apply_reconciled(
    m: &mut Module,
    client: &Client,
    task: &DiskTask,
    plan: &plan::Plan,
    vm: &VmConfig,
    target_vm: Option<&VmConfig>,
) -> Result<(), Failure> {
    let vmid = vm.vmid;
    let mut actions = plan.actions.clone();
    let mut current = vm.clone();
    for resend in 0.. {
        let mut warnings = Vec::new();
        let stopped = apply::apply(
            client,
            &current,
            &task.disk.key,
            task.state,
            &actions,
            task.timeout,
            &mut warnings,
        );
        for w in warnings {
            m.warn(w);
        }
        match stopped {
            Ok(()) => return Ok(()),
            Err(apply::Stop::Lost(e)) if resend < recover::MAX_RESENDS => {
                current = read_again(client, vm)?;
                let target = target_vm.map(|t| read_again(client, t)).transpose()?;
                let again =
                    plan::plan(task, &current, target.as_ref()).map_err(|e| Failure::new(e).with("vmid", vmid))?;
                actions = again.actions;
                let found = if actions.is_empty() {
                    format!("the config of VM {vmid} shows the change made")
                } else {
                    format!("the config of VM {vmid} lacks part of the change; the rest is sent again")
                };
                m.warn(recover::warning(&e, &found));
                if actions.is_empty() {
                    return Ok(());
                }
            }
            Err(apply::Stop::Lost(e)) => return Err(Failure::new(e.to_string()).with("vmid", vmid)),
            Err(apply::Stop::Failed(msg)) => return Err(Failure::new(msg).with("vmid", vmid)),
        }
    }
    unreachable!("the loop returns")
}

/// The VM the disk is on after the writes, read back once (of the target VM of a move
/// to another VM); `None` for a deleted disk of a stopped VM, gone at once.
fn read_applied(client: &Client, plan: &plan::Plan, seen: &Seen) -> Result<Option<VmConfig>, Failure> {
    if plan.after.is_none() && plan.kept_as.is_none() && !seen.running {
        return Ok(None);
    }
    let after_vm = match (&seen.target_vm, &plan.after) {
        (Some(t), Some((loc, _))) if loc.vmid == t.vmid => t,
        _ => &seen.vm,
    };
    read_back(client, after_vm.vmid, &after_vm.node).map(Some)
}

/// The writes of `actions` as PVE checks them (privileges.rs).
fn writes(actions: &[plan::Action], vm: &VmConfig) -> Vec<Write> {
    let storage_of = |key: &str| {
        vm.text(key).and_then(|v| {
            v.split(',')
                .next()
                .and_then(|f| f.split_once(':'))
                .map(|(s, _)| s.to_string())
        })
    };
    actions
        .iter()
        .map(|a| match a {
            plan::Action::SetDrive { key, value } => Write::Config {
                vmid: vm.vmid,
                set: vec![(key.clone(), value.clone(), vm.text(key))],
                delete: vec![],
            },
            plan::Action::Resize { key, .. } => Write::Resize {
                vmid: vm.vmid,
                storage: storage_of(key).unwrap_or_default(),
            },
            plan::Action::Move {
                target: MoveTarget::Storage(s),
                ..
            } => Write::MoveDisk {
                vmid: vm.vmid,
                storage: s.clone(),
            },
            plan::Action::Move {
                key,
                target: MoveTarget::Vm { vmid: other, .. },
                ..
            } => Write::Reassign {
                vmid: vm.vmid,
                target: *other,
                storage: storage_of(key).unwrap_or_default(),
            },
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
        Some(_) => cluster
            .storages_on(node)
            .map(|s| (s.storage.clone(), s.content.clone()))
            .collect(),
        None => match client.get(&format!("/nodes/{node}/storage"), &[]) {
            Ok(serde_json::Value::Array(list)) => list
                .iter()
                .filter_map(|s| {
                    let content = s["content"]
                        .as_str()
                        .unwrap_or("")
                        .split(',')
                        .map(str::to_string)
                        .collect();
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
    let usable: Vec<&str> = listed
        .iter()
        .filter(|(_, c)| holds_images(c))
        .map(|(s, _)| s.as_str())
        .collect();
    match listed.iter().find(|(s, _)| s == storage) {
        Some((_, content)) if holds_images(content) => Ok(()),
        Some((_, content)) => Err(format!(
            "storage {storage} on node {node} does not hold disk images (content: {}); use one of: {}",
            content.join(","),
            usable.join(", ")
        )),
        None => Err(format!(
            "storage {storage} does not exist on node {node}; storages for disk images there: {}",
            usable.join(", ")
        )),
    }
}

fn read_config(client: &Client, guest: &Guest) -> Result<VmConfig, Failure> {
    Ok(VmConfig::new(
        guest.vmid,
        guest.node.to_string(),
        read_raw_config(client, guest.vmid, &guest.node)?,
    ))
}

/// A VM's config read again (after a lost answer).
fn read_again(client: &Client, vm: &VmConfig) -> Result<VmConfig, Failure> {
    Ok(VmConfig::new(
        vm.vmid,
        vm.node.clone(),
        read_raw_config(client, vm.vmid, &vm.node)?,
    ))
}

/// The config after the writes, from `GET .../pending`, so a change that waits for a
/// restart is known as such.
fn read_back(client: &Client, vmid: u32, node: &str) -> Result<VmConfig, Failure> {
    let items = client
        .get(&format!("/nodes/{node}/qemu/{vmid}/pending"), &[])
        .map_err(|e| {
            Failure::new(format!("The change was made, but reading VM {vmid} back failed: {e}")).with("vmid", vmid)
        })?;
    Ok(VmConfig::from_pending(vmid, node, &items))
}

fn read_raw_config(client: &Client, vmid: u32, node: &str) -> Result<serde_json::Value, Failure> {
    vm_task::read_config(client, node, vmid, InfoWording::Vmid)
}
