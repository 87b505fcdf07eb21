//! proxmox_snap's rollbacks in process against the simulator (`Env::run`): a rollback
//! ZFS refuses (a later snapshot on the disk) predicted in check mode and refused before
//! any write, with the snapshots to remove named; a snapshot with RAM reported started
//! when the rollback ends, and predicted so in a check run that takes it first; with
//! `start`, PVE's own start task waited on and its failure reported; a VM gone before
//! the rollback reported with the failed task.

use crate::disk_scenario::{calls, writes};
use ferrox_integration::{Env, PlayOpts, TaskOutcome};
use serde_json::{json, Value};

const SNAP: &str = "ferrox.proxmox.proxmox_snap";

fn task(env: &Env, options: &str, check: bool) -> TaskOutcome {
    let play = env.run_with(
        &format!("- name: t\n  {SNAP}: {options}\n  ignore_errors: true\n"),
        &PlayOpts {
            check,
            ..Default::default()
        },
    );
    play.task("t").clone()
}

/// The default cluster plus VM 120 `zfs01` with a disk on ZFS (`nvme-pool`) and one on
/// LVM-thin, and three snapshots, oldest first.
fn zfs_env() -> Env {
    let mut cfg = pvesim::SimConfig::default();
    let mut scenario = serde_json::to_value(&cfg.scenario).unwrap();
    let snapshots: Vec<Value> = [("s1", 1_760_000_000u64), ("s2", 1_760_000_100), ("s3", 1_760_000_200)]
        .iter()
        .map(|(name, at)| json!({"name": name, "snaptime": at}))
        .collect();
    scenario["guests"].as_array_mut().unwrap().push(json!({
        "vmid": 120,
        "node": "pve1",
        "config": {
            "name": "zfs01",
            "memory": 1024,
            "scsi0": "nvme-pool:vm-120-disk-0,size=8G",
            "scsi1": "local-lvm:vm-120-disk-1,size=8G",
            "net0": "virtio=BC:24:11:00:01:20,bridge=vmbr0",
        },
        "snapshots": snapshots,
    }));
    cfg.scenario = pvesim::scenario::Scenario::from_json(&scenario.to_string()).unwrap();
    Env::start_with(cfg)
}

#[test]
fn a_zfs_rollback_past_later_snapshots_is_refused_before_any_write_naming_them() {
    let env = zfs_env();
    // What PVE itself says when asked.
    let (_, body) = env.api("POST", "/nodes/pve1/qemu/120/snapshot/s1/rollback", &[]);
    let upid = body["data"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let pve_says = loop {
        let t = env.api_get(&format!("/nodes/pve1/tasks/{upid}/status"));
        if t["status"] == "stopped" {
            break t["exitstatus"].as_str().unwrap().to_string();
        }
        assert!(std::time::Instant::now() < deadline, "the rollback did not end");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(
        pve_says,
        "can't rollback, 's1' is not most recent snapshot on 'nvme-pool:vm-120-disk-0'"
    );
    for check in [true, false] {
        env.clear_requests();
        let t = task(&env, "{vmid: 120, snapname: s1, state: rollback}", check);
        assert!(t.failed, "check={check}: {}", t.result);
        let msg = t.msg();
        assert!(msg.contains(&pve_says), "PVE's words: {msg}");
        assert!(
            msg.contains("s2, s3 were taken after s1 on scsi0 on 'nvme-pool'"),
            "{msg}"
        );
        assert!(msg.contains("remove them first (state: absent)"), "{msg}");
        assert_eq!(writes(&calls(&env)), 0, "wrote: {:?}", calls(&env));
    }
    // The newest rolls back; a snapshot taken in the same check run makes it older.
    let newest = task(&env, "{vmid: 120, snapname: s3, state: rollback}", true);
    assert!(newest.changed && !newest.failed, "{}", newest.result);
    let play = env.run_with(
        &format!(
            "- name: take\n  {SNAP}: {{vmid: 120, snapname: s4}}\n- name: back\n  {SNAP}: {{vmid: 120, snapname: s3, state: rollback}}\n  ignore_errors: true\n"
        ),
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    let back = play.task("back");
    assert!(back.failed, "{}", back.result);
    assert!(back.msg().contains("s4 was taken after s3 on scsi0"), "{}", back.msg());
    let real = task(&env, "{vmid: 120, snapname: s3, state: rollback}", false);
    assert!(real.changed && !real.failed, "{}", real.result);
}

#[test]
fn a_rollback_to_a_snapshot_with_ram_leaves_the_vm_running_when_it_ends() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let taken = task(&env, "{vmid: 100, snapname: with-ram, vmstate: true}", false);
    assert!(taken.changed && !taken.failed, "{}", taken.result);
    let rolled = task(&env, "{vmid: 100, snapname: with-ram, state: rollback}", false);
    assert!(rolled.changed && !rolled.failed, "{}", rolled.result);
    assert_eq!(
        (rolled.result["stopped"].clone(), rolled.result["started"].clone()),
        (json!(true), json!(true))
    );
    let status = env.api_get("/nodes/pve1/qemu/100/status/current");
    assert_eq!(status["status"], "running", "started by the rollback task itself");
    let starts = env.api_get("/nodes/pve1/tasks?vmid=100&typefilter=qmstart&source=all");
    assert_eq!(starts.as_array().unwrap().len(), 1, "only the first start: {starts}");
    // With `start` too: PVE starts no task of its own, and none is waited for.
    let again = task(
        &env,
        "{vmid: 100, snapname: with-ram, state: rollback, start: true}",
        false,
    );
    assert!(again.changed && !again.failed, "{}", again.result);
    let warnings = again.warnings();
    assert!(
        warnings
            .iter()
            .all(|w| w.contains("the rollback stops it, then starts it again")),
        "only the stop's warning: {warnings:?}"
    );
    assert_eq!(again.result["started"], json!(true));
    let starts = env.api_get("/nodes/pve1/tasks?vmid=100&typefilter=qmstart&source=all");
    assert_eq!(starts.as_array().unwrap().len(), 1, "{starts}");
}

#[test]
fn a_rollback_with_start_waits_for_pve_s_start_and_reports_its_failure() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "s1")]);
    let options = "{vmid: 100, snapname: s1, state: rollback, start: true}";
    // A slow start: had the module not waited for it, the VM would not run yet.
    env.fault(json!({"task_type": "qmstart", "duration_ms": 1500, "times": 1}));
    let started = task(&env, options, false);
    assert!(started.changed && !started.failed, "{}", started.result);
    assert_eq!(started.result["started"], json!(true));
    let status = env.api_get("/nodes/pve1/qemu/100/status/current");
    assert_eq!(status["status"], "running");
    env.run_task("POST", "/nodes/pve1/qemu/100/status/stop", &[]);
    env.fault(json!({"task_type": "qmstart", "fail": "start failed: QEMU exited with code 1", "times": 1}));
    let failed = task(&env, options, false);
    assert!(failed.failed, "{}", failed.result);
    let msg = failed.msg();
    assert!(
        msg.starts_with("Snapshot s1 of VM 100 rolled back, but starting the VM failed: task UPID:pve1:"),
        "{msg}"
    );
    assert!(msg.contains("start failed: QEMU exited with code 1"), "{msg}");
}

