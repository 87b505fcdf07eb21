//! proxmox_kvm and the keys PVE 9 has: `extra_config` (any schema key, checked before any
//! write), `efidisk0.ms_cert` (the Microsoft 2023 certificates), the field report's
//! `qm set --rng0 … --spice_enhancements …` as a task, and keys newer than the schema
//! (PVE 9.2's `host-tunnel` and cpu `level`) sent and decided by the node's own
//! qemu-server, never by a version. In process against the simulator.

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

/// A cluster whose API host (`GET /version`) runs pve-manager `version`, with pve2's
/// qemu-server set apart when `pve2_qemu_server` is given (pve-manager sets only a floor).
fn cluster(version: &str, pve2_qemu_server: Option<&str>) -> Env {
    let mut cfg = pvesim::SimConfig::default();
    cfg.scenario.pve_version = Some(version.into());
    cfg.scenario.nodes[1].qemu_server = pve2_qemu_server.map(String::from);
    Env::start_with(cfg)
}

fn at(version: &str) -> Env {
    cluster(version, None)
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

/// What check mode says of the two keys: sent, the node decides.
const CHECK_NOTES: [&str; 2] = [
    "cpu: level came with qemu-server 9.1.14 (PVE 9.1.16); whether the target node's qemu-server has it only that node can say, so it is sent and the node decides (check mode sends nothing)",
    "net.net0: host-tunnel came with qemu-server 9.1.18 (PVE 9.2.4); whether the target node's qemu-server has it only that node can say, so it is sent and the node decides (check mode sends nothing)",
];

fn diff_text(play: &ferrox_integration::Play) -> String {
    play.task("n").result["diff"].to_string()
}

fn check() -> PlayOpts {
    PlayOpts {
        check: true,
        diff: true,
        ..Default::default()
    }
}

#[test]
fn host_tunnel_and_cpu_level_on_a_9_2_cluster_create_converge_and_show_in_the_diff() {
    let env = at("9.2.6");
    let dry = env.run_with(NEWER, &check());
    dry.assert_ok();
    assert!(dry.task("n").changed);
    assert_eq!(dry.task("n").warnings(), CHECK_NOTES);
    let play = env.run(NEWER);
    play.assert_ok();
    assert!(play.task("n").changed);
    assert!(play.task("n").warnings().is_empty(), "{:?}", play.task("n").warnings());
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
    let dry = env.run_with(&changed, &check());
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
fn a_node_whose_qemu_server_has_host_tunnel_takes_it_whatever_get_version_says() {
    // GET /version says 9.2.3, which came with a qemu-server before host-tunnel; pve2's
    // qemu-server 9.1.18 has it. Nothing is refused on the version, check mode included.
    let env = cluster("9.2.3", Some("9.1.18"));
    let on_pve2 = NEWER.replace("node: pve1", "node: pve2");
    let dry = env.run_with(&on_pve2, &check());
    dry.assert_ok();
    assert!(dry.task("n").changed);
    assert_eq!(dry.task("n").warnings(), CHECK_NOTES);
    let play = env.run(&on_pve2);
    play.assert_ok();
    let cfg = env.api_get("/nodes/pve2/qemu/4200/config");
    assert!(cfg["net0"].as_str().unwrap().ends_with(",host-tunnel=0"), "{cfg}");
    assert_eq!(cfg["cpu"], "x86-64-v2-AES,level=30");
    let again = env.run(&on_pve2);
    again.assert_ok();
    assert!(!again.task("n").changed, "{}", again.task("n").result);
    let log = env.requests();
    assert!(
        log["counts"].get("GET /api2/json/version").is_none(),
        "no version is read to decide: {}",
        log["counts"]
    );
}

#[test]
fn a_node_without_the_key_refuses_it_and_the_task_says_which_key_node_and_fix() {
    let env = cluster("9.2.3", Some("9.1.18"));
    // pve1 runs the qemu-server 9.2.3 came with: cpu level, no host-tunnel.
    let play = env.run(NEWER);
    let t = play.task("n");
    assert!(t.failed);
    assert_eq!(
        t.msg(),
        "creation of qemu VM newer-keys with vmid 4200 failed with exception=400 Bad Request: net.net0: node pve1 refused host-tunnel (invalid format - invalid key in comma-separated list property: host-tunnel): its qemu-server is older than 9.1.18, the release that brought host-tunnel (with PVE 9.2.4); upgrade qemu-server on pve1 (apt full-upgrade), or leave host-tunnel out. PVE checks the parameters before acting, so this call changed nothing"
    );
    assert_eq!(
        env.api("GET", "/nodes/pve1/qemu/4200/config", &[]).0,
        500,
        "nothing was made"
    );
    // Check mode cannot know: it says so and fails nothing.
    let dry = env.run_with(NEWER, &check());
    dry.assert_ok();
    assert_eq!(dry.task("n").warnings(), CHECK_NOTES);

    // On an existing VM the config update is refused the same way, the VM left as it was.
    let env = at("9.1.5");
    let before = config(&env, 100);
    let play = env.run(&task(100, "    cpu: host,level=30\n"));
    let t = play.task("t");
    assert!(t.failed);
    assert!(
        t.msg().ends_with("cpu: node pve1 refused level (invalid format - invalid key in comma-separated list property: level): its qemu-server is older than 9.1.14, the release that brought level (with PVE 9.1.16); upgrade qemu-server on pve1 (apt full-upgrade), or leave level out. PVE checks the parameters before acting, so this call changed nothing"),
        "{}",
        t.msg()
    );
    assert_eq!(config(&env, 100), before);
}

#[test]
fn a_key_unknown_to_the_schema_is_sent_with_a_warning_and_the_node_s_refusal_names_it() {
    let env = Env::start();
    let before = config(&env, 100);
    env.clear_requests();
    let yaml = task(100, "    extra_config:\n      nosuchkey: 1\n");
    let warning = "extra_config: nosuchkey is not in the PVE 9.1 schema this collection knows; sent as given, for the target node's qemu-server to decide";
    let dry = env.run_with(&yaml, &check());
    dry.assert_ok();
    assert_eq!(dry.task("t").warnings(), [warning]);
    // The scenario's token: which privilege a key the schema lacks needs is the
    // cluster's to say, so nothing is refused before it is sent.
    let play = env.run(&yaml);
    let t = play.task("t");
    assert_eq!(t.warnings(), [warning]);
    // The simulator's nodes have no such key either: their refusal reaches the user.
    assert!(t.failed);
    assert!(
        t.msg()
            .contains("extra_config: node pve1 refused nosuchkey (property is not defined in schema")
            && t.msg().contains("check the spelling"),
        "{}",
        t.msg()
    );
    assert_eq!(config(&env, 100), before);
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
