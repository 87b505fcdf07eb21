//! The plan of one `ansible-playbook` run and each VM as the plan leaves it: the
//! effects recorded so far, folded per vmid. Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::effect::{Effect, SnapshotAction};
use ferrox_pve_rules::snapshot;

/// The plan as the controller hands it to a module (`_ferrox_plan`): every effect
/// recorded by the earlier check-mode tasks of the run, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// The effects, in the order the tasks planned them.
    #[serde(default)]
    pub effects: Vec<Effect>,
}

impl RunPlan {
    /// Reads `_ferrox_plan`; the message names what is wrong (a shim bug, never user input).
    pub fn from_value(value: &Value) -> Result<RunPlan, String> {
        serde_json::from_value(value.clone())
            .map_err(|e| format!("the check-mode plan handed to the module (_ferrox_plan) is not readable: {e}"))
    }

    /// The vmids the plan has taken for new VMs: a later prediction must not use them,
    /// even when the VM is planned to be removed again.
    pub fn reserved(&self) -> BTreeSet<u32> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Create { vmid, .. } => Some(*vmid),
                _ => None,
            })
            .collect()
    }

    /// The files the plan puts on storages or removes, the last word per node and volid.
    pub fn volumes(&self) -> Vec<PlannedVolume> {
        let mut out: Vec<PlannedVolume> = Vec::new();
        for e in &self.effects {
            let Effect::Volume {
                node,
                volid,
                content,
                size,
                shared,
                removed,
                ..
            } = e
            else {
                continue;
            };
            out.retain(|v| !(v.volid == *volid && (v.node == *node || *shared)));
            out.push(PlannedVolume {
                node: node.clone(),
                volid: volid.clone(),
                content: content.clone(),
                size: *size,
                shared: *shared,
                removed: *removed,
            });
        }
        out
    }

    /// The ACL entries the plan sets or removes, the pools it makes, describes or
    /// removes, and the storages it adds to pools or takes out, in the order planned.
    pub fn user_cfg(&self) -> Vec<Effect> {
        self.effects
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Effect::Acl { .. } | Effect::PoolConfig { .. } | Effect::PoolStorage { .. }
                )
            })
            .cloned()
            .collect()
    }

    /// Every VM the plan touches, as the plan leaves it.
    pub fn vms(&self) -> BTreeMap<u32, PlannedVm> {
        let mut vms: BTreeMap<u32, PlannedVm> = BTreeMap::new();
        for effect in &self.effects {
            if matches!(effect, Effect::Refused { .. }) {
                continue;
            }
            let Some(vmid) = effect.vmid() else { continue };
            match effect {
                Effect::Create {
                    node,
                    name,
                    config,
                    clone_of,
                    ha_state,
                    ..
                } => {
                    let mut vm = PlannedVm::created(vmid, node, name.clone(), config.clone(), *clone_of);
                    vm.ha_state = ha_state.clone();
                    vms.insert(vmid, vm);
                }
                other => vms
                    .entry(vmid)
                    .or_insert_with(|| PlannedVm::existing(vmid, node_of(other)))
                    .apply(other),
            }
        }
        vms
    }
}

fn node_of(e: &Effect) -> &str {
    match e {
        Effect::Create { node, .. }
        | Effect::Config { node, .. }
        | Effect::Power { node, .. }
        | Effect::Template { node, .. }
        | Effect::Migrate { node, .. }
        | Effect::Remove { node, .. }
        | Effect::Pool { node, .. }
        | Effect::Snapshot { node, .. }
        | Effect::Refused { node, .. }
        | Effect::Volume { node, .. } => node,
        Effect::Acl { .. } | Effect::PoolConfig { .. } | Effect::PoolStorage { .. } => "",
    }
}

/// One file on a storage as the plan leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedVolume {
    /// The node the file was put on or removed from.
    pub node: String,
    /// The file, `storage:content/name`.
    pub volid: String,
    /// Its content type (`iso`, `vztmpl`, `import`).
    pub content: String,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
    /// Whether the storage is shared, so every node sees the file.
    pub shared: bool,
    /// Whether the plan removes it (else it puts it there).
    pub removed: bool,
}

impl PlannedVolume {
    /// Whether a content listing of `storage` on `node` shows this file's fate.
    pub fn seen_from(&self, node: &str, storage: &str) -> bool {
        self.volid.split(':').next() == Some(storage) && (self.shared || self.node == node)
    }
}

