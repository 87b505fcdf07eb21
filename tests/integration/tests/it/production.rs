//! What production clusters have and the default scenario does not: HA-managed VMs,
//! resource pools, backups restored with `archive`. Each through proxmox_kvm end to end.

use ferrox_integration::{Env, PlayOpts};
use pvesim::state::{HaResource, PoolDef};
use serde_json::Value;

fn task(extra: &str) -> String {
    format!("- name: t\n  ferrox.proxmox.proxmox_kvm:\n{extra}")
}

fn status(env: &Env, vmid: u64) -> String {
    env.api_get(&format!("/nodes/pve1/qemu/{vmid}/status/current"))["status"]
        .as_str()
        .unwrap()
        .to_string()
}

fn resource(env: &Env, vmid: u64) -> Value {
    let all = env.api_get("/cluster/resources?type=vm");
    all.as_array()
        .unwrap()
        .iter()
        .find(|e| e["vmid"] == vmid)
        .cloned()
        .unwrap_or(Value::Null)
}

/// An HA request's task ends before the VM changes state: the module must wait for the
/// state, so the next task (and the reported result) sees the VM running/stopped.
#[test]
fn ha_managed_vm_is_started_and_stopped_through_the_ha_manager() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: "stopped".into(),
        comment: None,
    });
    let env = Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    });
    assert_eq!(resource(&env, 100)["hastate"], "stopped");
    // The HA manager acts a while after the request (PVE: its 10 s loop): its start
    // task takes 3 s, long after the hastart task has ended.
    env.fault(serde_json::json!({"task_type": "qmstart", "duration_ms": 3000, "times": 1}));
    env.clear_requests();
    let play = env.run(&task("    vmid: 100\n    state: started\n"));
    let t = play.task("t");
    assert!(t.changed, "{}", play.transcript());
    assert_eq!(t.msg(), "VM 100 started");
    assert_eq!(status(&env, 100), "running", "the module returned only once the VM ran");
    assert_eq!(resource(&env, 100)["hastate"], "started");
    // After the start request's task, the module polled the VM's state.
    let log = env.requests()["log"].as_array().unwrap().clone();
    let call = |e: &Value| format!("{} {}", e["method"].as_str().unwrap(), e["path"].as_str().unwrap());
    let posted = log
        .iter()
        .position(|e| call(e) == "POST /api2/json/nodes/pve1/qemu/100/status/start")
        .expect("start posted");
    assert!(
        log[posted..]
            .iter()
            .any(|e| call(e) == "GET /api2/json/nodes/pve1/qemu/100/status/current"),
        "no state poll after the HA request: {:?}",
        log.iter().map(call).collect::<Vec<_>>()
    );
    let again = env.run(&task("    vmid: 100\n    state: started\n"));
    assert!(!again.task("t").changed);

    env.fault(serde_json::json!({"task_type": "qmshutdown", "duration_ms": 3000, "times": 1}));
    let stop = env.run(&task("    vmid: 100\n    state: stopped\n    timeout: 20\n"));
    assert_eq!(stop.task("t").msg(), "VM 100 is shutting down");
    assert_eq!(status(&env, 100), "stopped");
    assert_eq!(resource(&env, 100)["hastate"], "stopped");

    // Removing an HA resource's VM needs purge (said before any write).
    let refused = env.run(&task("    vmid: 100\n    state: absent\n"));
    assert!(refused.task("t").failed);
    assert!(
        refused.task("t").msg().contains("only with purge: true"),
        "{}",
        refused.task("t").msg()
    );
    let gone = env.run(&task("    vmid: 100\n    state: absent\n    purge: true\n"));
    assert!(gone.task("t").changed, "{}", gone.transcript());
    assert_eq!(resource(&env, 100), Value::Null);
}

