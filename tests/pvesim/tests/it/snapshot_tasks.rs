//! Snapshot workers as pve-guest-common's AbstractConfig runs them: the lock and
//! `snapstate` while they run, their refusals (template, lock, incomplete snapshot) as
//! task failures, a failed create cleaned up, a failed delete leaving its lock, a running
//! VM stopped by a rollback, and the guest migration lock a second delete waits for.

use crate::common::*;
use serde_json::{json, Value};

fn snapshot<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list.as_array().unwrap().iter().find(|e| e["name"] == name)
}

fn set_config(api: &Api, vmid: u32, key: &str, value: Value) {
    let mut state = api.control("GET", "/_pvesim/state", None);
    state["guests"][vmid.to_string()]["conf"]["current"][key] = value;
    api.control("POST", "/_pvesim/state", Some(state));
}

fn slow(api: &Api, task_type: &str, ms: u64) {
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": task_type, "duration_ms": ms, "times": 1})),
    );
}

#[test]
fn a_running_snapshot_task_holds_the_lock_and_snapstate() {
    let api = Api::start(quick());
    slow(&api, "qmsnapshot", 1500);
    let r = api.post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "s1")]);
    let upid = r.data().as_str().unwrap().to_string();
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert_eq!(snapshot(list.data(), "s1").unwrap()["snapstate"], "prepare");
    assert_eq!(api.config("pve1", 100)["lock"], "snapshot");
    let second = api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "s2")]);
    assert_eq!(second, "VM is locked (snapshot)");
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert!(snapshot(list.data(), "s1").unwrap().get("snapstate").is_none());
    let config = api.config("pve1", 100);
    assert!(config.get("lock").is_none(), "{config}");
    assert_eq!(config["parent"], "s1");
}

#[test]
fn refusals_are_task_failures_in_pve_order_and_change_nothing() {
    let api = Api::start(quick());
    set_config(&api, 100, "lock", json!("backup"));
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "s1")]),
        "VM is locked (backup)"
    );
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/9000/snapshot", &[("snapname", "s1")]),
        "you can't take a snapshot if it's a template"
    );
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert_eq!(list.data().as_array().unwrap().len(), 1, "only `current`");
    assert_eq!(api.config("pve1", 100)["lock"], "backup");
    let r = api.post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "PENDING")]);
    assert_eq!(r.message(), "unable to use snapshot name 'pending' (reserved name)\n");
    let r = api.post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "1st")]);
    assert_eq!(r.status, 400);
    assert_eq!(r.error("snapname"), "invalid format - invalid configuration ID '1st'\n");
}

#[test]
fn a_failed_create_is_cleaned_up_and_a_failed_delete_keeps_its_lock() {
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmsnapshot", "fail": "lvcreate 'pve/snap_vm-100-disk-0_s1' error: Insufficient free space", "times": 1})),
    );
    let r = api.post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "s1")]);
    let upid = r.data().as_str().unwrap().to_string();
    assert_eq!(
        api.wait_task(&upid)["exitstatus"],
        "lvcreate 'pve/snap_vm-100-disk-0_s1' error: Insufficient free space"
    );
    assert!(api
        .task_log(&upid)
        .contains(&"snapshot create failed: starting cleanup".to_string()));
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert!(snapshot(list.data(), "s1").is_none());
    assert!(api.config("pve1", 100).get("lock").is_none());

    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "s1")]),
        "OK"
    );
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmdelsnapshot", "fail": "zfs error: dataset is busy", "times": 1})),
    );
    assert_eq!(
        api.run_task("DELETE", "/nodes/pve1/qemu/100/snapshot/s1", &[]),
        "zfs error: dataset is busy"
    );
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert_eq!(snapshot(list.data(), "s1").unwrap()["snapstate"], "delete");
    assert_eq!(api.config("pve1", 100)["lock"], "snapshot-delete");
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", &[]),
        "unable to rollback to incomplete snapshot (snapstate = delete)"
    );
}

#[test]
fn a_rollback_stops_a_running_vm_and_starts_it_only_when_asked() {
    let api = Api::start(quick());
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "s1")]),
        "OK"
    );
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", &[]),
        "OK"
    );
    let status = api.get("/nodes/pve1/qemu/100/status/current");
    assert_eq!(status.data()["status"], "stopped");
    assert!(api.config("pve1", 100).get("lock").is_none());
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", &[("start", "1")]),
        "OK"
    );
    let tasks = api.get("/nodes/pve1/tasks?vmid=100&typefilter=qmstart&source=all");
    let upid = tasks.data()[0]["upid"].as_str().unwrap().to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    let status = api.get("/nodes/pve1/qemu/100/status/current");
    assert_eq!(status.data()["status"], "running");

    // The RAM is saved only from a running VM, and a rollback to it starts the VM again.
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/snapshot",
            &[("snapname", "with-ram"), ("vmstate", "1")]
        ),
        "OK"
    );
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert_eq!(snapshot(list.data(), "with-ram").unwrap()["vmstate"], 1);
    assert_eq!(snapshot(list.data(), "s1").unwrap()["vmstate"], 0);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/with-ram/rollback", &[]),
        "OK"
    );
    assert_eq!(
        api.get("/nodes/pve1/qemu/100/status/current").data()["status"],
        "running"
    );
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/stop", &[]), "OK");
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/snapshot",
            &[("snapname", "stopped-ram"), ("vmstate", "1")]
        ),
        "OK"
    );
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert_eq!(
        snapshot(list.data(), "stopped-ram").unwrap()["vmstate"],
        0,
        "a stopped VM has no RAM to save"
    );
}

#[test]
fn a_second_delete_waits_for_the_migration_lock_of_the_first() {
    let api = Api::start(quick());
    for name in ["s1", "s2", "s3"] {
        assert_eq!(
            api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", name)]),
            "OK"
        );
    }
    // Within the 10 s flock timeout: the second delete runs after the first.
    slow(&api, "qmdelsnapshot", 600);
    let first = api.delete("/nodes/pve1/qemu/100/snapshot/s1", &[]);
    let second = api.delete("/nodes/pve1/qemu/100/snapshot/s2", &[]);
    let (first, second) = (
        first.data().as_str().unwrap().to_string(),
        second.data().as_str().unwrap().to_string(),
    );
    assert_eq!(api.wait_task(&first)["exitstatus"], "OK");
    assert_eq!(api.wait_task(&second)["exitstatus"], "OK");
    // Past it: the waiting delete fails as PVE's worker does, and changes nothing.
    slow(&api, "qmdelsnapshot", 12_000);
    let r = api.post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "s4")]);
    api.wait_task(r.data().as_str().unwrap());
    let long = api.delete("/nodes/pve1/qemu/100/snapshot/s3", &[]);
    let blocked = api.delete("/nodes/pve1/qemu/100/snapshot/s4", &[]);
    let blocked = blocked.data().as_str().unwrap().to_string();
    assert_eq!(
        api.wait_task(&blocked)["exitstatus"],
        "Failed to obtain guest migration lock - replication running?"
    );
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert!(snapshot(list.data(), "s4").unwrap().get("snapstate").is_none());
    assert_eq!(api.wait_task(long.data().as_str().unwrap())["exitstatus"], "OK");
}
