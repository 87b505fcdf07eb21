//! proxmox_disk in process against the simulator (`Env::run`): every state and option
//! family in check mode, for real and again (see `disk_scenario.rs`), the volumes that
//! must survive, bad input and faults, and the API calls each operation costs.

use crate::disk_scenario::{as_root, calls, converge, converge_with, once, writes};
use ferrox_integration::Env;
use serde_json::{json, Value};

const DISK: &str = "ferrox.proxmox.proxmox_disk";

fn config(env: &Env, vmid: u32) -> Value {
    env.api_get(&format!("/nodes/pve1/qemu/{vmid}/config"))
}

fn volumes(env: &Env, storage: &str) -> Vec<String> {
    env.api_get(&format!("/nodes/pve1/storage/{storage}/content"))
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["volid"].as_str().unwrap().to_string())
        .collect()
}

/// A second stopped VM (101) on pve1 for moves between VMs.
fn second_vm(env: &Env) {
    env.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "101"), ("name", "db01"), ("scsi0", "local-lvm:4")],
    );
}

fn print_calls(label: &str, calls: &[(String, u64)]) {
    eprintln!("API calls, {label}: {calls:?}");
}

#[test]
fn present_creates_then_converges_options_and_grows() {
    let env = Env::start();
    let created = converge(
        &env,
        DISK,
        "{vmid: 100, disk: scsi1, storage: local-lvm, size: 8, discard: 'on', cache: writeback}",
    );
    print_calls("create", &created.real_calls);
    assert!(created.real.changed);
    assert_eq!(created.real.msg(), "Disk scsi1 created in VM 100");
    assert_eq!(
        created.real.result["disk_config"],
        json!("local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=8G")
    );
    assert_eq!(created.real.result["volume"], json!("local-lvm:vm-100-disk-1"));
    assert_eq!(created.real.result["storage"], json!("local-lvm"));
    assert_eq!(created.real.result["size"], json!("8G"));
    assert_eq!(
        created.dry.result["diff"]["after"]["scsi1"],
        json!("local-lvm:(known after apply),cache=writeback,discard=on,size=8G")
    );
    // The dry run knows the size, not the volume name PVE will pick.
    assert_eq!(created.dry.result["volume"], Value::Null);
    assert_eq!(created.dry.result["known_after_apply"], json!(["volume"]));
    assert_eq!(created.dry.result["size"], json!("8G"));
    assert_eq!(created.dry.result["storage"], json!("local-lvm"));
    assert_eq!(created.again.msg(), "Disk scsi1 is up to date in VM 100");
    assert_eq!(writes(&created.real_calls), 1);

    // Options compare normalised; unmentioned ones (cache) are kept.
    let updated = converge(
        &env,
        DISK,
        "{name: web01, disk: scsi1, discard: 'on', iothread: yes, ssd: true, backup: true}",
    );
    print_calls("update options", &updated.real_calls);
    assert_eq!(updated.real.msg(), "Disk scsi1 updated in VM 100");
    assert_eq!(
        updated.real.result["changes"],
        json!(["iothread: unset -> 1", "ssd: unset -> 1"])
    );
    assert_eq!(
        config(&env, 100)["scsi1"],
        json!("local-lvm:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=8G,ssd=1")
    );
    assert_eq!(
        updated.real.result["diff"]["before"]["scsi1"],
        json!("local-lvm:vm-100-disk-1,cache=writeback,discard=on,size=8G")
    );

    // A larger size grows the disk; the same size in other units is no change.
    let grown = converge(&env, DISK, "{vmid: 100, disk: scsi1, size: 10}");
    print_calls("present grow", &grown.real_calls);
    assert_eq!(grown.real.result["changes"], json!(["size: 8G -> 10G"]));
    assert_eq!(grown.real.result["size"], json!("10G"));
    let same = once(&env, DISK, "{vmid: 100, disk: scsi1, size: 10240M}", false);
    assert!(!same.changed && !same.failed, "{}", same.result);

    // A smaller size is refused, naming the current size; nothing changes.
    let shrink = once(&env, DISK, "{vmid: 100, disk: scsi1, size: 4}", false);
    assert!(shrink.failed);
    assert!(
        shrink.msg().contains("is 10G") && shrink.msg().contains("at least 10G"),
        "{}",
        shrink.msg()
    );
    assert_eq!(shrink.result["vmid"], json!(100));
    assert!(config(&env, 100)["scsi1"].as_str().unwrap().contains("size=10G"));
}