#[test]
fn a_vm_is_created_and_cloned_into_a_pool() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.pools.push(PoolDef {
        poolid: "web".into(),
        comment: Some("web tier".into()),
        ..Default::default()
    });
    let env = Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    });
    let play = env.run(&task(
        "    node: pve1\n    name: web02\n    vmid: 140\n    pool: web\n    cores: 2\n",
    ));
    assert!(play.task("t").changed, "{}", play.transcript());
    assert_eq!(resource(&env, 140)["pool"], "web");
    let again = env.run(&task(
        "    node: pve1\n    name: web02\n    vmid: 140\n    pool: web\n    cores: 2\n",
    ));
    assert!(!again.task("t").changed, "{}", again.transcript());
    let clone = env.run(&task(
        "    node: pve1\n    clone: base-debian13\n    vmid: 9000\n    newid: 141\n    name: web03\n    pool: prod\n",
    ));
    assert!(clone.task("t").changed, "{}", clone.transcript());
    assert_eq!(resource(&env, 141)["pool"], "prod");
    let members = env.api_get("/pools?poolid=web");
    assert_eq!(members[0]["members"][0]["vmid"], 140);
    // A pool that does not exist: PVE's answer, nothing created.
    let bad = env.run(&task(
        "    node: pve1\n    name: web04\n    vmid: 142\n    pool: nope\n",
    ));
    assert!(bad.task("t").failed);
    // Checked before any write, in PVE's words, with the pools that do exist.
    assert!(
        bad.task("t")
            .msg()
            .contains("pool 'nope' does not exist (pools: prod, web)"),
        "{}",
        bad.task("t").msg()
    );
    assert_eq!(resource(&env, 142), Value::Null);
}

