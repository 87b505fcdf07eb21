//! proxmox_kvm and the keys PVE 9 has: `extra_config` (any schema key, checked before any
//! write), `efidisk0.ms_cert` (the Microsoft 2023 certificates), the field report's
//! `qm set --rng0 … --spice_enhancements …` as a task, and keys newer than the schema
//! (PVE 9.2's `host-tunnel` and cpu `level`) decided by the cluster's release. In
//! process against the simulator.

use ferrox_integration::{creds, Env, PlayOpts};
use serde_json::Value;

/// root@pam by password: PVE lets no one else set `ivshmem`.
fn as_root(env: &Env, check: bool) -> PlayOpts {
    let mut auth = env.auth();
    let a = auth.as_object_mut().unwrap();
    a.remove("api_token_id");
    a.remove("api_token_secret");
    a.insert("api_user".into(), "root@pam".into());
    a.insert("api_password".into(), creds::ROOT_PASSWORD.into());
    PlayOpts {
        check,
        diff: check,
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    }
}

fn config(env: &Env, vmid: u64) -> Value {
    env.api_get(&format!("/nodes/pve1/qemu/{vmid}/config"))
}

fn task(vmid: u64, body: &str) -> String {
    format!("- name: t\n  ferrox.proxmox.proxmox_kvm:\n    vmid: {vmid}\n    update: true\n{body}")
}

#[test]
fn qm_set_line_as_a_task_and_extra_config_converge_and_rerun_unchanged() {
    let env = Env::start();
    // qm set 100 --rng0 source=/dev/urandom --spice_enhancements foldersharing=1,videostreaming=all
    //            --ivshmem size=32,name=lg --vmstatestorage local-lvm
    let yaml = task(
        100,
        "    rng0: source=/dev/urandom\n    spice_enhancements: foldersharing=1,videostreaming=all\n    vmstatestorage: local-lvm\n    extra_config:\n      ivshmem: size=32,name=lg\n",
    );
    let dry = env.run_with(&yaml, &as_root(&env, true));
    dry.assert_ok();
    assert!(dry.task("t").changed);
    assert!(config(&env, 100).get("ivshmem").is_none(), "check mode wrote");
    let diff = dry.task("t").result["diff"].to_string();
    assert!(diff.contains("ivshmem") && diff.contains("size=32,name=lg"), "{diff}");

    let play = env.run_with(&yaml, &as_root(&env, false));
    play.assert_ok();
    assert!(play.task("t").changed);
    let cfg = config(&env, 100);
    assert_eq!(cfg["rng0"], "source=/dev/urandom");
    assert_eq!(cfg["spice_enhancements"], "foldersharing=1,videostreaming=all");
    assert_eq!(cfg["vmstatestorage"], "local-lvm");
    assert_eq!(cfg["ivshmem"], "size=32,name=lg");
    let again = env.run_with(&yaml, &as_root(&env, false));
    again.assert_ok();
    assert!(!again.task("t").changed, "{}", again.task("t").result);

    // A changed field of a pass-through key is one more write, compared like any option.
    let play = env.run_with(&yaml.replace("size=32", "size=64"), &as_root(&env, false));
    assert!(play.task("t").changed);
    assert_eq!(config(&env, 100)["ivshmem"], "name=lg,size=64");
}

#[test]
fn extra_config_bad_input_fails_before_any_write() {
    let env = Env::start();
    let before = config(&env, 100);
    env.clear_requests();
    let cases = [
        ("unknown", "nosuchkey: 1", "extra_config: unknown key 'nosuchkey' (not a VM config key in the schema); the cluster runs 9.1.5, which the PVE 9.1 schema this collection knows covers (up to 9.1.9): check the spelling"),
        ("format", "ivshmem: size=lots", "extra_config.ivshmem: invalid value 'lots' for key 'size': expected an integer; PVE's format for ivshmem is size=<integer> [,name=<string>]"),
        ("option", "cores: 4", "extra_config: cores has its own option; use cores instead"),
    ];
    let tasks: String = cases
        .iter()
        .map(|(name, extra, _)| format!("- name: {name}\n  ignore_errors: true\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    extra_config:\n      {extra}\n"))
        .collect();
    let play = env.run(&tasks);
    for (name, _, msg) in cases {
        assert!(play.task(name).failed, "{name}");
        assert!(
            play.task(name).msg().starts_with(msg),
            "{name}: {}",
            play.task(name).msg()
        );
    }
    let log = env.requests();
    let writes: Vec<&String> = log["counts"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !k.starts_with("GET ") && !k.starts_with("POST /access/ticket"))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert_eq!(config(&env, 100), before);
}

