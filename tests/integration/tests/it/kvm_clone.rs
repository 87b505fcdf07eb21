//! proxmox_kvm clones: the rest of the task is applied to the clone, a rerun does not
//! clone again, and the result names the clone.

use ferrox_integration::{Env, PlayOpts};
use serde_json::json;

const CLONE: &str = r#"
- name: clone
  ferrox.proxmox.proxmox_kvm:
    clone: base-debian13
    name: app01
    full: false
    cores: 4
    memory: 4096
    net:
      net0: virtio,bridge=vmbr1
    ipconfig:
      ipconfig0: ip=192.0.2.20/24,gw=192.0.2.1
    ciuser: debian
"#;

#[test]
fn clone_is_configured_in_the_same_task_and_not_repeated() {
    let env = Env::start();
    let dry = env.run_with(
        CLONE,
        &PlayOpts {
            check: true,
            diff: true,
            ..Default::default()
        },
    );
    dry.assert_ok();
    assert!(dry.task("clone").changed);
    let planned = dry.task("clone").result.clone();
    assert_eq!(planned["vmid"], json!(101));
    let source_net0 = env.api_get("/nodes/pve1/qemu/9000/config")["net0"].clone();
    assert_eq!(
        planned["mac"],
        json!({"net0": null}),
        "a dry run does not pass the source's MACs ({source_net0}) off as the clone's"
    );
    assert_eq!(
        planned["devices"],
        json!({"ide2": null, "scsi0": null}),
        "nor the source's volumes"
    );
    assert_eq!(
        planned["known_after_apply"],
        json!(["mac.net0", "devices.ide2", "devices.scsi0"])
    );

    let play = env.run(CLONE);
    play.assert_ok();
    let t = play.task("clone");
    assert!(t.changed);
    assert_eq!(t.msg(), "VM app01 with newid 101 cloned from vm with vmid 9000");
    assert_eq!(t.result["vmid"], json!(101));
    assert_eq!(t.result["actions"], planned["actions"]);
    let cfg = env.api_get("/nodes/pve1/qemu/101/config");
    assert_eq!(cfg["cores"], json!(4));
    assert_eq!(cfg["memory"], json!("4096"));
    assert_eq!(cfg["ipconfig0"], json!("ip=192.0.2.20/24,gw=192.0.2.1"));
    let net0 = cfg["net0"].as_str().unwrap();
    assert!(net0.contains("bridge=vmbr1"), "{net0}");
    assert_ne!(
        net0, "virtio=BC:24:11:90:00:01,bridge=vmbr1",
        "the clone has its own MAC"
    );
    assert_eq!(t.result["mac"]["net0"], json!(net0.split(['=', ',']).nth(1).unwrap()));

    let again = env.run(CLONE);
    again.assert_ok();
    let t = again.task("clone");
    assert!(!t.changed, "{}", t.result);
    assert_eq!(t.msg(), "vmid 101 with VM name app01 already exists");
    assert_eq!(t.result["vmid"], json!(101));
}

#[test]
fn existing_newid_names_the_clone_and_converges_it() {
    let env = Env::start();
    let first = env.run(
        "- name: c\n  ferrox.proxmox.proxmox_kvm:\n    clone: x\n    vmid: 9000\n    newid: 150\n    name: app02\n",
    );
    first.assert_ok();
    assert_eq!(first.task("c").result["vmid"], json!(150));
    let play = env.run("- name: c\n  ferrox.proxmox.proxmox_kvm:\n    clone: x\n    vmid: 9000\n    newid: 150\n    name: app02\n    cores: 3\n");
    play.assert_ok();
    let t = play.task("c");
    assert_eq!(t.result["vmid"], json!(150), "the clone, not the source");
    assert_eq!(t.msg(), "VM app02 with vmid 150 updated");
    assert_eq!(env.api_get("/nodes/pve1/qemu/150/config")["cores"], json!(3));
}

