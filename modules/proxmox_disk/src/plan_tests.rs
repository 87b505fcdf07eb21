use serde_json::{json, Map, Value};

use ferrox_ansible::options::Params;

use super::*;
use crate::options::options;

fn task(args: Value) -> DiskTask {
    let mut map: Map<String, Value> = options()
        .iter()
        .map(|o| (o.name.to_string(), o.default.clone().unwrap_or(Value::Null)))
        .collect();
    for (k, v) in args.as_object().unwrap() {
        map.insert(k.clone(), v.clone());
    }
    DiskTask::from_params(&Params::new(map)).unwrap_or_else(|e| panic!("{e}"))
}

fn vm(config: Value) -> VmConfig {
    let mut config = config;
    config["digest"] = json!("0123456789abcdef0123456789abcdef01234567");
    VmConfig::new(100, "pve1", config)
}

fn web01() -> VmConfig {
    vm(json!({
        "name": "web01",
        "scsi0": "local-lvm:vm-100-disk-0,iothread=1,size=32G",
        "scsi1": "local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=8G",
        "ide2": "none,media=cdrom",
        "sata0": "/dev/disk/by-id/ata-WDC_1234,backup=0,size=1T",
        "efidisk0": "local-lvm:vm-100-disk-2,efitype=4m,pre-enrolled-keys=1,size=4M",
        "unused0": "local-lvm:vm-100-disk-9",
        "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
    }))
}

fn plan_of(args: Value) -> Result<Plan, String> {
    plan(&task(args), &web01(), None)
}

#[test]
fn create_sends_storage_and_gib_then_options_sorted() {
    let p = plan_of(
        json!({"vmid": 100, "disk": "scsi2", "storage": "local-lvm", "size": "16", "ssd": true, "discard": "on"}),
    )
    .unwrap();
    assert_eq!(
        p.actions,
        vec![Action::SetDrive {
            key: "scsi2".into(),
            value: "local-lvm:16,discard=on,ssd=1".into()
        }]
    );
    assert_eq!(p.msg, "Disk scsi2 created in VM 100");
    assert_eq!(p.changes, vec!["create scsi2 on local-lvm (16G)"]);
    assert_eq!(
        p.diff.after["scsi2"],
        json!("local-lvm:(known after apply),discard=on,size=16G,ssd=1")
    );
    assert_eq!(p.allocates_on.as_deref(), Some("local-lvm"));
    let half = plan_of(json!({"vmid": 100, "disk": "virtio0", "storage": "vmdata", "size": "512M"})).unwrap();
    assert_eq!(
        half.actions,
        vec![Action::SetDrive {
            key: "virtio0".into(),
            value: "vmdata:0.5".into()
        }]
    );
}

#[test]
fn create_needs_storage_and_size() {
    assert_eq!(
        plan_of(json!({"vmid": 100, "disk": "scsi2", "size": "16"})).unwrap_err(),
        "The storage option must be specified."
    );
    let e = plan_of(json!({"vmid": 100, "disk": "scsi2", "storage": "local-lvm"})).unwrap_err();
    assert!(e.contains("size is required"), "{e}");
    let e = plan_of(json!({"vmid": 100, "disk": "scsi2", "storage": "local-lvm", "size": "lots"})).unwrap_err();
    assert!(e.starts_with("size: cannot read"), "{e}");
}

#[test]
fn disabled_creation_is_a_no_op() {
    let p = plan_of(json!({"vmid": 100, "disk": "scsi5", "create": "disabled", "ssd": true})).unwrap();
    assert!(!p.changed());
    assert_eq!(
        p.msg,
        "Disk scsi5 not found in VM 100 and creation was disabled in parameters."
    );
}

