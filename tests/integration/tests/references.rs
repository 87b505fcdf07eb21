//! What a task references — storage, ISO image, import source, pool, clone template —
//! is checked before any write, so a dry run fails where the real run would, with the
//! same message naming what is missing and what is there.

use ferrox_integration::{Env, PlayOpts};

/// Runs `task` in check mode and for real: both fail with the same message, nothing is
/// written. Returns the message.
fn refused_alike(env: &Env, task: &str) -> String {
    env.clear_requests();
    let dry = env.play_with(task, &PlayOpts { check: true, ..Default::default() });
    let real = env.play(task);
    let (d, r) = (dry.task("t"), real.task("t"));
    assert!(d.failed && r.failed, "both fail:\ncheck: {}\nreal: {}", d.result, r.result);
    assert_eq!(d.msg(), r.msg(), "check mode and the real run fail alike");
    let log = env.requests();
    let writes: Vec<&String> = log["counts"].as_object().unwrap().keys().filter(|k| !k.starts_with("GET ") && !k.ends_with("/access/ticket")).collect();
    assert!(writes.is_empty(), "nothing written: {writes:?}");
    r.msg().to_string()
}

#[test]
fn a_missing_iso_fails_listing_the_isos_there() {
    let env = Env::start();
    let msg = refused_alike(
        &env,
        "- name: t\n  ferrox.proxmox.proxmox_kvm: {node: pve1, name: web9, memory: 1024, sata: {sata0: 'isos:iso/missing.iso,media=cdrom'}}\n",
    );
    assert_eq!(
        msg,
        "sata0: volume isos:iso/missing.iso does not exist on node pve1; ISO images on storage isos: isos:iso/debian-13-netinst.iso, isos:iso/virtio-win.iso"
    );
    let msg = refused_alike(&env, "- name: t\n  ferrox.proxmox.proxmox_disk: {vmid: 100, disk: ide3, iso_image: 'isos:iso/nope.iso', media: cdrom}\n");
    assert!(msg.starts_with("ide3: volume isos:iso/nope.iso does not exist on node pve1; ISO images on storage isos: "), "{msg}");
}

#[test]
fn a_storage_must_be_on_the_node_and_hold_disk_images() {
    let env = Env::start();
    let msg = refused_alike(&env, "- name: t\n  ferrox.proxmox.proxmox_kvm: {node: pve1, name: web9, scsi: {scsi0: 'isos:8'}}\n");
    assert_eq!(msg, "scsi0: storage isos on node pve1 does not hold disk images (its content: iso); storages for disk images there: local-lvm, vmdata, nvme-pool");
    let msg = refused_alike(&env, "- name: t\n  ferrox.proxmox.proxmox_kvm: {vmid: 100, update: true, scsi: {scsi1: 'nas:8'}}\n");
    assert!(msg.starts_with("scsi1: storage nas does not exist on node pve1; storages for disk images there: "), "{msg}");
}

#[test]
fn a_missing_pool_and_a_linked_clone_of_a_plain_vm_fail_before_any_write() {
    let env = Env::start();
    let msg = refused_alike(&env, "- name: t\n  ferrox.proxmox.proxmox_kvm: {node: pve1, name: web9, pool: nosuch}\n");
    assert!(msg.starts_with("pool 'nosuch' does not exist (pools: "), "{msg}");
    let msg = refused_alike(&env, "- name: t\n  ferrox.proxmox.proxmox_kvm: {clone: web01, name: web9, full: false}\n");
    assert!(msg.contains("VM 100 is not a template, and a linked clone (full: false) needs one"), "{msg}");
}
