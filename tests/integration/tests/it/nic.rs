//! proxmox_nic in process against the simulator (`Env::run`): create, converge,
//! set and unset falsy values, keep what the task does not mention, the MAC on every
//! result, delete, bad input and faults, and the API calls each operation costs.

use crate::disk_scenario::{calls, converge, once, writes};
use ferrox_integration::Env;
use serde_json::{json, Value};

const NIC: &str = "ferrox.proxmox.proxmox_nic";
/// VM 100's NIC in the default scenario.
const NET0: &str = "virtio=BC:24:11:10:00:01,bridge=vmbr0,firewall=1";

fn net(env: &Env, key: &str) -> Value {
    env.api_get("/nodes/pve1/qemu/100/config")[key].clone()
}

#[test]
fn creates_a_nic_and_returns_the_generated_mac() {
    let env = Env::start();
    let runs = converge(
        &env,
        NIC,
        "{vmid: 100, interface: net1, bridge: vmbr1, tag: 20, firewall: false}",
    );
    eprintln!("API calls, nic create: {:?}", runs.real_calls);
    assert_eq!(runs.real.msg(), "Nic net1 updated on VM with vmid 100");
    assert_eq!(runs.dry.result["mac"], Value::Null);
    assert_eq!(
        runs.dry.result["nic_config"],
        json!("virtio=(known after apply),bridge=vmbr1,tag=20")
    );
    assert_eq!(runs.dry.result["known_after_apply"], json!(["mac"]));
    assert_eq!(
        runs.dry.result["diff"]["after"]["net1"],
        json!("virtio=(known after apply),bridge=vmbr1,tag=20")
    );
    let mac = runs.real.result["mac"].as_str().expect("mac on the result").to_string();
    assert!(mac.starts_with("BC:24:11:"), "{mac}");
    assert_eq!(net(&env, "net1"), json!(format!("virtio={mac},bridge=vmbr1,tag=20")));
    assert_eq!(runs.real.result["nic_config"], net(&env, "net1"));
    assert_eq!(
        runs.real.result["diff"]["after"]["net1"],
        net(&env, "net1"),
        "the real diff shows the MAC PVE gave"
    );
    assert!(runs.real.result.get("known_after_apply").is_none());
    assert_eq!(runs.again.msg(), "Nic net1 unchanged on VM with vmid 100");
    assert_eq!(runs.again.result["mac"], json!(mac));
    assert_eq!(writes(&runs.real_calls), 1);
}

#[test]
fn equal_meaning_is_unchanged_and_unmentioned_options_are_kept() {
    let env = Env::start();
    let same = once(
        &env,
        NIC,
        "{vmid: 100, interface: net0, model: virtio, mac: 'bc:24:11:10:00:01', bridge: vmbr0, firewall: yes, link_down: false}",
        false,
    );
    assert!(!same.changed && !same.failed, "{}", same.result);
    assert_eq!(same.result["mac"], json!("BC:24:11:10:00:01"));
    assert_eq!(same.msg(), "Nic net0 unchanged on VM with vmid 100");

    // Only the tag is added: model, MAC, bridge and firewall stay.
    let tagged = converge(&env, NIC, "{name: web01, interface: net0, tag: 30, rate: 12.5}");
    eprintln!("API calls, nic update: {:?}", tagged.real_calls);
    assert_eq!(
        tagged.real.result["changes"],
        json!(["rate: unset -> 12.5", "tag: unset -> 30"])
    );
    assert_eq!(
        net(&env, "net0"),
        json!("virtio=BC:24:11:10:00:01,bridge=vmbr0,firewall=1,rate=12.5,tag=30")
    );
    assert_eq!(tagged.real.result["diff"]["before"]["net0"], json!(NET0));
    assert_eq!(tagged.real.result["diff"]["after"]["net0"], net(&env, "net0"));
    assert_eq!(tagged.dry.result["diff"], tagged.real.result["diff"]);

    // The model changes, the MAC stays.
    let model = converge(&env, NIC, "{vmid: 100, interface: net0, model: e1000}");
    assert_eq!(model.real.result["mac"], json!("BC:24:11:10:00:01"));
    assert!(net(&env, "net0")
        .as_str()
        .unwrap()
        .starts_with("e1000=BC:24:11:10:00:01,"));
}

