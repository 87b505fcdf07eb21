//! Writes whose answer was lost (pvesim's `after: true`: PVE carries the request out,
//! then the connection drops) are reconciled by reading the cluster: the task is found
//! and followed, or the config re-read and re-planned; nothing is done twice, the result
//! warns what was recovered, and a rerun changes nothing. Writes PVE provably did not act
//! on (lock timeout, 503, connection refused) are simply sent again.

use crate::disk_scenario::once;
use ferrox_integration::Env;
use serde_json::{json, Value};

const DISK: &str = "ferrox.proxmox.proxmox_disk";

fn count(env: &Env, key: &str) -> u64 {
    env.requests()["counts"][key].as_u64().unwrap_or(0)
}

fn vms_named(env: &Env, name: &str) -> Vec<Value> {
    env.guests_listed().into_iter().filter(|g| g["name"] == name).collect()
}

fn recovered(warnings: &[String]) -> &String {
    warnings
        .iter()
        .find(|w| w.contains("Recovered by reading the cluster"))
        .unwrap_or_else(|| panic!("no recovery warning in {warnings:?}"))
}

fn lose_answer(env: &Env, method: &str, path_regex: &str) {
    env.fault(json!({"method": method, "path_regex": path_regex, "after": true, "times": 1}));
}

const CREATE: &str = "- name: c\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: r01\n    scsi:\n      scsi0: local-lvm:4\n    net:\n      net0: virtio,bridge=vmbr0\n      net1: virtio,bridge=vmbr1\n";

#[test]
fn a_create_whose_answer_was_lost_follows_its_task_instead_of_posting_again() {
    let env = Env::start();
    lose_answer(&env, "POST", "^/api2/json/nodes/pve1/qemu$");
    let play = env.run(CREATE);
    play.assert_ok();
    let t = play.task("c");
    assert!(t.changed);
    let w = recovered(&t.warnings()).clone();
    assert!(w.starts_with("POST /nodes/pve1/qemu to https://127.0.0.1:"), "{w}");
    assert!(
        w.contains("the connection was closed after the request was sent"),
        "{w}"
    );
    assert!(
        w.contains("task UPID:pve1:") && w.contains(":qmcreate:101:") && w.contains("created VM 101 with the name r01"),
        "{w}"
    );
    assert_eq!(count(&env, "POST /api2/json/nodes/pve1/qemu"), 1, "posted once");
    assert_eq!(vms_named(&env, "r01").len(), 1);
    let config = env.api_get("/nodes/pve1/qemu/101/config");
    assert!(
        config["scsi0"].as_str().unwrap().starts_with("local-lvm:vm-101-disk-0"),
        "{config}"
    );
    assert_eq!(
        t.result["mac"]["net1"],
        json!(config["net1"].as_str().unwrap().split(['=', ',']).nth(1).unwrap())
    );
    let again = env.run(CREATE);
    again.assert_ok();
    assert!(!again.task("c").changed, "{}", again.task("c").result);
}

#[test]
fn a_create_pve_never_saw_is_posted_again() {
    let env = Env::start();
    // The connection drops before PVE handles the request: no VM, no task.
    env.fault(
        json!({"method": "POST", "path_regex": "^/api2/json/nodes/pve1/qemu$", "drop_connection": true, "times": 1}),
    );
    let play = env.run(CREATE);
    play.assert_ok();
    let w = recovered(&play.task("c").warnings()).clone();
    assert!(
        w.contains("VM 101 does not exist and no task of this run created it; sent again"),
        "{w}"
    );
    assert_eq!(count(&env, "POST /api2/json/nodes/pve1/qemu"), 2);
    assert_eq!(vms_named(&env, "r01").len(), 1);
}

#[test]
fn a_failed_create_task_found_after_a_lost_answer_may_be_another_runs_so_the_create_is_posted_again() {
    // Parallel runs share the API user: a failed create of this vmid by "us" cannot be told
    // from another run's. The failed create has cleaned up, so posting again is safe.
    let env = Env::start();
    lose_answer(&env, "POST", "^/api2/json/nodes/pve1/qemu$");
    env.fault(
        json!({"task_type": "qmcreate", "fail": "lvcreate 'pve/vm-101-disk-0' error: lvcreate timed out", "times": 1}),
    );
    let play = env.run(CREATE);
    play.assert_ok();
    let w = recovered(&play.task("c").warnings()).clone();
    assert!(
        w.contains("a create task for VM 101 by the same user (UPID:pve1:")
            && w.contains("lvcreate timed out), maybe another run's; sent again"),
        "{w}"
    );
    assert_eq!(count(&env, "POST /api2/json/nodes/pve1/qemu"), 2);
    assert_eq!(vms_named(&env, "r01").len(), 1);
}

