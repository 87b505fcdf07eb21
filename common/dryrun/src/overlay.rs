//! PVE's answers with the plan applied: what a check-mode task reads instead of the
//! live answer, so it plans against the cluster as the earlier tasks would leave it.
//! Pure: each function takes PVE's answer (or none, for a VM only the plan knows).

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use ferrox_pve_rules::propstring::keys;
use ferrox_pve_rules::snapshot;
use ferrox_pve_rules::{boot, pending};

use super::state::{PlannedSnapshot, PlannedVm};

/// Marks a guest that only the plan knows (in `/cluster/resources` and the node's VM
/// listing, so `proxmox_vm_info` returns it).
pub const PLANNED_KEY: &str = "planned";

/// `/cluster/resources` (any `type`): removed VMs gone, planned VMs added, status,
/// name, node and template as the plan leaves them.
pub fn resources(real: Value, vms: &[&PlannedVm], with_vms: bool) -> Value {
    let Value::Array(items) = real else {
        return real;
    };
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for mut item in items {
        let vmid = guest_vmid(&item);
        match vmid.and_then(|id| vms.iter().find(|v| v.vmid == id && !v.created)) {
            Some(vm) if vm.removed => continue,
            Some(vm) => update_listed(&mut item, vm),
            None => {}
        }
        out.push(item);
    }
    if with_vms {
        out.extend(vms.iter().filter(|v| v.created && !v.removed).map(|v| resource_of(v)));
    }
    Value::Array(out)
}

fn guest_vmid(item: &Value) -> Option<u32> {
    if !matches!(item.get("type").and_then(Value::as_str), Some("qemu" | "lxc")) {
        return None;
    }
    match item.get("vmid")? {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// An existing VM's listing entry with the plan's status, name, node, template.
fn update_listed(item: &mut Value, vm: &PlannedVm) {
    let Value::Object(m) = item else { return };
    if let Some(status) = &vm.status {
        m.insert("status".into(), json!(listed_status(status)));
    }
    if let Some(name) = vm.name() {
        m.insert("name".into(), json!(name));
    }
    if m.contains_key("node") {
        m.insert("node".into(), json!(vm.node));
    }
    if let Some(t) = vm.is_template() {
        m.insert("template".into(), json!(u8::from(t)));
    }
    match &vm.pool {
        Some(Some(pool)) => {
            m.insert("pool".into(), json!(pool));
        }
        Some(None) => {
            m.remove("pool");
        }
        None => {}
    }
}

/// `/cluster/resources` shows a paused VM as `paused`, a hibernated one as `stopped`.
fn listed_status(status: &str) -> &str {
    match status {
        "hibernated" => "stopped",
        other => other,
    }
}

/// The `/cluster/resources` entry of a VM only the plan knows.
pub fn resource_of(vm: &PlannedVm) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(format!("qemu/{}", vm.vmid)));
    m.insert("type".into(), json!("qemu"));
    m.insert("vmid".into(), json!(vm.vmid));
    m.insert("node".into(), json!(vm.node));
    if let Some(name) = vm.name() {
        m.insert("name".into(), json!(name));
    }
    m.insert(
        "status".into(),
        json!(listed_status(vm.status.as_deref().unwrap_or("stopped"))),
    );
    m.insert("template".into(), json!(u8::from(vm.is_template().unwrap_or(false))));
    if let Some(Some(pool)) = &vm.pool {
        m.insert("pool".into(), json!(pool));
    }
    if let Some(state) = &vm.ha_state {
        m.insert("hastate".into(), json!(state));
    }
    let config = config(vm, None, false);
    if let Some(mem) = config.get("memory").and_then(number) {
        m.insert("maxmem".into(), json!(mem * 1024 * 1024));
    }
    let cpus = config.get("cores").and_then(number).unwrap_or(1) * config.get("sockets").and_then(number).unwrap_or(1);
    m.insert("maxcpu".into(), json!(cpus));
    m.insert(PLANNED_KEY.into(), json!(true));
    Value::Object(m)
}

