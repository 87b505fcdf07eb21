//! Snapshot rollback as pve-guest-common's `snapshot_rollback` and qemu-server's
//! handler run it: the config a rollback writes (the VM's notes and unused disks kept,
//! later disks made unused, a new `vmgenid`), a snapshot with RAM started within the
//! rollback task, ZFS refusing a snapshot that is not a volume's newest, and a VM that
//! does not exist failing the task, not the API call.

use crate::common::*;
use serde_json::{json, Value};

fn set_config(api: &Api, vmid: u32, key: &str, value: Value) {
    let mut state = api.control("GET", "/_pvesim/state", None);
    state["guests"][vmid.to_string()]["conf"]["current"][key] = value;
    api.control("POST", "/_pvesim/state", Some(state));
}

fn task_types(api: &Api, kind: &str) -> usize {
    let path = format!("/nodes/pve1/tasks?vmid=100&typefilter={kind}&source=all");
    api.get(&path).data().as_array().map_or(0, Vec::len)
}

#[test]
fn a_rollback_keeps_the_vm_s_notes_and_unused_disks_and_makes_later_disks_unused() {
    let api = Api::start(quick());
    set_config(&api, 100, "description", json!("notes at s1"));
    set_config(&api, 100, "vmgenid", json!("00000000-0000-4000-8000-000000000001"));
    set_config(&api, 100, "unused0", json!("local-lvm:vm-100-disk-7"));
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/snapshot",
            &[("snapname", "s1"), ("description", "before the disk")]
        ),
        "OK"
    );
    // The snapshot's section has neither the VM's notes nor its unused disks.
    let section = api.get("/nodes/pve1/qemu/100/config?snapshot=s1");
    assert_eq!(section.data()["description"], "before the disk", "{}", section.raw);
    assert!(section.data().get("unused0").is_none(), "{}", section.raw);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "plain")]),
        "OK"
    );
    let plain = api.get("/nodes/pve1/qemu/100/config?snapshot=plain");
    assert!(
        plain.data().get("description").is_none(),
        "a snapshot without a description shows none, not the VM's notes: {}",
        plain.raw
    );

    set_config(&api, 100, "description", json!("notes now"));
    assert_eq!(api.put("/nodes/pve1/qemu/100/config", &[("cores", "4")]).status, 200);
    let added = api.put("/nodes/pve1/qemu/100/config", &[("scsi1", "local-lvm:1")]);
    assert_eq!(added.status, 200, "{}", added.raw);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", &[]),
        "OK"
    );
    let c = api.config("pve1", 100);
    assert_eq!(c["description"], "notes now", "{c}");
    assert_eq!(c["cores"], 2, "{c}");
    assert!(c.get("scsi1").is_none(), "{c}");
    assert_eq!(c["unused0"], "local-lvm:vm-100-disk-7", "{c}");
    assert_eq!(c["unused1"], "local-lvm:vm-100-disk-1", "the later disk: {c}");
    assert_eq!(c["parent"], "s1");
    assert!(c.get("lock").is_none(), "{c}");
    let genid = c["vmgenid"].as_str().unwrap();
    assert_ne!(genid, "00000000-0000-4000-8000-000000000001", "a new generation");
    assert_eq!(genid.len(), 36, "{genid}");
}

#[test]
fn a_rollback_to_a_snapshot_with_ram_starts_the_vm_in_its_own_task() {
    let api = Api::start(quick());
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/snapshot",
            &[("snapname", "with-ram"), ("vmstate", "1")]
        ),
        "OK"
    );
    let starts = task_types(&api, "qmstart");
    for form in [vec![], vec![("start", "1")]] {
        assert_eq!(
            api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/with-ram/rollback", &form),
            "OK"
        );
        // Running when the rollback task ends, and no task of its own started it.
        let status = api.get("/nodes/pve1/qemu/100/status/current");
        assert_eq!(status.data()["status"], "running", "{form:?}");
        assert_eq!(task_types(&api, "qmstart"), starts, "{form:?}");
    }
}

#[test]
fn zfs_rolls_back_only_to_a_volume_s_newest_snapshot() {
    let api = Api::start(quick());
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu",
            &[("vmid", "120"), ("scsi0", "nvme-pool:1"), ("scsi1", "local-lvm:1")]
        ),
        "OK"
    );
    for name in ["s1", "s2", "s3"] {
        let path = "/nodes/pve1/qemu/120/snapshot";
        assert_eq!(api.run_task("POST", path, &[("snapname", name)]), "OK");
    }
    let before = api.config("pve1", 120);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/120/snapshot/s1/rollback", &[]),
        "can't rollback, 's1' is not most recent snapshot on 'nvme-pool:vm-120-disk-0'"
    );
    assert_eq!(api.config("pve1", 120), before, "nothing changed, no lock left");
    // The check comes before the snapshot's state and the VM's lock.
    set_config(&api, 120, "lock", json!("backup"));
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/120/snapshot/s2/rollback", &[]),
        "can't rollback, 's2' is not most recent snapshot on 'nvme-pool:vm-120-disk-0'"
    );
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/120/snapshot/s3/rollback", &[]),
        "VM is locked (backup)"
    );
    let mut state = api.control("GET", "/_pvesim/state", None);
    state["guests"]["120"]["conf"]["current"]
        .as_object_mut()
        .unwrap()
        .remove("lock");
    api.control("POST", "/_pvesim/state", Some(state));
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/120/snapshot/s3/rollback", &[]),
        "OK"
    );
    for later in ["s3", "s2"] {
        let path = format!("/nodes/pve1/qemu/120/snapshot/{later}");
        assert_eq!(api.run_task("DELETE", &path, &[]), "OK");
    }
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/120/snapshot/s1/rollback", &[]),
        "OK"
    );
    // LVM-thin rolls back to any snapshot.
    for name in ["x1", "x2"] {
        let path = "/nodes/pve1/qemu/100/snapshot";
        assert_eq!(api.run_task("POST", path, &[("snapname", name)]), "OK");
    }
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/x1/rollback", &[]),
        "OK"
    );
}

#[test]
fn a_rollback_or_delete_of_a_vm_that_does_not_exist_fails_its_task() {
    let api = Api::start(quick());
    let missing = "Configuration file 'nodes/pve1/qemu-server/4242.conf' does not exist";
    for (method, path) in [
        ("POST", "/nodes/pve1/qemu/4242/snapshot/s1/rollback"),
        ("DELETE", "/nodes/pve1/qemu/4242/snapshot/s1"),
    ] {
        let r = api.send(method, path, &[]);
        assert_eq!(r.status, 200, "{method} {path}: {}", r.raw);
        let upid = r.data().as_str().unwrap().to_string();
        assert_eq!(api.wait_task(&upid)["exitstatus"], missing, "{method} {path}");
    }
    // The privilege checks come first.
    let mut readonly = Api::start(quick());
    readonly.with_auth(vec![("Authorization", READONLY)]);
    let r = readonly.post("/nodes/pve1/qemu/4242/snapshot/s1/rollback", &[]);
    assert_eq!(r.status, 403, "{}", r.raw);
}