#[test]
fn a_failed_create_task_fails_at_once_with_its_log() {
    let env = Env::start();
    env.fault(
        json!({"task_type": "qmcreate", "fail": "lvcreate 'pve/vm-101-disk-0' error: lvcreate timed out", "times": 1}),
    );
    let t = env.run(CREATE).task("c").clone();
    assert!(t.failed);
    assert!(
        t.msg().contains("lvcreate timed out") && t.msg().contains("UPID:pve1:"),
        "{}",
        t.msg()
    );
    assert_eq!(
        count(&env, "POST /api2/json/nodes/pve1/qemu"),
        1,
        "a failed task is not retried"
    );
    assert!(vms_named(&env, "r01").is_empty());
}

#[test]
fn a_config_write_whose_answer_was_lost_is_reread_and_not_applied_twice() {
    let env = Env::start();
    lose_answer(&env, "PUT", "^/api2/json/nodes/pve1/qemu/100/config$");
    let yaml = "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n    net:\n      net1: virtio,bridge=vmbr1\n";
    let play = env.run(yaml);
    play.assert_ok();
    let t = play.task("u");
    assert!(t.changed);
    assert!(
        recovered(&t.warnings()).contains("the config of VM 100 shows the change applied"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(count(&env, "PUT /api2/json/nodes/pve1/qemu/100/config"), 1);
    let config = env.api_get("/nodes/pve1/qemu/100/config");
    assert_eq!(config["cores"], json!(6));
    let mac = config["net1"].as_str().unwrap().to_string();
    let again = env.run(yaml);
    assert!(!again.task("u").changed);
    assert_eq!(
        env.api_get("/nodes/pve1/qemu/100/config")["net1"],
        json!(mac),
        "MAC kept"
    );
}

#[test]
fn a_disk_add_whose_answer_was_lost_leaves_one_disk_and_no_unused_volume() {
    let env = Env::start();
    lose_answer(&env, "POST", "^/api2/json/nodes/pve1/qemu/100/config$");
    let t = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi1, storage: local-lvm, size: 8}",
        false,
    );
    assert!(!t.failed, "{}", t.result);
    assert!(t.changed);
    assert!(
        recovered(&t.warnings()).contains("shows the change made"),
        "{:?}",
        t.warnings()
    );
    let config = env.api_get("/nodes/pve1/qemu/100/config");
    assert!(
        config["scsi1"].as_str().unwrap().starts_with("local-lvm:vm-100-disk-1"),
        "{config}"
    );
    assert!(
        config.as_object().unwrap().keys().all(|k| !k.starts_with("unused")),
        "{config}"
    );
    let vols = env.api_get("/nodes/pve1/storage/local-lvm/content?vmid=100");
    assert_eq!(vols.as_array().unwrap().len(), 2, "{vols}");
    assert!(
        !once(
            &env,
            DISK,
            "{vmid: 100, disk: scsi1, storage: local-lvm, size: 8}",
            false
        )
        .changed
    );
}

#[test]
fn a_disk_write_hitting_a_lock_timeout_is_sent_again() {
    let env = Env::start();
    env.fault(
        json!({"method": "POST", "path_regex": "^/api2/json/nodes/pve1/qemu/100/config$", "status": 500,
        "message": "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout", "times": 2}),
    );
    let t = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi1, storage: local-lvm, size: 8}",
        false,
    );
    assert!(!t.failed, "{}", t.result);
    assert_eq!(count(&env, "POST /api2/json/nodes/pve1/qemu/100/config"), 3);
    assert!(env.api_get("/nodes/pve1/qemu/100/config")["scsi1"].is_string());
}

