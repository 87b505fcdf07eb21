//! Disk operations: attach, detach to unusedN, resize, move, unlink, cloud-init.

use crate::common::*;

#[test]
fn resize_move_unlink_and_detach() {
    let api = Api::start(quick());
    // Add a disk on a stopped VM: allocated and applied.
    assert_eq!(
        api.put(
            "/nodes/pve1/qemu/100/config",
            &[("scsi1", "local-lvm:8,cache=writeback")]
        )
        .status,
        200
    );
    let c = api.config("pve1", 100);
    assert_eq!(c["scsi1"], "local-lvm:vm-100-disk-1,cache=writeback,size=8G");
    // Grow by 2G ('+' must be encoded as %2B; the test client does that).
    assert_eq!(
        api.run_task(
            "PUT",
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "scsi1"), ("size", "+2G")]
        ),
        "OK"
    );
    assert_eq!(
        api.config("pve1", 100)["scsi1"],
        "local-lvm:vm-100-disk-1,cache=writeback,size=10G"
    );
    // Absolute size, same size (no-op), shrink, cdrom, missing disk.
    assert_eq!(
        api.run_task(
            "PUT",
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "scsi1"), ("size", "12G")]
        ),
        "OK"
    );
    assert_eq!(
        api.run_task(
            "PUT",
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "scsi1"), ("size", "12G")]
        ),
        "OK"
    );
    assert_eq!(
        api.run_task(
            "PUT",
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "scsi1"), ("size", "4G")]
        ),
        "shrinking disks is not supported"
    );
    assert_eq!(
        api.run_task(
            "PUT",
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "ide2"), ("size", "+1G")]
        ),
        "you can't resize a cdrom"
    );
    assert_eq!(
        api.run_task(
            "PUT",
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "scsi5"), ("size", "+1G")]
        ),
        "disk 'scsi5' does not exist"
    );
    // A literal '+' in a form decodes to a space: PVE's regex error.
    let raw = raw_tls(
        &api.sim,
        format!("PUT /api2/json/nodes/pve1/qemu/100/resize HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 21\r\nConnection: close\r\n\r\ndisk=scsi1&size=+2G&x").as_bytes(),
    );
    assert!(raw.starts_with("HTTP/1.1 400 Parameter verification failed."), "{raw}");
    assert!(
        raw.contains(r#""size":"value does not match the regex pattern""#),
        "{raw}"
    );
    // Move to file storage: qcow2, old volume kept as unused0.
    let r = api.post(
        "/nodes/pve1/qemu/100/move_disk",
        &[("disk", "scsi1"), ("storage", "local-lvm")],
    );
    assert_eq!(r.message(), "you can't move to the same storage with same format\n");
    let r = api.post("/nodes/pve1/qemu/100/move_disk", &[("disk", "scsi1")]);
    assert_eq!(
        r.error("storage"),
        "both 'storage' and 'target-vmid' missing, either needs to be set"
    );
    assert_eq!(
        r.error("target-vmid"),
        "both 'storage' and 'target-vmid' missing, either needs to be set"
    );
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/move_disk",
            &[("disk", "scsi1"), ("storage", "vmdata"), ("format", "qcow2")]
        ),
        "OK"
    );
    let c = api.config("pve1", 100);
    assert_eq!(c["scsi1"], "vmdata:100/vm-100-disk-0.qcow2,cache=writeback,size=12G");
    assert_eq!(c["unused0"], "local-lvm:vm-100-disk-1");
    // `move-disk` spelling, delete=1 frees the source.
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/move-disk",
            &[("disk", "scsi1"), ("storage", "nvme-pool"), ("delete", "1")]
        ),
        "OK"
    );
    let c = api.config("pve1", 100);
    assert_eq!(c["scsi1"], "nvme-pool:vm-100-disk-0,cache=writeback,size=12G");
    assert!(c.get("unused1").is_none());
    let vmdata = api.get("/nodes/pve1/storage/vmdata/content?vmid=100");
    assert_eq!(
        vmdata.data().as_array().unwrap().len(),
        0,
        "source freed: {}",
        vmdata.raw
    );
    // Detach via delete: becomes unused1; unlink with force frees.
    assert_eq!(
        api.put("/nodes/pve1/qemu/100/config", &[("delete", "scsi1")]).status,
        200
    );
    let c = api.config("pve1", 100);
    assert_eq!(c["unused1"], "nvme-pool:vm-100-disk-0");
    assert!(c.get("scsi1").is_none());
    assert_eq!(
        api.put("/nodes/pve1/qemu/100/unlink", &[("idlist", "unused0,unused1")])
            .body,
        serde_json::json!({"data": null})
    );
    let c = api.config("pve1", 100);
    assert!(c.get("unused0").is_none() && c.get("unused1").is_none());
    let lvm = api.get("/nodes/pve1/storage/local-lvm/content?vmid=100");
    assert_eq!(lvm.data().as_array().unwrap().len(), 1, "only scsi0 left: {}", lvm.raw);
    // Replacing a disk's volume moves the old one to unusedN.
    assert_eq!(
        api.put("/nodes/pve1/qemu/100/config", &[("scsi0", "local-lvm:4")])
            .status,
        200
    );
    let c = api.config("pve1", 100);
    assert_eq!(c["scsi0"], "local-lvm:vm-100-disk-1,size=4G");
    assert_eq!(c["unused0"], "local-lvm:vm-100-disk-0");
    assert_eq!(
        api.put("/nodes/pve1/qemu/100/unlink", &[("idlist", "scsi0"), ("force", "1")])
            .status,
        200
    );
    assert!(api.config("pve1", 100).get("scsi0").is_none());
    // Boot order lost the deleted disk.
    assert_eq!(api.config("pve1", 100)["boot"], "order=ide2;net0");
}