#[test]
fn create_disabled_and_forced() {
    let env = Env::start();
    let disabled = converge(
        &env,
        DISK,
        "{vmid: 100, disk: scsi2, create: disabled, storage: local-lvm, size: 1}",
    );
    assert!(!disabled.real.changed);
    assert_eq!(
        disabled.real.msg(),
        "Disk scsi2 not found in VM 100 and creation was disabled in parameters."
    );

    // forced always creates a new volume, and the old one survives as unusedN.
    let dry = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, create: forced, storage: vmdata, size: 2}",
        true,
    );
    let real = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, create: forced, storage: vmdata, size: 2}",
        false,
    );
    assert!(dry.changed && real.changed);
    assert_eq!(dry.result["changes"], real.result["changes"]);
    assert_eq!(real.result["unused"], json!("unused0"));
    assert_eq!(real.result["unused_volume"], json!("local-lvm:vm-100-disk-0"));
    let cfg = config(&env, 100);
    assert_eq!(cfg["unused0"], json!("local-lvm:vm-100-disk-0"));
    assert!(
        cfg["scsi0"].as_str().unwrap().starts_with("vmdata:100/vm-100-disk-"),
        "{}",
        cfg["scsi0"]
    );
    assert!(volumes(&env, "local-lvm").contains(&"local-lvm:vm-100-disk-0".to_string()));
    assert_eq!(
        real.result["diff"]["after"]["unused0"],
        json!("local-lvm:vm-100-disk-0")
    );
}

#[test]
fn resized_absolute_relative_and_refusals() {
    let env = Env::start();
    let abs = converge(&env, DISK, "{vmid: 100, disk: scsi0, state: resized, size: 40G}");
    print_calls("resize", &abs.real_calls);
    assert_eq!(abs.real.msg(), "Disk scsi0 resized in VM 100");
    assert_eq!(abs.real.result["changes"], json!(["size: 32G -> 40G"]));
    assert_eq!(abs.again.msg(), "Disk scsi0 is already 40G size");
    assert!(config(&env, 100)["scsi0"].as_str().unwrap().contains("size=40G"));

    // Relative: applied on every run (documented), check mode predicts the result.
    let dry = once(&env, DISK, "{vmid: 100, disk: scsi0, state: resized, size: +2G}", true);
    let real = once(&env, DISK, "{vmid: 100, disk: scsi0, state: resized, size: +2G}", false);
    assert_eq!(dry.result["changes"], json!(["size: 40G -> 42G"]));
    assert_eq!(dry.result["changes"], real.result["changes"]);
    assert_eq!(real.result["size"], json!("42G"));

    for (size, expected) in [
        ("40", "no unit"),
        ("30G", "shrink"),
        ("lots", "Unrecognized size pattern for disk scsi0: lots"),
    ] {
        let t = once(
            &env,
            DISK,
            &format!("{{vmid: 100, disk: scsi0, state: resized, size: '{size}'}}"),
            false,
        );
        assert!(t.failed && t.msg().contains(expected), "{size}: {}", t.msg());
    }
    let missing = once(&env, DISK, "{vmid: 100, disk: scsi7, state: resized, size: 1G}", false);
    assert_eq!(missing.msg(), "Unable to process missing disk scsi7 in VM 100");
    let cdrom = once(&env, DISK, "{vmid: 100, disk: ide2, state: resized, size: 1G}", false);
    assert!(cdrom.failed && cdrom.msg().contains("CD-ROM"), "{}", cdrom.msg());
}

#[test]
fn moved_to_storage_keeps_or_deletes_the_source() {
    let env = Env::start();
    let kept = converge(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, state: moved, target_storage: vmdata}",
    );
    print_calls("move to storage", &kept.real_calls);
    assert_eq!(kept.real.msg(), "Disk scsi0 moved from VM 100 storage local-lvm");
    assert_eq!(kept.real.result["unused"], json!("unused0"));
    assert_eq!(kept.real.result["storage"], json!("vmdata"));
    assert_eq!(kept.again.msg(), "Disk scsi0 already at vmdata storage");
    assert_eq!(config(&env, 100)["unused0"], json!("local-lvm:vm-100-disk-0"));

    let deleted = converge(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, state: moved, target_storage: nvme-pool, delete_moved: true}",
    );
    assert!(deleted.real.result.get("unused").is_none(), "{}", deleted.real.result);
    assert_eq!(deleted.real.result["storage"], json!("nvme-pool"));
    let cfg = config(&env, 100);
    assert!(cfg.get("unused1").is_none(), "{cfg}");

    let nowhere = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, state: moved, target_storage: nope}",
        true,
    );
    assert!(
        nowhere.failed && nowhere.msg().contains("storage nope does not exist on node pve1"),
        "{}",
        nowhere.msg()
    );
    let isos = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, state: moved, target_storage: isos}",
        false,
    );
    assert!(
        isos.failed && isos.msg().contains("does not hold disk images"),
        "{}",
        isos.msg()
    );
}

