use serde_json::{json, Map, Value};

use ferrox_ansible::options::Params;

use super::*;
use crate::options::options;

fn task(args: Value) -> Result<NicTask, String> {
    let mut map: Map<String, Value> = options()
        .iter()
        .map(|o| (o.name.to_string(), o.default.clone().unwrap_or(Value::Null)))
        .collect();
    map.insert("vmid".into(), json!(100));
    for (k, v) in args.as_object().unwrap() {
        map.insert(k.clone(), v.clone());
    }
    NicTask::from_params(&Params::new(map))
}

fn plan_of(args: Value, current: Option<&str>) -> Plan {
    plan(&task(args).unwrap(), 100, current).unwrap_or_else(|e| panic!("{e}"))
}

const NET0: &str = "virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=1,tag=20";

#[test]
fn new_nic_gets_the_task_options_and_no_spelled_out_defaults() {
    let p = plan_of(
        json!({"interface": "net1", "bridge": "vmbr0", "firewall": false, "tag": 10}),
        None,
    );
    assert_eq!(
        p.action,
        Some(Action::Set {
            key: "net1".into(),
            value: "virtio,bridge=vmbr0,tag=10".into()
        })
    );
    assert_eq!(p.msg, "Nic net1 updated on VM with vmid 100");
    assert_eq!(p.mac, None);
    assert_eq!(p.new_bridge.as_deref(), Some("vmbr0"));
    let with_mac = plan_of(
        json!({"interface": "net1", "bridge": "vmbr1", "mac": "bc:24:11:00:00:aa", "model": "e1000"}),
        None,
    );
    assert_eq!(with_mac.after.as_deref(), Some("e1000=BC:24:11:00:00:AA,bridge=vmbr1"));
    assert_eq!(with_mac.mac.as_deref(), Some("BC:24:11:00:00:AA"));
}

#[test]
fn equal_meaning_is_no_change() {
    let p = plan_of(
        json!({"interface": "net0", "bridge": "vmbr0", "firewall": true, "tag": 20, "mac": "bc:24:11:5e:7a:01", "model": "virtio", "link_down": false}),
        Some(NET0),
    );
    assert!(!p.changed(), "{:?}", p.changes);
    assert_eq!(p.msg, "Nic net0 unchanged on VM with vmid 100");
    assert_eq!(p.mac.as_deref(), Some("BC:24:11:5E:7A:01"));
    let rate = plan_of(
        json!({"interface": "net0", "rate": 10.0}),
        Some("virtio=BC:24:11:5E:7A:01,bridge=vmbr0,rate=10"),
    );
    assert!(!rate.changed());
    let explicit_default = plan_of(
        json!({"interface": "net0", "firewall": false}),
        Some("virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=0"),
    );
    assert!(!explicit_default.changed());
}

#[test]
fn unmentioned_options_model_and_mac_are_kept() {
    let p = plan_of(json!({"interface": "net0", "tag": 30}), Some(NET0));
    assert_eq!(p.changes, vec!["tag: 20 -> 30"]);
    assert_eq!(
        p.after.as_deref(),
        Some("virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=1,tag=30")
    );
    let e1000 = plan_of(
        json!({"interface": "net0", "bridge": "vmbr1"}),
        Some("e1000=BC:24:11:5E:7A:01,bridge=vmbr0"),
    );
    assert_eq!(e1000.after.as_deref(), Some("e1000=BC:24:11:5E:7A:01,bridge=vmbr1"));
    let model = plan_of(json!({"interface": "net0", "model": "vmxnet3"}), Some(NET0));
    assert_eq!(
        model.after.as_deref(),
        Some("vmxnet3=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=1,tag=20")
    );
    assert_eq!(model.changes, vec!["model: virtio -> vmxnet3"]);
    assert_eq!(model.new_bridge, None);
}

#[test]
fn falsy_values_set_and_remove() {
    let p = plan_of(json!({"interface": "net0", "firewall": false, "tag": 0}), Some(NET0));
    assert_eq!(p.changes, vec!["firewall: 1 -> 0", "tag: 20 -> removed"]);
    assert_eq!(
        p.after.as_deref(),
        Some("virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=0")
    );
    let t = plan_of(
        json!({"interface": "net0", "trunks": []}),
        Some("virtio=BC:24:11:5E:7A:01,bridge=vmbr0,trunks=10;20"),
    );
    assert_eq!(t.after.as_deref(), Some("virtio=BC:24:11:5E:7A:01,bridge=vmbr0"));
    let noop = plan_of(
        json!({"interface": "net0", "mtu": 0, "queues": 0, "rate": 0.0}),
        Some(NET0),
    );
    assert!(!noop.changed());
    let set = plan_of(
        json!({"interface": "net0", "trunks": [10, 20], "link_down": true, "mtu": 1, "queues": 4}),
        Some(NET0),
    );
    assert_eq!(
        set.after.as_deref(),
        Some("virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=1,link_down=1,mtu=1,queues=4,tag=20,trunks=10;20")
    );
}

#[test]
fn mtu_is_ignored_with_a_warning_on_other_models() {
    let p = plan_of(
        json!({"interface": "net0", "mtu": 9000}),
        Some("e1000=BC:24:11:5E:7A:01,bridge=vmbr0"),
    );
    assert!(!p.changed());
    assert!(p.warnings[0].starts_with("Ignoring MTU for nic net0 on VM with vmid 100, model should be set to 'virtio'"));
}

#[test]
fn absent_reports_the_mac_it_removes() {
    let p = plan_of(json!({"interface": "net0", "state": "absent"}), Some(NET0));
    assert_eq!(p.action, Some(Action::Delete { key: "net0".into() }));
    assert_eq!(p.msg, "Nic net0 deleted on VM with vmid 100");
    assert_eq!(p.mac.as_deref(), Some("BC:24:11:5E:7A:01"));
    assert_eq!(p.diff.before["net0"], json!(NET0));
    let gone = plan_of(json!({"interface": "net3", "state": "absent"}), None);
    assert!(!gone.changed());
    assert_eq!(gone.msg, "Nic net3 does not exist on VM with vmid 100");
}

#[test]
fn diff_shows_the_entry_before_and_after() {
    let p = plan_of(json!({"interface": "net0", "tag": 30}), Some(NET0));
    assert_eq!(p.diff.before["net0"], json!(NET0));
    assert_eq!(
        p.diff.after["net0"],
        json!("virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=1,tag=30")
    );
}

#[test]
fn bad_input_names_the_option() {
    let cases = [
        (
            json!({"interface": "net32"}),
            "interface must be net0 to net31, got: net32",
        ),
        (
            json!({"interface": "eth0"}),
            "interface must be net0 to net31, got: eth0",
        ),
        (
            json!({"interface": "net0", "queues": 65}),
            "queues must be from 1 to 64",
        ),
        (json!({"interface": "net0", "tag": 4095}), "tag must be from 1 to 4094"),
        (
            json!({"interface": "net0", "mtu": 70000}),
            "mtu must be from 1 to 65520",
        ),
        (json!({"interface": "net0", "trunks": [0]}), "trunks must be VLAN ids"),
        (
            json!({"interface": "net0", "rate": -1.0}),
            "rate must be a positive number",
        ),
        (json!({"interface": "net0", "mac": "zz:11"}), "mac \"zz:11\""),
        (json!({"interface": "net0", "mac": "01:00:5E:00:00:01"}), "multicast"),
    ];
    for (args, expected) in cases {
        let e = task(args.clone()).unwrap_err();
        assert!(e.contains(expected), "{args}: {e}");
    }
}