#[test]
fn cloud_init_tpm_cdrom_and_running_disks() {
    let api = Api::start(quick());
    let st = api.run_task(
        "POST",
        "/nodes/pve2/qemu",
        &[
            ("vmid", "300"),
            ("scsi0", "local-lvm:2"),
            ("ide0", "local-lvm:cloudinit"),
            ("tpmstate0", "local-lvm:1,version=v2.0"),
            ("cdrom", "isos:iso/virtio-win.iso"),
            ("ciuser", "admin"),
            ("cipassword", "secret"),
            ("ipconfig0", "ip=dhcp"),
        ],
    );
    assert_eq!(st, "OK");
    let c = api.config("pve2", 300);
    assert_eq!(c["ide0"], "local-lvm:vm-300-cloudinit,media=cdrom");
    assert_eq!(c["tpmstate0"], "local-lvm:vm-300-disk-1,size=4M,version=v2.0");
    assert_eq!(c["ide2"], "isos:iso/virtio-win.iso,media=cdrom,size=708M");
    assert_eq!(c["cipassword"], "**********");
    assert_eq!(
        c["boot"], "order=scsi0;ide0",
        "first disk, first cdrom (the cloud-init drive counts as one)"
    );
    let r = api.put("/nodes/pve2/qemu/300/config", &[("sata1", "local-lvm:cloudinit")]);
    assert_eq!(
        r.error("sata1"),
        "sata1 - cloud-init drive is already attached at 'ide0'"
    );
    // Running VM: scsi disk hotplugs; sata stays pending; cdrom media change is live.
    assert_eq!(api.run_task("POST", "/nodes/pve2/qemu/300/status/start", &[]), "OK");
    assert_eq!(
        api.put(
            "/nodes/pve2/qemu/300/config",
            &[
                ("scsi1", "local-lvm:1"),
                ("sata0", "local-lvm:1"),
                ("ide2", "none,media=cdrom")
            ]
        )
        .status,
        200
    );
    let cur = api.get("/nodes/pve2/qemu/300/config?current=1");
    // Drives are allocated in PVE's walk order (sata before scsi).
    assert_eq!(cur.data()["scsi1"], "local-lvm:vm-300-disk-3,size=1G");
    assert!(cur.data().get("sata0").is_none(), "sata never hotplugs");
    assert_eq!(cur.data()["ide2"], "none,media=cdrom");
    let pending = api.get("/nodes/pve2/qemu/300/pending");
    let sata = pending
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["key"] == "sata0")
        .unwrap()
        .clone();
    assert_eq!(sata["pending"], "local-lvm:vm-300-disk-2,size=1G");
    // Disk hotplug off: deleting a scsi disk stays pending.
    assert_eq!(
        api.put("/nodes/pve2/qemu/300/config", &[("hotplug", "network,usb")])
            .status,
        200
    );
    assert_eq!(
        api.put("/nodes/pve2/qemu/300/config", &[("delete", "scsi1")]).status,
        200
    );
    assert!(api
        .get("/nodes/pve2/qemu/300/config?current=1")
        .data()
        .get("scsi1")
        .is_some());
    assert!(api.get("/nodes/pve2/qemu/300/config").data().get("scsi1").is_none());
    assert_eq!(api.run_task("POST", "/nodes/pve2/qemu/300/status/stop", &[]), "OK");
    let c = api.config("pve2", 300);
    assert_eq!(c["sata0"], "local-lvm:vm-300-disk-2,size=1G");
    assert_eq!(c["unused0"], "local-lvm:vm-300-disk-3");
}

