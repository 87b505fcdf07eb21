//! proxmox_disk (tests/anchor/disk.yml) on VM 100: create, no-op, option update, resize
//! (grow, same size, refused shrink), move to another storage and to another VM, detach,
//! absent, CD-ROM media, creation disabled.

use super::support::Anchor;

#[test]
fn proxmox_disk_lifecycle() {
    let anchor = Anchor::start();
    let run = anchor.run("disk.yml");

    let created = run
        .task("create")
        .ok()
        .changed(true)
        .msg_is("Disk scsi1 created in VM 100");
    assert_eq!(created.result["vmid"], 100);
    // The stored string (volume, size=8G) compares equal with the task: no-op.
    run.task("create again")
        .ok()
        .changed(false)
        .msg_is("Disk scsi1 is up to date in VM 100");
    run.task("update options")
        .ok()
        .changed(true)
        .msg_is("Disk scsi1 updated in VM 100");
    run.task("update options again")
        .ok()
        .changed(false)
        .msg_is("Disk scsi1 is up to date in VM 100");

    // resize: PVE >= 8 runs it as a task; a relative size always changes.
    run.task("grow relative")
        .ok()
        .changed(true)
        .msg_is("Disk scsi1 resized in VM 100");
    run.task("resize to current size")
        .ok()
        .changed(false)
        .msg_is("Disk scsi1 is already 9G size");
    // PVE refuses to shrink inside the resize task; the module reports the task's exitstatus.
    run.task("shrink refused")
        .failed()
        .msg_is("Error occurred on task execution: shrinking disks is not supported");
    run.task("resize missing disk")
        .failed()
        .msg_is("Unable to process missing disk scsi9 in VM 100");

    run.task("move to storage")
        .ok()
        .changed(true)
        .msg_is("Disk scsi1 moved from VM 100 storage local-lvm");
    run.task("move to same storage")
        .ok()
        .changed(false)
        .msg_is("Disk scsi1 already at vmdata storage");
    run.task("second vm")
        .ok()
        .changed(true)
        .msg_is("VM anchor-disk-target with vmid 150 deployed");
    run.task("move to other vm")
        .ok()
        .changed(true)
        .msg_is("Disk scsi1 moved from VM 100 storage vmdata");
    // Not repeatable in 1.6: the disk is gone from the source VM.
    run.task("move to other vm again")
        .failed()
        .msg_is("Unable to process missing disk scsi1 in VM 100");
    let target = run.task("config of target vm").ok().config().clone();
    assert_eq!(
        target["scsi3"], "vmdata:150/vm-150-disk-0.qcow2,discard=on,iothread=1,size=9G",
        "the volume is renamed for its new owner and keeps its options: {target}"
    );

    run.task("detach")
        .ok()
        .changed(true)
        .msg_is("Disk scsi3 detached from VM 150");
    run.task("detach again")
        .ok()
        .changed(false)
        .msg_is("Disk scsi3 not present in VM 150 config");
    run.task("detach unused")
        .ok()
        .changed(false)
        .msg_is("Disk unused0 already detached in VM 150");
    let detached = run.task("config after detach").ok().config().clone();
    assert_eq!(detached["unused0"], "vmdata:150/vm-150-disk-0.qcow2", "{detached}");
    assert!(detached.get("scsi3").is_none(), "{detached}");

    run.task("create to remove")
        .ok()
        .changed(true)
        .msg_is("Disk virtio1 created in VM 100");
    run.task("absent")
        .ok()
        .changed(true)
        .msg_is("Disk virtio1 removed from VM 100");
    run.task("absent again")
        .ok()
        .changed(false)
        .msg_is("Disk virtio1 is already absent in VM 100");

    run.task("insert iso")
        .ok()
        .changed(true)
        .msg_is("Disk ide2 updated in VM 100");
    // PVE stores the ISO with its size=, which the no-op comparison needs.
    run.task("insert iso again")
        .ok()
        .changed(false)
        .msg_is("Disk ide2 is up to date in VM 100");
    run.task("eject iso")
        .ok()
        .changed(true)
        .msg_is("Disk ide2 updated in VM 100");
    run.task("eject iso again")
        .ok()
        .changed(false)
        .msg_is("Disk ide2 is up to date in VM 100");
    run.task("new cdrom drive")
        .ok()
        .changed(true)
        .msg_is("CD-ROM was created on sata0 bus in VM 100");
    run.task("create disabled")
        .ok()
        .changed(false)
        .msg_is("Disk scsi5 not found in VM 100 and creation was disabled in parameters.");

    let config = run.task("final config").ok().config().clone();
    for gone in ["scsi1", "virtio1", "scsi5", "unused0"] {
        assert!(config.get(gone).is_none(), "{gone} must be gone: {config}");
    }
    assert_eq!(config["ide2"], "none,media=cdrom");
    assert_eq!(config["sata0"], "isos:iso/virtio-win.iso,media=cdrom,size=708M");
    assert_eq!(
        config["scsi0"], "local-lvm:vm-100-disk-0,iothread=1,size=32G",
        "untouched"
    );
}
