//! proxmox_kvm configuration round trip (tests/anchor/kvm_config.yml): what PVE stores for
//! what community.proxmox 1.6 sends, read back through proxmox_vm_info.

use serde_json::json;

use super::support::shared_run;

#[test]
fn proxmox_kvm_configuration_round_trip() {
    let run = shared_run("kvm_config.yml");

    let created = run
        .task("create configured")
        .ok()
        .changed(true)
        .msg_is("VM cloud with vmid 410 deployed");
    // PVE allocates drives in its own order: scsi before efidisk0 before tpmstate0; the
    // cloud-init volume has its own name.
    assert_eq!(
        created.result["devices"],
        json!({"scsi0": "local-lvm:vm-410-disk-0", "ide2": "local-lvm:vm-410-cloudinit"}),
        "{}",
        created.result
    );
    let mac = created.result["mac"]["net0"].as_str().unwrap_or_default().to_string();
    assert!(mac.starts_with("BC:24:11:"), "{}", created.result);

    let c = run.task("configured config").ok().config().clone();
    assert_eq!(c["scsi0"], "local-lvm:vm-410-disk-0,discard=on,size=2G,ssd=1", "{c}");
    assert_eq!(c["ide2"], "local-lvm:vm-410-cloudinit,media=cdrom");
    // 1.6 renders pre-enrolled-keys as True; PVE normalises property-string booleans to 1.
    let efi = c["efidisk0"].as_str().unwrap_or_default();
    assert!(
        efi.starts_with("local-lvm:vm-410-disk-1,efitype=4m,")
            && efi.contains("pre-enrolled-keys=1")
            && efi.ends_with("size=4M"),
        "efidisk0 {efi:?}"
    );
    assert_eq!(c["tpmstate0"], "local-lvm:vm-410-disk-2,size=4M,version=v2.0");
    assert_eq!(c["net0"], format!("virtio={mac},bridge=vmbr0,tag=20"));
    assert_eq!(c["boot"], "order=scsi0;ide2;net0");
    assert_eq!(c["ciuser"], "admin");
    assert_eq!(c["cipassword"], "**********", "PVE masks the cloud-init password");
    // 1.6 percent-encodes sshkeys itself; PVE stores the encoded form.
    assert_eq!(
        c["sshkeys"],
        "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIAnchor%20anchor%40example"
    );
    assert_eq!(c["ipconfig0"], "ip=192.0.2.10/24,gw=192.0.2.1");
    assert_eq!(c["nameserver"], "192.0.2.53 192.0.2.54");
    assert_eq!(c["searchdomain"], "example.org");
    assert_eq!(c["tags"], "prod;web", "PVE lowercases, sorts and joins tags with ';'");
    assert_eq!(c["agent"], "enabled=1,fstrim_cloned_disks=1");
    assert_eq!(c["description"].as_str().map(str::trim_end), Some("line one\nline two"));
    assert_eq!(
        (&c["protection"], &c["onboot"]),
        (&json!(1), &json!(1)),
        "booleans are numbers: {c}"
    );
    assert_eq!(
        (&c["bios"], &c["machine"], &c["memory"]),
        (&json!("ovmf"), &json!("q35"), &json!("2048"))
    );
    assert!(
        c["smbios1"].as_str().unwrap_or_default().starts_with("uuid="),
        "PVE adds smbios1: {c}"
    );
    assert!(
        c["vmgenid"].is_string() && c["meta"].is_string(),
        "PVE adds vmgenid and meta: {c}"
    );

    // 1.6 defect: with update_unsafe, a NIC given without MAC gets a new one from PVE.
    run.task("unsafe update of the nic (1.6 defect)")
        .ok()
        .changed(true)
        .msg_is("VM cloud with vmid 410 updated");
    // 1.6 defect: disk keys are dropped without update_unsafe, yet read back afterwards,
    // so the applied update reports a KeyError.
    run.task("update naming a disk the vm lacks (1.6 defect)")
        .failed()
        .msg_is("Unable to update vm cloud with vmid 410: 'scsi7'");
    let updated = run.task("config after updates").ok().config().clone();
    let net0 = updated["net0"].as_str().unwrap_or_default();
    assert!(
        net0.starts_with("virtio=BC:24:11:") && net0.ends_with(",bridge=vmbr0,tag=20") && !net0.contains(&mac),
        "a new MAC replaced {mac}: {updated}"
    );
    assert_eq!(
        updated["cores"], 4,
        "the update was applied before the failure: {updated}"
    );
    assert!(updated.get("scsi7").is_none(), "{updated}");

    // 1.6 defect: unset efidisk0 sub-options are sent as the text None, which PVE rejects.
    let efi_none = run.task("efidisk0 with unset sub-options (1.6 defect)").failed();
    assert!(
        efi_none.msg().starts_with(
            "creation of qemu VM efi-none with vmid 411 failed with exception=400 Bad Request: Parameter verification failed. - {'efidisk0': "
        ) && efi_none.msg().contains("None"),
        "{}",
        efi_none.result
    );

    run.task("absent protected").failed().msg_is(
        "deletion of VM 410 failed with exception: 500 Internal Server Error: can't remove VM 410 - protection mode enabled",
    );
    run.task("unprotect")
        .ok()
        .changed(true)
        .msg_is("VM cloud with vmid 410 updated");
    run.task("absent unprotected")
        .ok()
        .changed(true)
        .msg_is("VM 410 removed");
    assert_eq!(run.task("listing at the end").ok().vmids(), vec![100, 9000]);
}