#[test]
fn falsy_values_can_be_set_and_options_removed() {
    let env = Env::start();
    let set = converge(
        &env,
        NIC,
        "{vmid: 100, interface: net0, trunks: [10, 20], mtu: 1, queues: 4, link_down: true, tag: 5}",
    );
    assert_eq!(
        net(&env, "net0"),
        json!("virtio=BC:24:11:10:00:01,bridge=vmbr0,firewall=1,link_down=1,mtu=1,queues=4,tag=5,trunks=10;20")
    );
    assert!(set.real.changed);
    let unset = converge(
        &env,
        NIC,
        "{vmid: 100, interface: net0, firewall: false, link_down: false, tag: 0, trunks: [], mtu: 0, queues: 0}",
    );
    assert_eq!(
        unset.real.result["changes"],
        json!([
            "firewall: 1 -> 0",
            "link_down: 1 -> 0",
            "mtu: 1 -> removed",
            "queues: 4 -> removed",
            "tag: 5 -> removed",
            "trunks: 10;20 -> removed"
        ])
    );
    assert_eq!(
        net(&env, "net0"),
        json!("virtio=BC:24:11:10:00:01,bridge=vmbr0,firewall=0,link_down=0")
    );
}

#[test]
fn a_given_mac_is_set_and_mtu_on_other_models_warns() {
    let env = Env::start();
    let mac = converge(
        &env,
        NIC,
        "{vmid: 100, interface: net2, model: e1000, mac: '02:aa:bb:cc:dd:ee', bridge: vmbr0, mtu: 9000}",
    );
    assert_eq!(mac.real.result["mac"], json!("02:AA:BB:CC:DD:EE"));
    assert_eq!(mac.dry.result["mac"], json!("02:AA:BB:CC:DD:EE"));
    assert_eq!(net(&env, "net2"), json!("e1000=02:AA:BB:CC:DD:EE,bridge=vmbr0"));
    assert!(
        mac.real
            .warnings()
            .iter()
            .any(|w| w.starts_with("Ignoring MTU for nic net2")),
        "{:?}",
        mac.real.warnings()
    );
}

#[test]
fn absent_removes_and_reports_the_mac() {
    let env = Env::start();
    let runs = converge(&env, NIC, "{vmid: 100, interface: net0, state: absent}");
    eprintln!("API calls, nic delete: {:?}", runs.real_calls);
    assert_eq!(runs.real.msg(), "Nic net0 deleted on VM with vmid 100");
    assert_eq!(runs.dry.result["mac"], json!("BC:24:11:10:00:01"));
    assert_eq!(runs.real.result["mac"], json!("BC:24:11:10:00:01"));
    assert_eq!(runs.real.result["diff"]["before"]["net0"], json!(NET0));
    assert_eq!(runs.again.msg(), "Nic net0 does not exist on VM with vmid 100");
    assert_eq!(net(&env, "net0"), Value::Null);
}

#[test]
fn bad_input_names_the_option_and_writes_nothing() {
    let env = Env::start();
    env.clear_requests();
    let cases = [
        (
            "{vmid: 100, interface: net32, bridge: vmbr0}",
            "interface must be net0 to net31, got: net32",
        ),
        ("{vmid: 100, interface: eth0}", "interface must be net0 to net31"),
        (
            "{vmid: 100, interface: net1, queues: 65}",
            "queues must be from 1 to 64",
        ),
        ("{vmid: 100, interface: net1, tag: 5000}", "tag must be from 1 to 4094"),
        (
            "{vmid: 100, interface: net1, trunks: [10, 9999]}",
            "trunks must be VLAN ids",
        ),
        (
            "{vmid: 100, interface: net1, mac: 'not-a-mac'}",
            "expected a MAC address",
        ),
        (
            "{vmid: 100, interface: net1, model: rtl9999}",
            "value of model must be one of",
        ),
        (
            "{vmid: 555, interface: net1}",
            "VM with vmid 555 does not exist in cluster",
        ),
        ("{interface: net1}", "one of the following is required: name, vmid"),
    ];
    let yaml: String = cases
        .iter()
        .enumerate()
        .map(|(i, (opts, _))| format!("- name: case{i}\n  {NIC}: {opts}\n  ignore_errors: true\n"))
        .collect();
    let play = env.run(&yaml);
    for (i, (opts, expected)) in cases.iter().enumerate() {
        let t = play.task(&format!("case{i}"));
        assert!(t.failed, "{opts} did not fail: {}", t.result);
        assert!(t.msg().contains(expected), "{opts}: {}", t.msg());
    }
    assert_eq!(writes(&calls(&env)), 0, "{:?}", calls(&env));
}