#[test]
fn moved_to_another_vm_is_repeatable() {
    let env = Env::start();
    second_vm(&env);
    env.run_task("POST", "/nodes/pve1/qemu/100/config", &[("scsi1", "local-lvm:1")]);
    // By name: the listing decodes the VM named and the target VM, and skips the rest.
    let runs = converge(
        &env,
        DISK,
        "{name: web01, disk: scsi1, state: moved, target_vmid: 101, target_disk: scsi3}",
    );
    print_calls("move to VM", &runs.real_calls);
    assert_eq!(runs.real.result["disk_vmid"], json!(101));
    assert_eq!(runs.real.result["disk"], json!("scsi3"));
    assert_eq!(runs.again.msg(), "Disk scsi1 is already moved to VM 101 as scsi3");
    assert!(config(&env, 100).get("scsi1").is_none());
    assert!(config(&env, 101)["scsi3"]
        .as_str()
        .unwrap()
        .starts_with("local-lvm:vm-101-disk-"));

    let taken = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, state: moved, target_vmid: 101}",
        true,
    );
    assert!(
        taken.failed && taken.msg().contains("VM 101 already has scsi0"),
        "{}",
        taken.msg()
    );
    let ghost = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, state: moved, target_vmid: 555}",
        false,
    );
    assert_eq!(ghost.msg(), "VM with vmid 555 does not exist in cluster");
}

#[test]
fn detached_keeps_the_volume_and_absent_deletes_it() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/config", &[("scsi1", "local-lvm:1")]);
    let detached = converge(&env, DISK, "{vmid: 100, disk: scsi1, state: detached}");
    print_calls("detach", &detached.real_calls);
    assert_eq!(detached.real.msg(), "Disk scsi1 detached from VM 100");
    assert_eq!(detached.real.result["unused"], json!("unused0"));
    assert_eq!(detached.dry.result["unused"], json!("unused0"));
    assert_eq!(detached.again.msg(), "Disk scsi1 not present in VM 100 config");
    assert_eq!(
        detached.real.result["diff"]["after"],
        json!({"unused0": "local-lvm:vm-100-disk-1"})
    );
    assert!(volumes(&env, "local-lvm").contains(&"local-lvm:vm-100-disk-1".to_string()));

    let already = once(&env, DISK, "{vmid: 100, disk: unused0, state: detached}", false);
    assert_eq!(already.msg(), "Disk unused0 already detached in VM 100");

    let absent = converge(&env, DISK, "{vmid: 100, disk: unused0, state: absent}");
    print_calls("absent", &absent.real_calls);
    assert_eq!(absent.real.msg(), "Disk unused0 removed from VM 100");
    assert_eq!(absent.again.msg(), "Disk unused0 is already absent in VM 100");
    assert!(!volumes(&env, "local-lvm").contains(&"local-lvm:vm-100-disk-1".to_string()));
}

#[test]
fn cdrom_media_insert_eject_and_new_drive() {
    let env = Env::start();
    let insert = converge(
        &env,
        DISK,
        "{vmid: 100, disk: ide2, media: cdrom, iso_image: 'isos:iso/debian-13-netinst.iso'}",
    );
    assert_eq!(
        insert.real.result["changes"],
        json!(["media: none -> isos:iso/debian-13-netinst.iso"])
    );
    assert!(config(&env, 100)["ide2"]
        .as_str()
        .unwrap()
        .starts_with("isos:iso/debian-13-netinst.iso,media=cdrom"));
    let eject = converge(&env, DISK, "{vmid: 100, disk: ide2, media: cdrom, iso_image: none}");
    assert_eq!(eject.real.result["disk_config"], json!("none,media=cdrom"));
    let new = converge(
        &env,
        DISK,
        "{vmid: 100, disk: sata1, media: cdrom, iso_image: 'isos:iso/virtio-win.iso'}",
    );
    assert_eq!(new.real.msg(), "CD-ROM was created on sata1 bus in VM 100");
    let over_disk = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, media: cdrom, iso_image: none}",
        false,
    );
    assert!(
        over_disk.failed && over_disk.msg().contains("not a CD-ROM"),
        "{}",
        over_disk.msg()
    );
}

