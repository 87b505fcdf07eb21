//! proxmox_kvm clones (tests/anchor/clone.yml): volume naming of linked and full clones,
//! new MACs, and PVE's synchronous refusals.

use serde_json::Value;

use super::support::shared_run;

fn node_of(listing: &Value, vmid: u64) -> String {
    listing["proxmox_vms"]
        .as_array()
        .and_then(|a| a.iter().find(|g| g["vmid"] == vmid))
        .and_then(|g| g["node"].as_str())
        .unwrap_or_else(|| panic!("no guest {vmid} in {listing}"))
        .to_string()
}

#[test]
fn proxmox_kvm_clones() {
    let run = shared_run("clone.yml");

    let linked = run.task("linked clone").ok().changed(true);
    linked.msg_is("VM linked with newid 501 cloned from vm with vmid 9000");
    assert_eq!(
        linked.result["vmid"], 501,
        "an explicit newid comes back as given: {}",
        linked.result
    );
    run.task("linked clone with storage").failed().msg_is(
        "Unable to clone vm linked-two from vmid 9000: 500 Internal Server Error: parameter 'storage' not allowed for linked clones",
    );
    run.task("clone to other node")
        .ok()
        .changed(true)
        .msg_is("VM remote with newid 502 cloned from vm with vmid 9000");
    run.task("clone local vm to other node").failed().msg_is(
        "Unable to clone vm nope from vmid 100: 500 Internal Server Error: can't clone VM to node 'pve2' (VM uses local storage)",
    );
    run.task("full clone onto other storage")
        .ok()
        .changed(true)
        .msg_is("VM copy with newid 504 cloned from vm with vmid 100");
    run.task("clone of unknown source")
        .failed()
        .msg_is("VM with name = no-such-vm does not exist in cluster");

    // A linked clone on file storage points at the template's base volume; the cloud-init
    // drive is always copied in full; every NIC gets a new MAC.
    let l = run.task("linked config").ok().config().clone();
    assert_eq!(
        l["scsi0"], "vmdata:9000/base-9000-disk-0.qcow2/501/vm-501-disk-0.qcow2,discard=on,size=3G",
        "{l}"
    );
    assert_eq!(l["ide2"], "vmdata:501/vm-501-cloudinit.qcow2,media=cdrom", "{l}");
    let net = l["net0"].as_str().unwrap_or_default();
    assert!(net.starts_with("virtio=BC:24:11:") && !net.contains("90:00:01"), "{l}");
    assert!(l.get("template").is_none(), "{l}");

    // Read after the copy became a template (below): its disk is a base volume by then.
    let c = run.task("copy config").ok().config().clone();
    assert_eq!(c["scsi0"], "nvme-pool:base-504-disk-0,iothread=1,size=32G", "{c}");
    assert_eq!(
        c["ide2"], "none,media=cdrom",
        "an empty cdrom is copied as configuration: {c}"
    );
    assert_eq!(c["name"], "copy");

    // Converting renames the disks to base volumes; a linked clone on zfs builds on them.
    run.task("convert the copy to a template")
        .ok()
        .changed(true)
        .msg_is("VM 504 is converting to template");
    let t = run.task("template config").ok().config().clone();
    assert_eq!(t["scsi0"], "nvme-pool:base-504-disk-0,iothread=1,size=32G", "{t}");
    assert_eq!(t["template"], 1, "{t}");
    run.task("linked clone of the new template")
        .ok()
        .changed(true)
        .msg_is("VM linked-copy with newid 506 cloned from vm with vmid 504");
    let lc = run.task("linked copy config").ok().config().clone();
    assert_eq!(
        lc["scsi0"], "nvme-pool:base-504-disk-0/vm-506-disk-0,iothread=1,size=32G",
        "{lc}"
    );

    let listing = run.task("listing").ok();
    assert_eq!(listing.vmids(), vec![100, 501, 502, 504, 506, 9000]);
    assert_eq!(
        node_of(&listing.result, 502),
        "pve2",
        "target moves the clone to the other node"
    );
    assert_eq!(node_of(&listing.result, 501), "pve1");
}
