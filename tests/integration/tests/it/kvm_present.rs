//! proxmox_kvm `state: present` in process against the simulator (`Env::run`):
//! create, no-op, convergence with `update`, create-or-update, safe disks and NICs,
//! pending changes, check mode and diff.

use ferrox_integration::{Env, PlayOpts};
use serde_json::{json, Value};

const CREATE: &str = r#"
- name: create
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    name: app07
    cores: 2
    memory: 2048
    scsihw: virtio-scsi-single
    scsi:
      scsi0: local-lvm:8,discard=on
    net:
      net0: virtio,bridge=vmbr0,tag=10
    tags: [web, prod]
"#;

fn check() -> PlayOpts {
    PlayOpts {
        check: true,
        diff: true,
        ..Default::default()
    }
}

fn config(env: &Env, vmid: u64) -> Value {
    env.api_get(&format!("/nodes/pve1/qemu/{vmid}/config"))
}

fn qemu_named(env: &Env, name: &str) -> Vec<u64> {
    env.guests_listed()
        .iter()
        .filter(|g| g["name"] == name && g["type"] == "qemu")
        .map(|g| g["vmid"].as_u64().unwrap())
        .collect()
}

#[test]
fn create_returns_vmid_mac_devices_and_a_rerun_changes_nothing() {
    let env = Env::start();
    let play = env.run(CREATE);
    play.assert_ok();
    let r = &play.task("create").result;
    assert!(play.task("create").changed);
    let vmid = r["vmid"].as_u64().expect("vmid is an integer");
    assert_eq!(r["msg"], format!("VM app07 with vmid {vmid} deployed"));
    let cfg = config(&env, vmid);
    let mac = cfg["net0"]
        .as_str()
        .unwrap()
        .split(['=', ','])
        .nth(1)
        .unwrap()
        .to_string();
    assert_eq!(r["mac"], json!({"net0": mac}));
    assert_eq!(r["devices"], json!({"scsi0": format!("local-lvm:vm-{vmid}-disk-0")}));
    assert_eq!(cfg["cores"], json!(2));
    // Visible cluster-wide by name when the task returns.
    assert_eq!(qemu_named(&env, "app07"), vec![vmid]);

    let again = env.run(CREATE);
    again.assert_ok();
    let r2 = &again.task("create").result;
    assert!(!again.task("create").changed);
    assert_eq!(r2["msg"], format!("VM with vmid <{vmid}> already exists"));
    assert_eq!(r2["mac"], r["mac"]);
    assert_eq!(r2["devices"], r["devices"]);
    assert!(
        again.task("create").warnings().is_empty(),
        "{:?}",
        again.task("create").warnings()
    );
    assert_eq!(qemu_named(&env, "app07"), vec![vmid], "no second VM");
}

#[test]
fn check_mode_create_reports_the_vmid_and_writes_nothing() {
    let env = Env::start();
    let dry = env.run_with(CREATE, &check());
    dry.assert_ok();
    let r = &dry.task("create").result;
    assert!(dry.task("create").changed);
    assert_eq!(r["vmid"], json!(101));
    assert_eq!(r["diff"]["after"]["cores"], json!("2"));
    assert!(qemu_named(&env, "app07").is_empty());
    let real = env.run(CREATE);
    assert_eq!(real.task("create").result["vmid"], json!(101));
    assert_eq!(real.task("create").result["actions"], r["actions"]);
}

#[test]
fn existing_vm_without_update_warns_about_differences() {
    let env = Env::start();
    let play = env.run("- name: look\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    cores: 4\n");
    play.assert_ok();
    let t = play.task("look");
    assert!(!t.changed);
    assert_eq!(t.msg(), "VM with vmid <100> already exists");
    assert!(
        t.warnings()
            .iter()
            .any(|w| w.contains("differs from the task in: cores")),
        "{:?}",
        t.warnings()
    );
    assert_eq!(t.result["mac"], json!({"net0": "BC:24:11:10:00:01"}));
    assert_eq!(
        t.result["devices"],
        json!({"scsi0": "local-lvm:vm-100-disk-0", "ide2": "none"})
    );
    assert_eq!(config(&env, 100)["cores"], json!(2));
}