#[test]
fn import_efidisk_tpmstate_and_passthrough_converge() {
    let env = Env::start();
    let import = converge(
        &env,
        DISK,
        "{vmid: 100, disk: virtio1, storage: local-lvm, import_from: 'local:import/debian-13-genericcloud-amd64.qcow2'}",
    );
    print_calls("import", &import.real_calls);
    assert_eq!(import.real.msg(), "Disk virtio1 imported into VM 100");
    assert_eq!(import.real.result["size"], json!("3G"));
    assert!(!import.real.result["disk_config"]
        .as_str()
        .unwrap()
        .contains("import-from"));

    let efi = converge(&env, DISK, "{vmid: 100, disk: efidisk0, storage: local-lvm}");
    assert_eq!(efi.real.msg(), "Disk efidisk0 created in VM 100");
    let tpm = converge(&env, DISK, "{vmid: 100, disk: tpmstate0, storage: local-lvm}");
    assert!(tpm.real.result["disk_config"]
        .as_str()
        .unwrap()
        .starts_with("local-lvm:vm-100-disk-"));

    let (status, body) = env.api(
        "PUT",
        "/nodes/pve1/qemu/100/config",
        &[("sata2", "/dev/disk/by-id/ata-WDC_WD40-1234,backup=0")],
    );
    assert_eq!(status, 200, "{body}");
    // PVE lets only root@pam write a drive that is a host device path.
    let pass = converge_with(
        &env,
        DISK,
        "{vmid: 100, disk: sata2, backup: false, ssd: true}",
        &as_root(&env),
    );
    assert_eq!(pass.real.result["changes"], json!(["ssd: unset -> 1"]));
    assert_eq!(pass.real.result["volume"], json!("/dev/disk/by-id/ata-WDC_WD40-1234"));
    assert!(pass.real.result.get("storage").is_none_or(Value::is_null));
}

#[test]
fn bad_input_fails_with_the_option_named_and_nothing_written() {
    let env = Env::start();
    env.clear_requests();
    let cases = [
        (
            "{vmid: 100, disk: nvme0, storage: local-lvm, size: 1}",
            "Unsupported disk bus: nvme",
        ),
        (
            "{vmid: 100, disk: scsi31, storage: local-lvm, size: 1}",
            "Disk scsi31 number not in range 0..30 ",
        ),
        (
            "{vmid: 100, disk: virtio1, storage: local-lvm, size: 1, ssd: true}",
            "Option ssd is not supported for virtio disks",
        ),
        (
            "{vmid: 100, disk: scsi1, storage: local-lvm, size: huge}",
            "size: cannot read",
        ),
        (
            "{vmid: 100, disk: scsi1, storage: nope, size: 1}",
            "storage nope does not exist on node pve1",
        ),
        (
            "{vmid: 100, disk: scsi1, size: 1}",
            "The storage option must be specified.",
        ),
        ("{vmid: 100, disk: scsi1, storage: local-lvm}", "size is required"),
        (
            "{vmid: 100, disk: scsi1, storage: local-lvm, size: 1, import_from: 'local:import/x.qcow2'}",
            "parameters are mutually exclusive: import_from|size",
        ),
        (
            "{vmid: 100, disk: scsi1, iso_image: none}",
            "missing parameter(s) required by 'iso_image': media",
        ),
        (
            "{vmid: 555, disk: scsi1, storage: local-lvm, size: 1}",
            "VM with vmid 555 does not exist in cluster",
        ),
        (
            "{name: nosuchvm, disk: scsi1, storage: local-lvm, size: 1}",
            "No VM with name nosuchvm found",
        ),
        ("{vmid: 200, disk: scsi1, storage: local-lvm, size: 1}", "LXC container"),
        (
            "{vmid: 100, disk: scsi0, state: moved, target_vmid: 200}",
            "200 is an LXC container; target_vmid must name a QEMU VM",
        ),
        (
            "{vmid: 100, disk: scsi0, cyls: 4}",
            "cyls is not accepted by Proxmox VE 9",
        ),
    ];
    let yaml: String = cases
        .iter()
        .enumerate()
        .map(|(i, (opts, _))| format!("- name: case{i}\n  {DISK}: {opts}\n  ignore_errors: true\n"))
        .collect();
    let play = env.run(&yaml);
    for (i, (opts, expected)) in cases.iter().enumerate() {
        let t = play.task(&format!("case{i}"));
        assert!(t.failed, "{opts} did not fail: {}", t.result);
        assert!(t.msg().contains(expected), "{opts}: {}", t.msg());
    }
    assert_eq!(writes(&calls(&env)), 0, "{:?}", calls(&env));
}