/// `archive`: the restore, then the rest of the task applied to the restored VM as an
/// update; the second run changes nothing.
#[test]
fn archive_restores_a_backup_then_applies_the_rest_of_the_task() {
    let env = Env::start();
    env.run_task(
        "POST",
        "/nodes/pve1/vzdump",
        &[("vmid", "100"), ("storage", "local"), ("mode", "snapshot")],
    );
    let backups = env.api_get("/nodes/pve1/storage/local/content?content=backup");
    let volid = backups[0]["volid"].as_str().unwrap().to_string();
    let source = env.api_get("/nodes/pve1/qemu/100/config");
    let restore = format!(
        "    node: pve1\n    vmid: 170\n    name: web01-restored\n    archive: {volid}\n    storage: nvme-pool\n    cores: 4\n    pool: prod\n"
    );
    let dry = env.run_with(
        &task(&restore),
        &ferrox_integration::PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    assert!(dry.task("t").changed, "{}", dry.transcript());
    assert_eq!(resource(&env, 170), Value::Null, "check mode restores nothing");

    let play = env.run(&task(&restore));
    let t = play.task("t");
    assert!(t.changed, "{}", play.transcript());
    assert_eq!(t.msg(), "VM web01-restored with vmid 170 deployed");
    let c = env.api_get("/nodes/pve1/qemu/170/config");
    assert_eq!(c["name"], "web01-restored");
    assert_eq!(c["cores"], 4, "the task's cores applied after the restore");
    assert_eq!(c["scsi0"], "nvme-pool:vm-170-disk-0,iothread=1,size=32G");
    assert_eq!(c["net0"], source["net0"], "the backup's NIC and MAC");
    assert_eq!(
        t.result["mac"]["net0"],
        source["net0"].as_str().unwrap().split(['=', ',']).nth(1).unwrap()
    );
    assert_eq!(resource(&env, 170)["pool"], "prod");
    let actions: Vec<&str> = t.result["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(actions[0], "restore VM 170 on pve1", "{actions:?}");

    let again = env.run(&task(&restore));
    assert!(!again.task("t").changed, "{}", again.transcript());
    assert_eq!(again.task("t").msg(), "VM with vmid <170> already exists");
}

/// Every module on a cluster that answers with everything PVE 9 adds: pools and
/// `type: network` entries in the cluster listing, `hastate`/`pool` on guests,
/// `pid`/`serial`/`pressure*` in listings, `ballooninfo`/`blockstat`/`nics`/... in
/// status, snapshots (`parent` in the config), bridge addresses and altnames. Keys a
/// module does not know are ignored; vm_info passes the guest's keys through.
#[test]
fn every_module_tolerates_the_keys_and_entries_pve9_adds() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.pools[0].vms.push(100);
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: "started".into(),
        comment: None,
    });
    let web = scenario.guests.iter_mut().find(|g| g.vmid == 100).unwrap();
    web.running = true;
    web.config.insert("serial0".into(), "socket".into());
    web.config.insert("balloon".into(), 1024.into());
    web.snapshots.push(pvesim::scenario::SnapshotSpec {
        name: "before-upgrade".into(),
        description: "taken by the scenario".into(),
        snaptime: None,
        vmstate: false,
        config: None,
    });
    let env = Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    });
    let all = env.api_get("/cluster/resources");
    assert!(
        all.as_array().unwrap().iter().any(|e| e["type"] == "network")
            && all.as_array().unwrap().iter().any(|e| e["type"] == "pool")
    );

    let play = env.run(
        "- name: current\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    state: current\n\
         - name: by name\n  ferrox.proxmox.proxmox_kvm:\n    name: web01\n    node: pve1\n    update: true\n    cores: 2\n\
         - name: nic\n  ferrox.proxmox.proxmox_nic:\n    name: web01\n    interface: net1\n    bridge: vmbr1\n\
         - name: disk\n  ferrox.proxmox.proxmox_disk:\n    vmid: 100\n    disk: scsi1\n    storage: local-lvm\n    size: 1\n\
         - name: info\n  ferrox.proxmox.proxmox_vm_info:\n    vmid: 100\n    config: current\n",
    );
    for name in ["current", "by name", "nic", "disk", "info"] {
        assert!(!play.task(name).failed, "{name}: {}", play.transcript());
    }
    assert_eq!(play.task("current").msg(), "VM web01 with vmid = 100 is running");
    let vm = &play.task("info").result["proxmox_vms"][0];
    assert_eq!(vm["hastate"], "started");
    assert_eq!(vm["pool"], "prod");
    assert_eq!(vm["serial"], 1);
    assert!(vm["pid"].is_u64() && vm["pressurecpusome"].is_number(), "{vm}");
    assert_eq!(vm["config"]["parent"], "before-upgrade");
}

/// PVE refuses to remove an HA resource without `purge`, but only after a running VM
/// was stopped: the module says so before anything is written.
#[test]
fn absent_of_an_ha_managed_vm_without_purge_fails_before_any_write() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.guests.iter_mut().find(|g| g.vmid == 100).unwrap().running = true;
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: "started".into(),
        comment: None,
    });
    let env = Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    });
    env.clear_requests();
    let play = env.run(&task("    vmid: 100\n    state: absent\n    force: true\n"));
    let t = play.task("t");
    assert!(t.failed);
    assert_eq!(
        t.msg(),
        "deletion of VM 100 failed with exception: VM 100 is HA-managed, and PVE removes a VM with an HA resource only with purge: true (which also drops it from backup jobs and replication). Set purge: true, or remove the HA resource first (ha-manager remove vm:100). Nothing was changed"
    );
    let log = env.requests()["log"].as_array().unwrap().clone();
    let writes: Vec<&Value> = log
        .iter()
        .filter(|e| e["method"] != "GET" && !e["path"].as_str().unwrap().ends_with("/access/ticket"))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert_eq!(status(&env, 100), "running");
}

