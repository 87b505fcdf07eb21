//! What tasks on one guest share (proxmox_kvm, proxmox_disk, proxmox_nic, proxmox_snap,
//! proxmox_snap_info): read the listing that holds it ([`listed_guests`]), locate the
//! VM (by vmid, else by name, preferring a node among same-named VMs), read its config,
//! word the refusal of a locked VM, and buffer the check-mode effects; the one driver
//! ([`crate::driver`]) runs the steps in order.
//!
//! The steps are here once, and so are their failures: the module passes its wording
//! where community.proxmox 1.6 (or ferrox, where 1.6 had none) words a module's failure
//! its own way ([`InfoWording`], [`LockWording`]). The decisions are pure functions
//! ([`find`], [`lock_refusal`], [`Effects::record`]); the rest adds the I/O around them.
//!
//! Effects are buffered, never recorded straight into the run: a task reads back what it
//! planned (proxmox_kvm predicts the config it reports from its own effects, with or
//! without a run's plan), and [`Effects::hand_to`] gives them to the run once, on
//! success and failure alike (the protocol keeps only a refusal of a failed task).

use std::fmt::Display;

use ferrox_ansible::protocol::{Failure, Module};
use ferrox_cluster::duplicates;
use ferrox_cluster::listing_probe::LookupTargets;
use ferrox_cluster::per_node;
use ferrox_cluster::vm::{self, Guest, GuestType, ListingQuery};
use ferrox_dryrun::Effect;
use ferrox_pve_client::client::Client;
use ferrox_pve_client::connection::ConnectionParams;
use ferrox_pve_rules::privileges::Write;
use serde_json::Value;

use crate::name_index;
use crate::privileges::{Gate, Target};
use crate::SharedRunState;

/// How a module words a failed read of its VM ("Getting information for VM ... failed").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoWording {
    /// `VM with vmid = 100` (1.6's proxmox_kvm and proxmox_nic).
    WithVmidEquals,
    /// `VM 100` (1.6's proxmox_disk).
    Vmid,
}

/// The failure of reading VM `vmid` (its config, pending values, cloud-init drive), in
/// the module's wording, with `vmid`.
pub fn info_failure(vmid: u32, wording: InfoWording, e: impl Display) -> Failure {
    let vm = match wording {
        InfoWording::WithVmidEquals => format!("with vmid = {vmid}"),
        InfoWording::Vmid => vmid.to_string(),
    };
    Failure::new(format!("Getting information for VM {vm} failed with exception: {e}")).with("vmid", vmid)
}

/// How a module words the refusal of a locked VM (1.6 has none: PVE's own error came
/// after the first write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockWording<'a> {
    /// `VM 100 is locked (backup): ..., then run the task again` (proxmox_disk, proxmox_nic).
    Vmid,
    /// `{prefix}VM is locked (backup): ... and run the task again (root@pam can override
    /// with skiplock: true)`: the action that is refused first (`Unable to start VM 100: `),
    /// and the override (proxmox_kvm).
    Action {
        /// What was refused, ending in `: ` (or empty).
        prefix: &'a str,
    },
}

/// The refusal of a VM holding `lock` (`backup`, `migrate`, ...), unless `skiplock`
/// lets PVE change it anyway; `None`: not locked, or overridden. Pure.
pub fn lock_refusal(vmid: u32, lock: Option<&str>, skiplock: bool, wording: LockWording) -> Option<Failure> {
    let lock = lock.filter(|_| !skiplock)?;
    let msg = match wording {
        LockWording::Vmid => format!(
            "VM {vmid} is locked ({lock}): wait until the {lock} operation has finished, then run the task again"
        ),
        LockWording::Action { prefix } => format!(
            "{prefix}VM is locked ({lock}): wait until the {lock} operation has finished and run the task again (root@pam can override with skiplock: true)"
        ),
    };
    Some(Failure::new(msg).with("vmid", vmid))
}

/// The `lock` of a VM's config, as PVE writes it.
pub fn config_lock(config: &Value) -> Option<&str> {
    config.get("lock").and_then(Value::as_str)
}

/// What a task names its VM by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lookup<'a> {
    /// The vmid (wins over the name).
    pub vmid: Option<u32>,
    /// The name, among QEMU VMs.
    pub name: Option<&'a str>,
    /// When several QEMU VMs share the name, the one on this node (proxmox_kvm's `node`).
    pub prefer_node: Option<&'a str>,
}

