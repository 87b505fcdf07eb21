//! proxmox_kvm and proxmox_disk predict the same `pending` for the same change to a
//! running VM: one table of changes, each planned by both modules in check mode on the
//! same cluster, both held to what PVE keeps pending (the simulator's hotplug).

use ferrox_integration::{Env, PlayOpts};
use serde_json::Value;

/// A disk change to running VM 100: the key, the proxmox_kvm value, the
/// proxmox_disk options, the VM's hotplug setting, whether PVE keeps it pending.
struct Row {
    key: &'static str,
    kvm_value: &'static str,
    disk_options: &'static str,
    hotplug: Option<&'static str>,
    pending: bool,
}

const TABLE: &[Row] = &[
    Row {
        key: "scsi1",
        kvm_value: "local-lvm:4",
        disk_options: "disk: scsi1, storage: local-lvm, size: 4",
        hotplug: None,
        pending: false,
    },
    Row {
        key: "scsi1",
        kvm_value: "local-lvm:4",
        disk_options: "disk: scsi1, storage: local-lvm, size: 4",
        hotplug: Some("network"),
        pending: true,
    },
    Row {
        key: "sata1",
        kvm_value: "local-lvm:4",
        disk_options: "disk: sata1, storage: local-lvm, size: 4",
        hotplug: None,
        pending: true,
    },
    Row {
        key: "scsi0",
        kvm_value: "local-lvm:vm-100-disk-0,cache=writeback,iothread=1,size=32G",
        disk_options: "disk: scsi0, cache: writeback, iothread: true",
        hotplug: None,
        pending: true,
    },
];

/// VM 100 running, with `hotplug` set first (while it is stopped) when given.
fn running_vm(hotplug: Option<&str>) -> Env {
    let env = Env::start();
    if let Some(h) = hotplug {
        let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("hotplug", h)]);
        assert_eq!(status, 200, "{body}");
    }
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    env
}

#[test]
fn kvm_and_disk_predict_the_same_pending_for_the_same_change() {
    for row in TABLE {
        let env = running_vm(row.hotplug);
        // Two runs: in one, the disk task would plan against the VM as kvm's left it.
        let bus = row.key.trim_end_matches(char::is_numeric);
        let kvm_task = format!(
            "- name: kvm\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    {bus}:\n      {}: {}\n",
            row.key, row.kvm_value
        );
        let disk_task = format!(
            "- name: disk\n  ferrox.proxmox.proxmox_disk: {{vmid: 100, state: present, {}}}\n",
            row.disk_options
        );
        let check = PlayOpts {
            check: true,
            ..Default::default()
        };
        let (kvm_run, disk_run) = (env.run_with(&kvm_task, &check), env.run_with(&disk_task, &check));
        let (kvm, disk) = (kvm_run.task("kvm"), disk_run.task("disk"));
        assert!(
            kvm.changed && disk.changed,
            "{} with hotplug {:?}: {} / {}",
            row.key,
            row.hotplug,
            kvm.result,
            disk.result
        );
        let kvm_pending = kvm.result["pending"]
            .as_object()
            .is_some_and(|p| p.contains_key(row.key));
        assert_eq!(
            (kvm_pending, disk.result["pending"].as_bool()),
            (row.pending, Some(row.pending)),
            "{} with hotplug {:?}: kvm {} / disk {}",
            row.key,
            row.hotplug,
            kvm.result,
            disk.result
        );
        // And that is what PVE does: the real proxmox_disk run reads it back.
        let real = env.run(&disk_task);
        assert_eq!(
            real.task("disk").result["pending"],
            Value::Bool(row.pending),
            "{} real: {}",
            row.key,
            real.task("disk").result
        );
    }
}