const UPDATE: &str = r#"
- name: update
  ferrox.proxmox.proxmox_kvm:
    name: web01
    update: true
    cores: 4
    memory: 4096
    tags: [B, a]
    net:
      net0: virtio,bridge=vmbr1,firewall=1
      net1: virtio,bridge=vmbr0
    scsi:
      scsi0: local-lvm:40,iothread=1
      scsi1: local-lvm:4
    ipconfig:
      ipconfig0: ip=dhcp
    sshkeys: |
      ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB+test me@host
    nameservers: [192.0.2.53, 192.0.2.54]
"#;

#[test]
fn update_converges_and_a_rerun_is_up_to_date() {
    let env = Env::start();
    let dry = env.run_with(UPDATE, &check());
    dry.assert_ok();
    let planned = dry.task("update").result.clone();
    assert!(dry.task("update").changed);
    assert_eq!(config(&env, 100)["cores"], json!(2), "check mode writes nothing");

    let play = env.run_with(
        UPDATE,
        &PlayOpts {
            diff: true,
            ..Default::default()
        },
    );
    play.assert_ok();
    let t = play.task("update");
    assert!(t.changed);
    assert_eq!(t.msg(), "VM web01 with vmid 100 updated");
    assert_eq!(
        t.result["changes"], planned["changes"],
        "check mode planned the same changes"
    );
    assert_eq!(t.result["actions"], planned["actions"]);
    assert_eq!(t.result["diff"]["before"]["cores"], json!("2"));
    assert_eq!(t.result["diff"]["after"]["cores"], json!("4"));
    let cfg = config(&env, 100);
    assert_eq!(cfg["cores"], json!(4));
    assert_eq!(
        cfg["net0"],
        json!("virtio=BC:24:11:10:00:01,bridge=vmbr1,firewall=1"),
        "the MAC is kept"
    );
    assert!(
        cfg["scsi0"].as_str().unwrap().starts_with("local-lvm:vm-100-disk-0,"),
        "same volume: {}",
        cfg["scsi0"]
    );
    assert!(
        cfg["scsi0"].as_str().unwrap().contains("size=40G"),
        "grown: {}",
        cfg["scsi0"]
    );
    assert!(cfg["scsi1"].as_str().unwrap().starts_with("local-lvm:vm-100-disk-1"));
    assert_eq!(t.result["mac"]["net0"], json!("BC:24:11:10:00:01"));
    assert!(t.result["mac"]["net1"].is_string());
    assert_eq!(t.result["devices"]["scsi1"], json!("local-lvm:vm-100-disk-1"));

    let again = env.run(UPDATE);
    again.assert_ok();
    let t = again.task("update");
    assert!(!t.changed, "{}", t.result);
    assert_eq!(t.msg(), "VM web01 with vmid 100 is up to date");
    assert_eq!(t.result["mac"], play.task("update").result["mac"]);
    let dry = env.run_with(UPDATE, &check());
    assert!(!dry.task("update").changed);
}

#[test]
fn update_of_a_missing_vm_creates_it() {
    let env = Env::start();
    let play = env.run("- name: cu\n  ferrox.proxmox.proxmox_kvm:\n    node: pve2\n    name: fresh\n    update: true\n    memory: 1024\n");
    play.assert_ok();
    let t = play.task("cu");
    assert!(t.changed);
    let vmid = t.result["vmid"].as_u64().unwrap();
    assert_eq!(t.msg(), format!("VM fresh with vmid {vmid} deployed"));
    assert_eq!(
        env.api_get(&format!("/nodes/pve2/qemu/{vmid}/config"))["memory"],
        json!("1024")
    );
}

#[test]
fn unsafe_disk_changes_fail_with_the_safe_route_and_change_nothing() {
    let env = Env::start();
    let before = config(&env, 100);
    for (value, expect) in [
        ("local-lvm:16", "cannot shrink"),
        ("vmdata:32", "state: moved, disk: scsi0, target_storage: vmdata"),
    ] {
        let play = env.run(&format!(
            "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 8\n    scsi:\n      scsi0: {value}\n"
        ));
        let t = play.task("u");
        assert!(t.failed, "{}", t.result);
        assert!(t.msg().contains(expect), "{}", t.msg());
        assert!(
            t.msg().contains("ferrox.proxmox.proxmox_disk") || expect == "cannot shrink",
            "{}",
            t.msg()
        );
    }
    assert_eq!(config(&env, 100), before);
}