fn at(version: &str) -> Env {
    let mut cfg = pvesim::SimConfig::default();
    cfg.scenario.pve_version = Some(version.into());
    Env::start_with(cfg)
}

const NEWER: &str = r#"
- name: n
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    vmid: 4200
    name: newer-keys
    update: true
    cpu: x86-64-v2-AES,level=30
    net:
      net0: virtio,bridge=vmbr0,host-tunnel=0
"#;

fn diff_text(play: &ferrox_integration::Play) -> String {
    play.task("n").result["diff"].to_string()
}

#[test]
fn host_tunnel_and_cpu_level_on_a_9_2_cluster_create_converge_and_show_in_the_diff() {
    let env = at("9.2.6");
    let check = PlayOpts {
        check: true,
        diff: true,
        ..Default::default()
    };
    let dry = env.run_with(NEWER, &check);
    dry.assert_ok();
    assert!(dry.task("n").changed);
    assert!(dry.task("n").warnings().is_empty(), "{:?}", dry.task("n").warnings());
    let play = env.run(NEWER);
    play.assert_ok();
    assert!(play.task("n").changed);
    let cfg = config(&env, 4200);
    assert_eq!(cfg["cpu"], "x86-64-v2-AES,level=30");
    assert!(
        cfg["net0"].as_str().unwrap().ends_with(",bridge=vmbr0,host-tunnel=0"),
        "{cfg}"
    );
    let again = env.run(NEWER);
    again.assert_ok();
    assert!(!again.task("n").changed, "{}", again.task("n").result);

    let changed = NEWER
        .replace("host-tunnel=0", "host-tunnel=1")
        .replace("level=30", "level=31");
    let dry = env.run_with(&changed, &check);
    dry.assert_ok();
    let diff = diff_text(&dry);
    assert!(
        diff.contains("host-tunnel=0") && diff.contains("host-tunnel=1"),
        "{diff}"
    );
    assert!(diff.contains("level=30") && diff.contains("level=31"), "{diff}");
    let play = env.run(&changed);
    assert!(play.task("n").changed);
    let cfg = config(&env, 4200);
    assert!(cfg["net0"].as_str().unwrap().ends_with(",host-tunnel=1"), "{cfg}");
    assert_eq!(cfg["cpu"], "x86-64-v2-AES,level=31");
    assert!(!env.run(&changed).task("n").changed);
}

#[test]
fn on_a_9_1_cluster_they_are_refused_naming_the_release_that_has_them() {
    let env = at("9.1.5");
    env.clear_requests();
    let cases = [
        ("net", NEWER.replace("    cpu: x86-64-v2-AES,level=30\n", ""), "net.net0: host-tunnel needs PVE 9.2.4 (qemu-server 9.1.18) or later; the cluster runs 9.1.5: upgrade the cluster, or leave host-tunnel out"),
        ("cpu", NEWER.replace("host-tunnel=0", "firewall=1"), "cpu: level needs PVE 9.1.16 (qemu-server 9.1.14) or later; the cluster runs 9.1.5: upgrade the cluster, or leave level out"),
    ];
    for (name, yaml, want) in &cases {
        for check in [true, false] {
            let opts = PlayOpts {
                check,
                ..Default::default()
            };
            let play = env.run_with(yaml, &opts);
            assert!(play.task("n").failed, "{name} check={check}");
            assert_eq!(play.task("n").msg(), *want, "{name} check={check}");
        }
    }
    let log = env.requests();
    let counts = log["counts"].as_object().unwrap();
    assert!(
        counts
            .keys()
            .all(|k| k.starts_with("GET ") || k.starts_with("POST /access/ticket")),
        "{counts:?}"
    );
    assert_eq!(
        env.api("GET", "/nodes/pve1/qemu/4200/config", &[]).0,
        500,
        "nothing was made"
    );
}

#[test]
fn a_key_unknown_to_the_schema_is_sent_with_a_warning_to_a_newer_cluster() {
    let env = at("9.2.6");
    env.clear_requests();
    let yaml = task(100, "    extra_config:\n      nosuchkey: 1\n");
    // The scenario's token: which privilege a key the schema lacks needs is the
    // cluster's to say, so nothing is refused before it is sent.
    let play = env.run(&yaml);
    let t = play.task("t");
    assert!(
        t.warnings().iter().any(|w| w == "extra_config: nosuchkey is not in the PVE 9.1 schema this collection knows; sent as given because the cluster runs 9.2.6"),
        "{:?}",
        t.warnings()
    );
    // The simulator's 9.2.6 has no such key either: PVE's refusal reaches the user.
    assert!(t.failed);
    assert!(
        t.msg().contains("nosuchkey") && t.msg().contains("property is not defined in schema"),
        "{}",
        t.msg()
    );
    let log = env.requests();
    assert_eq!(
        log["counts"]["GET /api2/json/version"], 1,
        "read once: {}",
        log["counts"]
    );
}

