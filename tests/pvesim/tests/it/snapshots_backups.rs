//! Snapshots (create, list, config, rollback, delete, clone from one) and backups
//! (vzdump) restored with `archive` on create.

use crate::common::*;
use serde_json::{json, Value};

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn snapshot_create_rollback_delete() {
    let api = Api::start(quick());
    let r = api.post("/nodes/pve1/qemu/100/snapshot", &[("snapname", "current")]);
    assert_eq!(r.message(), "unable to use snapshot name 'current' (reserved name)\n");
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/snapshot",
            &[("snapname", "before"), ("description", "first")]
        ),
        "OK"
    );
    assert_eq!(api.config("pve1", 100)["parent"], "before");
    assert_eq!(
        api.run_task(
            "PUT",
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "scsi0"), ("size", "40G")]
        ),
        "OK"
    );
    assert_eq!(api.put("/nodes/pve1/qemu/100/config", &[("cores", "4")]).status, 200);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "after")]),
        "OK"
    );
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "after")]),
        "snapshot name 'after' already used"
    );

    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    let mut n = names(list.data());
    n.sort();
    assert_eq!(n, vec!["after", "before", "current"]);
    let after = list
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "after")
        .unwrap();
    assert_eq!(after["parent"], "before");
    assert_eq!(after["vmstate"], 0);
    let current = list
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "current")
        .unwrap();
    assert_eq!(
        (current["parent"].as_str(), current["running"].as_u64()),
        (Some("after"), Some(0))
    );
    assert_eq!(current["description"], "You are here!");
    let snapconf = api.get("/nodes/pve1/qemu/100/config?snapshot=before");
    assert_eq!(snapconf.data()["cores"], 2);
    assert_eq!(snapconf.data()["description"], "first");
    assert!(snapconf.data()["snaptime"].is_u64());

    // A template cannot have snapshots.
    let r = api.post("/nodes/pve1/qemu/100/template", &[]);
    assert_eq!(
        r.message(),
        "unable to create template, because VM contains snapshots\n"
    );
    // Clone from a snapshot: the config of that moment.
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/clone",
            &[("newid", "150"), ("snapname", "before")]
        ),
        "OK"
    );
    assert_eq!(api.config("pve1", 150)["cores"], 2);
    assert!(api.config("pve1", 150).get("parent").is_none());
    // clone_vm copies every key of the snapshot's section: its own description with them.
    assert_eq!(api.config("pve1", 150)["description"], "first");
    // `if ($param->{description})`: a description of "0" is Perl's false and sets nothing.
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/clone",
            &[("newid", "152"), ("snapname", "before"), ("description", "0")]
        ),
        "OK"
    );
    assert_eq!(api.config("pve1", 152)["description"], "first");

    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/before/rollback", &[]),
        "OK"
    );
    let c = api.config("pve1", 100);
    assert_eq!((c["cores"].as_u64(), c["parent"].as_str()), (Some(2), Some("before")));
    assert!(c["scsi0"].as_str().unwrap().ends_with("size=32G"), "{c}");
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/snapshot/nope/rollback", &[]),
        "snapshot 'nope' does not exist"
    );
    assert_eq!(
        api.run_task("DELETE", "/nodes/pve1/qemu/100/snapshot/before", &[]),
        "OK"
    );
    let list = api.get("/nodes/pve1/qemu/100/snapshot");
    assert_eq!(names(list.data()), vec!["after", "current"]);
    assert!(
        list.data()[0].get("parent").is_none(),
        "the child of a deleted root has no parent"
    );
    assert!(api.config("pve1", 100).get("parent").is_none());

    // Raw files on a dir/nfs storage cannot snapshot.
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu",
            &[("vmid", "151"), ("scsi0", "vmdata:1,format=raw")]
        ),
        "OK"
    );
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/151/snapshot", &[("snapname", "snap")]),
        "snapshot feature is not available"
    );
}