/// One VM with the plan applied. For a VM that exists, only the differences are known
/// here; the overlay lays them over what PVE answers.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedVm {
    /// The VM's vmid.
    pub vmid: u32,
    /// Where the VM is after the plan (a planned migration moves it).
    pub node: String,
    /// Where PVE has it now (for reading an existing VM).
    pub real_node: String,
    /// Created by the plan: PVE does not know it; `base` is its whole config.
    pub created: bool,
    /// The config the plan starts from: a created VM's whole config, empty for a VM PVE has.
    pub base: Map<String, Value>,
    /// The template a planned clone is made from.
    pub clone_of: Option<u32>,
    /// Keys written (the config at next start), and keys deleted.
    pub set: Map<String, Value>,
    /// Keys the plan deletes.
    pub deleted: BTreeSet<String>,
    /// Keys whose planned change waits for a restart: new value, or `None` for a deletion.
    pub pending: BTreeMap<String, Option<Value>>,
    /// Keys whose pending change (PVE's own too) is reverted.
    pub reverted: BTreeSet<String>,
    /// A restart applies every pending change, PVE's own included.
    pub pending_applied: bool,
    /// `running`, `stopped`, `paused`, `hibernated`; `None`: as PVE says.
    pub status: Option<String>,
    /// Whether the plan destroys the VM.
    pub removed: bool,
    /// The pool the plan leaves the VM in (`Some(None)`: in no pool); `None`: as PVE says.
    pub pool: Option<Option<String>>,
    /// What changes, in words, for the plan summary and messages.
    pub what: Vec<String>,
    /// The state of the HA resource a planned create adds; `None`: as PVE says.
    pub ha_state: Option<String>,
    /// Snapshots the plan takes (oldest first) or removes, the last word per name.
    pub snapshots: Vec<PlannedSnapshot>,
    /// The snapshot the plan rolls back to or takes last: the config's `parent` after it.
    pub snapshot_parent: Option<String>,
    /// What a planned rollback restored the config to; `set` and `deleted` then hold only
    /// what the plan changes after it (and the notes and unused disks a rollback keeps).
    pub restored: Option<Restored>,
}

/// The config a planned rollback gives a VM PVE has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// A snapshot the plan takes: PVE's config in effect with the plan's changes then
    /// (those are in `set` and `deleted`).
    Planned,
    /// A snapshot PVE has: its section (`GET config?snapshot=<name>`).
    Pve(String),
}

/// A snapshot as the plan leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedSnapshot {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Whether the plan removes it (else it takes it).
    pub removed: bool,
    /// Taken with the VM's RAM.
    pub vmstate: bool,
    /// The plan's changes in effect when it was taken (values set, keys deleted; what
    /// waited for a restart left out): its section is the config then.
    pub set: Map<String, Value>,
    /// Keys the plan had deleted when it was taken.
    pub deleted: BTreeSet<String>,
    /// What an earlier planned rollback had restored the config to when it was taken.
    pub restored: Option<Restored>,
}

impl PlannedVm {
    fn created(
        vmid: u32,
        node: &str,
        name: Option<String>,
        mut config: Map<String, Value>,
        clone_of: Option<u32>,
    ) -> PlannedVm {
        if let Some(n) = name {
            config.entry("name").or_insert(Value::String(n));
        }
        PlannedVm {
            created: true,
            base: config,
            clone_of,
            status: Some("stopped".into()),
            ..PlannedVm::existing(vmid, node)
        }
    }

    fn existing(vmid: u32, node: &str) -> PlannedVm {
        PlannedVm {
            vmid,
            node: node.to_string(),
            real_node: node.to_string(),
            created: false,
            base: Map::new(),
            clone_of: None,
            set: Map::new(),
            deleted: BTreeSet::new(),
            pending: BTreeMap::new(),
            reverted: BTreeSet::new(),
            pending_applied: false,
            status: None,
            removed: false,
            pool: None,
            what: Vec::new(),
            ha_state: None,
            snapshots: Vec::new(),
            snapshot_parent: None,
            restored: None,
        }
    }

