//! A new cloud-init drive as qemu-server's `create_disks` writes it, on create and on
//! update: `format` picks the file name on storages with a path and is then dropped.

use crate::common::*;

fn created(api: &Api, vmid: &str, ide2: &str) -> (serde_json::Value, Vec<String>) {
    let r = api.post("/nodes/pve1/qemu", &[("vmid", vmid), ("ide2", ide2)]);
    assert_eq!(r.status, 200, "{}", r.raw);
    let upid = r.data().as_str().unwrap().to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    (api.config("pve1", vmid.parse().unwrap()), api.task_log(&upid))
}

#[test]
fn create_drops_format_from_a_block_storages_drive() {
    let api = Api::start(quick());
    let (c, log) = created(&api, "150", "local-lvm:cloudinit,format=raw");
    assert_eq!(c["ide2"], "local-lvm:vm-150-cloudinit,media=cdrom");
    assert!(
        log.iter()
            .any(|l| l == "ide2: successfully created disk 'local-lvm:vm-150-cloudinit,media=cdrom'"),
        "{log:?}"
    );
    let (plain, _) = created(&api, "151", "local-lvm:cloudinit");
    assert_eq!(plain["ide2"], "local-lvm:vm-151-cloudinit,media=cdrom");
}

#[test]
fn on_a_storage_with_a_path_format_names_the_file() {
    let api = Api::start(quick());
    let (qcow2, _) = created(&api, "152", "vmdata:cloudinit");
    assert_eq!(qcow2["ide2"], "vmdata:152/vm-152-cloudinit.qcow2,media=cdrom");
    let (raw, _) = created(&api, "153", "vmdata:cloudinit,format=raw");
    assert_eq!(raw["ide2"], "vmdata:153/vm-153-cloudinit.raw,media=cdrom");
}

#[test]
fn update_writes_the_same_drive_as_create() {
    let api = Api::start(quick());
    let r = api.post(
        "/nodes/pve1/qemu/100/config",
        &[("ide2", "local-lvm:cloudinit,format=raw")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let upid = r.data().as_str().unwrap().to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert_eq!(
        api.config("pve1", 100)["ide2"],
        "local-lvm:vm-100-cloudinit,media=cdrom"
    );
    let vol = api.get("/nodes/pve1/storage/local-lvm/content/local-lvm:vm-100-cloudinit");
    assert_eq!(vol.status, 200, "the volume exists: {}", vol.raw);
    assert_eq!(vol.data()["format"], "raw");
}