#[test]
fn present_converges_only_what_differs_and_keeps_the_rest() {
    let same = plan_of(
        json!({"vmid": 100, "disk": "scsi1", "discard": "on", "cache": "writeback", "backup": true, "size": "8"}),
    )
    .unwrap();
    assert!(!same.changed(), "{:?}", same.changes);
    assert_eq!(same.msg, "Disk scsi1 is up to date in VM 100");
    let p = plan_of(json!({"vmid": 100, "disk": "scsi1", "cache": "none", "iothread": true})).unwrap();
    assert_eq!(p.changes, vec!["cache: writeback -> none", "iothread: unset -> 1"]);
    assert_eq!(
        p.actions,
        vec![Action::SetDrive {
            key: "scsi1".into(),
            value: "local-lvm:vm-100-disk-1,cache=none,discard=on,iothread=1,size=8G".into()
        }]
    );
    assert_eq!(p.msg, "Disk scsi1 updated in VM 100");
}

#[test]
fn present_grows_but_never_shrinks() {
    let p = plan_of(json!({"vmid": 100, "disk": "scsi1", "size": "10"})).unwrap();
    assert_eq!(
        p.actions,
        vec![Action::Resize {
            key: "scsi1".into(),
            size: "10G".into()
        }]
    );
    assert_eq!(p.changes, vec!["size: 8G -> 10G"]);
    assert_eq!(
        p.diff.after["scsi1"],
        json!("local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=10G")
    );
    let e = plan_of(json!({"vmid": 100, "disk": "scsi1", "size": "4"})).unwrap_err();
    assert!(e.contains("is 8G") && e.contains("at least 8G"), "{e}");
    let same = plan_of(json!({"vmid": 100, "disk": "scsi1", "size": "8192M"})).unwrap();
    assert!(!same.changed());
}

#[test]
fn forced_recreate_keeps_the_old_volume() {
    let p =
        plan_of(json!({"vmid": 100, "disk": "scsi1", "create": "forced", "storage": "vmdata", "size": "8"})).unwrap();
    assert_eq!(
        p.actions,
        vec![Action::SetDrive {
            key: "scsi1".into(),
            value: "vmdata:8".into()
        }]
    );
    assert_eq!(p.kept_as, Some(("unused1".into(), "local-lvm:vm-100-disk-1".into())));
    assert_eq!(p.diff.after["unused1"], json!("local-lvm:vm-100-disk-1"));
}

#[test]
fn cdrom_media_changes_and_is_idempotent() {
    let p =
        plan_of(json!({"vmid": 100, "disk": "ide2", "media": "cdrom", "iso_image": "isos:iso/debian-13-netinst.iso"}))
            .unwrap();
    assert_eq!(
        p.actions,
        vec![Action::SetDrive {
            key: "ide2".into(),
            value: "isos:iso/debian-13-netinst.iso,media=cdrom".into()
        }]
    );
    let none = plan_of(json!({"vmid": 100, "disk": "ide2", "media": "cdrom", "iso_image": "none"})).unwrap();
    assert!(!none.changed());
    let e = plan_of(json!({"vmid": 100, "disk": "scsi1", "media": "cdrom", "iso_image": "none"})).unwrap_err();
    assert!(e.contains("not a CD-ROM") && e.contains("state: detached"), "{e}");
    assert_eq!(p.allocates_on, None);
    let new = plan_of(json!({"vmid": 100, "disk": "ide0", "media": "cdrom", "iso_image": "cdrom"})).unwrap();
    assert_eq!(new.msg, "CD-ROM was created on ide0 bus in VM 100");
    assert_eq!(
        new.actions,
        vec![Action::SetDrive {
            key: "ide0".into(),
            value: "cdrom,media=cdrom".into()
        }]
    );
}

#[test]
fn import_creates_with_import_from() {
    let p = plan_of(
        json!({"vmid": 100, "disk": "scsi3", "storage": "local-lvm", "import_from": "local:import/debian.qcow2"}),
    )
    .unwrap();
    assert_eq!(
        p.actions,
        vec![Action::SetDrive {
            key: "scsi3".into(),
            value: "local-lvm:0,import-from=local:import/debian.qcow2".into()
        }]
    );
    assert_eq!(p.msg, "Disk scsi3 imported into VM 100");
    let existing = plan_of(
        json!({"vmid": 100, "disk": "scsi1", "storage": "local-lvm", "import_from": "local:import/debian.qcow2"}),
    )
    .unwrap();
    assert!(!existing.changed());
    assert!(existing.warnings[0].contains("import_from is only used when a disk is created"));
}