#[test]
fn running_vm_reports_pending_changes_and_can_reboot_to_apply_them() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let play = env.run(
        "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n    onboot: true\n",
    );
    play.assert_ok();
    let t = play.task("u");
    assert!(t.changed);
    assert_eq!(t.result["pending"]["cores"], json!(6));
    assert!(
        t.result["pending"].get("onboot").is_none(),
        "onboot applies live: {}",
        t.result["pending"]
    );
    assert!(t.msg().contains("pending until the VM restarts: cores"), "{}", t.msg());
    // A rerun sees the pending value as wanted: nothing to do.
    let again = env.run(
        "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n    onboot: true\n",
    );
    assert!(!again.task("u").changed, "{}", again.task("u").result);

    let play = env.run("- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 3\n    apply_pending: reboot\n");
    play.assert_ok();
    let t = play.task("u");
    assert!(t.msg().contains("rebooted to apply cores"), "{}", t.msg());
    assert_eq!(t.result["pending"], json!({}));
    let pending = env.api_get("/nodes/pve1/qemu/100/pending");
    assert!(
        pending.as_array().unwrap().iter().all(|i| i.get("pending").is_none()),
        "{pending}"
    );
}

#[test]
fn bad_input_is_named_before_anything_is_written() {
    let env = Env::start();
    let play = env.run("- name: b\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: bad\n    net:\n      eth0: virtio,bridge=vmbr0\n");
    assert_eq!(
        play.task("b").msg(),
        "net: 'eth0' is not a PVE config key; use net0 to net31 as keys"
    );
    let play = env.run("- name: b\n  ferrox.proxmox.proxmox_kvm:\n    node: pve9\n    name: bad\n");
    assert!(
        play.task("b")
            .msg()
            .starts_with("node 'pve9' does not exist in cluster"),
        "{}",
        play.task("b").msg()
    );
    let play = env.run("- name: b\n  ferrox.proxmox.proxmox_kvm:\n    name: bad\n");
    assert_eq!(play.task("b").msg(), "node is mandatory for creating/updating VM");
    let play = env.run("- name: b\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: bad\n    net:\n      net0: virtio,bridge=vmbr0,tag=99999\n");
    assert!(play.task("b").failed);
    assert!(
        play.task("b")
            .msg()
            .starts_with("creation of qemu VM bad with vmid 101 failed with exception="),
        "{}",
        play.task("b").msg()
    );
    let play = env.run("- name: b\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 200\n    cores: 2\n");
    assert!(
        play.task("b").msg().contains("belongs to a container"),
        "{}",
        play.task("b").msg()
    );
    assert!(qemu_named(&env, "bad").is_empty());
}

#[test]
fn secrets_never_appear_in_results_or_diffs() {
    let env = Env::start();
    let yaml = "- name: s\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: ci01\n    ciuser: debian\n    cipassword: Sup3r-Secret-pw\n";
    let play = env.play_with(
        yaml,
        &PlayOpts {
            diff: true,
            verbosity: 3,
            ..Default::default()
        },
    );
    play.assert_ok();
    assert!(!play.stdout.contains("Sup3r-Secret-pw"), "secret leaked in output");
    assert!(!play.task("s").result.to_string().contains("Sup3r-Secret-pw"));
    assert_eq!(
        play.task("s").result["diff"]["after"]["cipassword"],
        json!("********"),
        "masked in the diff"
    );
    assert_eq!(play.task("s").result["diff"]["after"]["ciuser"], json!("debian"));
    let again = env.play_with(
        &yaml.replace("Sup3r-Secret-pw", "other"),
        &PlayOpts {
            diff: true,
            ..Default::default()
        },
    );
    assert!(!again.task("s").changed);
}

#[test]
fn api_calls_per_operation() {
    let env = Env::start();
    env.clear_requests();
    env.run(CREATE).assert_ok();
    let create = env.requests();
    // Counted once PVE lists the new VM by name (a task within that moment reads its config).
    env.settle();
    env.clear_requests();
    env.run(CREATE).assert_ok();
    let noop = env.requests();
    env.clear_requests();
    env.run(
        &CREATE
            .replace("cores: 2", "cores: 3")
            .replace("    node: pve1\n", "    update: true\n"),
    )
    .assert_ok();
    let update = env.requests();
    eprintln!(
        "API calls: create {} {}\nno-op {} {}\nupdate {} {}",
        create["total"], create["counts"], noop["total"], noop["counts"], update["total"], update["counts"]
    );
    assert_eq!(noop["total"], json!(2), "no-op: the cluster listing and the config");
    assert!(create["counts"]["POST /api2/json/nodes/pve1/qemu"] == json!(1));
    assert!(update["counts"]["PUT /api2/json/nodes/pve1/qemu/101/config"] == json!(1));
    // listing, config, pending, the caller's privileges (read once before the first write), the write
    assert!(update["total"].as_u64().unwrap() <= 5, "{}", update["counts"]);
}