    fn apply(&mut self, effect: &Effect) {
        match effect {
            Effect::Create { .. }
            | Effect::Volume { .. }
            | Effect::Acl { .. }
            | Effect::PoolConfig { .. }
            | Effect::PoolStorage { .. } => {}
            Effect::Config {
                set,
                delete,
                pending,
                revert,
                what,
                ..
            } => {
                for (k, v) in set {
                    self.set.insert(k.clone(), v.clone());
                    self.deleted.remove(k);
                    self.track_pending(k, pending, Some(v.clone()));
                }
                for k in delete {
                    self.set.remove(k);
                    self.deleted.insert(k.clone());
                    self.track_pending(k, pending, None);
                }
                for k in revert {
                    self.pending.remove(k);
                    self.reverted.insert(k.clone());
                }
                self.what.extend(what.iter().cloned());
            }
            Effect::Power {
                status,
                applies_pending,
                ..
            } => {
                self.status = Some(status.clone());
                // A managed VM is started and stopped through HA, which records the
                // request as the resource's state (pve-ha-manager `API2/HA/Resources.pm`).
                if let Some(ha) = &mut self.ha_state {
                    *ha = if status == "stopped" { "stopped" } else { "started" }.to_string();
                }
                if *applies_pending {
                    self.pending.clear();
                    self.pending_applied = true;
                }
            }
            Effect::Template { .. } => {
                self.set.insert("template".into(), Value::from(1));
            }
            Effect::Migrate { to, .. } => self.node = to.clone(),
            Effect::Remove { .. } => self.removed = true,
            Effect::Pool { pool, .. } => self.pool = Some(pool.clone()),
            Effect::Snapshot {
                name,
                action,
                description,
                vmstate,
                ..
            } => self.apply_snapshot(name, *action, description, *vmstate),
            Effect::Refused { .. } => {}
        }
    }