/// The guest `lookup` names: by vmid (of any kind: the caller words a container's
/// refusal), else the QEMU VM by name; `Ok(None)`: none. A name several VMs share fails
/// (unless one of them is on `prefer_node`). Pure.
pub fn find<'a>(guests: &'a [Guest], lookup: &Lookup) -> Result<Option<&'a Guest>, String> {
    match (lookup.vmid, lookup.name) {
        (Some(id), _) => Ok(vm::by_vmid(guests, id)),
        (None, Some(name)) => per_node::qemu_by_name_on(guests, name, lookup.prefer_node),
        (None, None) => Ok(None),
    }
}

/// The guests the cluster's listing holds for `lookup`: one `GET /cluster/resources`, or
/// the run's name index ([`name_index::read`]); a failed read in 1.6's words.
pub fn listed_guests(
    m: &mut Module,
    client: &Client,
    conn: &ConnectionParams,
    lookup: &Lookup,
) -> Result<Vec<Guest>, Failure> {
    let sought = LookupTargets::lookup(lookup.vmid, lookup.name);
    let query = ListingQuery::lookup(lookup.vmid, lookup.name, &sought);
    Ok(name_index::read(m, client, conn, &query)
        .map_err(|e| Failure::new(format!("Unable to retrieve list of VMs: {e}")))?
        .cluster
        .guests)
}

/// [`find`], a shared name explained (which of the VMs are templates, where) in the
/// failure.
pub fn locate<'a>(client: &Client, guests: &'a [Guest], lookup: &Lookup) -> Result<Option<&'a Guest>, Failure> {
    find(guests, lookup).map_err(|e| match duplicates::explain(client, guests, lookup.name, &e) {
        Some(explained) => Failure::new(explained.msg).with("duplicates", explained.duplicates),
        None => Failure::new(e),
    })
}

/// [`locate`] of a QEMU VM that must exist, with 1.6's messages; a container fails,
/// `what_module_does` finishing the sentence (`proxmox_nic manages NICs of QEMU VMs`).
pub fn locate_qemu<'a>(
    client: &Client,
    guests: &'a [Guest],
    lookup: &Lookup,
    what_module_does: &str,
) -> Result<&'a Guest, Failure> {
    match (lookup.vmid, lookup.name, locate(client, guests, lookup)?) {
        (_, _, Some(g)) if g.kind != GuestType::Qemu => {
            Err(Failure::new(format!("{} is an LXC container; {what_module_does}", g.vmid)).with("vmid", g.vmid))
        }
        (_, _, Some(g)) => Ok(g),
        (Some(id), _, None) => Err(Failure::new(format!("VM with vmid {id} does not exist in cluster"))),
        (None, Some(name), None) => Err(Failure::new(format!("No VM with name {name} found"))),
        (None, None, None) => Err(Failure::new("one of the following is required: name, vmid")),
    }
}

/// `GET /nodes/{node}/qemu/{vmid}/config`, failing in the module's wording.
pub fn read_config(client: &Client, node: &str, vmid: u32, wording: InfoWording) -> Result<Value, Failure> {
    client
        .get(&format!("/nodes/{node}/qemu/{vmid}/config"), &[])
        .map_err(|e| info_failure(vmid, wording, e))
}

/// The effects a task would have, buffered while it runs (readable by the task) and
/// handed to the run once at the end ([`Effects::hand_to`]).
#[derive(Debug, Clone, Default)]
pub struct Effects(Vec<Effect>);

impl Effects {
    /// Buffers `effect` when the task runs in check mode; a real run plans nothing
    /// for later tasks. Pure.
    pub fn record(&mut self, check_mode: bool, effect: Effect) {
        if check_mode {
            self.0.push(effect);
        }
    }

    /// [`Effects::record`] of each of `effects`.
    pub fn record_all(&mut self, check_mode: bool, effects: impl IntoIterator<Item = Effect>) {
        for e in effects {
            self.record(check_mode, e);
        }
    }

    /// The effects buffered so far, in order.
    pub fn as_slice(&self) -> &[Effect] {
        &self.0
    }

    /// Holds `writes` to the privileges PVE will check ([`Gate::check`]): a refusal is
    /// buffered (in check mode it goes to the run's plan as a failed effect, so later
    /// tasks plan as if this one had not run) and returned as the failure; the gate's
    /// warnings go to `m`.
    pub fn require(
        &mut self,
        m: &mut Module,
        gate: &Gate,
        target: &Target<'_>,
        writes: &[Write],
    ) -> Result<(), Failure> {
        let verdict = gate.check(m.spec.name, target, writes).map_err(|refused| {
            let refused = *refused;
            self.record(m.check_mode, refused.effect);
            refused.failure
        });
        for w in gate.take_warnings() {
            m.warn(w);
        }
        verdict
    }

