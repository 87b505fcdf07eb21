//! A dry run predicts what the cluster will refuse: a least-privilege token set up the
//! way PVE's docs suggest fails in `--check` exactly where (and why) the real run fails,
//! writing nothing, and the real run never half-applies a task.

use ferrox_integration::{Env, Play, PlayOpts};
use pvesim::state::{AclDef, TokenDef, UserDef};
use serde_json::{json, Value};

const SECRET: &str = "3c1f7a2e-9b4d-4e8a-a6c5-2d7e9f0b1a34";

/// Everything the build flow needs on `/`, but storage space and network use, which the
/// token holds only on `local-lvm` and `vmbr0`.
const ON_ROOT: &[&str] = &[
    "VM.Allocate",
    "VM.Audit",
    "VM.Clone",
    "VM.Config.CDROM",
    "VM.Config.CPU",
    "VM.Config.Cloudinit",
    "VM.Config.Disk",
    "VM.Config.HWType",
    "VM.Config.Memory",
    "VM.Config.Network",
    "VM.Config.Options",
    "VM.PowerMgmt",
    "VM.GuestAgent.Audit",
    "Datastore.Audit",
    "Pool.Audit",
    "Sys.Audit",
];

/// A cluster with the default scenario's guests gone and `ops@pve!automation` granted
/// `on_root` on `/` plus `extra` (path, role) entries.
fn cluster_with(on_root: &[&str], extra: &[(&str, &str)]) -> Env {
    let mut cfg = pvesim::SimConfig::default();
    cfg.scenario.guests.retain(|g| g.vmid == 9000);
    cfg.scenario.users.push(UserDef {
        userid: "ops@pve".into(),
        password: None,
        enable: true,
        totp_secret: None,
        tokens: vec![TokenDef {
            id: "automation".into(),
            secret: SECRET.into(),
            privsep: true,
        }],
    });
    cfg.scenario
        .roles
        .insert("Builder".into(), on_root.iter().map(|s| s.to_string()).collect());
    for ugid in ["ops@pve", "ops@pve!automation"] {
        let acl = |path: &str, role: &str| AclDef {
            path: path.into(),
            ugid: ugid.into(),
            roles: vec![role.into()],
            propagate: true,
        };
        cfg.scenario.acls.push(acl("/", "Builder"));
        for (path, role) in extra {
            cfg.scenario.acls.push(acl(path, role));
        }
    }
    Env::start_with(cfg)
}

fn docs_token() -> Env {
    cluster_with(
        ON_ROOT,
        &[
            ("/storage/local-lvm", "PVEDatastoreUser"),
            ("/sdn/zones/localnetwork/vmbr0", "PVESDNUser"),
        ],
    )
}

fn as_ops(env: &Env) -> Value {
    let mut auth = env.auth();
    auth["api_user"] = json!("ops@pve");
    auth["api_token_secret"] = json!(SECRET);
    env.defaults_with(auth)
}

/// The usual build flow: a VM on vmbr0 with a local-lvm disk, a data disk on vmdata, a
/// second NIC on vmbr1.
const FLOW: &str = r#"
- name: create
  ferrox.proxmox.proxmox_kvm: {node: pve1, vmid: 101, name: web1, scsi: {scsi0: "local-lvm:8"}, net: {net0: "virtio,bridge=vmbr0"}}
- name: disk
  ferrox.proxmox.proxmox_disk: {vmid: 101, disk: scsi1, storage: vmdata, size: 4, state: present}
  ignore_errors: true
- name: nic
  ferrox.proxmox.proxmox_nic: {vmid: 101, interface: net1, bridge: vmbr1}
  ignore_errors: true
"#;

fn run(env: &Env, check: bool) -> Play {
    let callbacks = vec![(
        "ANSIBLE_CALLBACKS_ENABLED".to_string(),
        "ferrox_results,ferrox.proxmox.plan".to_string(),
    )];
    env.play_with(
        FLOW,
        &PlayOpts {
            check,
            diff: check,
            module_defaults: Some(as_ops(env)),
            env: callbacks,
            ..Default::default()
        },
    )
}

