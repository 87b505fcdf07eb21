//! `present` of a VM that does not exist: its node refused or taken, the create and
//! restore forms and actions, the diff, the EFI refusal, the cloud-init warning.

use serde_json::{json, Value};

use super::create::{node, plan, warning};
use crate::api::Vm;
use crate::plan::{Action, Allocation};
use crate::task::testing::task;

fn nodes() -> Vec<String> {
    vec!["pve1".to_string(), "pve2".to_string()]
}

fn vm() -> Vm {
    Vm {
        node: "pve1".into(),
        vmid: 100,
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn the_node_must_be_given_and_in_the_cluster() {
    let rows = [
        (
            json!({"name": "web"}),
            Err("node is mandatory for creating/updating VM".to_string()),
        ),
        (
            json!({"name": "web", "node": "pve9"}),
            Err("node 'pve9' does not exist in cluster (nodes: pve1, pve2)".to_string()),
        ),
        (json!({"name": "web", "node": "pve2"}), Ok("pve2".to_string())),
    ];
    for (options, want) in rows {
        assert_eq!(
            node(&task(options.clone()), &nodes()).map_err(|f| f.msg),
            want,
            "{options}"
        );
    }
}

#[test]
fn a_create_sends_the_config_in_its_one_call() {
    let task = task(json!({
        "name": "web", "node": "pve1", "memory": 2048, "pool": "prod", "storage": "local-lvm", "ha_managed": true
    }));
    let (plan, diff) = plan(&task, vm(), Allocation::NextId)
        .map_err(|f| f.msg)
        .expect("a plan");
    assert_eq!(
        plan.describe(),
        ["create VM 100 on pve1", "wait until VM 100 is listed cluster-wide"]
    );
    let Action::Create { form, allocation } = &plan.actions[0] else {
        panic!("a create first");
    };
    assert_eq!(*allocation, Allocation::NextId);
    assert_eq!(
        *form,
        pairs(&[
            ("pool", "prod"),
            ("storage", "local-lvm"),
            ("ha-managed", "1"),
            ("memory", "2048"),
            ("name", "web")
        ])
    );
    assert!(diff.before.is_empty());
    assert_eq!(Value::Object(diff.after), json!({"memory": "2048", "name": "web"}));
}

#[test]
fn a_restore_takes_no_config_keys_and_applies_them_once_it_exists() {
    let task = task(json!({
        "name": "web", "node": "pve1", "memory": 2048, "archive": "local:backup/vzdump-qemu-100.vma.zst",
        "force": true, "bwlimit": 100, "unique": true, "live_restore": false
    }));
    let (plan, diff) = plan(&task, vm(), Allocation::Given).map_err(|f| f.msg).expect("a plan");
    assert_eq!(
        plan.describe(),
        [
            "restore VM 100 on pve1",
            "wait until VM 100 is listed cluster-wide",
            "update VM 100: set memory, name (compared again once it exists)"
        ]
    );
    let Action::Create { form, .. } = &plan.actions[0] else {
        panic!("a restore first");
    };
    assert_eq!(
        *form,
        pairs(&[
            ("archive", "local:backup/vzdump-qemu-100.vma.zst"),
            ("force", "1"),
            ("bwlimit", "100"),
            ("unique", "1"),
            ("live-restore", "0")
        ])
    );
    assert!(matches!(
        &plan.actions[2],
        Action::Converge {
            digest: None,
            recompute: true,
            ..
        }
    ));
    assert_eq!(Value::Object(diff.after), json!({"memory": "2048", "name": "web"}));
    // Nothing to apply afterwards: the restore alone.
    let bare = crate::task::testing::task(json!({"vmid": 100, "node": "pve1", "archive": "local:backup/x.vma"}));
    let (plan, _) = super::create::plan(&bare, vm(), Allocation::Given)
        .map_err(|f| f.msg)
        .expect("a plan");
    assert_eq!(plan.actions.len(), 2);
}

#[test]
fn an_efi_disk_needs_ovmf_and_2023_certificates_pre_enrolled_keys() {
    let rows = [
        (
            json!({"name": "web", "node": "pve1", "efidisk0": {"storage": "local-lvm"}}),
            Some("efidisk0 cannot be used if bios is not set to ovmf. "),
        ),
        (
            json!({"name": "web", "node": "pve1", "bios": "ovmf", "efidisk0": {"storage": "local-lvm", "ms_cert": "2023k"}}),
            Some("efidisk0.ms_cert: 2023k needs efidisk0.pre_enrolled_keys: true (PVE enrolls the Microsoft 2023 certificates only into an EFI disk with pre-enrolled keys)"),
        ),
        (
            json!({"name": "web", "node": "pve1", "bios": "ovmf", "efidisk0": {"storage": "local-lvm", "ms_cert": "2023k", "pre_enrolled_keys": true}}),
            None,
        ),
    ];
    for (options, refused) in rows {
        let got = plan(&task(options.clone()), vm(), Allocation::Given)
            .err()
            .map(|f| f.msg);
        assert_eq!(got.as_deref(), refused, "{options}");
    }
}

#[test]
fn cloud_init_keys_without_a_drive_are_warned_of_unless_restored() {
    let plain = task(json!({"name": "web", "node": "pve1", "ciuser": "ops"}));
    assert_eq!(
        warning(&plain).as_deref(),
        Some("The new VM web has no cloud-init drive, so ciuser reach no guest: add one (for example ide: {ide2: 'local-lvm:cloudinit'}) or leave the cloud-init options out")
    );
    let with_drive =
        task(json!({"name": "web", "node": "pve1", "ciuser": "ops", "ide": {"ide2": "local-lvm:cloudinit"}}));
    assert_eq!(warning(&with_drive), None);
    let restored = task(json!({"name": "web", "node": "pve1", "ciuser": "ops", "archive": "local:backup/x.vma"}));
    assert_eq!(warning(&restored), None);
}