#[test]
fn unknown_source_fails() {
    let env = Env::start();
    let play = env.run("- name: c\n  ferrox.proxmox.proxmox_kvm:\n    clone: nosuch\n    name: x1\n");
    assert_eq!(play.task("c").msg(), "VM with name = nosuch does not exist in cluster");
}

/// A clone from a snapshot is a copy of the snapshot's section (qemu-server `clone_vm`):
/// a dry run predicts the clone from that config, not the VM's current one, so a later
/// task of the run sees what the real run makes.
#[test]
fn a_clone_from_a_snapshot_is_predicted_from_the_snapshot() {
    let env = Env::start();
    env.run_task(
        "POST",
        "/nodes/pve1/qemu/100/snapshot",
        &[("snapname", "base"), ("description", "golden")],
    );
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("memory", "4096")]);
    assert_eq!(status, 200, "{body}");
    let play = "- name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: web01\n    snapname: base\n    full: true\n    name: fromsnap\n    cores: 4\n\
                - name: info\n  ferrox.proxmox.proxmox_vm_info:\n    name: fromsnap\n    config: current\n";
    let config_seen = |opts: &PlayOpts| {
        let run = env.run_with(play, opts);
        run.assert_ok();
        let vms = run.task("info").result["proxmox_vms"].clone();
        assert_eq!(vms.as_array().map(Vec::len), Some(1), "{vms}");
        let config = vms[0]["config"].clone();
        (
            config["memory"].clone(),
            config["cores"].clone(),
            config["description"].clone(),
        )
    };

    let predicted = config_seen(&PlayOpts {
        check: true,
        ..Default::default()
    });
    let made = config_seen(&PlayOpts::default());

    assert_eq!(
        made,
        (json!("2048"), json!(4), json!("golden")),
        "the snapshot's memory and description, the task's cores"
    );
    assert_eq!(predicted, made, "the dry run predicted the clone the real run made");
}

/// A snapshot an earlier task of the run takes can be cloned from in a dry run too (the
/// run's plan answers its section), and the clone is the one the real run makes.
#[test]
fn a_clone_from_a_snapshot_taken_earlier_in_the_run_is_predicted() {
    let env = Env::start();
    let play = "- name: snap\n  ferrox.proxmox.proxmox_snap:\n    vmid: 100\n    snapname: planned1\n    description: golden\n\
                - name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: web01\n    snapname: planned1\n    full: true\n    name: fromsnap\n    cores: 4\n\
                - name: info\n  ferrox.proxmox.proxmox_vm_info:\n    name: fromsnap\n    config: current\n";
    let seen = |opts: &PlayOpts| {
        let run = env.run_with(play, opts);
        run.assert_ok();
        assert!(run.task("clone").changed, "{}", run.task("clone").result);
        let config = run.task("info").result["proxmox_vms"][0]["config"].clone();
        (
            config["memory"].clone(),
            config["cores"].clone(),
            config["description"].clone(),
        )
    };
    let predicted = seen(&PlayOpts {
        check: true,
        ..Default::default()
    });
    let made = seen(&PlayOpts::default());
    assert_eq!(made, (json!("2048"), json!(4), json!("golden")));
    assert_eq!(predicted, made);
}

/// A snapshot that does not exist fails the dry run and the real run with one message.
#[test]
fn a_clone_from_a_snapshot_that_does_not_exist_fails_alike_in_check_mode() {
    let env = Env::start();
    let task = "- name: clone\n  ferrox.proxmox.proxmox_kvm:\n    clone: web01\n    snapname: nosuch\n    full: true\n    name: fromsnap\n  ignore_errors: true\n";
    let dry = env.run_with(
        task,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    let real = env.run(task);
    let (dry, real) = (dry.task("clone"), real.task("clone"));
    assert!(dry.failed && real.failed, "{} / {}", dry.result, real.result);
    assert!(
        real.msg().starts_with("Unable to clone vm fromsnap from vmid 100: ")
            && real.msg().contains("snapshot 'nosuch' does not exist"),
        "{}",
        real.msg()
    );
    assert_eq!(dry.msg(), real.msg());
}
