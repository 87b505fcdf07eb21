//! proxmox_kvm on VMs with an HA resource that PVE does not manage: a resource in state
//! `ignored`, or any while the cluster is disarmed with mode `ignore`. PVE powers such
//! a VM with its plain tasks (`qmstart`, `qmshutdown`) and leaves the resource as it is,
//! but still removes the VM only with `purge` while the resource entry exists. The
//! module refuses `absent` without `purge` before anything is stopped, in check mode
//! too.

use ferrox_integration::{Env, PlayOpts};
use pvesim::state::{HaDisarm, HaResource};
use serde_json::Value;

fn task(extra: &str) -> String {
    format!("- name: t\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n{extra}")
}

/// The default cluster with VM 100 (running or not) an HA resource in `state`, the HA
/// stack disarmed with `disarm` (or armed).
fn cluster(state: &str, running: bool, disarm: Option<&str>) -> Env {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.guests.iter_mut().find(|g| g.vmid == 100).unwrap().running = running;
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: state.into(),
        comment: None,
    });
    scenario.ha_disarm = disarm.map(|mode| HaDisarm { mode: mode.into() });
    Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    })
}

fn status(env: &Env) -> String {
    env.api_get("/nodes/pve1/qemu/100/status/current")["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The configured state of VM 100's HA resource (`None`: no entry).
fn ha_entry(env: &Env) -> Option<String> {
    let all = env.api_get("/cluster/ha/resources");
    all.as_array()
        .unwrap()
        .iter()
        .find(|r| r["sid"] == "vm:100")
        .map(|r| r["state"].as_str().unwrap().to_string())
}

/// The types of VM 100's tasks, oldest first (`qmstart`, `hastop`, ...): PVE lists
/// the newest first.
fn task_types(env: &Env) -> Vec<String> {
    let tasks = env.api_get("/nodes/pve1/tasks?vmid=100&source=all&limit=100");
    let mut types: Vec<String> = tasks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap().to_string())
        .collect();
    types.reverse();
    types
}

fn check() -> PlayOpts {
    PlayOpts {
        check: true,
        ..Default::default()
    }
}

fn refusal(state: &str) -> String {
    format!("deletion of VM 100 failed with exception: VM 100 has an HA resource (state {state}); PVE does not manage it through HA now, but removes a VM with an HA resource only with purge: true (which also drops it from backup jobs and replication). Set purge: true, or remove the HA resource first (ha-manager remove vm:100). Nothing was changed")
}

/// PVE would shut the VM down for `force` and then refuse the removal: the module
/// refuses first, in check mode and for real, and the VM keeps running.
#[test]
fn absent_of_a_running_ignored_ha_vm_without_purge_fails_before_any_stop() {
    let env = cluster("ignored", true, None);
    assert_eq!(env.api_get("/nodes/pve1/qemu/100/status/current")["ha"]["managed"], 0);
    env.clear_requests();
    let dry = env.run_with(&task("    state: absent\n    force: true\n"), &check());
    let t = dry.task("t");
    assert!(t.failed, "{}", dry.transcript());
    assert_eq!(t.msg(), refusal("ignored"));

    let play = env.run(&task("    state: absent\n    force: true\n"));
    let t = play.task("t");
    assert!(t.failed, "{}", play.transcript());
    assert_eq!(t.msg(), refusal("ignored"), "the run fails as the dry run predicted");
    assert_eq!(env.writes(), Vec::<String>::new(), "nothing stopped, nothing removed");
    assert_eq!(status(&env), "running");
    assert_eq!(ha_entry(&env).as_deref(), Some("ignored"));
}

/// With `purge`, the VM is shut down by qemu-server (no HA request: it is not managed)
/// and removed, and its HA resource entry goes with it.
#[test]
fn absent_with_purge_removes_an_ignored_ha_vm_and_its_resource() {
    let env = cluster("ignored", true, None);
    let dry = env.run_with(
        &task("    state: absent\n    force: true\n    purge: true\n    timeout: 20\n"),
        &check(),
    );
    assert!(dry.task("t").changed, "{}", dry.transcript());
    assert_eq!(status(&env), "running", "check mode changed nothing");

    let play = env.run(&task(
        "    state: absent\n    force: true\n    purge: true\n    timeout: 20\n",
    ));
    let t = play.task("t");
    assert!(t.changed, "{}", play.transcript());
    assert_eq!(t.msg(), "VM 100 removed");
    assert_eq!(t.result["actions"], dry.task("t").result["actions"]);
    assert_eq!(ha_entry(&env), None, "purge removed the HA resource");
    assert!(env.guests_listed().iter().all(|g| g["vmid"] != 100));
    assert_eq!(task_types(&env), ["qmshutdown", "qmdestroy"]);
}

/// `started` on a stopped ignored VM is qemu-server's `qmstart`, and the resource stays
/// `ignored` (an HA start request would have set it to `started`); `stopped` likewise.
#[test]
fn power_states_of_an_ignored_ha_vm_are_plain_tasks_and_keep_it_ignored() {
    let env = cluster("ignored", false, None);
    let play = env.run(&task("    state: started\n"));
    let t = play.task("t");
    assert!(t.changed, "{}", play.transcript());
    assert_eq!(t.msg(), "VM 100 started");
    assert_eq!(status(&env), "running");
    assert_eq!(ha_entry(&env).as_deref(), Some("ignored"));

    let play = env.run(&task("    state: stopped\n    timeout: 20\n"));
    assert!(play.task("t").changed, "{}", play.transcript());
    assert_eq!(status(&env), "stopped");
    assert_eq!(ha_entry(&env).as_deref(), Some("ignored"));
    assert_eq!(task_types(&env), ["qmstart", "qmshutdown"]);
}

/// Disarmed with mode `ignore`, every HA VM is unmanaged but keeps its resource entry:
/// the removal without `purge` is refused before the shutdown, naming the state the
/// listing shows.
#[test]
fn absent_on_a_cluster_disarmed_with_ignore_needs_purge_too() {
    let env = cluster("started", true, Some("ignore"));
    env.clear_requests();
    let play = env.run(&task("    state: absent\n    force: true\n"));
    let t = play.task("t");
    assert!(t.failed, "{}", play.transcript());
    assert_eq!(t.msg(), refusal("started"));
    assert_eq!(env.writes(), Vec::<String>::new());
    assert_eq!(status(&env), "running");
    let value: Value = env.api_get("/nodes/pve1/qemu/100/status/current")["ha"].clone();
    assert_eq!(value["managed"], 0);
}

/// `ha_managed: true` on an ignored VM: adding it to HA again would be refused, so the
/// warning names the resource's state and how to have HA manage it.
#[test]
fn ha_managed_on_an_ignored_vm_warns_with_its_resource_state() {
    let env = cluster("ignored", false, None);
    let play = env.run(&task("    ha_managed: true\n"));
    let t = play.task("t");
    assert!(!t.changed && !t.failed, "{}", play.transcript());
    assert!(
        t.warnings().iter().any(|w| w == "VM 100 exists and its HA resource is in state ignored, so PVE does not manage it: ha_managed applies when a VM is created. Set the resource's state with ha-manager set vm:100 --state started"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(ha_entry(&env).as_deref(), Some("ignored"));
}

/// A VM an earlier task of a check run creates with `ha_managed` has an HA resource in
/// the run's plan: a later `absent` without `purge` is predicted to fail as the real run
/// then fails, not predicted to remove it.
#[test]
fn absent_after_a_planned_ha_managed_create_is_refused_in_check_mode_as_for_real() {
    let env = Env::start();
    let tasks = "\
- name: new
  ferrox.proxmox.proxmox_kvm:
    vmid: 4100
    name: ha-web
    node: pve1
    ha_managed: true
- name: gone
  ferrox.proxmox.proxmox_kvm:
    vmid: 4100
    state: absent
    force: true
    timeout: 20
  ignore_errors: true
";
    // Creating a VM with an HA resource needs Sys.Console on `/` (qemu-server
    // `create_vm`): root's.
    let root = crate::disk_scenario::as_root(&env);
    let dry = env.run_with(
        tasks,
        &PlayOpts {
            check: true,
            ..root.clone()
        },
    );
    assert!(dry.task("new").changed, "{}", dry.transcript());
    let predicted = dry.task("gone");
    assert!(predicted.failed, "{}", dry.transcript());
    assert!(predicted.msg().contains("purge: true"), "{}", predicted.msg());
    assert_eq!(env.writes(), Vec::<String>::new(), "check mode wrote nothing");

    let play = env.run_with(tasks, &root);
    assert!(play.task("new").changed, "{}", play.transcript());
    let real = play.task("gone");
    assert!(real.failed, "{}", play.transcript());
    assert_eq!(real.msg(), predicted.msg(), "the run fails as the dry run predicted");
    assert!(
        env.guests_listed().iter().any(|g| g["vmid"] == 4100),
        "the VM is still there"
    );
}
