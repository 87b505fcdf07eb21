//! proxmox_disk moves (tests/anchor/disk_moves.yml): PVE's synchronous refusals, as
//! qemu-server checks them before forking the move task, and a live storage move.

use super::support::Anchor;

fn refused(disk: &str, why: &str) -> String {
    format!("Failed to move disk {disk} in VM 100 with exception: 500 Internal Server Error: {why}")
}

#[test]
fn proxmox_disk_moves() {
    let anchor = Anchor::start();
    let run = anchor.run("disk_moves.yml");

    run.task("target vm on the same node").ok().changed(true);
    run.task("target vm on the other node").ok().changed(true);
    run.task("move to the template")
        .failed()
        .msg_is(&refused("scsi0", "Can't move disks from or to template VMs"));
    run.task("move onto a used key").failed().msg_is(&refused(
        "scsi0",
        "Target disk key 'scsi0' is already in use for VM '160'",
    ));
    run.task("move to a vm on another node")
        .failed()
        .msg_is(&refused("scsi0", "Both VMs need to be on the same node (pve1 != pve2)"));
    run.task("move a cdrom")
        .failed()
        .msg_is(&refused("ide2", "you can't move a cdrom"));
    run.task("start source").ok().changed(true);
    run.task("move from a running vm to another vm")
        .failed()
        .msg_is(&refused(
            "scsi0",
            "Cannot move disk to another VM while the source VM is running - detach first",
        ));
    run.task("live move to another storage")
        .ok()
        .changed(true)
        .msg_is("Disk scsi0 moved from VM 100 storage local-lvm");

    // Without delete, the source volume stays as unusedN.
    let c = run.task("config after live move").ok().config().clone();
    assert_eq!(c["scsi0"], "nvme-pool:vm-100-disk-0,iothread=1,size=32G", "{c}");
    assert_eq!(c["unused0"], "local-lvm:vm-100-disk-0", "{c}");
}