#[test]
fn the_dry_run_fails_where_and_why_the_real_run_does() {
    let env = docs_token();
    env.clear_requests();
    let dry = run(&env, true);
    assert_eq!(
        env.write_counts(),
        Vec::<String>::new(),
        "a check run writes nothing\n{}",
        dry.transcript()
    );
    assert!(
        dry.task("create").changed && !dry.task("create").failed,
        "{}",
        dry.transcript()
    );
    let disk = dry.task("disk");
    assert!(disk.failed, "{}", dry.transcript());
    assert_eq!(
        disk.msg(),
        "proxmox_disk scsi1 on VM 101 (planned): needs Datastore.AllocateSpace on /storage/vmdata, which ops@pve!automation does not have"
    );
    let nic = dry.task("nic");
    assert!(nic.failed, "{}", dry.transcript());
    assert_eq!(nic.msg(), "proxmox_nic net1 on VM 101 (planned): needs SDN.Use on /sdn/zones/localnetwork/vmbr1, which ops@pve!automation does not have");

    let summary = dry
        .stdout
        .split("FERROX PLAN")
        .nth(1)
        .unwrap_or_else(|| panic!("no plan summary\n{}", dry.stdout));
    assert!(
        summary.contains("  ! VM 101: proxmox_disk scsi1 refused, needs Datastore.AllocateSpace on /storage/vmdata"),
        "{summary}"
    );
    assert!(
        summary.contains("  ! VM 101: proxmox_nic net1 refused, needs SDN.Use on /sdn/zones/localnetwork/vmbr1"),
        "{summary}"
    );
    assert!(
        summary.contains("Plan: 1 to create, 0 to change, 0 to destroy, 2 refused."),
        "the refused tasks change nothing: {summary}"
    );

    let real = run(&env, false);
    assert!(!real.task("create").failed, "{}", real.transcript());
    assert_eq!(real.task("disk").msg(), "proxmox_disk scsi1 on VM 101: needs Datastore.AllocateSpace on /storage/vmdata, which ops@pve!automation does not have");
    assert_eq!(real.task("nic").msg(), "proxmox_nic net1 on VM 101: needs SDN.Use on /sdn/zones/localnetwork/vmbr1, which ops@pve!automation does not have");
    let config = env.api_get("/nodes/pve1/qemu/101/config");
    assert!(
        config.get("scsi1").is_none() && config.get("net1").is_none(),
        "nothing half-applied: {config}"
    );
    // Each writing task paid one call for the check.
    let log = env.requests();
    assert_eq!(
        log["counts"]["GET /api2/json/access/permissions"],
        json!(6),
        "{}",
        log["counts"]
    );
}

#[test]
fn a_bridge_hidden_from_the_caller_is_named_not_called_missing() {
    // The token may use vmbr1 only with VLAN 20: PVE lists the bridge, but untagged it is refused.
    let env = cluster_with(
        ON_ROOT,
        &[
            ("/storage/local-lvm", "PVEDatastoreUser"),
            ("/sdn/zones/localnetwork/vmbr0", "PVESDNUser"),
            ("/sdn/zones/localnetwork/vmbr1/20", "PVESDNUser"),
        ],
    );
    env.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "101"), ("net0", "virtio,bridge=vmbr0")],
    );
    let play = |tasks: &str| {
        env.run_with(
            tasks,
            &PlayOpts {
                module_defaults: Some(as_ops(&env)),
                ..Default::default()
            },
        )
    };
    let tagged =
        play("- {name: tagged, ferrox.proxmox.proxmox_nic: {vmid: 101, interface: net1, bridge: vmbr1, tag: 20}}");
    assert!(tagged.task("tagged").changed, "{}", tagged.transcript());
    let untagged = play("- {name: untagged, ferrox.proxmox.proxmox_nic: {vmid: 101, interface: net2, bridge: vmbr1}}");
    assert_eq!(untagged.task("untagged").msg(), "proxmox_nic net2 on VM 101: needs SDN.Use on /sdn/zones/localnetwork/vmbr1, which ops@pve!automation does not have");
    let other_vlan = play("- {name: vlan30, ferrox.proxmox.proxmox_kvm: {vmid: 101, update: true, net: {net3: 'virtio,bridge=vmbr1,tag=30'}}}");
    assert_eq!(other_vlan.task("vlan30").msg(), "proxmox_kvm net3 on VM 101: needs SDN.Use on /sdn/zones/localnetwork/vmbr1/30, which ops@pve!automation does not have");
}