#[test]
fn a_resize_and_a_move_whose_answers_were_lost_follow_their_tasks() {
    let env = Env::start();
    lose_answer(&env, "PUT", "^/api2/json/nodes/pve1/qemu/100/resize$");
    let t = once(&env, DISK, "{vmid: 100, disk: scsi0, size: 40G, state: resized}", false);
    assert!(!t.failed && t.changed, "{}", t.result);
    assert!(
        recovered(&t.warnings()).contains("shows the change made"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(count(&env, "PUT /api2/json/nodes/pve1/qemu/100/resize"), 1);
    assert!(env.api_get("/nodes/pve1/qemu/100/config")["scsi0"]
        .as_str()
        .unwrap()
        .contains("size=40G"));

    lose_answer(&env, "POST", "^/api2/json/nodes/pve1/qemu/100/move_disk$");
    let t = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, target_storage: vmdata, state: moved, delete_moved: true}",
        false,
    );
    assert!(!t.failed && t.changed, "{}", t.result);
    assert!(
        recovered(&t.warnings()).contains("shows the change made"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(
        count(&env, "POST /api2/json/nodes/pve1/qemu/100/move_disk"),
        1,
        "moved once"
    );
    let config = env.api_get("/nodes/pve1/qemu/100/config");
    assert!(
        config["scsi0"]
            .as_str()
            .unwrap()
            .starts_with("vmdata:100/vm-100-disk-0"),
        "{config}"
    );
    assert!(
        config.as_object().unwrap().keys().all(|k| !k.starts_with("unused")),
        "{config}"
    );
}

#[test]
fn a_clone_whose_answer_was_lost_is_not_cloned_twice() {
    let env = Env::start();
    lose_answer(&env, "POST", "^/api2/json/nodes/pve1/qemu/9000/clone$");
    let yaml = "- name: k\n  ferrox.proxmox.proxmox_kvm:\n    clone: base-debian13\n    name: rc01\n    full: false\n    cores: 3\n";
    let play = env.run(yaml);
    play.assert_ok();
    let t = play.task("k");
    assert!(t.changed);
    assert!(
        recovered(&t.warnings()).contains("VM 101 exists with the name rc01"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(count(&env, "POST /api2/json/nodes/pve1/qemu/9000/clone"), 1);
    assert_eq!(vms_named(&env, "rc01").len(), 1);
    assert_eq!(env.api_get("/nodes/pve1/qemu/101/config")["cores"], json!(3));
    assert!(!env.run(yaml).task("k").changed);
}

#[test]
fn a_delete_whose_answer_was_lost_follows_its_task() {
    let env = Env::start();
    lose_answer(&env, "DELETE", "^/api2/json/nodes/pve1/qemu/100$");
    let yaml = "- name: d\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: absent\n";
    let play = env.run(yaml);
    play.assert_ok();
    let t = play.task("d");
    assert!(t.changed);
    assert!(
        recovered(&t.warnings()).contains("removed VM 100"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(count(&env, "DELETE /api2/json/nodes/pve1/qemu/100"), 1);
    assert!(
        env.api_get("/nodes/pve1/storage/local-lvm/content?vmid=100")
            .as_array()
            .unwrap()
            .is_empty(),
        "volume freed once"
    );
    assert!(!env.run(yaml).task("d").changed);
}

#[test]
fn a_nic_write_whose_answer_was_lost_keeps_one_mac() {
    let env = Env::start();
    lose_answer(&env, "PUT", "^/api2/json/nodes/pve1/qemu/100/config$");
    let yaml = "- name: n\n  ferrox.proxmox.proxmox_nic:\n    vmid: 100\n    interface: net1\n    bridge: vmbr1\n";
    let play = env.run(yaml);
    play.assert_ok();
    let t = play.task("n");
    assert!(t.changed);
    assert!(
        recovered(&t.warnings()).contains("shows the change of net1 made"),
        "{:?}",
        t.warnings()
    );
    let net1 = env.api_get("/nodes/pve1/qemu/100/config")["net1"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        net1.contains(t.result["mac"].as_str().unwrap()),
        "{net1} / {}",
        t.result
    );
    assert!(!env.run(yaml).task("n").changed);
}

#[test]
fn a_task_found_after_a_lost_answer_still_gives_its_warnings() {
    let task_warnings = |warnings: &[String]| -> usize {
        warnings
            .iter()
            .filter(|w| w.starts_with("Proxmox VE task UPID:pve1:") && w.ends_with("WARN: simulated warning 1"))
            .count()
    };
    let env = Env::start();
    lose_answer(&env, "PUT", "^/api2/json/nodes/pve1/qemu/100/resize$");
    env.fault(json!({"task_type": "resize", "warnings": 1, "times": 1}));
    let t = once(&env, DISK, "{vmid: 100, disk: scsi0, size: 40G, state: resized}", false);
    assert!(!t.failed && t.changed, "{}", t.result);
    recovered(&t.warnings());
    assert_eq!(task_warnings(&t.warnings()), 1, "proxmox_disk: {:?}", t.warnings());

    lose_answer(&env, "DELETE", "^/api2/json/nodes/pve1/qemu/100$");
    env.fault(json!({"task_type": "qmdestroy", "warnings": 1, "times": 1}));
    let play = env.run("- name: d\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: absent\n");
    let t = play.task("d");
    assert!(!t.failed && t.changed, "{}", t.result);
    recovered(&t.warnings());
    assert_eq!(task_warnings(&t.warnings()), 1, "proxmox_kvm: {:?}", t.warnings());
}

#[test]
fn the_warnings_of_tasks_before_a_failure_are_kept() {
    let env = Env::start();
    env.fault(json!({"task_type": "qmconfig", "warnings": 1, "times": 1}));
    env.fault(json!({"method": "PUT", "path_regex": "^/api2/json/nodes/pve1/qemu/100/resize$", "status": 500, "message": "resize refused", "times": 1}));
    let t = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, storage: local-lvm, size: 40, cache: writeback}",
        false,
    );
    assert!(t.failed, "{}", t.result);
    assert!(t.msg().contains("resize refused"), "{}", t.msg());
    assert!(
        t.warnings()
            .iter()
            .any(|w| w.starts_with("Proxmox VE task UPID:pve1:") && w.ends_with("WARN: simulated warning 1")),
        "the config change ran and warned before the resize failed: {:?}",
        t.warnings()
    );
}