    fn apply_snapshot(&mut self, name: &str, action: SnapshotAction, description: &str, vmstate: bool) {
        match action {
            SnapshotAction::Take | SnapshotAction::Remove => {
                let removed = action == SnapshotAction::Remove;
                self.snapshots.retain(|s| s.name != name);
                let in_effect = |k: &String| !self.pending.contains_key(k);
                self.snapshots.push(PlannedSnapshot {
                    name: name.to_string(),
                    description: description.to_string(),
                    removed,
                    vmstate: vmstate && !removed,
                    set: self
                        .set
                        .iter()
                        .filter(|(k, _)| in_effect(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    deleted: self.deleted.iter().filter(|k| in_effect(k)).cloned().collect(),
                    restored: self.restored.clone(),
                });
                if !removed {
                    self.snapshot_parent = Some(name.to_string());
                }
            }
            SnapshotAction::Rollback => self.roll_back(name),
        }
    }

    /// pve-guest-common `snapshot_rollback` → `__snapshot_apply_config`: the snapshot's
    /// config, keeping the VM's notes (`description`) and unused disks; pending changes
    /// are gone and the snapshot is the `parent`.
    fn roll_back(&mut self, name: &str) {
        let kept = |k: &String| k == "description" || snapshot::is_unused_disk(k);
        let kept_set: Map<String, Value> = self
            .set
            .iter()
            .filter(|(k, _)| kept(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let kept_deleted: BTreeSet<String> = self.deleted.iter().filter(|k| kept(k)).cloned().collect();
        match self.snapshots.iter().find(|s| s.name == name && !s.removed) {
            Some(taken) => {
                self.set = taken
                    .set
                    .iter()
                    .filter(|(k, _)| !kept(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                self.deleted = taken.deleted.iter().filter(|k| !kept(k)).cloned().collect();
                self.restored = match &taken.restored {
                    Some(earlier) => Some(earlier.clone()),
                    None => (!self.created).then_some(Restored::Planned),
                };
            }
            None => {
                self.set = Map::new();
                self.deleted = BTreeSet::new();
                self.restored = Some(Restored::Pve(name.to_string()));
            }
        }
        self.set.extend(kept_set);
        self.deleted.extend(kept_deleted);
        self.pending.clear();
        self.reverted.clear();
        self.pending_applied = false;
        self.snapshot_parent = Some(name.to_string());
    }

    fn track_pending(&mut self, key: &str, pending: &[String], value: Option<Value>) {
        if pending.iter().any(|p| p == key) {
            self.pending.insert(key.to_string(), value);
        } else {
            self.pending.remove(key);
        }
    }

    /// The VM's name after the plan, when the plan knows it.
    pub fn name(&self) -> Option<&str> {
        self.set
            .get("name")
            .or_else(|| self.base.get("name"))
            .and_then(Value::as_str)
    }

    /// Whether the VM is a template as far as the plan knows (`None`: as PVE says).
    pub fn is_template(&self) -> Option<bool> {
        let t = self.set.get("template").or_else(|| self.base.get("template"))?;
        Some(matches!(t, Value::Number(n) if n.as_i64() == Some(1)) || t == "1" || t == &Value::Bool(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(effects: Value) -> RunPlan {
        RunPlan::from_value(&json!({ "effects": effects })).unwrap()
    }

    #[test]
    fn effects_fold_per_vm_in_order() {
        let p = plan(json!([
            {"kind": "create", "vmid": 101, "node": "pve1", "name": "web1", "config": {"memory": "2048"}},
            {"kind": "config", "vmid": 101, "node": "pve1", "set": {"scsi1": "local-lvm:(known after apply),size=32G"}},
            {"kind": "power", "vmid": 101, "node": "pve1", "status": "running"},
            {"kind": "config", "vmid": 101, "node": "pve1", "set": {"net1": "virtio=(known after apply),bridge=vmbr0"}, "pending": ["net1"]},
            {"kind": "config", "vmid": 100, "node": "pve1", "delete": ["ide2"]},
            {"kind": "remove", "vmid": 100, "node": "pve1"},
        ]));
        let vms = p.vms();
        let web1 = &vms[&101];
        assert!(web1.created);
        assert_eq!(web1.name(), Some("web1"));
        assert_eq!(web1.status.as_deref(), Some("running"));
        assert_eq!(
            web1.pending.get("net1"),
            Some(&Some(json!("virtio=(known after apply),bridge=vmbr0")))
        );
        assert!(web1.set.contains_key("scsi1"));
        let old = &vms[&100];
        assert!(!old.created && old.removed);
        assert!(old.deleted.contains("ide2"));
        assert_eq!(p.reserved(), BTreeSet::from([101]));
    }

    #[test]
    fn a_restart_applies_pending_and_a_later_set_clears_it() {
        let p = plan(json!([
            {"kind": "config", "vmid": 100, "node": "pve1", "set": {"memory": "4096"}, "pending": ["memory"]},
            {"kind": "power", "vmid": 100, "node": "pve1", "status": "running", "applies_pending": true},
        ]));
        let vm = &p.vms()[&100];
        assert!(vm.pending.is_empty() && vm.pending_applied);
        assert_eq!(vm.set["memory"], json!("4096"));
        let p = plan(json!([
            {"kind": "config", "vmid": 100, "node": "pve1", "delete": ["net1"], "pending": ["net1"]},
            {"kind": "config", "vmid": 100, "node": "pve1", "set": {"net1": "e1000,bridge=vmbr1"}},
        ]));
        let vm = &p.vms()[&100];
        assert!(vm.pending.is_empty() && !vm.deleted.contains("net1"));
    }

    #[test]
    fn migration_moves_and_template_marks() {
        let p = plan(json!([
            {"kind": "migrate", "vmid": 100, "node": "pve1", "to": "pve2"},
            {"kind": "template", "vmid": 100, "node": "pve2"},
        ]));
        let vm = &p.vms()[&100];
        assert_eq!((vm.node.as_str(), vm.real_node.as_str()), ("pve2", "pve1"));
        assert_eq!(vm.is_template(), Some(true));
    }

    #[test]
    fn the_last_pool_move_holds() {
        let p = plan(json!([
            {"kind": "pool", "vmid": 100, "node": "pve1", "pool": "staging"},
            {"kind": "pool", "vmid": 100, "node": "pve1", "pool": "prod"},
            {"kind": "pool", "vmid": 101, "node": "pve1", "pool": "prod"},
            {"kind": "pool", "vmid": 101, "node": "pve1", "pool": null},
        ]));
        assert_eq!(p.vms()[&100].pool, Some(Some("prod".to_string())));
        assert_eq!(p.vms()[&101].pool, Some(None), "VM 101 left its pool");
        assert_eq!(
            plan(json!([{"kind": "power", "vmid": 100, "node": "pve1", "status": "running"}])).vms()[&100].pool,
            None
        );
    }

    #[test]
    fn an_unreadable_plan_says_so() {
        let e = RunPlan::from_value(&json!({"effects": [{"kind": "teleport"}]})).unwrap_err();
        assert!(
            e.starts_with("the check-mode plan handed to the module (_ferrox_plan) is not readable"),
            "{e}"
        );
        assert_eq!(RunPlan::from_value(&json!({})).unwrap(), RunPlan::default());
    }
}