#[test]
fn passthrough_efidisk_and_unused_parse_and_converge() {
    let pass = plan_of(json!({"vmid": 100, "disk": "sata0", "backup": false})).unwrap();
    assert!(!pass.changed());
    let efi = plan_of(json!({"vmid": 100, "disk": "efidisk0", "storage": "local-lvm"})).unwrap();
    assert!(!efi.changed());
    let new_tpm = plan_of(json!({"vmid": 100, "disk": "tpmstate0", "storage": "local-lvm"})).unwrap();
    assert_eq!(
        new_tpm.actions,
        vec![Action::SetDrive {
            key: "tpmstate0".into(),
            value: "local-lvm:1".into()
        }]
    );
    assert!(!plan_of(json!({"vmid": 100, "disk": "unused0"})).unwrap().changed());
    assert!(plan_of(json!({"vmid": 100, "disk": "unused3"}))
        .unwrap_err()
        .contains("cannot be created"));
}

#[test]
fn resized_absolute_relative_and_refusals() {
    let p = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "resized", "size": "16G"})).unwrap();
    assert_eq!(
        p.actions,
        vec![Action::Resize {
            key: "scsi1".into(),
            size: "16G".into()
        }]
    );
    assert_eq!(p.msg, "Disk scsi1 resized in VM 100");
    let same = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "resized", "size": "8192M"})).unwrap();
    assert_eq!(same.msg, "Disk scsi1 is already 8192M size");
    let grow = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "resized", "size": "+1G"})).unwrap();
    assert_eq!(
        grow.actions,
        vec![Action::Resize {
            key: "scsi1".into(),
            size: "+1G".into()
        }]
    );
    assert_eq!(grow.changes, vec!["size: 8G -> 9G"]);
    let e = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "resized", "size": "4G"})).unwrap_err();
    assert!(e.contains("shrink"), "{e}");
    let e = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "resized", "size": "40"})).unwrap_err();
    assert!(
        e.starts_with("Unrecognized size pattern for disk scsi1: 40.") && e.contains("no unit"),
        "{e}"
    );
    let e = plan_of(json!({"vmid": 100, "disk": "scsi9", "state": "resized", "size": "40G"})).unwrap_err();
    assert_eq!(e, "Unable to process missing disk scsi9 in VM 100");
    assert!(
        plan_of(json!({"vmid": 100, "disk": "ide2", "state": "resized", "size": "4G"}))
            .unwrap_err()
            .contains("CD-ROM")
    );
    let huge = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "resized", "size": "+17179869183G"})).unwrap_err();
    assert!(
        huge.contains("past the largest size"),
        "a growth overflowing u64 fails instead of panicking: {huge}"
    );
}

#[test]
fn moved_to_storage_keeps_source_unless_deleted() {
    let p = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "moved", "target_storage": "vmdata"})).unwrap();
    assert_eq!(p.msg, "Disk scsi1 moved from VM 100 storage local-lvm");
    assert_eq!(p.kept_as, Some(("unused1".into(), "local-lvm:vm-100-disk-1".into())));
    let del = plan_of(
        json!({"vmid": 100, "disk": "scsi1", "state": "moved", "target_storage": "vmdata", "delete_moved": true}),
    )
    .unwrap();
    assert_eq!(del.kept_as, None);
    assert_eq!(del.allocates_on.as_deref(), Some("vmdata"));
    assert!(matches!(&del.actions[0], Action::Move { delete: true, .. }));
    let there =
        plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "moved", "target_storage": "local-lvm"})).unwrap();
    assert_eq!(there.msg, "Disk scsi1 already at local-lvm storage");
    assert!(!there.changed());
    assert!(plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "moved"}))
        .unwrap_err()
        .contains("target_storage"));
}