/// Start the VM, snapshot it with its RAM (listed so), roll back to that snapshot.
const RAM_ROLLBACK: &str = r#"
- name: start
  ferrox.proxmox.proxmox_kvm: {vmid: 100, state: started}
- name: take
  ferrox.proxmox.proxmox_snap: {vmid: 100, snapname: with-ram, vmstate: true}
- name: info
  ferrox.proxmox.proxmox_snap_info: {vmid: 100, snapname: with-ram}
- name: back
  ferrox.proxmox.proxmox_snap: {vmid: 100, snapname: with-ram, state: rollback}
"#;

#[test]
fn a_check_run_predicts_the_start_of_a_rollback_to_a_snapshot_it_takes_with_ram() {
    let env = Env::start();
    let outcome = |check: bool| {
        let play = env.run_with(
            RAM_ROLLBACK,
            &PlayOpts {
                check,
                ..Default::default()
            },
        );
        let info = play.task("info");
        assert_eq!(info.result["snapshot"]["vmstate"], 1, "check={check}: {}", info.result);
        let back = play.task("back").clone();
        assert!(back.changed && !back.failed, "check={check}: {}", back.result);
        (back.result["stopped"].clone(), back.result["started"].clone())
    };
    let predicted = outcome(true);
    assert_eq!(
        env.api_get("/nodes/pve1/qemu/100/status/current")["status"],
        "stopped",
        "the check run changed nothing"
    );
    let done = outcome(false);
    assert_eq!(predicted, done);
    assert_eq!(done, (json!(true), json!(true)));
}

#[test]
fn a_vm_gone_before_its_rollback_fails_with_the_task_s_error() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "s1")]);
    env.hold(json!({"path_regex": "^/api2/json/nodes/pve1/qemu/100/snapshot/s1/rollback$", "method": "POST", "max_ms": 60_000}));
    let t = std::thread::scope(|s| {
        let run = s.spawn(|| task(&env, "{vmid: 100, snapname: s1, state: rollback}", false));
        let bound = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while env.held() == 0 && !run.is_finished() && std::time::Instant::now() < bound {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Removed by someone else after the module read it.
        let mut state = env.state();
        state["guests"].as_object_mut().unwrap().remove("100");
        env.set_state(&state);
        env.release();
        run.join().expect("the module's thread")
    });
    assert!(t.failed, "{}", t.result);
    let msg = t.msg();
    assert!(
        msg.starts_with("Rollback of snapshot s1 of VM 100 failed: task UPID:pve1:"),
        "{msg}"
    );
    assert!(
        msg.contains("Configuration file 'nodes/pve1/qemu-server/100.conf' does not exist"),
        "{msg}"
    );
}
