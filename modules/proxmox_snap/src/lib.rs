//! The `ferrox.proxmox.proxmox_snap` module: take, remove or roll back one snapshot of a
//! QEMU VM.
//!
//! A [`Task`] the one driver runs ([`driver`]): observe finds the VM (one
//! `GET /cluster/resources`, or the run's name index), reads its config and its snapshot
//! list (and, for a rollback, its power state); the [`plan`] is pure (idempotent by
//! name; which old snapshots `retention` removes; whether a rollback stops the VM); the
//! guard is the config lock and the snapshot writes PVE checks; before a snapshot is
//! taken its disks' storages are checked for the snapshot feature ([`storage`]), before
//! a rollback whether a ZFS disk holds a later snapshot ([`rollback_check`]); the
//! writes are PVE tasks, each waited on before the next ([`execute`]).

mod docs;
mod execute;
mod options;
mod plan;
mod rollback_check;
mod storage;
mod task;

use serde_json::Value;

use ferrox_ansible::options::{ModuleSpec, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::vm::Guest;
use ferrox_dryrun::{Effect, SnapshotAction};
use ferrox_pve_rules::privileges::Write;
use ferrox_run::driver::{self, Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::{self, LockWording, Lookup};

use execute::Done;
use options::State;
use plan::{Action, Plan, Snapshot};
use task::SnapTask;

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_snap",
        short_description: "Take, remove or roll back a snapshot of a QEMU VM in Proxmox VE",
        description: docs::description(),
        version_added: "0.2.0",
        options: options::options(),
        rules: options::rules(),
        check_mode: (
            Support::Full,
            "Reads the VM's snapshots, lock and power state and reports exactly what a real run would do (C(changed) included, and the stop a rollback causes), writing nothing.",
        ),
        diff_mode: (Support::Full, "Shows the VM's snapshot names before and after."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_snap_info", "ferrox.proxmox.proxmox_kvm"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = SnapTask::from_params(&m.params)?;
    driver::run(m, task)
}

/// What a snapshot task reads: the VM, its config and snapshots, whether it runs.
pub(crate) struct Seen {
    guest: Guest,
    config: Value,
    snapshots: Vec<Snapshot>,
    running: bool,
}

impl Decided for Plan {
    fn changes(&self) -> bool {
        self.action.is_some()
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Task for SnapTask {
    type Seen = Seen;
    type Plan = Plan;
    type Done = Done;

    /// The VM, its config, its snapshot list, and for a rollback its power state.
    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let lookup = Lookup {
            vmid: self.vmid,
            name: self.hostname.as_deref(),
            prefer_node: None,
        };
        let guests = vm_task::listed_guests(cx.m, cx.client, cx.conn, &lookup)?;
        let guest = vm_task::locate_qemu(
            cx.client,
            &guests,
            &lookup,
            "ferrox.proxmox.proxmox_snap manages snapshots of QEMU VMs only (community.proxmox.proxmox_snap handles containers)",
        )?
        .clone();
        let (node, vmid) = (guest.node.to_string(), guest.vmid);
        let read_failure = |what: &str, e: &dyn std::fmt::Display| {
            Failure::new(format!("Reading the {what} of VM {vmid} failed: {e}")).with("vmid", vmid)
        };
        let config = cx
            .client
            .get(&format!("/nodes/{node}/qemu/{vmid}/config"), &[])
            .map_err(|e| read_failure("config", &e))?;
        let list = cx
            .client
            .get(&format!("/nodes/{node}/qemu/{vmid}/snapshot"), &[])
            .map_err(|e| read_failure("snapshots", &e))?;
        // The listing's power state may lag a start by PVE's 10 s broadcast; a rollback's
        // stop is predicted from the VM's own status.
        let running = if self.state == State::Rollback {
            let status = cx
                .client
                .get(&format!("/nodes/{node}/qemu/{vmid}/status/current"), &[])
                .map_err(|e| read_failure("status", &e))?;
            status["status"] == "running"
        } else {
            guest.status.as_deref() == Some("running")
        };
        Ok(Seen {
            guest,
            config,
            snapshots: plan::read_list(&list),
            running,
        })
    }

    fn plan(&self, seen: &Seen) -> Result<Plan, Failure> {
        let vm = plan::Vm {
            vmid: seen.guest.vmid,
            template: seen.guest.template || is_template(&seen.config),
            running: seen.running,
            snapshots: &seen.snapshots,
        };
        plan::plan(self, vm).map_err(|e| Failure::new(e).with("vmid", seen.guest.vmid))
    }

    fn guard<'s>(&self, seen: &'s Seen, plan: &Plan) -> Guard<'s> {
        let vmid = seen.guest.vmid;
        let writes = match &plan.action {
            Some(Action::Rollback { .. }) => vec![Write::Rollback {
                vmid,
                start: self.start,
            }],
            Some(_) => vec![Write::Snapshot { vmid }],
            None => vec![],
        };
        Guard {
            subject: Subject::Vm {
                vmid,
                node: &seen.guest.node,
            },
            lock: Some(Lock {
                held: vm_task::config_lock(&seen.config),
                skiplock: false,
                wording: LockWording::Vmid,
            }),
            writes,
        }
    }

    /// A snapshot is taken only when every disk's storage can snapshot it; a rollback
    /// only when no disk's storage refuses it (ZFS: a later snapshot on the disk).
    fn check(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &Plan) -> Result<(), Failure> {
        let (node, vmid) = (&*seen.guest.node, seen.guest.vmid);
        let refused = match plan.action {
            Some(Action::Take { .. }) => storage::check(cx.client, node, vmid, &seen.config),
            Some(Action::Rollback { .. }) => {
                rollback_check::check(cx.client, (node, vmid), &self.snapname, &seen.snapshots, &seen.config)
            }
            _ => Ok(()),
        };
        refused.map_err(|e| Failure::new(e).with("vmid", vmid))
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, seen: &Seen, plan: &Plan) -> Result<Prediction, Failure> {
        let (vmid, node) = (seen.guest.vmid, seen.guest.node.to_string());
        // PVE saves the RAM only from a running VM.
        let vmstate = self.vmstate && seen.running;
        let snapshot = |name: &str, action: SnapshotAction, description: &str| Effect::Snapshot {
            vmid,
            node: node.clone(),
            name: name.to_string(),
            action,
            description: description.to_string(),
            vmstate: vmstate && action == SnapshotAction::Take,
        };
        let name = self.snapname.as_str();
        let mut effects = Vec::new();
        match &plan.action {
            Some(Action::Take { retention_removes }) => {
                effects.push(snapshot(
                    name,
                    SnapshotAction::Take,
                    self.description.as_deref().unwrap_or(""),
                ));
                effects.extend(
                    retention_removes
                        .iter()
                        .map(|r| snapshot(r, SnapshotAction::Remove, "")),
                );
            }
            Some(Action::Remove) => effects.push(snapshot(name, SnapshotAction::Remove, "")),
            Some(Action::Rollback { stops, starts, .. }) => {
                effects.push(snapshot(name, SnapshotAction::Rollback, ""));
                let status = if *starts {
                    Some("running")
                } else {
                    stops.then_some("stopped")
                };
                effects.extend(status.map(|status| Effect::Power {
                    vmid,
                    node: node.clone(),
                    status: status.to_string(),
                    applies_pending: false,
                }));
            }
            None => {}
        }
        Ok(Prediction {
            effects,
            warnings: Vec::new(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &Plan) -> Result<Done, Failure> {
        execute::execute(cx, self, &seen.guest, plan)
    }

    fn report(self, _cx: &mut Cx<'_>, seen: &Seen, plan: &Plan, outcome: Outcome<Done>) -> Result<Output, Failure> {
        let vmid = seen.guest.vmid;
        let (changed, msg, done) = match outcome {
            Outcome::Unchanged => (false, plan.msg.clone(), Done::default()),
            Outcome::Predicted => (true, plan.predicted_msg.clone(), Done::predicted(plan)),
            Outcome::Done(done) => (true, plan.msg.clone(), done),
        };
        let out = Output::new(changed, msg)
            .with("vmid", vmid)
            .with("snapname", &self.snapname)
            .with("removed", &done.removed);
        let out = match self.state {
            State::Rollback => out.with("stopped", done.stopped).with("started", done.started),
            _ => out,
        };
        Ok(if changed { out.with_diff(plan.diff.clone()) } else { out })
    }
}

fn is_template(config: &Value) -> bool {
    matches!(config.get("template"), Some(Value::Number(n)) if n.as_u64() == Some(1))
        || config.get("template").and_then(Value::as_str) == Some("1")
}