fn number(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// `GET /nodes/{node}/qemu`: the node's VMs after the plan.
pub fn node_listing(real: Value, node: &str, vms: &[&PlannedVm]) -> Value {
    let Value::Array(items) = real else {
        return real;
    };
    let mut out = Vec::with_capacity(items.len());
    for mut item in items {
        let vmid = item
            .get("vmid")
            .and_then(|v| v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok())));
        match vmid.and_then(|id| vms.iter().find(|v| u64::from(v.vmid) == id && !v.created)) {
            Some(vm) if vm.removed || vm.node != node => continue,
            Some(vm) => {
                if let (Some(status), Value::Object(m)) = (&vm.status, &mut item) {
                    m.insert("status".into(), json!(listed_status(status)));
                }
            }
            None => {}
        }
        out.push(item);
    }
    for vm in vms.iter().filter(|v| v.created && !v.removed && v.node == node) {
        let mut entry = resource_of(vm);
        if let Value::Object(m) = &mut entry {
            m.remove("id");
            m.remove("type");
            m.remove("node");
            m.insert("cpus".into(), m.get("maxcpu").cloned().unwrap_or(json!(1)));
        }
        out.push(entry);
    }
    Value::Array(out)
}

/// `GET .../config`: with `current`, the config in effect (planned changes that wait
/// for a restart left out); else with everything pending applied, as PVE's default.
/// `real` is PVE's answer for an existing VM, `None` for a planned one.
pub fn config(vm: &PlannedVm, real: Option<Value>, current: bool) -> Map<String, Value> {
    let mut config = match real {
        Some(Value::Object(m)) => m,
        _ => vm.base.iter().map(|(k, v)| (k.clone(), as_returned(k, v))).collect(),
    };
    for (k, v) in &vm.set {
        if !(current && vm.pending.contains_key(k)) {
            config.insert(k.clone(), as_returned(k, v));
        }
    }
    let mut gone = Vec::new();
    for k in &vm.deleted {
        if !(current && vm.pending.contains_key(k)) {
            config.remove(k);
            gone.push(k.as_str());
        }
    }
    // qemu-server takes a deleted device out of the boot order.
    if let Some(order) = config
        .get("boot")
        .and_then(Value::as_str)
        .and_then(|b| boot::without(b, &gone))
    {
        config.insert("boot".into(), Value::String(order));
    }
    config
}

/// The section of snapshot `snap`, which the plan takes, as `GET config?snapshot=`
/// answers it: the config in effect then (`real`: PVE's current config; a planned VM's
/// own), taken as pve-guest-common's `__snapshot_copy_config` takes it (without the VM's
/// notes, unused disks, lock, digest and snapshot bookkeeping), with the snapshot's own
/// description.
pub fn snapshot_section(vm: &PlannedVm, snap: &PlannedSnapshot, real: Option<Value>) -> Map<String, Value> {
    let mut section = match real {
        Some(Value::Object(m)) => m,
        _ => vm.base.iter().map(|(k, v)| (k.clone(), as_returned(k, v))).collect(),
    };
    for (k, v) in &snap.set {
        section.insert(k.clone(), as_returned(k, v));
    }
    for k in &snap.deleted {
        section.remove(k);
    }
    section.retain(|k, _| !snapshot::is_not_snapshotted(k));
    if !snap.description.is_empty() {
        section.insert("description".into(), Value::String(snap.description.clone()));
    }
    section
}