#[test]
fn locked_vm_and_api_errors_lose_nothing() {
    let env = Env::start();
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("lock", "migrate")]);
    assert_eq!(status, 200, "{body}");
    let locked = once(&env, NIC, "{vmid: 100, interface: net0, tag: 7}", true);
    assert!(
        locked.failed && locked.msg().contains("VM 100 is locked (migrate)"),
        "{}",
        locked.msg()
    );
    let (status, body) = env.api(
        "PUT",
        "/nodes/pve1/qemu/100/config",
        &[("delete", "lock"), ("skiplock", "1")],
    );
    assert_eq!(status, 200, "{body}");

    env.fault(json!({"method": "PUT", "path_regex": "/qemu/100/config$", "status": 500, "message": "cluster not ready - no quorum?", "times": 1}));
    let quorum = once(&env, NIC, "{vmid: 100, interface: net0, tag: 7}", false);
    assert!(quorum.failed, "{}", quorum.result);
    assert!(
        quorum
            .msg()
            .starts_with("Unable to change nic net0 on VM with vmid 100: ")
            && quorum.msg().contains("no quorum"),
        "{}",
        quorum.msg()
    );
    assert_eq!(net(&env, "net0"), json!(NET0));
    let rerun = once(&env, NIC, "{vmid: 100, interface: net0, tag: 7}", false);
    assert!(rerun.changed && !rerun.failed, "{}", rerun.result);
}

#[test]
fn a_missing_bridge_fails_before_writing() {
    let env = Env::start();
    env.clear_requests();
    let t = once(&env, NIC, "{vmid: 100, interface: net1, bridge: vmbr9}", false);
    assert!(
        t.failed && t.msg().contains("bridge vmbr9 does not exist on node pve1"),
        "{}",
        t.msg()
    );
    assert_eq!(writes(&calls(&env)), 0);
}

#[test]
fn a_running_vm_without_network_hotplug_reports_pending_changes_in_check_mode_and_for_real() {
    let env = Env::start();
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("hotplug", "disk,usb")]);
    assert_eq!(status, 200, "{body}");
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    // A model change needs network hotplug: pending, predicted and then confirmed.
    let dry = once(&env, NIC, "{vmid: 100, interface: net0, model: e1000}", true);
    assert!(dry.changed && dry.result["pending"] == json!(true), "{}", dry.result);
    assert!(
        dry.warnings()
            .iter()
            .any(|w| w.contains("pending until the VM restarts")),
        "{:?}",
        dry.warnings()
    );
    let real = once(&env, NIC, "{vmid: 100, interface: net0, model: e1000}", false);
    assert_eq!(real.result["pending"], json!(true), "{}", real.result);
    assert_eq!(real.result["mac"], dry.result["mac"]);
    let pending = env.api_get("/nodes/pve1/qemu/100/pending");
    let entry = pending
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "net0")
        .unwrap()
        .clone();
    assert!(entry["pending"].as_str().unwrap().starts_with("e1000="), "{entry}");
    // Once pending, a NIC stays pending whatever changes next: both runs say so.
    let dry = once(&env, NIC, "{vmid: 100, interface: net0, tag: 30}", true);
    assert_eq!(dry.result["pending"], json!(true), "{}", dry.result);
    let real = once(&env, NIC, "{vmid: 100, interface: net0, tag: 30}", false);
    assert_eq!(real.result["pending"], json!(true), "{}", real.result);
    // A new NIC needs network hotplug.
    let dry = once(&env, NIC, "{vmid: 100, interface: net1, bridge: vmbr0}", true);
    assert_eq!(dry.result["pending"], json!(true), "{}", dry.result);
    // After a restart, a tag change applies live even without the feature.
    env.run_task("POST", "/nodes/pve1/qemu/100/status/stop", &[]);
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let dry = once(&env, NIC, "{vmid: 100, interface: net0, tag: 31}", true);
    assert_eq!(dry.result["pending"], json!(false), "{}", dry.result);
    let real = once(&env, NIC, "{vmid: 100, interface: net0, tag: 31}", false);
    assert_eq!(real.result["pending"], json!(false), "{}", real.result);
    assert_eq!(
        net(&env, "net0"),
        json!("e1000=BC:24:11:10:00:01,bridge=vmbr0,firewall=1,tag=31")
    );
}
