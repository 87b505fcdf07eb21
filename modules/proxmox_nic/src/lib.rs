//! The `ferrox.proxmox.proxmox_nic` module: one network interface (`netN`) of a QEMU VM.
//!
//! Flow: read the task ([`task`]), find the VM and its node (one
//! `GET /cluster/resources`), read its config (one GET), compute the [`plan`] (pure),
//! then report it (check mode, or nothing to do) or write it with one
//! `PUT .../config` guarded by the config `digest`.

mod docs;
pub mod options;
pub mod plan;
pub mod task;

use serde_json::Value;

use ferrox_ansible::options::{ModuleSpec, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::listing_probe::LookupTargets;
use ferrox_cluster::vm::{Guest, ListingQuery};
use ferrox_dryrun::Effect;
use ferrox_pve_client::client::Client;
use ferrox_pve_client::recover;
use ferrox_pve_rules::hotplug;
use ferrox_pve_rules::pending::{self, PendingEntry};
use ferrox_pve_rules::privileges::Write;
use ferrox_pve_rules::unknown;
use ferrox_run::connection::{ConnectionParams, FromOptions};
use ferrox_run::name_index;
use ferrox_run::privileges::{self, Gate, Target};
use ferrox_run::vm_task::{self, Effects, InfoWording, LockWording, Lookup};
use ferrox_run::SharedRunState;

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
    vm_task::with_effects(m, run_task)
}

/// The task: locate the VM, read its config, plan, gate, then predict or write.
fn run_task(m: &mut Module, effects: &mut Effects) -> Result<Output, Failure> {
    let task = NicTask::from_params(&m.params)?;
    let conn = ConnectionParams::from_params(&m.params)?;
    let client = m.connect(&conn)?;
    let sought = LookupTargets::lookup(task.vmid, task.name.as_deref());
    let query = ListingQuery::lookup(task.vmid, task.name.as_deref(), &sought);
    let guests = name_index::read(m, &client, &conn, &query)
        .map_err(|e| Failure::new(format!("Unable to retrieve list of VMs: {e}")))?
        .cluster
        .guests;
    let lookup = Lookup {
        vmid: task.vmid,
        name: task.name.as_deref(),
        prefer_node: None,
    };
    let guest = vm_task::locate_qemu(&client, &guests, &lookup, "proxmox_nic manages NICs of QEMU VMs")?;
    let vmid = guest.vmid;
    // A running VM may already hold pending changes: read them with the config (one call).
    let running = is_running(guest);
    let (config, already_pending) = read_config(&client, &guest.node, vmid, running, &task.interface)
        .map_err(|e| vm_task::info_failure(vmid, InfoWording::WithVmidEquals, e))?;
    let current = text(&config, &task.interface);
    let plan = plan::plan(&task, vmid, current.as_deref()).map_err(|e| Failure::new(e).with("vmid", vmid))?;
    for w in &plan.warnings {
        m.warn(w.clone());
    }
    let Some(action) = plan.action.clone() else {
        return Ok(report(&plan, vmid, &task, false));
    };
    // A running VM without the network hotplug feature keeps some NIC changes pending,
    // and a NIC that already has a pending change stays pending whatever changes next.
    let predicted_pending = running
        && (already_pending
            || hotplug::stays_pending(
                &task.interface,
                current.as_deref(),
                plan.after.as_deref(),
                &hotplug::features(text(&config, "hotplug").as_deref()),
            ));
    vm_task::refuse_locked(vmid, vm_task::config_lock(&config), false, LockWording::Vmid)?;
    require_privileges(
        m,
        effects,
        &client,
        &conn,
        guest,
        write_of(&action, vmid, current),
        plan.new_bridge.as_deref(),
    )?;
    if m.check_mode {
        warn_pending(m, &task, vmid, predicted_pending);
        effects.record(
            m.check_mode,
            effect(&action, &plan, vmid, &guest.node, predicted_pending),
        );
        return Ok(report(&plan, vmid, &task, predicted_pending));
    }
    write_reconciled(m, &client, &task, guest, &action, &config)?;
    let (plan, pending) = read_result(&client, &task, guest, plan)?;
    warn_pending(m, &task, vmid, pending);
    Ok(report(&plan, vmid, &task, pending))
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

/// Whether PVE will let the caller make the change (the bridge's SDN.Use included),
/// and a new bridge exists on the node.
fn require_privileges(
    m: &mut Module,
    effects: &mut Effects,
    client: &Client,
    conn: &ConnectionParams,
    guest: &Guest,
    write: Write,
    new_bridge: Option<&str>,
) -> Result<(), Failure> {
    let vmid = guest.vmid;
    let gate = Gate::new(client, conn);
    let target = Target {
        vmid,
        node: &guest.node,
        planned: m.plan().is_some_and(|p| p.is_planned(vmid)),
    };
    effects.require(m, &gate, &target, &[write])?;
    if let Some(bridge) = new_bridge {
        check_bridge(client, &guest.node, bridge, &gate).map_err(|e| Failure::new(e).with("vmid", vmid))?;
        for w in gate.take_warnings() {
            m.warn(w);
        }
    }
    Ok(())
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

fn warn_pending(m: &mut Module, task: &NicTask, vmid: u32, pending: bool) {
    if pending {
        m.warn(format!(
            "{} of VM {vmid} is running and has no network hotplug: the change is pending until the VM restarts (ferrox.proxmox.proxmox_kvm with state: restarted)",
            task.interface
        ));
    }
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