#[test]
fn moved_to_another_vm_is_repeatable() {
    let t = task(json!({"vmid": 100, "disk": "scsi1", "state": "moved", "target_vmid": 101, "target_disk": "scsi2"}));
    let target = VmConfig::new(101, "pve1", json!({"scsi0": "local-lvm:vm-101-disk-0,size=4G"}));
    let p = plan(&t, &web01(), Some(&target)).unwrap();
    assert_eq!(
        p.after.as_ref().unwrap().0,
        Location {
            vmid: 101,
            key: "scsi2".into()
        }
    );
    assert_eq!(
        p.diff.after["VM 101 scsi2"],
        json!("local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=8G")
    );
    let source_after = vm(json!({"scsi0": "local-lvm:vm-100-disk-0,size=32G"}));
    let target_after = VmConfig::new(101, "pve1", json!({"scsi2": "local-lvm:vm-101-disk-1,size=8G"}));
    let again = plan(&t, &source_after, Some(&target_after)).unwrap();
    assert!(!again.changed());
    assert_eq!(again.msg, "Disk scsi1 is already moved to VM 101 as scsi2");
    let taken = VmConfig::new(101, "pve1", json!({"scsi2": "local-lvm:vm-101-disk-5,size=1G"}));
    assert!(plan(&t, &web01(), Some(&taken))
        .unwrap_err()
        .contains("already has scsi2"));
}

#[test]
fn detached_and_absent() {
    let d = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "detached"})).unwrap();
    assert_eq!(
        d.actions,
        vec![Action::Unlink {
            key: "scsi1".into(),
            force: false
        }]
    );
    assert_eq!(d.kept_as, Some(("unused1".into(), "local-lvm:vm-100-disk-1".into())));
    assert_eq!(d.msg, "Disk scsi1 detached from VM 100");
    assert_eq!(
        plan_of(json!({"vmid": 100, "disk": "unused0", "state": "detached"}))
            .unwrap()
            .msg,
        "Disk unused0 already detached in VM 100"
    );
    assert_eq!(
        plan_of(json!({"vmid": 100, "disk": "scsi9", "state": "detached"}))
            .unwrap()
            .msg,
        "Disk scsi9 not present in VM 100 config"
    );
    let a = plan_of(json!({"vmid": 100, "disk": "scsi1", "state": "absent"})).unwrap();
    assert_eq!(
        a.actions,
        vec![Action::Unlink {
            key: "scsi1".into(),
            force: true
        }]
    );
    assert_eq!(a.msg, "Disk scsi1 removed from VM 100");
    assert_eq!(
        plan_of(json!({"vmid": 100, "disk": "scsi9", "state": "absent"}))
            .unwrap()
            .msg,
        "Disk scsi9 is already absent in VM 100"
    );
}

#[test]
fn format_cannot_change_in_place() {
    let v = vm(json!({"scsi1": "vmdata:100/vm-100-disk-1.qcow2,size=8G"}));
    let t = task(json!({"vmid": 100, "disk": "scsi1", "format": "raw"}));
    assert!(plan(&t, &v, None).unwrap_err().contains("state: moved"));
    let t = task(json!({"vmid": 100, "disk": "scsi1", "format": "qcow2"}));
    assert!(!plan(&t, &v, None).unwrap().changed());
}

#[test]
fn options_are_checked_against_the_bus() {
    let mut map: Map<String, Value> = options()
        .iter()
        .map(|o| (o.name.to_string(), o.default.clone().unwrap_or(Value::Null)))
        .collect();
    map.insert("disk".into(), json!("virtio1"));
    map.insert("vmid".into(), json!(100));
    map.insert("ssd".into(), json!(true));
    let e = DiskTask::from_params(&Params::new(map.clone())).unwrap_err();
    assert_eq!(
        e,
        "Option ssd is not supported for virtio disks (virtio1); Proxmox VE accepts it on: ide, sata, scsi"
    );
    map.insert("ssd".into(), Value::Null);
    map.insert("cyls".into(), json!(4));
    let e = DiskTask::from_params(&Params::new(map)).unwrap_err();
    assert!(e.contains("cyls is not accepted by Proxmox VE 9"), "{e}");
}
