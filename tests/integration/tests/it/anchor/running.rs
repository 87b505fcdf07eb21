//! community.proxmox 1.6.0 changing a running VM (tests/anchor/running.yml): live changes
//! versus pending ones, as PVE decides them with the default hotplug setting.

use super::support::shared_run;

#[test]
fn changes_to_a_running_vm() {
    let run = shared_run("running.yml");

    run.task("start").ok().changed(true).msg_is("VM 100 started");
    run.task("update memory and description")
        .ok()
        .changed(true)
        .msg_is("VM web01 with vmid 100 updated");
    run.task("scsi disk hotplugged")
        .ok()
        .changed(true)
        .msg_is("Disk scsi2 created in VM 100");
    run.task("sata disk pending")
        .ok()
        .changed(true)
        .msg_is("Disk sata1 created in VM 100");
    // The module reads the config with pending changes applied, so a pending disk is up to date.
    run.task("sata disk pending again")
        .ok()
        .changed(false)
        .msg_is("Disk sata1 is up to date in VM 100");
    run.task("cache change pending")
        .ok()
        .changed(true)
        .msg_is("Disk scsi2 updated in VM 100");
    run.task("cache change pending again")
        .ok()
        .changed(false)
        .msg_is("Disk scsi2 is up to date in VM 100");
    run.task("nic hotplugged")
        .ok()
        .changed(true)
        .msg_is("Nic net1 updated on VM with vmid 100");
    run.task("grow running disk")
        .ok()
        .changed(true)
        .msg_is("Disk scsi2 resized in VM 100");
    run.task("import disk")
        .ok()
        .changed(true)
        .msg_is("Disk scsi3 imported into VM 100");

    let current = run.task("config current while running").ok().config().clone();
    let pending = run.task("config pending while running").ok().config().clone();
    // Live: description, the scsi hotplug, the NIC (network hotplug), the resize.
    assert_eq!(current["description"], "changed while running", "{current}");
    assert_eq!(
        current["scsi2"], "local-lvm:vm-100-disk-1,size=2G",
        "hotplugged, resized, cache still pending: {current}"
    );
    assert!(
        current["net1"].as_str().unwrap_or_default().ends_with(",bridge=vmbr1"),
        "{current}"
    );
    // Pending: memory (no memory hotplug), a new sata disk, a cache change.
    assert_eq!(current["memory"], "2048", "{current}");
    assert!(current.get("sata1").is_none(), "sata is never hotplugged: {current}");
    assert_eq!(pending["memory"], "4096", "{pending}");
    assert_eq!(pending["sata1"], "local-lvm:vm-100-disk-2,size=1G", "{pending}");
    // PVE's resize rewrites only the active drive string; the pending one keeps the
    // size it was written with (qemu-server resize_vm sets $conf->{$disk} only).
    assert_eq!(
        pending["scsi2"], "local-lvm:vm-100-disk-1,cache=writeback,size=1G",
        "{pending}"
    );
    // Imported from a 3G image onto block storage.
    assert_eq!(
        pending["scsi3"].as_str().map(|s| s.ends_with(",size=3G")),
        Some(true),
        "{pending}"
    );

    // revert drops a pending change (1.6 reports it unconditionally as changed).
    run.task("revert pending memory")
        .ok()
        .changed(true)
        .msg_is("Settings has reverted on VM web01 with vmid 100");
    let reverted = run.task("config pending after revert").ok().config().clone();
    assert_eq!(reverted["memory"], "2048", "{reverted}");
    assert_eq!(
        reverted["sata1"], "local-lvm:vm-100-disk-2,size=1G",
        "other pending changes stay: {reverted}"
    );

    run.task("stop").ok().changed(true).msg_is("VM 100 is shutting down");
    let after = run.task("config current after stop").ok().config().clone();
    assert_eq!(after["memory"], "2048", "{after}");
    assert_eq!(
        after["sata1"], "local-lvm:vm-100-disk-2,size=1G",
        "a stop applies pending changes: {after}"
    );
    assert_eq!(
        after["scsi2"], "local-lvm:vm-100-disk-1,cache=writeback,size=1G",
        "the pending string wins, stale size and all"
    );
}
