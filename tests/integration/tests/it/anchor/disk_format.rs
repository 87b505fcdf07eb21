//! proxmox_disk with `format` (tests/anchor/disk_format.yml): PVE does not echo `format` on
//! allocation but keeps it when an existing volume is attached with it, and refuses a
//! format that is not the volume's (qemu-server create_disks).

use super::support::Anchor;

#[test]
fn proxmox_disk_format_round_trip() {
    let anchor = Anchor::start();
    let run = anchor.run("disk_format.yml");

    run.task("create with format")
        .ok()
        .changed(true)
        .msg_is("Disk scsi1 created in VM 100");
    let created = run.task("config after create").ok().config()["scsi1"].clone();
    assert_eq!(
        created, "local-lvm:vm-100-disk-1,size=1G",
        "format is dropped on allocation"
    );
    // So 1.6 sees a difference once, and re-attaches the volume with format= written out.
    run.task("create with format again")
        .ok()
        .changed(true)
        .msg_is("Disk scsi1 updated in VM 100");
    run.task("create with format a third time")
        .ok()
        .changed(false)
        .msg_is("Disk scsi1 is up to date in VM 100");
    // The config POST is a task: PVE's refusal is its exitstatus.
    run.task("format differing from the volume").failed().msg_is(
        "Error occurred on task execution: drive 'scsi1' - volume 'local-lvm:vm-100-disk-1' - 'format=qcow2' option different from storage format 'raw'",
    );
    let end = run.task("config at the end").ok().config()["scsi1"].clone();
    assert_eq!(
        end, "local-lvm:vm-100-disk-1,format=raw,size=1G",
        "an attached volume keeps format and gets its size"
    );
    // A size without unit is bytes to PVE: 2048 bytes is a shrink of the 1G disk.
    run.task("resize with a bare number (1.6 pitfall)")
        .failed()
        .msg_is("Error occurred on task execution: shrinking disks is not supported");
}