/// A VM created as an HA resource (`ha-managed` with the create), then migrated: PVE
/// answers the migration with a `hamigrate` task that only hands the request to the HA
/// manager and ends at once; the module returns only once the VM runs on the target.
#[test]
fn an_ha_managed_vm_is_created_and_migrated_through_the_ha_manager() {
    // PVE asks Sys.Console on / of whoever creates an HA resource.
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.roles.insert("HAOperator".into(), vec!["Sys.Console".into()]);
    for ugid in ["ansible@pve", "ansible@pve!automation"] {
        scenario.acls.push(pvesim::state::AclDef {
            path: "/".into(),
            ugid: ugid.into(),
            roles: vec!["HAOperator".into()],
            propagate: true,
        });
    }
    let env = Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    });
    let play = env.run(
        "- name: create\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 210\n    name: ha-web\n    node: pve1\n    ha_managed: true\n    cores: 1\n\
         - name: start\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 210\n    state: started\n",
    );
    assert!(play.task("create").changed, "{}", play.transcript());
    assert!(play.task("start").changed, "{}", play.transcript());
    let ha = env.api_get("/cluster/ha/resources");
    let entry = ha.as_array().unwrap().iter().find(|r| r["sid"] == "vm:210").cloned();
    assert_eq!(
        entry.as_ref().map(|r| r["state"].clone()),
        Some("started".into()),
        "{ha}"
    );
    assert_eq!(
        status(&env, 210),
        "running",
        "the start went through the HA manager and was awaited"
    );

    // The HA manager's migration runs a while after the request's task has ended.
    env.fault(serde_json::json!({"task_type": "qmigrate", "duration_ms": 1500, "times": 1}));
    env.clear_requests();
    let migrate = "    vmid: 210\n    node: pve2\n    migrate: true\n";
    let moved = env.run(&task(migrate));
    let t = moved.task("t");
    assert!(t.changed, "{}", moved.transcript());
    assert_eq!(t.msg(), "VM 210 has been migrated from pve1 to pve2");
    assert_eq!(
        resource(&env, 210)["node"],
        "pve2",
        "the module returned only once the VM was on pve2"
    );
    assert_eq!(resource(&env, 210)["status"], "running");
    let log = env.requests()["log"].as_array().unwrap().clone();
    let tasks: Vec<&str> = log
        .iter()
        .filter_map(|e| e["path"].as_str())
        .filter(|p| p.contains("/tasks/UPID"))
        .collect();
    assert!(tasks.iter().any(|p| p.contains(":hamigrate:")), "{tasks:?}");

    let again = env.run(&task(migrate));
    assert!(!again.task("t").changed, "{}", again.transcript());
}