#[test]
fn locked_vm_failing_slow_and_5xx_lose_nothing_and_a_rerun_converges() {
    let env = Env::start();
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("lock", "backup")]);
    assert_eq!(status, 200, "{body}");
    let locked = once(&env, DISK, "{vmid: 100, disk: scsi0, cache: none}", true);
    assert!(
        locked.failed && locked.msg().contains("VM 100 is locked (backup)"),
        "{}",
        locked.msg()
    );
    let (status, body) = env.api(
        "PUT",
        "/nodes/pve1/qemu/100/config",
        &[("delete", "lock"), ("skiplock", "1")],
    );
    assert_eq!(status, 200, "{body}");

    env.fault(json!({"task_type": "qmconfig", "fail": "lvcreate failed: out of space", "times": 1}));
    let failing = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi1, storage: local-lvm, size: 1}",
        false,
    );
    assert!(failing.failed, "{}", failing.result);
    assert!(
        failing.msg().contains("Error occurred on task execution") && failing.msg().contains("out of space"),
        "{}",
        failing.msg()
    );

    env.fault(json!({"task_type": "resize", "duration_ms": 4000, "times": 1}));
    let slow = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi0, state: resized, size: 33G, timeout: 1}",
        false,
    );
    assert!(
        slow.failed && slow.msg().contains("Reached timeout while resizing disk"),
        "{}",
        slow.msg()
    );
    std::thread::sleep(std::time::Duration::from_secs(4));
    let after = once(&env, DISK, "{vmid: 100, disk: scsi0, state: resized, size: 33G}", false);
    assert!(!after.failed && !after.changed, "{}", after.result);

    env.fault(json!({"method": "POST", "path_regex": "/qemu/100/config$", "status": 500, "message": "cluster not ready - no quorum?", "times": 1}));
    let quorum = once(&env, DISK, "{vmid: 100, disk: scsi0, cache: none}", false);
    assert!(quorum.failed && quorum.msg().contains("no quorum"), "{}", quorum.msg());
    assert!(
        quorum.msg().starts_with("Unable to create/update disk scsi0 in VM 100"),
        "{}",
        quorum.msg()
    );
    assert_eq!(
        config(&env, 100)["scsi0"],
        json!("local-lvm:vm-100-disk-0,iothread=1,size=33G")
    );
    let rerun = converge(&env, DISK, "{vmid: 100, disk: scsi0, cache: none}");
    assert!(rerun.real.changed);
}

#[test]
fn changes_a_running_vm_cannot_take_are_reported_pending() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    // Throttling applies live; a cache mode waits for the restart.
    let live = converge(&env, DISK, "{vmid: 100, disk: scsi0, mbps: 100}");
    assert_eq!(live.real.result["pending"], json!(false), "{}", live.real.result);
    let cache = converge(&env, DISK, "{vmid: 100, disk: scsi0, cache: writeback}");
    assert_eq!(cache.real.result["pending"], json!(true), "{}", cache.real.result);
    assert!(
        cache
            .real
            .warnings()
            .iter()
            .any(|w| w.contains("waits for the next restart of VM 100")),
        "{:?}",
        cache.real.warnings()
    );
}

#[test]
fn a_task_ending_with_warnings_succeeds_and_says_so() {
    let env = Env::start();
    env.fault(json!({"task_type": "qmconfig", "warnings": 2, "times": 1}));
    let t = once(
        &env,
        DISK,
        "{vmid: 100, disk: scsi1, storage: local-lvm, size: 2}",
        false,
    );
    assert!(t.changed && !t.failed, "{}", t.result);
    assert_eq!(t.msg(), "Disk scsi1 created in VM 100");
    let warnings = t.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings.iter().all(|w| w.contains("WARN: simulated warning")),
        "{warnings:?}"
    );
    assert_eq!(config(&env, 100)["scsi1"], json!("local-lvm:vm-100-disk-1,size=2G"));
}
