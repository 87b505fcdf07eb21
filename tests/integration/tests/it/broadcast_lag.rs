//! PVE lists a new VM's name in `/cluster/resources` only with its node's next status
//! broadcast (up to 10 s later). A create does not wait for it: it returns once the VM is
//! listed, and every module that looks a VM up by name reads the name of such an unnamed
//! VM from its config. Here the simulator's broadcast lags 30 s, longer than the play.

use ferrox_integration::Env;
use serde_json::{json, Value};

fn lagging() -> Env {
    Env::start_with(pvesim::SimConfig {
        resources_lag_ms: 30_000,
        ..Default::default()
    })
}

const CREATE: &str = "- name: create
  ferrox.proxmox.proxmox_kvm:
    name: lag01
    node: pve1
    cores: 1
    memory: 512
    net: {net0: 'virtio,bridge=vmbr0'}
";

/// The `/cluster/resources` entry of `vmid`.
fn listed(env: &Env, vmid: u64) -> Value {
    let listing = env.api_get("/cluster/resources?type=vm");
    listing
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["vmid"] == vmid)
        .cloned()
        .expect("listed")
}

#[test]
fn a_vm_created_moments_ago_is_found_by_name_by_every_module() {
    let env = lagging();
    let play = env.run(&format!(
        "{CREATE}
- name: again
  ferrox.proxmox.proxmox_kvm:
    name: lag01
    node: pve1
    cores: 1
    memory: 512
- name: disk
  ferrox.proxmox.proxmox_disk:
    name: lag01
    disk: scsi1
    storage: local-lvm
    size: 1
- name: nic
  ferrox.proxmox.proxmox_nic:
    name: lag01
    interface: net1
    bridge: vmbr0
- name: info
  ferrox.proxmox.proxmox_vm_info:
    name: lag01
"
    ));
    play.assert_ok();
    let vmid = play.task("create").result["vmid"].as_u64().expect("the new VM's vmid");
    assert_eq!(
        listed(&env, vmid).get("name"),
        None,
        "the broadcast has not named it yet: {}",
        listed(&env, vmid)
    );
    let again = play.task("again");
    assert!(!again.changed, "{}", again.result);
    assert_eq!(again.result["vmid"], json!(vmid), "found, not created twice");
    assert!(play.task("disk").changed && play.task("nic").changed);
    let config = env.api_get(&format!("/nodes/pve1/qemu/{vmid}/config"));
    assert!(config["scsi1"].is_string() && config["net1"].is_string(), "{config}");
    let info = &play.task("info").result["proxmox_vms"];
    assert_eq!(info.as_array().map(Vec::len), Some(1), "{info}");
    assert_eq!(info[0]["vmid"], json!(vmid));
    let vms = env.api_get("/cluster/resources?type=vm");
    assert_eq!(
        vms.as_array()
            .unwrap()
            .iter()
            .filter(|g| g["node"] == "pve1" && g.get("name").is_none())
            .count(),
        1,
        "one VM, made once"
    );
}

/// A create as an API token, at its minimum of calls: the listing, the node's bridges,
/// `nextid`, the caller's permissions, the create, its task, one listing (the VM is
/// there, and no other VM carries its name), the config read back.
#[test]
fn a_create_makes_eight_calls() {
    let env = lagging();
    env.clear_requests();
    let play = env.run(CREATE);
    play.assert_ok();
    let log = env.requests();
    let counts = log["counts"].as_object().unwrap();
    let calls: u64 = counts.values().filter_map(Value::as_u64).sum();
    assert_eq!(calls, 8, "{counts:?}");
    assert_eq!(counts["GET /api2/json/cluster/resources"], json!(2), "{counts:?}");
}

/// A VM another run made moments ago, which the listing does not name yet, is found by
/// name: the task converges onto it instead of making the name twice.
#[test]
fn a_vm_another_run_made_moments_ago_is_not_made_twice() {
    let env = lagging();
    env.run_task(
        "POST",
        "/nodes/pve2/qemu",
        &[("vmid", "150"), ("name", "lag01"), ("memory", "512")],
    );
    assert_eq!(listed(&env, 150).get("name"), None);
    let play = env.run(CREATE);
    play.assert_ok();
    let t = play.task("create");
    assert_eq!(t.result["vmid"], json!(150), "{}", t.result);
    assert!(!t.changed, "{}", t.result);
    assert_eq!(
        env.api_get("/cluster/resources?type=vm").as_array().unwrap().len(),
        listed_before(&env),
        "nothing made"
    );
}

/// The number of guests of the default scenario plus the one made by the test.
fn listed_before(_env: &Env) -> usize {
    pvesim::scenario::Scenario::default_cluster().guests.len() + 1
}
