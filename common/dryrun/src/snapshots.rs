//! `GET .../snapshot` with the plan applied: snapshots the plan takes are listed (their
//! `snaptime` only PVE decides, `vmstate` as taken), removed ones are gone and their children re-pointed at
//! their parent, as pve-guest-common's `snapshot_delete` does, and the closing `current`
//! entry has the plan's `parent` and power state. Pure.

use serde_json::{json, Map, Value};

use super::state::PlannedVm;
use ferrox_pve_rules::unknown::UNKNOWN;

/// The snapshot list of `vm` as the plan leaves it; `real` is PVE's list (none for a VM
/// only the plan knows).
pub fn list(vm: &PlannedVm, real: Option<Value>) -> Value {
    let mut items: Vec<Map<String, Value>> = match real {
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let current = match items.iter().position(|i| i.get("name") == Some(&json!("current"))) {
        Some(at) => items.remove(at),
        None => planned_current(vm),
    };
    let mut parent = current.get("parent").and_then(Value::as_str).map(str::to_string);
    for planned in &vm.snapshots {
        let gone = items
            .iter()
            .position(|i| i.get("name").and_then(Value::as_str) == Some(planned.name.as_str()));
        if let Some(at) = gone {
            let old = items.remove(at);
            let old_parent = old.get("parent").cloned();
            for item in items.iter_mut() {
                if item.get("parent").and_then(Value::as_str) == Some(planned.name.as_str()) {
                    set_parent(item, old_parent.clone());
                }
            }
            if parent.as_deref() == Some(planned.name.as_str()) {
                parent = old_parent.and_then(|p| p.as_str().map(str::to_string));
            }
        }
        if !planned.removed {
            let mut item = Map::new();
            item.insert("name".into(), json!(planned.name));
            item.insert("snaptime".into(), json!(UNKNOWN));
            item.insert("vmstate".into(), json!(u8::from(planned.vmstate)));
            item.insert("description".into(), json!(planned.description));
            set_parent(&mut item, parent.clone().map(Value::String));
            items.push(item);
            parent = Some(planned.name.clone());
        }
    }
    let mut current = current;
    if let Some(p) = vm.snapshot_parent.clone().filter(|p| !removed(vm, p)) {
        parent = Some(p);
    }
    set_parent(&mut current, parent.map(Value::String));
    if let Some(status) = &vm.status {
        current.insert("running".into(), json!(u8::from(status == "running")));
    }
    items.push(current);
    Value::Array(items.into_iter().map(Value::Object).collect())
}

fn removed(vm: &PlannedVm, name: &str) -> bool {
    vm.snapshots.iter().any(|s| s.name == name && s.removed)
}

fn set_parent(item: &mut Map<String, Value>, parent: Option<Value>) {
    match parent {
        Some(p) => item.insert("parent".into(), p),
        None => item.remove("parent"),
    };
}

/// The `current` entry of a VM PVE does not know yet.
fn planned_current(vm: &PlannedVm) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("name".into(), json!("current"));
    m.insert("description".into(), json!("You are here!"));
    m.insert("digest".into(), json!(UNKNOWN));
    m.insert(
        "running".into(),
        json!(u8::from(vm.status.as_deref() == Some("running"))),
    );
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Effect, RunPlan};

    fn planned(effects: Value) -> PlannedVm {
        let plan = RunPlan::from_value(&json!({ "effects": effects })).unwrap();
        plan.vms().remove(&100).unwrap()
    }

    fn names(list: &Value) -> Vec<(&str, Option<&str>)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|i| (i["name"].as_str().unwrap(), i["parent"].as_str()))
            .collect()
    }

    #[test]
    fn taken_and_removed_snapshots_show_with_pve_s_parents() {
        let real = json!([
            {"name": "a", "snaptime": 1, "vmstate": 0, "description": ""},
            {"name": "b", "snaptime": 2, "vmstate": 0, "description": "", "parent": "a"},
            {"name": "current", "description": "You are here!", "running": 1, "parent": "b", "digest": "d"}
        ]);
        let vm = planned(json!([
            {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "c", "action": "take", "description": "pre", "vmstate": true},
            {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "a", "action": "remove"}
        ]));
        let list = list(&vm, Some(real));
        assert_eq!(names(&list), [("b", None), ("c", Some("b")), ("current", Some("c"))]);
        assert_eq!(list[1]["snaptime"], UNKNOWN);
        assert_eq!(list[1]["description"], "pre");
        assert_eq!(list[1]["vmstate"], 1, "taken with the VM's RAM");
    }

    #[test]
    fn a_planned_vm_lists_only_what_the_plan_takes() {
        let vm = planned(json!([
            {"kind": "create", "vmid": 100, "node": "pve1", "config": {}},
            {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "first", "action": "take"},
            {"kind": "power", "vmid": 100, "node": "pve1", "status": "running"},
            {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "first", "action": "rollback"}
        ]));
        let list = list(&vm, None);
        assert_eq!(names(&list), [("first", None), ("current", Some("first"))]);
        assert_eq!(list[1]["running"], 1);
        let wire = serde_json::to_value(Effect::Snapshot {
            vmid: 1,
            node: "n".into(),
            name: "s".into(),
            action: crate::effect::SnapshotAction::Rollback,
            description: String::new(),
            vmstate: false,
        })
        .unwrap();
        assert_eq!(
            wire,
            json!({"kind": "snapshot", "vmid": 1, "node": "n", "name": "s", "action": "rollback"})
        );
    }
}