#[test]
fn duplicate_names_fail_listing_the_vmids_and_containers_do_not_count() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve2/qemu", &[("vmid", "150"), ("name", "web01")]);
    let play = env.run("- name: d\n  ferrox.proxmox.proxmox_kvm:\n    name: web01\n    state: current\n");
    let msg = play.task("d").msg();
    assert!(msg.starts_with("Multiple VMs with name web01 found (vmids 100, 150), provide vmid instead. They are: VM 100 on node pve1, "), "{msg}");
    assert!(
        msg.contains("VM 150 on node pve2, ") && msg.contains("Nothing was chosen or removed."),
        "{msg}"
    );
    assert!(
        msg.contains("`ferrox.proxmox.proxmox_kvm: {vmid: 150, state: absent}`"),
        "the newest is offered for removal: {msg}"
    );
    assert_eq!(play.task("d").result["duplicates"].as_array().map(Vec::len), Some(2));
    // proxmox_disk and proxmox_nic decode only the listing entries that may be web01: both are.
    let play = env.run(concat!(
        "- {name: disk, ferrox.proxmox.proxmox_disk: {name: web01, disk: scsi0, state: present}, ignore_errors: true}\n",
        "- {name: nic, ferrox.proxmox.proxmox_nic: {name: web01, interface: net0}, ignore_errors: true}\n",
        "- {name: by vmid, ferrox.proxmox.proxmox_nic: {vmid: 150, interface: net0, bridge: vmbr0}}\n",
    ));
    for task in ["disk", "nic"] {
        let msg = play.task(task).msg();
        assert!(
            msg.starts_with("Multiple VMs with name web01 found (vmids 100, 150)")
                && msg.contains("VM 150 on node pve2, "),
            "{task}: {msg}"
        );
    }
    assert_eq!(play.task("by vmid").result["vmid"], json!(150));
    // The LXC container ct-dns is not a QEMU VM of that name: a VM gets created.
    let play = env.run("- name: d\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: ct-dns\n");
    play.assert_ok();
    assert!(play.task("d").changed);
}

#[test]
fn vmid_range_efi_tpm_and_update_unsafe() {
    let env = Env::start();
    let yaml = r#"
- name: r
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    name: uefi01
    vmid_range: [5000, 5999]
    bios: ovmf
    machine: q35
    efidisk0:
      storage: local-lvm
      efitype: 4m
      pre_enrolled_keys: true
    tpmstate0:
      storage: local-lvm
"#;
    let play = env.run(yaml);
    play.assert_ok();
    let t = play.task("r");
    assert_eq!(t.result["vmid"], json!(5665), "derived from the name (vmid_range.rs)");
    let cfg = env.api_get("/nodes/pve1/qemu/5665/config");
    assert!(cfg["efidisk0"].as_str().unwrap().contains("efitype=4m"), "{cfg}");
    assert!(cfg["tpmstate0"].as_str().unwrap().contains("version=v2.0"), "{cfg}");
    assert_eq!(t.result["devices"]["efidisk0"], json!("local-lvm:vm-5665-disk-0"));
    let again = env.run(&yaml.replace("    node: pve1\n", "    update: true\n    update_unsafe: true\n"));
    again.assert_ok();
    assert!(!again.task("r").changed, "{}", again.task("r").result);
    assert!(again
        .task("r")
        .warnings()
        .iter()
        .any(|w| w.contains("update_unsafe is no longer needed")));
    let efi_without_ovmf = env.run("- name: e\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: e1\n    efidisk0:\n      storage: local-lvm\n");
    assert_eq!(
        efi_without_ovmf.task("e").msg(),
        "efidisk0 cannot be used if bios is not set to ovmf. "
    );
}

#[test]
fn check_mode_predicts_the_pending_changes_a_real_run_reports() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let yaml = "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 4\n    cpu: host\n    onboot: true\n    description: web\n    net:\n      net0: virtio,bridge=vmbr1\n      net1: virtio,bridge=vmbr0\n    scsi:\n      scsi1: local-lvm:2\n";
    let dry = env.run_with(yaml, &check());
    dry.assert_ok();
    let real = env.run(yaml);
    real.assert_ok();
    let predicted = &dry.task("u").result["pending"];
    let pending = &real.task("u").result["pending"];
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(predicted),
        keys(pending),
        "check mode: {predicted}, real: {pending}"
    );
    assert_eq!(keys(pending), vec!["cores", "cpu"]);
    assert_eq!(dry.task("u").msg(), real.task("u").msg());
}