/// A rollback to a snapshot PVE keeps (pve-guest-common `__snapshot_apply_config`): the
/// snapshot's section without its bookkeeping, with the VM's notes (`description`) and
/// unused disks from the config in effect (`in_effect`).
pub fn rolled_back(section: Value, in_effect: Value) -> Map<String, Value> {
    let mut config: Map<String, Value> = match section {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    config.retain(|k, _| !snapshot::is_not_snapshotted(k) && k != "parent");
    if let Value::Object(current) = in_effect {
        for (k, v) in current {
            if k == "description" || snapshot::is_unused_disk(&k) {
                config.insert(k, v);
            }
        }
    }
    config
}

/// The config's `parent` as the snapshot list the plan leaves says (its `current`
/// entry's), when the plan takes, removes or rolls back to a snapshot.
pub fn set_parent(config: &mut Map<String, Value>, list: &Value) {
    let parent = list
        .as_array()
        .and_then(|items| items.iter().find(|i| i["name"] == "current"))
        .and_then(|current| current.get("parent"))
        .cloned();
    match parent {
        Some(p) => config.insert("parent".into(), p),
        None => config.remove("parent"),
    };
}

/// A planned value as PVE would answer it: text as sent is typed as the config key's
/// schema types it ([`keys::as_returned`]); a value PVE answered stays as it is.
fn as_returned(key: &str, value: &Value) -> Value {
    match value {
        Value::String(text) => keys::as_returned(key, text),
        other => other.clone(),
    }
}

/// `GET .../pending`: every key with its value, plus `pending` (new value) or
/// `delete: 1` for what waits for a restart.
pub fn pending(vm: &PlannedVm, real: Option<Value>) -> Value {
    let mut entries: Vec<Map<String, Value>> = match real {
        Some(Value::Array(items)) => items.into_iter().filter_map(|i| i.as_object().cloned()).collect(),
        _ => vm.base.iter().map(|(k, v)| entry(k, Some(as_returned(k, v)))).collect(),
    };
    if vm.pending_applied {
        entries.retain(|e| !pending::is_pending_delete(e));
        for e in &mut entries {
            if let Some(p) = e.remove("pending") {
                e.insert("value".into(), p);
            }
        }
    }
    for e in &mut entries {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default().to_string();
        if vm.reverted.contains(&key) {
            e.remove("pending");
            e.remove("delete");
        }
    }
    entries.retain(|e| e.contains_key("value") || e.contains_key("pending") || e.contains_key("delete"));
    let position = |entries: &Vec<Map<String, Value>>, key: &str| {
        entries
            .iter()
            .position(|e| e.get("key").and_then(Value::as_str) == Some(key))
    };
    for (k, v) in &vm.set {
        let at = position(&entries, k).unwrap_or_else(|| {
            entries.push(entry(k, None));
            entries.len() - 1
        });
        let e = &mut entries[at];
        e.remove("delete");
        if vm.pending.contains_key(k) {
            e.insert("pending".into(), as_returned(k, v));
        } else {
            e.remove("pending");
            e.insert("value".into(), as_returned(k, v));
        }
    }
    for k in &vm.deleted {
        if let Some(at) = position(&entries, k) {
            if vm.pending.contains_key(k) {
                entries[at].insert("delete".into(), json!(1));
            } else {
                entries.remove(at);
            }
        }
    }
    entries.sort_by(|a, b| {
        a.get("key")
            .and_then(Value::as_str)
            .cmp(&b.get("key").and_then(Value::as_str))
    });
    Value::Array(entries.into_iter().map(Value::Object).collect())
}

fn entry(key: &str, value: Option<Value>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("key".into(), json!(key));
    if let Some(v) = value {
        m.insert("value".into(), v);
    }
    m
}

/// `GET .../status/current`: the planned power state (QEMU's `qmpstatus` too).
pub fn status(vm: &PlannedVm, real: Option<Value>) -> Value {
    let mut m = match real {
        Some(Value::Object(m)) => m,
        _ => {
            let mut m = Map::new();
            m.insert("vmid".into(), json!(vm.vmid));
            if let Some(name) = vm.name() {
                m.insert("name".into(), json!(name));
            }
            m.insert("status".into(), json!("stopped"));
            m.insert("qmpstatus".into(), json!("stopped"));
            // PVE manages a resource a create adds (it is neither `ignored` nor, on a
            // cluster the plan knows nothing else of, disarmed).
            let ha = match &vm.ha_state {
                Some(state) => json!({"managed": 1, "state": state}),
                None => json!({"managed": 0}),
            };
            m.insert("ha".into(), ha);
            m
        }
    };
    if let Some(status) = &vm.status {
        let (status, qmp) = match status.as_str() {
            "paused" => ("running", "paused"),
            "hibernated" => ("stopped", "stopped"),
            other => (other, other),
        };
        m.insert("status".into(), json!(status));
        m.insert("qmpstatus".into(), json!(qmp));
        match vm.status.as_deref() {
            Some("hibernated") => {
                m.insert("lock".into(), json!("suspended"));
            }
            _ if m.get("lock") == Some(&json!("suspended")) => {
                m.remove("lock");
            }
            _ => {}
        }
    }
    if vm.is_template() == Some(true) {
        m.insert("template".into(), json!(1));
    }
    Value::Object(m)
}

/// `/cluster/nextid` after the plan: PVE's answer, or the next id above it that is
/// neither used in the cluster nor reserved by the plan.
pub fn next_id(real: u32, used: &BTreeSet<u32>, reserved: &BTreeSet<u32>) -> u32 {
    (real..)
        .find(|id| !used.contains(id) && !reserved.contains(id))
        .unwrap_or(real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::RunPlan;

    fn vms(effects: Value) -> Vec<PlannedVm> {
        RunPlan::from_value(&json!({ "effects": effects }))
            .unwrap()
            .vms()
            .into_values()
            .collect()
    }

    #[test]
    fn a_planned_pool_move_shows_in_the_listing() {
        let vms = vms(json!([
            {"kind": "pool", "vmid": 100, "node": "pve1", "pool": "staging"},
            {"kind": "create", "vmid": 101, "node": "pve1", "name": "web1", "config": {}},
            {"kind": "pool", "vmid": 101, "node": "pve1", "pool": "prod"},
            {"kind": "pool", "vmid": 103, "node": "pve1", "pool": null},
        ]));
        let refs: Vec<&PlannedVm> = vms.iter().collect();
        let real = json!([
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1", "name": "old", "status": "stopped", "pool": "prod"},
            {"id": "qemu/102", "type": "qemu", "vmid": 102, "node": "pve1", "name": "db", "status": "stopped", "pool": "prod"},
            {"id": "qemu/103", "type": "qemu", "vmid": 103, "node": "pve1", "name": "gone", "status": "stopped", "pool": "prod"},
        ]);
        let out = resources(real, &refs, true);
        let pool_of = |id: u64| out.as_array().unwrap().iter().find(|e| e["vmid"] == id).unwrap()["pool"].clone();
        assert_eq!(
            (pool_of(100), pool_of(101), pool_of(102), pool_of(103)),
            (json!("staging"), json!("prod"), json!("prod"), Value::Null)
        );
    }

    #[test]
    fn resources_gain_planned_and_lose_removed_vms() {
        let vms = vms(json!([
            {"kind": "create", "vmid": 101, "node": "pve1", "name": "web1", "config": {"memory": "2048", "cores": 2}},
            {"kind": "remove", "vmid": 100, "node": "pve1"},
            {"kind": "power", "vmid": 102, "node": "pve2", "status": "running"},
        ]));
        let refs: Vec<&PlannedVm> = vms.iter().collect();
        let real = json!([
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1", "name": "old", "status": "stopped"},
            {"id": "qemu/102", "type": "qemu", "vmid": 102, "node": "pve2", "name": "db", "status": "stopped"},
            {"id": "storage/pve1/local", "type": "storage", "node": "pve1", "storage": "local"},
        ]);
        let out = resources(real.clone(), &refs, true);
        assert_eq!(
            out,
            json!([
                {"id": "qemu/102", "type": "qemu", "vmid": 102, "node": "pve2", "name": "db", "status": "running"},
                {"id": "storage/pve1/local", "type": "storage", "node": "pve1", "storage": "local"},
                {"id": "qemu/101", "type": "qemu", "vmid": 101, "node": "pve1", "name": "web1", "status": "stopped",
                 "template": 0, "maxmem": 2147483648u64, "maxcpu": 2, "planned": true},
            ])
        );
        assert_eq!(
            resources(real, &refs, false).as_array().unwrap().len(),
            2,
            "type=storage gets no planned VM"
        );
    }

    #[test]
    fn a_planned_ha_managed_vm_lists_its_resource_and_is_managed() {
        let vms = vms(json!([
            {"kind": "create", "vmid": 101, "node": "pve1", "name": "web1", "config": {}, "ha_state": "stopped"},
            {"kind": "power", "vmid": 101, "node": "pve1", "status": "running"},
            {"kind": "create", "vmid": 102, "node": "pve1", "name": "web2", "config": {}},
        ]));
        let (ha, plain) = (&vms[0], &vms[1]);
        assert_eq!(
            resource_of(ha)["hastate"],
            "started",
            "a start through HA requests started"
        );
        assert_eq!(status(ha, None)["ha"], json!({"managed": 1, "state": "started"}));
        assert!(resource_of(plain).get("hastate").is_none());
        assert_eq!(status(plain, None)["ha"], json!({"managed": 0}));
    }

    #[test]
    fn planned_values_are_typed_as_pve_answers_them() {
        let vms = vms(json!([
            {"kind": "config", "vmid": 100, "node": "pve1", "set": {"cores": "4", "onboot": "1", "cpulimit": "1.5", "memory": "4096"}, "pending": ["cores"]},
        ]));
        let real = json!({"cores": 2, "name": "web01"});
        assert_eq!(
            Value::Object(config(&vms[0], Some(real.clone()), false)),
            json!({"cores": 4, "onboot": 1, "cpulimit": "1.5", "memory": "4096", "name": "web01"})
        );
        let entries = pending(&vms[0], Some(json!([{"key": "cores", "value": 2}])));
        let cores = entries
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == "cores")
            .unwrap();
        assert_eq!(cores["pending"], json!(4), "{entries}");
    }

    #[test]
    fn config_overlays_pending_only_when_not_current() {
        let vms = vms(json!([
            {"kind": "config", "vmid": 100, "node": "pve1", "set": {"memory": "4096", "cores": 4}, "delete": ["ide2"], "pending": ["memory"]},
        ]));
        let real = json!({"memory": "2048", "cores": 2, "ide2": "none,media=cdrom", "name": "web01"});
        let next = config(&vms[0], Some(real.clone()), false);
        assert_eq!(
            Value::Object(next),
            json!({"memory": "4096", "cores": 4, "name": "web01"})
        );
        let current = config(&vms[0], Some(real), true);
        assert_eq!(
            Value::Object(current),
            json!({"memory": "2048", "cores": 4, "name": "web01"})
        );
    }

    #[test]
    fn pending_lists_what_waits_for_a_restart() {
        let vms = vms(json!([
            {"kind": "config", "vmid": 100, "node": "pve1", "set": {"memory": "4096", "net1": "virtio=(known after apply),bridge=vmbr0"}, "delete": ["ide2", "tags"], "pending": ["memory", "ide2"]},
        ]));
        let real = json!([
            {"key": "ide2", "value": "none,media=cdrom"},
            {"key": "memory", "value": "2048"},
            {"key": "name", "value": "web01"},
            {"key": "tags", "value": "a"},
        ]);
        assert_eq!(
            pending(&vms[0], Some(real)),
            json!([
                {"key": "ide2", "value": "none,media=cdrom", "delete": 1},
                {"key": "memory", "value": "2048", "pending": "4096"},
                {"key": "name", "value": "web01"},
                {"key": "net1", "value": "virtio=(known after apply),bridge=vmbr0"},
            ])
        );
    }

    #[test]
    fn a_planned_vm_is_answered_from_the_plan() {
        let vms = vms(json!([
            {"kind": "create", "vmid": 101, "node": "pve1", "name": "web1", "config": {"memory": "2048"}},
            {"kind": "power", "vmid": 101, "node": "pve1", "status": "running"},
            {"kind": "config", "vmid": 101, "node": "pve1", "set": {"net0": "virtio=(known after apply),bridge=vmbr0"}, "pending": ["net0"]},
        ]));
        let vm = &vms[0];
        assert_eq!(status(vm, None)["status"], json!("running"));
        assert_eq!(
            Value::Object(config(vm, None, true)),
            json!({"memory": "2048", "name": "web1"})
        );
        assert_eq!(
            pending(vm, None),
            json!([
                {"key": "memory", "value": "2048"},
                {"key": "name", "value": "web1"},
                {"key": "net0", "pending": "virtio=(known after apply),bridge=vmbr0"},
            ])
        );
        let listing = node_listing(json!([]), "pve1", &[vm]);
        assert_eq!(listing[0]["planned"], json!(true));
        assert_eq!(listing[0]["status"], json!("running"));
        assert_eq!(node_listing(json!([]), "pve2", &[vm]), json!([]));
    }

    #[test]
    fn hibernation_and_pause_read_as_pve_shows_them() {
        let vms = vms(json!([
            {"kind": "power", "vmid": 100, "node": "pve1", "status": "hibernated"},
            {"kind": "power", "vmid": 102, "node": "pve1", "status": "paused"},
        ]));
        let s = status(&vms[0], Some(json!({"status": "running", "qmpstatus": "running"})));
        assert_eq!(
            (s["status"].clone(), s["lock"].clone()),
            (json!("stopped"), json!("suspended"))
        );
        let s = status(&vms[1], Some(json!({"status": "running"})));
        assert_eq!(
            (s["status"].clone(), s["qmpstatus"].clone()),
            (json!("running"), json!("paused"))
        );
    }

    #[test]
    fn next_id_skips_used_and_reserved() {
        let used = BTreeSet::from([100, 102]);
        let reserved = BTreeSet::from([101, 103]);
        assert_eq!(next_id(101, &used, &reserved), 104);
        assert_eq!(next_id(105, &used, &reserved), 105);
    }
}
