//! proxmox_kvm under faults: failing tasks, 5xx answers, timeouts, locks, missing
//! privileges, unknown storage/bridge/ISO. Each fails with a clear message, leaves
//! nothing half-done unreported, and a rerun converges.

use ferrox_integration::{creds, Env, PlayOpts};
use serde_json::json;

fn vms_named(env: &Env, name: &str) -> usize {
    env.guests_listed().iter().filter(|g| g["name"] == name).count()
}

const CREATE: &str =
    "- name: c\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: f01\n    scsi:\n      scsi0: local-lvm:4\n";

#[test]
fn a_failed_create_task_fails_at_once_and_a_rerun_creates() {
    let env = Env::start();
    env.fault(json!({"task_type": "qmcreate", "fail": "lvcreate 'pve/vm-101-disk-0' error: out of space", "times": 1}));
    let started = std::time::Instant::now();
    let play = env.run(CREATE);
    let t = play.task("c");
    assert!(t.failed);
    assert!(
        started.elapsed().as_secs() < 25,
        "no waiting for a timeout on a failed task"
    );
    assert!(
        t.msg()
            .starts_with("creation of qemu VM f01 with vmid 101 failed with exception="),
        "{}",
        t.msg()
    );
    assert!(t.msg().contains("out of space"), "{}", t.msg());
    assert!(t.msg().contains("UPID:pve1:"), "names the task: {}", t.msg());
    assert_eq!(t.result["vmid"], json!(101));
    assert_eq!(vms_named(&env, "f01"), 0);
    let again = env.run(CREATE);
    again.assert_ok();
    assert!(again.task("c").changed);
    assert_eq!(vms_named(&env, "f01"), 1);
}

#[test]
fn a_500_during_update_is_reported_and_a_rerun_converges() {
    let env = Env::start();
    env.fault(json!({"method": "PUT", "path_regex": "^/api2/json/nodes/pve1/qemu/100/config$", "status": 500, "message": "got timeout", "times": 1}));
    let yaml = "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 5\n";
    let play = env.run(yaml);
    let t = play.task("u");
    assert!(t.failed);
    assert!(
        t.msg().starts_with("Unable to update vm web01 with vmid 100: 500"),
        "{}",
        t.msg()
    );
    assert!(t.msg().contains("got timeout"), "{}", t.msg());
    let again = env.run(yaml);
    again.assert_ok();
    assert!(again.task("u").changed);
    assert_eq!(env.api_get("/nodes/pve1/qemu/100/config")["cores"], json!(5));
}

#[test]
fn a_slow_task_times_out_naming_it_and_a_rerun_converges() {
    let env = Env::start();
    // Far longer than the 1 s timeout: on a loaded machine one status poll can take
    // seconds to be answered, and a task over by then is (rightly) a success.
    env.fault(json!({"task_type": "qmstart", "duration_ms": 15000, "times": 1}));
    let yaml = "- name: s\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: started\n    timeout: 1\n";
    let play = env.run(yaml);
    let t = play.task("s");
    assert!(t.failed, "{}", t.result);
    assert!(
        t.msg().starts_with("Reached timeout while waiting for starting VM."),
        "{}",
        t.msg()
    );
    assert!(t.msg().contains("qmstart:100"), "names the task: {}", t.msg());
    // The task goes on after the module gave up; the rerun comes once it is over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while env.api_get("/nodes/pve1/qemu/100/status/current")["status"] != "running" {
        assert!(std::time::Instant::now() < deadline, "the start task never ended");
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let again = env.run(yaml);
    again.assert_ok();
    assert_eq!(again.task("s").msg(), "VM 100 is already running");
}

#[test]
fn an_api_that_does_not_answer_in_time_fails_clearly() {
    let env = Env::start();
    env.fault(json!({"method": "GET", "path_regex": "^/api2/json/cluster/resources$", "latency_ms": 3000}));
    let play =
        env.run("- name: s\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: current\n    api_timeout: 1\n");
    let t = play.task("s");
    assert!(t.failed);
    assert!(
        t.msg().to_lowercase().contains("timeout") || t.msg().to_lowercase().contains("timed out"),
        "{}",
        t.msg()
    );
}