/// `pool` of an existing VM converges with `update: true`: the move is predicted in
/// check mode (nothing written) and shown in `--diff`, then made with PVE's
/// `allow-move`; a nested pool (`parent/child`) goes through the query form of
/// `PUT /pools`; a rerun changes nothing; without `update` it is only warned of.
#[test]
fn pool_membership_of_an_existing_vm_converges() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.pools[0].vms.push(100);
    for id in ["staging", "staging/web"] {
        scenario.pools.push(PoolDef {
            poolid: id.into(),
            ..Default::default()
        });
    }
    // PVE's pool update asks Pool.Allocate on the pool joined and on the pool left.
    for ugid in ["ansible@pve", "ansible@pve!automation"] {
        scenario.acls.push(pvesim::state::AclDef {
            path: "/pool".into(),
            ugid: ugid.into(),
            roles: vec!["PVEPoolAdmin".into()],
            propagate: true,
        });
    }
    let env = Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    });
    let move_to = |pool: &str| task(&format!("    vmid: 100\n    update: true\n    pool: {pool}\n"));

    env.clear_requests();
    // One check run: the move is in the run's plan, so later tasks see VM 100 in staging.
    let later = "- name: info\n  ferrox.proxmox.proxmox_vm_info:\n    vmid: 100\n- name: same pool\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    pool: staging\n";
    let check = env.play_with(
        &format!("{}{later}", move_to("staging")),
        &PlayOpts {
            check: true,
            diff: true,
            env: vec![(
                "ANSIBLE_CALLBACKS_ENABLED".into(),
                "ferrox_results,ferrox.proxmox.plan".into(),
            )],
            ..Default::default()
        },
    );
    let t = check.task("t");
    assert!(t.changed, "{}", check.transcript());
    assert_eq!(
        t.result["actions"],
        serde_json::json!(["move VM 100 from pool prod to pool staging"])
    );
    assert_eq!(
        (
            t.result["diff"]["before"]["pool"].clone(),
            t.result["diff"]["after"]["pool"].clone()
        ),
        ("prod".into(), "staging".into())
    );
    assert_eq!(
        check.task("info").result["proxmox_vms"][0]["pool"],
        "staging",
        "{}",
        check.task("info").result
    );
    assert!(!check.task("same pool").changed, "{}", check.task("same pool").result);
    let summary = check
        .stdout
        .split("FERROX PLAN")
        .nth(1)
        .unwrap_or_else(|| panic!("no plan summary\n{}", check.stdout));
    assert!(
        summary.contains("  ~ VM 100 web01 on pve1: move to pool staging\n"),
        "{summary}"
    );
    assert!(env.writes().is_empty(), "{:?}", env.writes());
    assert_eq!(resource(&env, 100)["pool"], "prod");

    // PVE moves the VM, then the answer is lost: the pool's members show the move made.
    env.clear_requests();
    env.fault(
        serde_json::json!({"method": "PUT", "path_regex": "^/api2/json/pools/staging$", "after": true, "times": 1}),
    );
    let real = env.run(&move_to("staging"));
    assert!(real.task("t").changed, "{}", real.transcript());
    assert_eq!(real.task("t").result["changes"], serde_json::json!(["pool"]));
    let recovered = real
        .task("t")
        .warnings()
        .into_iter()
        .find(|w| w.contains("Recovered by reading the cluster"))
        .unwrap_or_else(|| panic!("{}", real.transcript()));
    assert!(
        recovered.starts_with("PUT /pools/staging to https://") && recovered.ends_with("VM 100 is in pool staging."),
        "{recovered}"
    );
    assert_eq!(env.writes(), ["PUT /api2/json/pools/staging"], "sent once");
    assert_eq!(resource(&env, 100)["pool"], "staging");
    assert_eq!(
        env.api_get("/pools?poolid=prod")[0]["members"],
        serde_json::json!([]),
        "it left prod"
    );
    let again = env.run(&move_to("staging"));
    assert!(!again.task("t").changed, "{}", again.transcript());

    env.clear_requests();
    let nested = env.run(&move_to("staging/web"));
    assert!(nested.task("t").changed, "{}", nested.transcript());
    assert_eq!(resource(&env, 100)["pool"], "staging/web");
    assert_eq!(
        env.writes(),
        ["PUT /api2/json/pools"],
        "the query form: a nested pool has no path of its own"
    );

    // The connection drops before PVE acts: the VM is not in the pool, the move is sent again.
    env.clear_requests();
    env.fault(serde_json::json!({"method": "PUT", "path_regex": "^/api2/json/pools/prod$", "drop_connection": true, "times": 1}));
    let back = env.run(&move_to("prod"));
    assert!(back.task("t").changed, "{}", back.transcript());
    assert!(
        back.task("t")
            .warnings()
            .iter()
            .any(|w| w.ends_with("VM 100 is not in pool prod; sent again.")),
        "{:?}",
        back.task("t").warnings()
    );
    assert_eq!(env.writes(), ["PUT /api2/json/pools/prod", "PUT /api2/json/pools/prod"]);
    assert_eq!(resource(&env, 100)["pool"], "prod");

    let without_update = env.run(&task("    vmid: 100\n    pool: staging/web\n"));
    let t = without_update.task("t");
    assert!(!t.changed);
    assert!(
        t.warnings()
            .iter()
            .any(|w| w.contains("differs from the task in: pool.")),
        "{:?}",
        t.warnings()
    );
    assert_eq!(resource(&env, 100)["pool"], "prod");
}
