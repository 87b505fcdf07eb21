//! The `ferrox.proxmox.proxmox_nic` module: one network interface (`netN`) of a QEMU VM.
//!
//! A [`Task`] the one driver runs ([`driver`]): observe finds the VM and its node (one
//! `GET /cluster/resources`) and reads its config (one GET); the [`plan`] is pure; the
//! guard is the config lock and the config write PVE checks; a new bridge is checked on
//! the node; the change is predicted in check mode, else written with one
//! `PUT .../config` guarded by the config `digest` and read back for the MAC PVE chose.

mod docs;
mod options;
mod plan;
mod task;

use serde_json::Value;

use ferrox_ansible::options::{ModuleSpec, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::vm::Guest;
use ferrox_dryrun::Effect;
use ferrox_pve_client::client::Client;
use ferrox_pve_client::recover;
use ferrox_pve_rules::hotplug;
use ferrox_pve_rules::pending::{self, PendingEntry};
use ferrox_pve_rules::privileges::Write;
use ferrox_pve_rules::unknown;
use ferrox_run::driver::{self, Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::privileges::{self, Gate};
use ferrox_run::vm_task::{self, InfoWording, LockWording, Lookup};

use plan::{Action, Plan};
use task::NicTask;

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_nic",
        short_description: "Manage one network interface of a QEMU VM in Proxmox VE",
        description: docs::description(),
        version_added: "0.1.0",
        options: options::options(),
        rules: options::rules(),
        check_mode: (
            Support::Full,
            "Reads the VM's live configuration and reports exactly what a real run would change, writing nothing.",
        ),
        diff_mode: (Support::Full, "Shows the interface's config entry before and after."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_kvm", "ferrox.proxmox.proxmox_disk"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = NicTask::from_params(&m.params)?;
    driver::run(m, task)
}

/// What a NIC task reads: the VM, its config as its next start will see it, and the
/// interface's entry.
pub struct Seen {
    guest: Guest,
    config: Value,
    /// The interface already has a change waiting for a restart.
    already_pending: bool,
    current: Option<String>,
}

/// The plan, and whether a running VM would keep the change pending.
pub struct NicPlan {
    plan: Plan,
    predicted_pending: bool,
}

impl Decided for NicPlan {
    fn changes(&self) -> bool {
        self.plan.changed()
    }

    fn warnings(&self) -> Vec<String> {
        self.plan.warnings.clone()
    }
}

impl Task for NicTask {
    type Seen = Seen;
    type Plan = NicPlan;
    /// The plan as written (the MAC PVE generated read back), and whether the change waits.
    type Done = (Plan, bool);

    /// The VM (one `GET /cluster/resources`, or the run's name index) and its config.
    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let lookup = Lookup {
            vmid: self.vmid,
            name: self.name.as_deref(),
            prefer_node: None,
        };
        let guests = vm_task::listed_guests(cx.m, cx.client, cx.conn, &lookup)?;
        let guest = vm_task::locate_qemu(cx.client, &guests, &lookup, "proxmox_nic manages NICs of QEMU VMs")?.clone();
        // A running VM may already hold pending changes: read them with the config (one call).
        let (config, already_pending) =
            read_config(cx.client, &guest.node, guest.vmid, is_running(&guest), &self.interface)
                .map_err(|e| vm_task::info_failure(guest.vmid, InfoWording::WithVmidEquals, e))?;
        let current = text(&config, &self.interface);
        Ok(Seen {
            guest,
            config,
            already_pending,
            current,
        })
    }

    fn plan(&self, seen: &Seen) -> Result<NicPlan, Failure> {
        let vmid = seen.guest.vmid;
        let plan = plan::plan(self, vmid, seen.current.as_deref()).map_err(|e| Failure::new(e).with("vmid", vmid))?;
        // A running VM without the network hotplug feature keeps some NIC changes pending,
        // and a NIC that already has a pending change stays pending whatever changes next.
        let predicted_pending = plan.changed()
            && is_running(&seen.guest)
            && (seen.already_pending
                || hotplug::stays_pending(
                    &self.interface,
                    seen.current.as_deref(),
                    plan.after.as_deref(),
                    &hotplug::features(text(&seen.config, "hotplug").as_deref()),
                ));
        Ok(NicPlan {
            plan,
            predicted_pending,
        })
    }

    fn guard<'s>(&self, seen: &'s Seen, plan: &NicPlan) -> Guard<'s> {
        let vmid = seen.guest.vmid;
        let writes = plan.plan.action.iter().map(|a| write_of(a, vmid, seen.current.clone()));
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
            writes: writes.collect(),
        }
    }

    /// A new bridge must exist on the node.
    fn check(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &NicPlan) -> Result<(), Failure> {
        let Some(bridge) = plan.plan.new_bridge.as_deref() else {
            return Ok(());
        };
        check_bridge(cx.client, &seen.guest.node, bridge, &cx.gate)
            .map_err(|e| Failure::new(e).with("vmid", seen.guest.vmid))
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, seen: &Seen, plan: &NicPlan) -> Result<Prediction, Failure> {
        let (vmid, pending) = (seen.guest.vmid, plan.predicted_pending);
        let effects = plan
            .plan
            .action
            .iter()
            .map(|a| effect(a, &plan.plan, vmid, &seen.guest.node, pending));
        Ok(Prediction {
            effects: effects.collect(),
            warnings: pending_warning(self, vmid, pending).into_iter().collect(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &NicPlan) -> Result<(Plan, bool), Failure> {
        let Some(action) = &plan.plan.action else {
            return Ok((plan.plan.clone(), false));
        };
        write_reconciled(cx.m, cx.client, self, &seen.guest, action, &seen.config)?;
        let (plan, pending) = read_result(cx.client, self, &seen.guest, plan.plan.clone())?;
        if let Some(w) = pending_warning(self, seen.guest.vmid, pending) {
            cx.warn(w);
        }
        Ok((plan, pending))
    }

    fn report(
        self,
        _cx: &mut Cx<'_>,
        seen: &Seen,
        plan: &NicPlan,
        outcome: Outcome<(Plan, bool)>,
    ) -> Result<Output, Failure> {
        let vmid = seen.guest.vmid;
        Ok(match outcome {
            Outcome::Unchanged => report(&plan.plan, vmid, &self, false),
            Outcome::Predicted => report(&plan.plan, vmid, &self, plan.predicted_pending),
            Outcome::Done((done, pending)) => report(&done, vmid, &self, pending),
        })
    }
}

fn is_running(guest: &Guest) -> bool {
    guest.status.as_deref() == Some("running")
}

/// The change as PVE checks it (privileges.rs), against the NIC's `current` value.
fn write_of(action: &Action, vmid: u32, current: Option<String>) -> Write {
    match action {
        Action::Set { key, value } => Write::Config {
            vmid,
            set: vec![(key.clone(), value.clone(), current)],
            delete: vec![],
        },
        Action::Delete { key } => Write::Config {
            vmid,
            set: vec![],
            delete: vec![(key.clone(), current.unwrap_or_default())],
        },
    }
}

/// Writes the change with one `PUT .../config` guarded by the config digest. After a
/// lost answer the config is read again and re-planned: a change it shows made is not
/// sent again, and the new digest keeps the rest from being applied twice.
fn write_reconciled(
    m: &mut Module,
    client: &Client,
    task: &NicTask,
    guest: &Guest,
    action: &Action,
    config: &Value,
) -> Result<(), Failure> {
    let (vmid, node) = (guest.vmid, &guest.node);
    let (mut key, mut value, mut rest) = form_of(action, config);
    for resend in 0.. {
        let mut form: Vec<(&str, String)> = vec![(key.as_str(), value.clone())];
        form.extend(rest.iter().cloned());
        match client.put(&format!("/nodes/{node}/qemu/{vmid}/config"), &form) {
            Ok(_) => return Ok(()),
            Err(e) if e.answer_lost() && resend < recover::MAX_RESENDS => {
                let (again, _) = read_config(client, node, vmid, is_running(guest), &task.interface)
                    .map_err(|e| write_failure(task, vmid, "reading it back: ", &e))?;
                let replan = plan::plan(task, vmid, text(&again, &task.interface).as_deref())
                    .map_err(|e| Failure::new(e).with("vmid", vmid))?;
                match &replan.action {
                    None => {
                        m.warn(recover::warning(
                            &e,
                            &format!("the config of VM {vmid} shows the change of {} made", task.interface),
                        ));
                        return Ok(());
                    }
                    Some(next) => {
                        m.warn(recover::warning(
                            &e,
                            &format!(
                                "the config of VM {vmid} lacks the change of {}; sent again",
                                task.interface
                            ),
                        ));
                        (key, value, rest) = form_of(next, &again);
                    }
                }
            }
            Err(e) => return Err(write_failure(task, vmid, "", &e)),
        }
    }
    unreachable!("the loop returns")
}

/// The change as form fields: its key and value (`delete` and the key for a removal),
/// and the digest of the config it was planned against.
fn form_of(action: &Action, config: &Value) -> (String, String, Vec<(&'static str, String)>) {
    let mut form: Vec<(&'static str, String)> = Vec::new();
    let (key, value) = match action {
        Action::Set { key, value } => (key.clone(), value.clone()),
        Action::Delete { key } => ("delete".to_string(), key.clone()),
    };
    if let Some(digest) = text(config, "digest") {
        form.push(("digest", digest));
    }
    (key, value, form)
}

/// A failed write (or read back) in the task's words: `what` failed, then PVE's answer.
fn write_failure(task: &NicTask, vmid: u32, what: &str, e: &dyn std::fmt::Display) -> Failure {
    let verb = if task.absent { "delete" } else { "change" };
    Failure::new(format!(
        "Unable to {verb} nic {} on VM with vmid {vmid}: {what}{e}",
        task.interface
    ))
    .with("vmid", vmid)
}

/// What PVE made of the change, read back once: whether it waits for a restart (a
/// running VM), and the MAC PVE generated for a NIC given none.
fn read_result(client: &Client, task: &NicTask, guest: &Guest, mut plan: Plan) -> Result<(Plan, bool), Failure> {
    let (vmid, node) = (guest.vmid, &guest.node);
    let fail = |e: &dyn std::fmt::Display| write_failure(task, vmid, "reading it back: ", e);
    let mut pending = false;
    if is_running(guest) {
        // What the VM took and what waits for a restart, and a generated MAC, in one read.
        let entries = client
            .get(&format!("/nodes/{node}/qemu/{vmid}/pending"), &[])
            .map_err(|e| fail(&e))?;
        let entry = pending::entries(&entries).into_iter().find(|e| e.key == task.interface);
        pending = entry.as_ref().is_some_and(PendingEntry::waits);
        if plan.mac.is_none() {
            plan.after = entry
                .as_ref()
                .and_then(|e| e.pending.as_ref().or(e.value.as_ref()))
                .and_then(value_text);
            plan.mac = plan.after.as_deref().and_then(plan::mac_of);
        }
    } else if plan.mac.is_none() {
        // A new NIC without a given MAC: read back the one PVE generated.
        let after = client
            .get(&format!("/nodes/{node}/qemu/{vmid}/config"), &[])
            .map_err(|e| fail(&e))?;
        plan.after = text(&after, &task.interface);
        plan.mac = plan.after.as_deref().and_then(plan::mac_of);
    }
    if let Some(after) = plan.after.clone().filter(|a| !unknown::is_unknown(a)) {
        // The diff shows the MAC PVE gave the NIC, not the dry run's placeholder.
        if plan.diff.after.contains_key(&task.interface) {
            plan.diff.after.insert(task.interface.clone(), Value::String(after));
        }
    }
    Ok((plan, pending))
}

/// The planned change for the playbook run's plan.
fn effect(action: &Action, plan: &Plan, vmid: u32, node: &str, pending: bool) -> Effect {
    let mut e = Effect::config(vmid, node);
    if let Effect::Config {
        set,
        delete,
        pending: waiting,
        what,
        ..
    } = &mut e
    {
        let key = match action {
            Action::Set { key, .. } => {
                set.insert(key.clone(), Value::String(plan.after.clone().unwrap_or_default()));
                key
            }
            Action::Delete { key } => {
                delete.push(key.clone());
                key
            }
        };
        if pending {
            waiting.push(key.clone());
        }
        what.extend(plan.changes.iter().map(|c| format!("nic {c}")));
    }
    e
}

/// The VM's config as its next start will see it (pending changes applied, pending
/// deletions gone) and whether `interface` has a pending change. For a running VM this
/// comes from `GET .../pending`, which shows both; a stopped VM has nothing pending.
fn read_config(
    client: &Client,
    node: &str,
    vmid: u32,
    running: bool,
    interface: &str,
) -> Result<(Value, bool), ferrox_pve_client::client::ApiError> {
    if !running {
        return Ok((client.get(&format!("/nodes/{node}/qemu/{vmid}/config"), &[])?, false));
    }
    let entries = client.get(&format!("/nodes/{node}/qemu/{vmid}/pending"), &[])?;
    let mut config = serde_json::Map::new();
    let mut pending = false;
    for entry in pending::entries(&entries) {
        if entry.key == interface && entry.waits() {
            pending = true;
        }
        if let Some(v) = entry.at_next_start() {
            config.insert(entry.key.clone(), v.clone());
        }
    }
    Ok((Value::Object(config), pending))
}

/// The warning of a change a running VM keeps pending until it restarts.
fn pending_warning(task: &NicTask, vmid: u32, pending: bool) -> Option<String> {
    pending.then(|| format!(
        "{} of VM {vmid} is running and has no network hotplug: the change is pending until the VM restarts (ferrox.proxmox.proxmox_kvm with state: restarted)",
        task.interface
    ))
}

fn report(plan: &Plan, vmid: u32, task: &NicTask, pending: bool) -> Output {
    let out = Output::new(plan.changed(), plan.msg.clone())
        .with("vmid", vmid)
        .with("interface", &task.interface)
        .with("mac", &plan.mac)
        .with("nic_config", &plan.after)
        .with("changes", &plan.changes)
        .with("pending", pending)
        .with_diff(plan.diff.clone());
    match &plan.after {
        Some(after) if plan.mac.is_none() && unknown::is_unknown(after) => out.with(unknown::RESULT_KEY, ["mac"]),
        _ => out,
    }
}

/// A bridge that does not exist on the node fails before anything is written. When the
/// node's interfaces cannot be listed (no `Sys.Audit`), the check is skipped. PVE leaves
/// out bridges the caller has no SDN privilege on: `hidden` says so when that may be why.
fn check_bridge(client: &Client, node: &str, bridge: &str, gate: &Gate<'_>) -> Result<(), String> {
    let Ok(Value::Array(ifaces)) = client.get(&format!("/nodes/{node}/network"), &[("type", "any_bridge".into())])
    else {
        return Ok(());
    };
    let names: Vec<&str> = ifaces.iter().filter_map(|i| i["iface"].as_str()).collect();
    if names.is_empty() || names.contains(&bridge) {
        return Ok(());
    }
    Err(privileges::missing_bridge(
        bridge,
        node,
        &names,
        gate.hidden_bridge_reason(bridge).as_deref(),
    ))
}

fn text(config: &Value, key: &str) -> Option<String> {
    value_text(config.get(key)?)
}

/// A config value as PVE's text: a string as it is, a number or boolean printed.
fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}