#[test]
fn an_explicit_format_must_be_the_volumes_own() {
    let api = Api::start(quick());
    // Re-attaching with the volume's own format is fine and keeps format= in the string.
    assert_eq!(
        api.put(
            "/nodes/pve1/qemu/100/config",
            &[("scsi0", "local-lvm:vm-100-disk-0,format=raw")]
        )
        .status,
        200
    );
    assert_eq!(
        api.config("pve1", 100)["scsi0"],
        "local-lvm:vm-100-disk-0,format=raw,size=32G"
    );
    // Another format: PVE's create_disks refuses (in the task for POST, 500 for PUT).
    let refused =
        "drive 'scsi0' - volume 'local-lvm:vm-100-disk-0' - 'format=qcow2' option different from storage format 'raw'";
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/config",
            &[("scsi0", "local-lvm:vm-100-disk-0,format=qcow2")]
        ),
        refused
    );
    let r = api.put(
        "/nodes/pve1/qemu/100/config",
        &[("scsi0", "local-lvm:vm-100-disk-0,format=qcow2")],
    );
    assert_eq!((r.status, r.message()), (500, format!("{refused}\n")));
    // ISO volumes count as raw.
    assert_eq!(
        api.put(
            "/nodes/pve1/qemu/100/config",
            &[("ide2", "isos:iso/debian-13-netinst.iso,media=cdrom,format=raw")]
        )
        .status,
        200
    );
}

#[test]
fn reassign_refusals_in_pve_order() {
    let api = Api::start(quick());
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "160"), ("scsi0", "local-lvm:1")]),
        "OK"
    );
    assert_eq!(api.run_task("POST", "/nodes/pve2/qemu", &[("vmid", "170")]), "OK");
    let refused = |form: &[(&str, &str)]| api.post("/nodes/pve1/qemu/100/move_disk", form).message();
    assert_eq!(
        refused(&[("disk", "scsi0"), ("target-vmid", "9000")]),
        "Can't move disks from or to template VMs\n"
    );
    assert_eq!(
        refused(&[("disk", "scsi0"), ("target-vmid", "170")]),
        "Both VMs need to be on the same node (pve1 != pve2)\n"
    );
    assert_eq!(
        refused(&[("disk", "scsi0"), ("target-vmid", "160")]),
        "Target disk key 'scsi0' is already in use for VM '160'\n"
    );
    assert_eq!(
        refused(&[("disk", "scsi7"), ("target-vmid", "160")]),
        "Disk 'scsi7' for VM '100' does not exist\n"
    );
    assert_eq!(
        refused(&[("disk", "ide2"), ("target-vmid", "160")]),
        "CD drive contents can't be moved to another VM\n"
    );
    assert_eq!(
        refused(&[("disk", "scsi0"), ("target-vmid", "4242")]),
        "could not find target VM 4242\n"
    );
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    assert_eq!(
        refused(&[("disk", "scsi0"), ("target-vmid", "160"), ("target-disk", "scsi1")]),
        "Cannot move disk to another VM while the source VM is running - detach first\n"
    );
}

#[test]
fn bridges_are_listed_per_node() {
    let api = Api::start(quick());
    let r = api.get("/nodes/pve1/network?type=any_bridge");
    assert_eq!(r.status, 200);
    let names: Vec<&str> = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["iface"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["vmbr0", "vmbr1"]);
    assert!(r.data().as_array().unwrap().iter().all(|i| i["type"] == "bridge"));
    let r = api.get("/nodes/pve1/network?type=nonsense");
    assert_eq!(r.status, 400);
}

#[test]
fn a_running_move_shows_its_copy_line() {
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(serde_json::json!({"task_type": "qmmove", "duration_ms": 1500, "times": 1})),
    );
    let r = api.post(
        "/nodes/pve1/qemu/100/move_disk",
        &[("disk", "scsi0"), ("storage", "nvme-pool")],
    );
    let upid = r.data().as_str().expect("UPID").to_string();
    assert_eq!(
        api.task_log(&upid),
        vec!["create full clone of drive scsi0 (local-lvm:vm-100-disk-0)".to_string()]
    );
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    let log = api.task_log(&upid);
    assert_eq!(log[0], "create full clone of drive scsi0 (local-lvm:vm-100-disk-0)");
    assert_eq!(
        log.iter().filter(|l| l.starts_with("create full clone")).count(),
        1,
        "{log:?}"
    );
}
