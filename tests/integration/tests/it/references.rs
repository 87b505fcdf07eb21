//! What a task references — storage, ISO image, import source, pool, clone template —
//! is checked before any write, so a dry run fails where the real run would, with the
//! same message naming what is missing and what is there.

use ferrox_integration::{Env, PlayOpts};

/// Runs `task` in check mode and for real: both fail with the same message (the check
/// run's adds how to assume a missing ISO or pool an earlier task makes), nothing is
/// written. Returns the real run's message.
fn refused_alike(env: &Env, task: &str) -> String {
    env.clear_requests();
    let dry = env.run_with(
        task,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    let real = env.run(task);
    let (d, r) = (dry.task("t"), real.task("t"));
    assert!(
        d.failed && r.failed,
        "both fail:\ncheck: {}\nreal: {}",
        d.result,
        r.result
    );
    let hint = d.msg().strip_prefix(r.msg()).unwrap_or_else(|| {
        panic!(
            "check mode and the real run fail alike:\ncheck: {}\nreal: {}",
            d.msg(),
            r.msg()
        )
    });
    assert!(hint.is_empty() || hint.starts_with(". If an earlier task that cannot run in check mode creates it, let the check run assume it: check_mode_assume: {"), "{hint}");
    let log = env.requests();
    let writes: Vec<&String> = log["counts"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !k.starts_with("GET ") && !k.ends_with("/access/ticket"))
        .collect();
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
    assert!(
        msg.starts_with("ide3: volume isos:iso/nope.iso does not exist on node pve1; ISO images on storage isos: "),
        "{msg}"
    );
}

#[test]
fn a_storage_must_be_on_the_node_and_hold_disk_images() {
    let env = Env::start();
    let msg = refused_alike(
        &env,
        "- name: t\n  ferrox.proxmox.proxmox_kvm: {node: pve1, name: web9, scsi: {scsi0: 'isos:8'}}\n",
    );
    assert_eq!(msg, "scsi0: storage isos on node pve1 does not hold disk images (its content: iso); storages for disk images there: local-lvm, vmdata, nvme-pool");
    let msg = refused_alike(
        &env,
        "- name: t\n  ferrox.proxmox.proxmox_kvm: {vmid: 100, update: true, scsi: {scsi1: 'nas:8'}}\n",
    );
    assert!(
        msg.starts_with("scsi1: storage nas does not exist on node pve1; storages for disk images there: "),
        "{msg}"
    );
}

#[test]
fn a_missing_pool_and_a_linked_clone_of_a_plain_vm_fail_before_any_write() {
    let env = Env::start();
    let msg = refused_alike(
        &env,
        "- name: t\n  ferrox.proxmox.proxmox_kvm: {node: pve1, name: web9, pool: nosuch}\n",
    );
    assert!(msg.starts_with("pool 'nosuch' does not exist (pools: "), "{msg}");
    let msg = refused_alike(
        &env,
        "- name: t\n  ferrox.proxmox.proxmox_kvm: {clone: web01, name: web9, full: false}\n",
    );
    assert!(
        msg.contains("VM 100 is not a template, and a linked clone (full: false) needs one"),
        "{msg}"
    );
}

/// A playbook whose ISO and pool are made by an earlier task of another collection that
/// cannot dry-run (skipped by --check): `check_mode_assume` lets the check run take them
/// as existing, and says so; without it the check run fails naming the reference and the
/// option; a real run ignores it.
#[test]
fn a_check_run_assumes_what_an_earlier_task_of_another_collection_makes() {
    let env = Env::start();
    let tasks = r#"
- name: upload (another collection, no check mode)
  ansible.builtin.command: /bin/true
- name: assumed
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    vmid: 150
    name: web150
    pool: lab
    ide: {ide2: "isos:iso/new.iso,media=cdrom"}
    check_mode_assume: {volumes: ["isos:iso/new.iso"], pools: [lab]}
  ignore_errors: true
- name: disk assumed
  ferrox.proxmox.proxmox_disk: {vmid: 100, disk: ide3, iso_image: "isos:iso/new.iso", media: cdrom, check_mode_assume: {volumes: ["isos:iso/new.iso"]}}
  ignore_errors: true
- name: iso not assumed
  ferrox.proxmox.proxmox_kvm: {node: pve1, vmid: 151, name: web151, ide: {ide2: "isos:iso/new.iso,media=cdrom"}}
  ignore_errors: true
- name: pool not assumed
  ferrox.proxmox.proxmox_kvm: {node: pve1, vmid: 152, name: web152, pool: lab}
  ignore_errors: true
"#;
    env.clear_requests();
    let dry = env.play_with(
        tasks,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    assert!(
        dry.task("upload (another collection, no check mode)").skipped,
        "{}",
        dry.transcript()
    );
    let assumed = dry.task("assumed");
    assert!(assumed.changed && !assumed.failed, "{}", assumed.result);
    assert_eq!(
        assumed.warnings(),
        [
            "check mode assumed volume isos:iso/new.iso exists (check_mode_assume); the real run checks it",
            "check mode assumed pool lab exists (check_mode_assume); the real run checks it",
        ]
    );
    let disk = dry.task("disk assumed");
    assert!(disk.changed && !disk.failed, "{}", disk.result);
    assert_eq!(
        disk.warnings(),
        ["check mode assumed volume isos:iso/new.iso exists (check_mode_assume); the real run checks it"]
    );
    let iso = dry.task("iso not assumed").msg();
    assert!(
        iso.starts_with("ide2: volume isos:iso/new.iso does not exist on node pve1;"),
        "{iso}"
    );
    assert!(iso.ends_with(". If an earlier task that cannot run in check mode creates it, let the check run assume it: check_mode_assume: {volumes: [isos:iso/new.iso]}"), "{iso}");
    let pool = dry.task("pool not assumed").msg();
    assert!(
        pool.starts_with("pool 'lab' does not exist") && pool.ends_with("check_mode_assume: {pools: [lab]}"),
        "{pool}"
    );
    let log = env.requests();
    assert!(
        log["counts"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| k.starts_with("GET ") || k.ends_with("/access/ticket")),
        "a check run writes nothing: {}",
        log["counts"]
    );

    // A real run checks every reference, whatever the task assumes.
    let real = env.play("- name: assumed\n  ferrox.proxmox.proxmox_kvm: {node: pve1, vmid: 150, name: web150, ide: {ide2: 'isos:iso/new.iso,media=cdrom'}, check_mode_assume: {volumes: ['isos:iso/new.iso']}}\n  ignore_errors: true\n");
    let msg = real.task("assumed").msg();
    assert!(
        msg.starts_with("ide2: volume isos:iso/new.iso does not exist") && !msg.contains("check_mode_assume"),
        "{msg}"
    );
}