    /// Hands the buffered effects to the run ([`SharedRunState::plan_effect`]), emptying the
    /// buffer: the one place a VM task's effects reach the run.
    pub fn hand_to(&mut self, m: &mut Module) {
        for e in self.0.drain(..) {
            m.plan_effect(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn guests() -> Vec<Guest> {
        vm::parse_resources(&json!([
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1", "name": "web"},
            {"id": "qemu/101", "type": "qemu", "vmid": 101, "node": "pve2", "name": "web"},
            {"id": "qemu/102", "type": "qemu", "vmid": 102, "node": "pve1", "name": "db"},
            {"id": "lxc/200", "type": "lxc", "vmid": 200, "node": "pve2", "name": "db"},
        ]))
        .unwrap()
    }

    /// vmid, name, preferred node; the vmid found, or a part of the failure.
    type Case = (
        Option<u32>,
        Option<&'static str>,
        Option<&'static str>,
        Result<Option<u32>, &'static str>,
    );

    #[test]
    fn find_by_vmid_by_name_and_by_preferred_node() {
        let guests = guests();
        let cases: [Case; 10] = [
            (Some(100), None, None, Ok(Some(100))),
            (Some(100), Some("db"), None, Ok(Some(100))), // the vmid wins
            (Some(200), None, None, Ok(Some(200))),       // a container, for the caller to refuse
            (Some(999), None, None, Ok(None)),
            (None, Some("db"), None, Ok(Some(102))), // containers do not count by name
            (None, Some("nope"), None, Ok(None)),
            (
                None,
                Some("web"),
                None,
                Err("Multiple VMs with name web found (vmids 100, 101)"),
            ),
            (None, Some("web"), Some("pve2"), Ok(Some(101))),
            (None, Some("web"), Some("pve3"), Err("none of them on node pve3")),
            (None, None, Some("pve1"), Ok(None)),
        ];
        for (vmid, name, prefer_node, want) in cases {
            let lookup = Lookup {
                vmid,
                name,
                prefer_node,
            };
            let got = find(&guests, &lookup).map(|g| g.map(|g| g.vmid));
            match (&got, want) {
                (Ok(got), Ok(want)) => assert_eq!(*got, want, "{lookup:?}"),
                (Err(e), Err(want)) => assert!(e.contains(want), "{lookup:?}: {e}"),
                _ => panic!("{lookup:?}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn a_locked_vm_is_refused_unless_skiplock() {
        let action = LockWording::Action {
            prefix: "Unable to start VM 100: ",
        };
        let cases = [
            (None, false, LockWording::Vmid, None),
            (None, true, action, None),
            (Some("backup"), true, action, None),
            (
                Some("backup"),
                false,
                LockWording::Vmid,
                Some("VM 100 is locked (backup): wait until the backup operation has finished, then run the task again"),
            ),
            (
                Some("migrate"),
                false,
                action,
                Some("Unable to start VM 100: VM is locked (migrate): wait until the migrate operation has finished and run the task again (root@pam can override with skiplock: true)"),
            ),
        ];
        for (lock, skiplock, wording, want) in cases {
            let got = lock_refusal(100, lock, skiplock, wording);
            assert_eq!(
                got.as_ref().map(|f| f.msg.as_str()),
                want,
                "{lock:?} {skiplock} {wording:?}"
            );
        }
        assert_eq!(config_lock(&json!({"lock": "backup", "name": "web"})), Some("backup"));
        assert_eq!(config_lock(&json!({"name": "web"})), None);
    }

    #[test]
    fn getting_information_is_worded_per_module() {
        let cases = [
            (
                InfoWording::WithVmidEquals,
                "Getting information for VM with vmid = 100 failed with exception: 500 boom",
            ),
            (
                InfoWording::Vmid,
                "Getting information for VM 100 failed with exception: 500 boom",
            ),
        ];
        for (wording, want) in cases {
            assert_eq!(info_failure(100, wording, "500 boom").msg, want);
        }
    }

    #[test]
    fn effects_are_buffered_in_check_mode_only() {
        let remove = || Effect::Remove {
            vmid: 100,
            node: "pve1".into(),
        };
        for (check_mode, kept) in [(true, 2), (false, 0)] {
            let mut effects = Effects::default();
            effects.record(check_mode, remove());
            effects.record_all(check_mode, [remove()]);
            assert_eq!(effects.as_slice().len(), kept, "check_mode {check_mode}");
        }
    }
}