#[test]
fn locked_vm_and_missing_privileges_are_named() {
    let env = Env::start();
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("lock", "backup")]);
    assert_eq!(status, 200, "{body}");
    let update = "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 5\n";
    let play = env.run(update);
    assert!(
        play.task("u").msg().contains("VM is locked (backup)"),
        "{}",
        play.task("u").msg()
    );
    // A dry run meets the lock too, instead of promising a change the real run cannot make.
    for yaml in [
        update,
        "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: started\n",
        "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    delete: name\n",
        "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    migrate: true\n    node: pve2\n",
    ] {
        let dry = env.run_with(
            yaml,
            &PlayOpts {
                check: true,
                ..Default::default()
            },
        );
        let t = dry.task("u");
        assert!(t.failed && t.msg().contains("VM is locked (backup)"), "{}", t.result);
        let real = env.run(yaml);
        assert!(
            real.task("u").failed && real.task("u").msg().contains("VM is locked (backup)"),
            "{}",
            real.task("u").result
        );
    }

    let readonly = json!({"group/ferrox.proxmox.proxmox": {
        "api_host": "127.0.0.1", "api_port": env.sim().port(), "api_user": creds::TOKEN_USER,
        "api_token_id": creds::READONLY_TOKEN_ID, "api_token_secret": creds::READONLY_TOKEN_SECRET,
        "ca_path": env.ca_path().display().to_string(),
    }});
    let play = env.run_with(
        CREATE,
        &PlayOpts {
            module_defaults: Some(readonly),
            ..Default::default()
        },
    );
    let t = play.task("c");
    assert!(t.failed);
    // Refused before any write, naming what PVE would check and for whom.
    assert!(
        t.msg()
            .contains("needs VM.Allocate on /vms/101, which ansible@pve!readonly does not have"),
        "{}",
        t.msg()
    );
    assert!(!play.stdout.contains(creds::READONLY_TOKEN_SECRET));
    assert_eq!(vms_named(&env, "f01"), 0);
}

#[test]
fn unknown_storage_bridge_and_iso_fail_without_leaving_a_vm() {
    let env = Env::start();
    // PVE itself accepts an unknown bridge; the module checks the node's bridges, and
    // the storages and ISO images, before anything is written.
    let cases = [
        (
            "scsi",
            "scsi0: nosuch:8",
            "scsi0: storage nosuch does not exist on node pve1; storages for disk images there: ",
        ),
        (
            "ide",
            "ide2: isos:iso/nope.iso,media=cdrom",
            "ide2: volume isos:iso/nope.iso does not exist on node pve1; ISO images on storage isos: ",
        ),
        (
            "net",
            "net0: virtio,bridge=vmbr9",
            "net0: bridge vmbr9 does not exist on node pve1",
        ),
    ];
    for (i, (option, value, expected)) in cases.iter().enumerate() {
        let name = format!("bad{i}");
        let play = env.run(&format!("- name: c\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: {name}\n    {option}:\n      {value}\n"));
        let t = play.task("c");
        eprintln!("{option}: {}", t.msg());
        assert!(t.failed, "{option}: {}", t.result);
        assert!(t.msg().starts_with(expected), "{}", t.msg());
        assert_eq!(vms_named(&env, &name), 0, "no VM left behind");
    }
}

#[test]
fn a_failure_half_way_says_what_was_already_done_and_a_rerun_finishes() {
    let env = Env::start();
    env.fault(json!({"method": "PUT", "path_regex": "^/api2/json/nodes/pve1/qemu/100/resize$", "status": 500, "message": "storage is busy", "times": 1}));
    let yaml = "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 4\n    scsi:\n      scsi0: local-lvm:40,iothread=1\n";
    let play = env.run(yaml);
    let t = play.task("u");
    assert!(t.failed);
    assert!(t.msg().contains("storage is busy"), "{}", t.msg());
    assert!(
        t.msg()
            .contains("Already done before this failure: set cores of VM 100."),
        "{}",
        t.msg()
    );
    assert_eq!(t.result["done"], json!(["set cores of VM 100"]));
    let again = env.run(yaml);
    again.assert_ok();
    assert_eq!(
        again.task("u").result["changes"],
        json!(["scsi0"]),
        "only the growth is left"
    );
    assert!(env.api_get("/nodes/pve1/qemu/100/config")["scsi0"]
        .as_str()
        .unwrap()
        .contains("size=40G"));
}

#[test]
fn a_stale_digest_guards_against_concurrent_changes() {
    let env = Env::start();
    let play = env.run("- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 4\n    digest: 0000000000000000000000000000000000000000\n");
    let t = play.task("u");
    assert!(t.failed);
    assert!(t.msg().contains("checksum mismatch"), "{}", t.msg());
    assert_eq!(env.api_get("/nodes/pve1/qemu/100/config")["cores"], json!(2));
}