const OVMF: &str = r#"
- name: c
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    vmid: 4100
    name: uefi-2023
    bios: ovmf
    machine: q35
    efidisk0:
      storage: local-lvm
      efitype: 4m
      pre_enrolled_keys: true
      ms_cert: 2023k
"#;

#[test]
fn ms_cert_2023k_on_create_and_on_an_existing_vm_pending_until_restart() {
    let env = Env::start();
    let play = env.run(OVMF);
    play.assert_ok();
    assert!(config(&env, 4100)["efidisk0"]
        .as_str()
        .unwrap()
        .contains("ms-cert=2023k"));
    let again = env.run(&OVMF.replace("    node: pve1\n", "    node: pve1\n    update: true\n"));
    assert!(!again.task("c").changed, "{}", again.task("c").result);

    // An EFI disk from before the 2023 certificates, on a running VM.
    let efi = config(&env, 4100)["efidisk0"]
        .as_str()
        .unwrap()
        .replace("ms-cert=2023k", "ms-cert=2011");
    env.api("PUT", "/nodes/pve1/qemu/4100/config", &[("efidisk0", &efi)]);
    env.run_task("POST", "/nodes/pve1/qemu/4100/status/start", &[]);
    let yaml = task(4100, "    efidisk0:\n      storage: local-lvm\n      ms_cert: 2023k\n");
    let dry = env.run_with(
        &yaml,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    assert!(dry.task("t").changed);
    let predicted = &dry.task("t").result["pending"]["efidisk0"];
    assert!(
        predicted.as_str().is_some_and(|v| v.contains("ms-cert=2023k")),
        "{}",
        dry.task("t").result
    );
    let play = env.run(&yaml);
    play.assert_ok();
    let t = play.task("t");
    assert!(t.changed);
    let pending = &t.result["pending"];
    assert_eq!(
        pending.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["efidisk0"],
        "{pending}"
    );
    assert!(
        pending["efidisk0"].as_str().unwrap().contains("ms-cert=2023k"),
        "{pending}"
    );
    assert_eq!(dry.task("t").msg(), t.msg(), "check mode and the real run agree");
    assert!(
        t.msg().contains("pending until the VM restarts: efidisk0"),
        "{}",
        t.msg()
    );
    assert!(env.api_get("/nodes/pve1/qemu/4100/config?current=1")["efidisk0"]
        .as_str()
        .unwrap()
        .contains("ms-cert=2011"));
    let again = env.run(&yaml);
    assert!(!again.task("t").changed, "{}", again.task("t").result);

    // The restart applies it: PVE enrolls and records 2023k.
    env.run_task("POST", "/nodes/pve1/qemu/4100/status/stop", &[]);
    assert!(env.api_get("/nodes/pve1/qemu/4100/config?current=1")["efidisk0"]
        .as_str()
        .unwrap()
        .contains("ms-cert=2023k"));

    // Without pre-enrolled keys PVE cannot enroll: refused before anything is written.
    let bad = env.run(
        &OVMF
            .replace("4100", "4101")
            .replace("pre_enrolled_keys: true", "pre_enrolled_keys: false"),
    );
    assert_eq!(
        bad.task("c").msg(),
        "efidisk0.ms_cert: 2023k needs efidisk0.pre_enrolled_keys: true (PVE enrolls the Microsoft 2023 certificates only into an EFI disk with pre-enrolled keys)"
    );
    assert_eq!(env.api("GET", "/nodes/pve1/qemu/4101/config", &[]).0, 500);
}

#[test]
fn clone_and_migrate_send_pves_transfer_parameters() {
    let env = Env::start();
    // The simulator checks every parameter against PVE's schema: a misspelt one fails.
    let yaml = r#"
- name: clone
  ferrox.proxmox.proxmox_kvm:
    clone: web01
    vmid: 100
    newid: 4200
    name: web01-copy
    bwlimit: 20480
- name: migrate
  ferrox.proxmox.proxmox_kvm:
    vmid: 4200
    migrate: true
    node: pve2
    with_local_disks: true
    targetstorage: local-lvm
    bwlimit: 10240
    migration_type: secure
    migration_network: 192.0.2.0/24
    with_conntrack_state: true
"#;
    let play = env.run_with(yaml, &as_root(&env, false));
    play.assert_ok();
    assert_eq!(
        play.task("migrate").msg(),
        "VM 4200 has been migrated from pve1 to pve2"
    );
    env.api_get("/nodes/pve2/qemu/4200/config");
}