#[test]
fn vzdump_then_restore_with_archive() {
    let api = Api::start(quick());
    let r = api.post("/nodes/pve1/vzdump", &[("vmid", "100"), ("storage", "local-lvm")]);
    assert_eq!(r.message(), "storage 'local-lvm' does not support backups\n");
    let r = api.post(
        "/nodes/pve1/vzdump",
        &[
            ("vmid", "100"),
            ("storage", "local"),
            ("mode", "snapshot"),
            ("compress", "zstd"),
        ],
    );
    let upid = r.data().as_str().expect("UPID").to_string();
    assert!(upid.contains(":vzdump:100:"), "{upid}");
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    let content = api.get("/nodes/pve1/storage/local/content?content=backup");
    let b = &content.data()[0];
    let volid = b["volid"].as_str().unwrap().to_string();
    assert!(
        volid.starts_with("local:dump/vzdump-qemu-100-") && volid.ends_with(".vma.zst"),
        "{volid}"
    );
    assert_eq!(
        (b["format"].as_str(), b["subtype"].as_str(), b["vmid"].as_u64()),
        (Some("vma.zst"), Some("qemu"), Some(100))
    );

    let source = api.config("pve1", 100);
    // Drive keys conflict with archive; an existing vmid needs force.
    let r = api.post(
        "/nodes/pve1/qemu",
        &[("vmid", "160"), ("archive", &volid), ("scsi1", "local-lvm:1")],
    );
    assert_eq!(
        (r.status, r.error("scsi1")),
        (400, "option conflicts with option 'archive'".into())
    );
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "100"), ("archive", &volid)]);
    assert_eq!(
        r.message(),
        "unable to restore VM 100 - VM 100 already exists on node 'pve1'\n"
    );
    let r = api.post(
        "/nodes/pve1/qemu",
        &[("vmid", "160"), ("archive", "local:dump/nope.vma.zst")],
    );
    assert_eq!(r.message(), "volume 'local:dump/nope.vma.zst' does not exist\n");

    let r = api.post(
        "/nodes/pve1/qemu",
        &[
            ("vmid", "160"),
            ("archive", &volid),
            ("storage", "nvme-pool"),
            ("name", "restored"),
            ("pool", "prod"),
        ],
    );
    let upid = r.data().as_str().expect("UPID").to_string();
    assert!(upid.contains(":qmrestore:160:"), "{upid}");
    assert_eq!(api.config("pve1", 160)["lock"], "create");
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    let c = api.config("pve1", 160);
    assert_eq!(
        c["name"], "restored",
        "parameters given with archive override the archive's"
    );
    assert_eq!(c["scsi0"], "nvme-pool:vm-160-disk-0,iothread=1,size=32G");
    assert_eq!(c["net0"], source["net0"], "MACs kept without unique");
    assert_ne!(c["vmgenid"], source["vmgenid"]);
    assert_eq!(c["cores"], source["cores"]);
    assert!(api
        .task_log(&upid)
        .iter()
        .any(|l| l == "map 'scsi0' to 'nvme-pool:vm-160-disk-0' (write zeros = 0)"));
    let pool = api.get("/pools?poolid=prod");
    assert_eq!(pool.data()[0]["members"][0]["vmid"], 160);

    // unique: new MACs; force: overwrite an existing VM, its restored disks replaced.
    let r = api.post(
        "/nodes/pve1/qemu",
        &[("vmid", "160"), ("archive", &volid), ("force", "1"), ("unique", "1")],
    );
    assert_eq!(api.wait_task(r.data().as_str().unwrap())["exitstatus"], "OK");
    let c = api.config("pve1", 160);
    assert_ne!(c["net0"], source["net0"]);
    assert_eq!(
        c["scsi0"], "local-lvm:vm-160-disk-0,iothread=1,size=32G",
        "back on the disk's own storage"
    );
    let left = api.get("/nodes/pve1/storage/nvme-pool/content?vmid=160");
    assert_eq!(left.data(), &json!([]), "the replaced disk was freed");
}
