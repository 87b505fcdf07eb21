//! What a check-mode run of this module adds to the playbook run's plan, and whether
//! a real run would leave the change pending (PVE's hotplug rules for drives).

use ferrox_dryrun::Effect;
use ferrox_pve_rules::hotplug;
use ferrox_pve_rules::unknown::after_write;
use serde_json::Value;

use crate::current::VmConfig;
use crate::plan::{Action, Plan};

/// Whether a running `vm` would keep the planned change of `disk` pending.
pub(crate) fn stays_pending(plan: &Plan, vm: &VmConfig, disk: &str, running: bool) -> bool {
    if !running {
        return false;
    }
    let features = hotplug::features(vm.text("hotplug").as_deref());
    let before = vm.text(disk);
    plan.actions.iter().any(|a| match a {
        Action::SetDrive { key, value } => hotplug::stays_pending(key, before.as_deref(), Some(value), &features),
        Action::Unlink { key, .. } => hotplug::stays_pending(key, before.as_deref(), None, &features),
        Action::Resize { .. } | Action::Move { .. } => false,
    })
}

/// The plan's effects on `vm` (and on the target VM of a move to another VM).
pub(crate) fn effects(plan: &Plan, vm: &VmConfig, target: Option<&VmConfig>, disk: &str, pending: bool) -> Vec<Effect> {
    if !plan.changed() {
        return Vec::new();
    }
    let mut own = Effect::config(vm.vmid, &vm.node);
    let mut other = None;
    if let Effect::Config {
        set,
        delete,
        pending: waiting,
        what,
        ..
    } = &mut own
    {
        match &plan.after {
            Some((loc, text)) if loc.vmid == vm.vmid => {
                if loc.key != disk {
                    delete.push(disk.to_string());
                }
                set.insert(loc.key.clone(), Value::String(after_write(&loc.key, text)));
            }
            Some((loc, text)) => {
                delete.push(disk.to_string());
                let node = target.map(|t| t.node.as_str()).unwrap_or(&vm.node);
                let mut moved = Effect::config(loc.vmid, node);
                if let Effect::Config { set, what, .. } = &mut moved {
                    set.insert(loc.key.clone(), Value::String(after_write(&loc.key, text)));
                    what.push(format!("disk {} moved here from VM {}", loc.key, vm.vmid));
                }
                other = Some(moved);
            }
            None => delete.push(disk.to_string()),
        }
        if let Some((unused, volume)) = &plan.kept_as {
            set.insert(unused.clone(), Value::String(volume.clone()));
        }
        if pending {
            waiting.push(disk.to_string());
        }
        what.extend(plan.changes.iter().map(|c| format!("disk {c}")));
    }
    let mut out = vec![own];
    out.extend(other);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Location;
    use ferrox_ansible::diff::Diff;
    use serde_json::json;

    fn plan(actions: Vec<Action>, after: Option<(u32, &str, &str)>, kept: Option<(&str, &str)>) -> Plan {
        Plan {
            msg: String::new(),
            actions,
            changes: vec!["create scsi1 on local-lvm (8G)".into()],
            after: after.map(|(vmid, key, text)| (Location { vmid, key: key.into() }, text.into())),
            kept_as: kept.map(|(u, v)| (u.into(), v.into())),
            warnings: vec![],
            diff: Diff::default(),
            allocates_on: None,
        }
    }

    #[test]
    fn a_new_disk_is_set_with_an_unknown_volume() {
        let vm = VmConfig::new(101, "pve1", json!({}));
        let p = plan(
            vec![Action::SetDrive {
                key: "scsi1".into(),
                value: "local-lvm:8".into(),
            }],
            Some((101, "scsi1", "local-lvm:(known after apply),size=8G")),
            None,
        );
        assert!(!stays_pending(&p, &vm, "scsi1", true));
        assert_eq!(
            serde_json::to_value(effects(&p, &vm, None, "scsi1", false)).unwrap(),
            json!([{"kind": "config", "vmid": 101, "node": "pve1", "set": {"scsi1": "local-lvm:(known after apply),size=8G"},
                    "what": ["disk create scsi1 on local-lvm (8G)"]}])
        );
    }

    #[test]
    fn a_detach_deletes_the_key_and_keeps_the_volume() {
        let vm = VmConfig::new(100, "pve1", json!({"sata1": "local-lvm:vm-100-disk-1,size=8G"}));
        let p = plan(
            vec![Action::Unlink {
                key: "sata1".into(),
                force: false,
            }],
            None,
            Some(("unused0", "local-lvm:vm-100-disk-1")),
        );
        assert!(stays_pending(&p, &vm, "sata1", true));
        assert!(!stays_pending(&p, &vm, "sata1", false));
        let e = effects(&p, &vm, None, "sata1", true);
        let Effect::Config {
            set, delete, pending, ..
        } = &e[0]
        else {
            panic!()
        };
        assert_eq!(
            (delete.as_slice(), pending.as_slice()),
            (&["sata1".to_string()][..], &["sata1".to_string()][..])
        );
        assert_eq!(set["unused0"], json!("local-lvm:vm-100-disk-1"));
    }

    #[test]
    fn a_move_to_another_vm_touches_both() {
        let vm = VmConfig::new(100, "pve1", json!({"scsi1": "local-lvm:vm-100-disk-1,size=8G"}));
        let target = VmConfig::new(101, "pve2", json!({}));
        let p = plan(vec![], Some((101, "scsi2", "local-lvm:vm-100-disk-1,size=8G")), None);
        let p = Plan {
            actions: vec![Action::Unlink {
                key: "x".into(),
                force: false,
            }],
            ..p
        };
        let e = effects(&p, &vm, Some(&target), "scsi1", false);
        assert_eq!(e.len(), 2);
        assert!(
            matches!(&e[1], Effect::Config { vmid: 101, node, set, .. } if node == "pve2" && set.contains_key("scsi2"))
        );
    }
}