#[test]
fn check_mode_counts_changes_already_pending_as_a_real_run_does() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    env.run("- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n")
        .assert_ok();
    let yaml =
        "- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    cores: 6\n    memory: 4096\n";
    let dry = env.run_with(yaml, &check());
    dry.assert_ok();
    let real = env.run(yaml);
    real.assert_ok();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let (predicted, pending) = (&dry.task("u").result["pending"], &real.task("u").result["pending"]);
    assert_eq!(
        keys(pending),
        vec!["cores", "memory"],
        "the earlier change of cores is still pending"
    );
    assert_eq!(
        keys(predicted),
        keys(pending),
        "check mode: {predicted}, real: {pending}"
    );
    assert_eq!(dry.task("u").msg(), real.task("u").msg());
}

/// A cluster set to case-sensitive tags (datacenter `tag-style` `case-sensitive=1`)
/// keeps `Web` as given: it converges without a perpetual diff, and a change of case
/// alone is applied (predicted in check mode). The setting is read only when tags
/// differ in case alone; on a default cluster such a difference is no change.
#[test]
fn tags_converge_as_the_cluster_compares_them() {
    let env = Env::start();
    assert_eq!(
        env.api("PUT", "/cluster/options", &[("tag-style", "case-sensitive=1")])
            .0,
        200
    );
    let tags = |list: &str, extra: &str, name: &str| {
        format!("- name: {name}\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: app08\n    tags: [{list}]\n{extra}")
    };
    let options_read = |env: &Env| {
        let log = env.requests()["log"].as_array().unwrap().clone();
        log.iter().filter(|e| e["path"] == "/api2/json/cluster/options").count()
    };
    let vmid = || {
        env.guests_listed().iter().find(|g| g["name"] == "app08").unwrap()["vmid"]
            .as_u64()
            .unwrap()
    };
    let stored = |env: &Env| env.api_get(&format!("/nodes/pve1/qemu/{}/config", vmid()))["tags"].clone();

    env.clear_requests();
    let play = env.run(&format!(
        "{}{}",
        tags("Web, prod", "", "create"),
        tags("Web, prod", "    update: true\n", "again")
    ));
    play.assert_ok();
    assert!(play.task("create").changed);
    assert!(!play.task("again").changed, "{}", play.task("again").result);
    assert_eq!(stored(&env), "Web;prod");
    assert_eq!(
        options_read(&env),
        1,
        "once, by the create's check of the tags it sets (the token lacks Sys.Modify on /); the same tags again need nothing"
    );

    let change = tags("web, prod", "    update: true\n", "change");
    let dry = env.run_with(&change, &check());
    dry.assert_ok();
    let t = dry.task("change");
    assert!(t.changed, "{}", t.result);
    assert_eq!(
        (&t.result["diff"]["before"]["tags"], &t.result["diff"]["after"]["tags"]),
        (&json!("Web;prod"), &json!("web;prod"))
    );
    assert_eq!(stored(&env), "Web;prod", "check mode writes nothing");

    env.clear_requests();
    let real = env.run(&format!("{change}{}", tags("web, prod", "    update: true\n", "again")));
    real.assert_ok();
    assert!(real.task("change").changed);
    assert_eq!(real.task("change").result["changes"], json!(["tags"]));
    assert_eq!(
        real.task("change").result["actions"],
        t.result["actions"],
        "as check mode predicted"
    );
    assert!(!real.task("again").changed, "{}", real.task("again").result);
    assert_eq!(stored(&env), "prod;web", "sorted bytewise, case kept");
    assert_eq!(
        options_read(&env),
        1,
        "read once, by the task whose tags differed in case alone (its comparison and privilege check share the read)"
    );

    // The default: PVE stores tags lower case, so `Web` is `web`.
    assert_eq!(env.api("PUT", "/cluster/options", &[("delete", "tag-style")]).0, 200);
    let play = env.run(&tags("Web, prod", "    update: true\n", "default"));
    play.assert_ok();
    assert!(!play.task("default").changed, "{}", play.task("default").result);
    assert!(
        play.task("default").warnings().is_empty(),
        "{:?}",
        play.task("default").warnings()
    );
}
