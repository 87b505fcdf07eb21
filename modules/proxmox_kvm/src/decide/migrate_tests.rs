//! `migrate: true`: left alone on its node, refused, or migrated online or offline with
//! the task's parameters.

use ferrox_run::vm_task::{self, LockWording};
use serde_json::{json, Value};

use super::migrate::{decide, lock_prefix, Decision, Migration};
use crate::api::Vm;
use crate::observe::reads::reads_power;
use crate::observe::MigrateObserved;
use crate::plan::Action;
use crate::task::testing::task;

fn observed(node: &str, lock: Option<&str>, running: Option<bool>) -> MigrateObserved {
    MigrateObserved {
        vm: Vm {
            node: node.into(),
            vmid: 100,
        },
        name: "web".into(),
        lock: lock.map(str::to_string),
        running,
    }
}

/// The power state read, whether the migration is online, and the call's parameters.
type Row = (Option<bool>, bool, Vec<(String, String)>);

fn opts(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn a_vm_on_its_target_node_is_left_alone_and_its_power_not_read() {
    let task = task(json!({"vmid": 100, "migrate": true, "node": "pve1"}));
    let on_target = observed("pve1", None, None);
    assert!(!reads_power(&task, &on_target.vm, None));
    assert_eq!(
        decide(&task, &on_target).map_err(|f| f.msg),
        Ok(Decision::AlreadyThere("VM 100 is already on pve1".into()))
    );
}

#[test]
fn migrate_needs_a_node() {
    let task = task(json!({"vmid": 100, "migrate": true}));
    let vm = observed("pve1", None, None);
    assert!(!reads_power(&task, &vm.vm, None));
    assert_eq!(
        decide(&task, &vm).map_err(|f| f.msg),
        Err("node is mandatory for migrating VM: set node to the target node".to_string())
    );
}

#[test]
fn a_locked_vm_is_refused_before_its_power_is_read() {
    let task = task(json!({"vmid": 100, "migrate": true, "node": "pve2"}));
    let locked = observed("pve1", Some("backup"), None);
    assert!(!reads_power(&task, &locked.vm, Some("backup")));
    // The migration is planned; the driver refuses the lock, in these words.
    assert!(matches!(decide(&task, &locked), Ok(Decision::Act(_))));
    let prefix = lock_prefix(&locked.vm, "pve2");
    let refused = vm_task::lock_refusal(100, Some("backup"), false, LockWording::Action { prefix: &prefix });
    assert_eq!(
        refused.map(|f| f.msg),
        Some("Unable to migrate VM 100 from pve1 to pve2: VM is locked (backup): wait until the backup operation has finished and run the task again (root@pam can override with skiplock: true)".to_string())
    );
    let skiplock = crate::task::testing::task(json!({"vmid": 100, "migrate": true, "node": "pve2", "skiplock": true}));
    assert!(reads_power(&skiplock, &locked.vm, Some("backup")));
}

#[test]
fn a_running_vm_migrates_online_a_stopped_one_offline() {
    let task = task(json!({
        "vmid": 100, "migrate": true, "node": "pve2", "targetstorage": "local-lvm",
        "bwlimit": 1000, "with_conntrack_state": true, "with_local_disks": true
    }));
    let rows: [Row; 3] = [
        (
            Some(true),
            true,
            opts(&[
                ("targetstorage", "local-lvm"),
                ("bwlimit", "1000"),
                ("with-conntrack-state", "1"),
            ]),
        ),
        (
            Some(false),
            false,
            opts(&[("targetstorage", "local-lvm"), ("bwlimit", "1000")]),
        ),
        // A status that could not be read counts as running.
        (
            None,
            true,
            opts(&[
                ("targetstorage", "local-lvm"),
                ("bwlimit", "1000"),
                ("with-conntrack-state", "1"),
            ]),
        ),
    ];
    for (running, online, options) in rows {
        let vm = observed("pve1", None, running);
        assert!(reads_power(&task, &vm.vm, None));
        let Ok(Decision::Act(migration)) = decide(&task, &vm) else {
            panic!("VM 100 migrates");
        };
        let Migration { action, msg, diff } = *migration;
        assert_eq!(msg, "VM 100 has been migrated from pve1 to pve2");
        assert_eq!(
            action,
            Action::Migrate {
                target: "pve2".into(),
                online,
                with_local_disks: true,
                options
            }
        );
        assert_eq!(Value::Object(diff.before), json!({"node": "pve1"}));
        assert_eq!(Value::Object(diff.after), json!({"node": "pve2"}));
    }
}
