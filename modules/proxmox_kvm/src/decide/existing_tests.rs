//! `present` on a VM that exists: the warnings of options that apply only to a new VM,
//! and without `update`, the VM left alone with what differs named.

use serde_json::json;

use super::existing::{ha_warning, left_alone, node_warning, reads_ha_state};
use crate::api::Vm;
use crate::task::testing::task;

fn vm() -> Vm {
    Vm {
        node: "pve1".into(),
        vmid: 100,
    }
}

#[test]
fn a_node_other_than_the_vms_is_warned_of() {
    let elsewhere = task(json!({"vmid": 100, "node": "pve2"}));
    assert_eq!(
        node_warning(&elsewhere, &vm()).as_deref(),
        Some("VM 100 is on node pve1, not pve2: node only says where to create a VM (use migrate: true to move it)")
    );
    assert_eq!(node_warning(&task(json!({"vmid": 100, "node": "pve1"})), &vm()), None);
    assert_eq!(node_warning(&task(json!({"vmid": 100})), &vm()), None);
}

#[test]
fn ha_managed_on_a_vm_that_is_not_is_warned_of_and_read_only_then() {
    let ha = task(json!({"vmid": 100, "ha_managed": true}));
    assert!(reads_ha_state(&ha));
    assert_eq!(
        ha_warning(&ha, &vm(), false).as_deref(),
        Some("VM 100 exists and is not HA-managed: ha_managed applies when a VM is created. Add it to HA with ha-manager add vm:100 (or POST /cluster/ha/resources)")
    );
    assert_eq!(ha_warning(&ha, &vm(), true), None);
    let plain = task(json!({"vmid": 100}));
    assert!(!reads_ha_state(&plain));
    assert_eq!(ha_warning(&plain, &vm(), false), None);
}

#[test]
fn without_update_the_vm_is_left_alone_and_what_differs_is_named() {
    let with_pool = task(json!({"vmid": 100, "pool": "prod"}));
    let plain = task(json!({"vmid": 100}));
    let other_pool = Some("dev".to_string());
    let same_pool = Some("prod".to_string());
    let msg = "VM with vmid <100> already exists";
    let differ_in = |keys: &str| {
        vec![format!(
            "VM 100 differs from the task in: {keys}. Nothing was changed: add update: true to converge it."
        )]
    };
    let rows = [
        (&plain, None, Ok(vec![]), vec![]),
        (
            &plain,
            None,
            Ok(vec!["cores".to_string(), "memory".to_string()]),
            differ_in("cores, memory"),
        ),
        (
            &with_pool,
            other_pool.as_ref(),
            Ok(vec!["memory".to_string()]),
            differ_in("memory, pool"),
        ),
        (&with_pool, None, Ok(vec![]), differ_in("pool")),
        (&with_pool, same_pool.as_ref(), Ok(vec![]), vec![]),
        (
            &plain,
            None,
            Err("scsi0: shrinking is refused".to_string()),
            vec!["VM 100 differs from the task: scsi0: shrinking is refused".to_string()],
        ),
    ];
    for (task, listed_pool, differ, warnings) in rows {
        assert_eq!(
            left_alone(task, &vm(), listed_pool, differ.clone()),
            (msg.to_string(), warnings),
            "{differ:?} in {listed_pool:?}"
        );
    }
}
