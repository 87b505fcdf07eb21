//! proxmox_snap and proxmox_snap_info in process against the simulator (`Env::run`):
//! check mode says `changed` exactly when the run changes, a failed snapshot task fails
//! at once with PVE's exit status, retention's removals are each waited on, a rollback
//! reports (and predicts) the stop of a running VM, bad input and a missing privilege
//! fail before any write, and in a check run a snapshot of a VM only planned acts on it.

use crate::disk_scenario::{calls, writes};
use ferrox_integration::{Env, PlayOpts, TaskOutcome};
use serde_json::{json, Value};

const SNAP: &str = "ferrox.proxmox.proxmox_snap";
const INFO: &str = "ferrox.proxmox.proxmox_snap_info";

fn task(env: &Env, module: &str, options: &str, check: bool) -> TaskOutcome {
    let play = env.run_with(
        &format!("- name: t\n  {module}: {options}\n  ignore_errors: true\n"),
        &PlayOpts {
            check,
            diff: true,
            ..Default::default()
        },
    );
    play.task("t").clone()
}

/// VM 100's snapshot names (without `current`), and its config's lock.
fn snapshots(env: &Env, vmid: u32) -> (Vec<String>, Value) {
    let list = env.api_get(&format!("/nodes/pve1/qemu/{vmid}/snapshot"));
    let mut names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] != "current")
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    let lock = env.api_get(&format!("/nodes/pve1/qemu/{vmid}/config"))["lock"].clone();
    (names, lock)
}

fn take(env: &Env, name: &str) {
    env.run_task("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", name)]);
}

/// A simulator whose default scenario `edit` changed first.
fn env_with(edit: impl FnOnce(&mut Value)) -> Env {
    let mut cfg = pvesim::SimConfig::default();
    let mut scenario = serde_json::to_value(&cfg.scenario).unwrap();
    edit(&mut scenario);
    cfg.scenario = pvesim::scenario::Scenario::from_json(&scenario.to_string()).unwrap();
    Env::start_with(cfg)
}

#[test]
fn check_mode_says_changed_exactly_when_the_run_changes() {
    let env = Env::start();
    for (options, predicted, done, again) in [
        (
            "{vmid: 100, snapname: pre-upgrade, description: before}",
            "Snapshot pre-upgrade would be created",
            "Snapshot pre-upgrade created",
            "Snapshot pre-upgrade is already present",
        ),
        (
            "{hostname: web01, snapname: pre-upgrade, state: absent}",
            "Snapshot pre-upgrade would be removed",
            "Snapshot pre-upgrade removed",
            "Snapshot pre-upgrade does not exist",
        ),
    ] {
        let before = snapshots(&env, 100);
        env.clear_requests();
        let dry = task(&env, SNAP, options, true);
        assert!(dry.changed && !dry.failed, "{}", dry.result);
        assert_eq!(dry.msg(), predicted);
        assert_eq!(writes(&calls(&env)), 0, "check mode wrote: {:?}", calls(&env));
        assert_eq!(snapshots(&env, 100), before, "check mode changed the cluster");
        let real = task(&env, SNAP, options, false);
        assert!(real.changed && !real.failed, "{}", real.result);
        assert_eq!(real.msg(), done);
        assert_eq!(dry.result["diff"], real.result["diff"]);
        let rerun = task(&env, SNAP, options, false);
        assert!(!rerun.changed && !rerun.failed, "{}", rerun.result);
        assert_eq!(rerun.msg(), again);
        let dry_again = task(&env, SNAP, options, true);
        assert!(!dry_again.changed, "{}", dry_again.result);
    }
    assert_eq!(snapshots(&env, 100), (vec![], Value::Null));
}

#[test]
fn a_failed_snapshot_task_fails_at_once_with_pve_s_exit_status() {
    let env = Env::start();
    env.fault(json!({"task_type": "qmsnapshot", "fail": "lvcreate 'pve/snap_vm-100-disk-0_s1' error: Insufficient free space", "times": 1}));
    let failed = task(&env, SNAP, "{vmid: 100, snapname: s1, timeout: 600}", false);
    assert!(failed.failed, "{}", failed.result);
    let msg = failed.msg();
    assert!(
        msg.starts_with("Creating snapshot s1 of VM 100 failed: task UPID:pve1:"),
        "{msg}"
    );
    assert!(
        msg.contains("failed: lvcreate 'pve/snap_vm-100-disk-0_s1' error: Insufficient free space"),
        "PVE's exit status: {msg}"
    );
    assert!(
        msg.contains("snapshot create failed: starting cleanup"),
        "the log's end: {msg}"
    );
    assert!(!msg.contains("timed out"), "{msg}");
    assert_eq!(snapshots(&env, 100), (vec![], Value::Null), "PVE cleaned up");
}

#[test]
fn retention_removes_the_oldest_one_at_a_time_each_waited_on() {
    let env = Env::start();
    for name in ["s1", "s2", "s3"] {
        take(&env, name);
    }
    // Removals that take a while: had the module not waited, they would still be running
    // (`snapstate: delete`, the `snapshot-delete` lock) when it returns.
    env.fault(json!({"task_type": "qmdelsnapshot", "duration_ms": 400, "times": 2}));
    let options = "{vmid: 100, snapname: s4, retention: 2}";
    let dry = task(&env, SNAP, options, true);
    assert_eq!(dry.result["removed"], json!(["s1", "s2"]), "{}", dry.result);
    assert_eq!(dry.result["diff"]["after"]["snapshots"].as_array().unwrap().len(), 2);
    env.clear_requests();
    let real = task(&env, SNAP, options, false);
    assert!(real.changed && !real.failed, "{}", real.result);
    assert_eq!(real.result["removed"], json!(["s1", "s2"]));
    assert_eq!(
        snapshots(&env, 100),
        (vec!["s3".to_string(), "s4".to_string()], Value::Null)
    );
    let list = env.api_get("/nodes/pve1/qemu/100/snapshot");
    assert!(
        list.as_array().unwrap().iter().all(|s| s.get("snapstate").is_none()),
        "{list}"
    );
    let order: Vec<String> = env
        .writes()
        .into_iter()
        .map(|w| w.replace("/api2/json/nodes/pve1/qemu/100/", ""))
        .collect();
    assert_eq!(order, ["POST snapshot", "DELETE snapshot/s1", "DELETE snapshot/s2"]);
    let tasks = env.api_get("/nodes/pve1/tasks?vmid=100&typefilter=qmdelsnapshot&source=all");
    let statuses: Vec<&str> = tasks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(statuses, ["OK", "OK"], "{tasks}");
    let again = task(&env, SNAP, options, false);
    assert!(!again.changed, "{}", again.result);
    assert_eq!(again.result["removed"], json!([]));
}

#[test]
fn a_rollback_reports_and_predicts_the_stop_of_a_running_vm() {
    let env = Env::start();
    take(&env, "s1");
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let status = |env: &Env| env.api_get("/nodes/pve1/qemu/100/status/current")["status"].clone();
    let options = "{vmid: 100, snapname: s1, state: rollback}";
    let dry = task(&env, SNAP, options, true);
    assert!(dry.changed, "{}", dry.result);
    assert_eq!(dry.msg(), "Snapshot s1 would be rolled back");
    assert_eq!(
        (dry.result["stopped"].clone(), dry.result["started"].clone()),
        (json!(true), json!(false))
    );
    assert!(
        dry.warnings()
            .iter()
            .any(|w| w.contains("VM 100 is running: the rollback stops it")),
        "{:?}",
        dry.warnings()
    );
    assert_eq!(status(&env), "running", "check mode left the VM running");
    let real = task(&env, SNAP, options, false);
    assert!(real.changed && !real.failed, "{}", real.result);
    assert_eq!(
        (real.result["stopped"].clone(), real.result["started"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(status(&env), "stopped");

    let stopped = task(&env, SNAP, options, true);
    assert_eq!(stopped.result["stopped"], json!(false), "a stopped VM is not stopped");
    let start = task(
        &env,
        SNAP,
        "{vmid: 100, snapname: s1, state: rollback, start: true}",
        false,
    );
    assert_eq!(
        (start.result["stopped"].clone(), start.result["started"].clone()),
        (json!(false), json!(true))
    );
    let started = env.api_get("/nodes/pve1/tasks?vmid=100&typefilter=qmstart&source=all");
    let upid = started[0]["upid"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while env.api_get(&format!("/nodes/pve1/tasks/{upid}/status"))["status"] != "stopped" {
        assert!(std::time::Instant::now() < deadline, "the start did not end");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(status(&env), "running");
}

#[test]
fn bad_input_fails_before_any_write_with_pve_s_words() {
    let env = env_with(|s| {
        let guests = s["guests"].as_array_mut().unwrap();
        let web01 = guests.iter_mut().find(|g| g["vmid"] == 100).unwrap().clone();
        let mut locked = web01.clone();
        locked["vmid"] = json!(101);
        locked["config"]["name"] = json!("locked01");
        locked["config"]["lock"] = json!("backup");
        locked["config"]["scsi0"] = json!("local-lvm:vm-101-disk-0,size=4G");
        let mut raw = web01;
        raw["vmid"] = json!(102);
        raw["config"]["name"] = json!("raw01");
        raw["config"]["scsi0"] = json!("vmdata:102/vm-102-disk-0.raw,size=4G");
        guests.push(locked);
        guests.push(raw);
    });
    let readonly = {
        let mut auth = env.auth();
        auth["api_token_id"] = json!(ferrox_integration::creds::READONLY_TOKEN_ID);
        auth["api_token_secret"] = json!(ferrox_integration::creds::READONLY_TOKEN_SECRET);
        auth
    };
    let cases = [
        (
            "{vmid: 100, snapname: current}",
            "unable to use snapshot name 'current' (reserved name)",
        ),
        (
            "{vmid: 100, snapname: '1st'}",
            "invalid format - invalid configuration ID '1st'",
        ),
        ("{vmid: 101, snapname: s1}", "VM 101 is locked (backup)"),
        (
            "{vmid: 9000, snapname: s1}",
            "you can't take a snapshot if it's a template",
        ),
        (
            "{vmid: 102, snapname: s1}",
            "snapshot feature is not available (Proxmox VE): scsi0 on 'vmdata' (nfs)",
        ),
        (
            "{vmid: 100, snapname: nope, state: rollback}",
            "Snapshot nope does not exist",
        ),
        ("{vmid: 200, snapname: s1}", "200 is an LXC container"),
        (
            "{vmid: 4242, snapname: s1}",
            "VM with vmid 4242 does not exist in cluster",
        ),
    ];
    for check in [true, false] {
        for (options, words) in cases {
            env.clear_requests();
            let t = task(&env, SNAP, options, check);
            assert!(t.failed, "{options}: {}", t.result);
            assert!(t.msg().contains(words), "{options}: {}", t.msg());
            assert_eq!(writes(&calls(&env)), 0, "{options} wrote: {:?}", calls(&env));
        }
        env.clear_requests();
        let play = env.run_with(
            &format!("- name: t\n  {SNAP}: {{vmid: 100, snapname: s1}}\n  ignore_errors: true\n"),
            &PlayOpts {
                check,
                module_defaults: Some(env.defaults_with(readonly.clone())),
                ..Default::default()
            },
        );
        let refused = play.task("t");
        assert!(refused.failed, "{}", refused.result);
        assert!(refused.msg().contains("VM.Snapshot"), "{}", refused.msg());
        assert!(refused.msg().contains("/vms/100"), "{}", refused.msg());
        assert_eq!(writes(&calls(&env)), 0, "wrote: {:?}", calls(&env));
    }
    for vmid in [100, 101, 102] {
        assert!(snapshots(&env, vmid).0.is_empty(), "VM {vmid} got a snapshot");
    }
    assert_eq!(snapshots(&env, 101).1, "backup");
}

#[test]
fn in_a_check_run_a_snapshot_of_a_planned_vm_acts_on_it() {
    let env = Env::start();
    let play = env.run_with(
        r#"
- name: create
  ferrox.proxmox.proxmox_kvm: {node: pve1, vmid: 150, name: web150, cores: 1, memory: 512, scsi: {scsi0: "local-lvm:4"}}
- name: snapshot
  ferrox.proxmox.proxmox_snap: {vmid: 150, snapname: pre-change}
  register: snap
- name: again
  ferrox.proxmox.proxmox_snap: {hostname: web150, snapname: pre-change}
- name: list
  ferrox.proxmox.proxmox_snap_info: {vmid: 150}
  register: listed
"#,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    let snap = play.task("snapshot");
    assert!(snap.changed && !snap.failed, "{}", snap.result);
    assert_eq!(snap.msg(), "Snapshot pre-change would be created");
    let again = play.task("again");
    assert!(!again.changed && !again.failed, "{}", again.result);
    assert_eq!(again.msg(), "Snapshot pre-change is already present");
    let listed = play.task("list");
    let names: Vec<&str> = listed.result["snapshots"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", listed.result))
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pre-change", "current"]);
    assert_eq!(listed.result["snapshots"][0]["snaptime"], "(known after apply)");
    let (status, _) = env.api("GET", "/nodes/pve1/qemu/150/config", &[]);
    assert_ne!(status, 200, "the check run created nothing");
}

#[test]
fn snap_info_lists_a_vm_s_or_a_container_s_snapshots() {
    let env = Env::start();
    take(&env, "before-upgrade");
    let all = task(&env, INFO, "{hostname: web01}", false);
    let names: Vec<&str> = all.result["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["before-upgrade", "current"]);
    let one = task(&env, INFO, "{vmid: 100, snapname: before-upgrade}", false);
    assert_eq!(one.result["snapshot"]["name"], "before-upgrade");
    assert!(one.result.get("snapshots").is_none());
    let none = task(&env, INFO, "{vmid: 100, snapname: non-existent}", false);
    assert!(!none.failed && !none.changed);
    assert_eq!(none.msg(), "Snapshot 'non-existent' not found");
    assert_eq!(none.result["snapshots"], json!([]));
    let container = task(&env, INFO, "{vmid: 200}", false);
    assert!(!container.failed, "{}", container.result);
    let last = container.result["snapshots"].as_array().unwrap().last().cloned();
    assert_eq!(last.unwrap()["name"], "current");
}

/// The field playbook's step, through `ansible-playbook`: a snapshot before a risky
/// change. A `--check --diff` run writes nothing and its plan summary names the
/// snapshot; the real run takes it; a rerun changes nothing.
const BEFORE_A_CHANGE: &str = r#"
- name: snapshot before the change
  ferrox.proxmox.proxmox_snap: {hostname: web01, snapname: pre-change, description: before the memory change, retention: 3}
  register: snap
- name: the change
  ferrox.proxmox.proxmox_kvm: {name: web01, update: true, memory: 4096}
- name: the snapshot is there
  ferrox.proxmox.proxmox_snap_info: {hostname: web01, snapname: pre-change}
  register: listed
"#;

#[test]
fn a_playbook_snapshots_before_a_change_and_a_rerun_changes_nothing() {
    let env = Env::start();
    let opts = |check: bool| PlayOpts {
        check,
        diff: check,
        env: vec![(
            "ANSIBLE_CALLBACKS_ENABLED".to_string(),
            "ferrox_results,ferrox.proxmox.plan".to_string(),
        )],
        ..Default::default()
    };
    env.clear_requests();
    let dry = env.play_with(BEFORE_A_CHANGE, &opts(true));
    dry.assert_ok();
    assert_eq!(env.write_counts(), Vec::<String>::new(), "{}", dry.transcript());
    let snap = dry.task("snapshot before the change");
    assert!(snap.changed, "{}", dry.transcript());
    assert_eq!(snap.msg(), "Snapshot pre-change would be created");
    assert_eq!(snap.result["diff"]["after"]["snapshots"], json!(["pre-change"]));
    assert_eq!(
        dry.task("the snapshot is there").result["snapshot"]["name"],
        "pre-change",
        "the info task sees the planned snapshot"
    );
    let summary = dry
        .stdout
        .split("FERROX PLAN")
        .nth(1)
        .unwrap_or_else(|| panic!("no plan summary\n{}", dry.stdout));
    assert!(summary.contains("snapshot pre-change"), "{summary}");
    assert!(snapshots(&env, 100).0.is_empty());

    let real = env.play_with(BEFORE_A_CHANGE, &opts(false));
    real.assert_ok();
    assert_eq!(
        real.task("snapshot before the change").msg(),
        "Snapshot pre-change created"
    );
    assert_eq!(snapshots(&env, 100).0, ["pre-change"]);
    assert_eq!(real.recap("changed"), Some(2), "{}", real.transcript());

    let again = env.play_with(BEFORE_A_CHANGE, &opts(false));
    again.assert_ok();
    assert_eq!(again.recap("changed"), Some(0), "{}", again.transcript());
}

/// API calls per operation (as the automation token, by vmid), against
/// `bench/results/snapshots.md`: each stays within its row; the rows print with
/// `--no-capture`.
#[test]
fn api_calls_per_operation_stay_within_the_budget() {
    let env = Env::start();
    take(&env, "s1");
    take(&env, "s2");
    let ops: [(&str, &str, &str, u64); 7] = [
        ("take (change)", SNAP, "{vmid: 100, snapname: s3}", 7),
        ("take again (no-op)", SNAP, "{vmid: 100, snapname: s3}", 3),
        (
            "take with retention: 2 (two removals)",
            SNAP,
            "{vmid: 100, snapname: s4, retention: 2}",
            12,
        ),
        ("rollback", SNAP, "{vmid: 100, snapname: s4, state: rollback}", 7),
        ("remove", SNAP, "{vmid: 100, snapname: s4, state: absent}", 6),
        (
            "remove again (no-op)",
            SNAP,
            "{vmid: 100, snapname: s4, state: absent}",
            3,
        ),
        ("snap_info", INFO, "{vmid: 100}", 2),
    ];
    let mut over = Vec::new();
    for (what, module, options, budget) in ops {
        env.clear_requests();
        let started = std::time::Instant::now();
        let t = task(&env, module, options, false);
        let elapsed = started.elapsed();
        assert!(!t.failed, "{what}: {}", t.result);
        let calls = calls(&env);
        let total: u64 = calls.iter().map(|(_, n)| n).sum();
        eprintln!("| {what} | {total} | {} ms | {calls:?} |", elapsed.as_millis());
        if total > budget {
            over.push(format!("{what}: {total} calls > {budget}: {calls:?}"));
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn a_rollback_without_either_snapshot_privilege_is_refused_before_any_write() {
    let env = Env::start();
    take(&env, "s1");
    let mut readonly = env.auth();
    readonly["api_token_id"] = json!(ferrox_integration::creds::READONLY_TOKEN_ID);
    readonly["api_token_secret"] = json!(ferrox_integration::creds::READONLY_TOKEN_SECRET);
    for check in [true, false] {
        env.clear_requests();
        let play = env.run_with(
            &format!("- name: t\n  {SNAP}: {{vmid: 100, snapname: s1, state: rollback}}\n  ignore_errors: true\n"),
            &PlayOpts {
                check,
                module_defaults: Some(env.defaults_with(readonly.clone())),
                ..Default::default()
            },
        );
        let refused = play.task("t");
        assert!(refused.failed, "{}", refused.result);
        assert!(
            refused
                .msg()
                .contains("VM.Snapshot or VM.Snapshot.Rollback on /vms/100"),
            "{}",
            refused.msg()
        );
        assert_eq!(writes(&calls(&env)), 0, "wrote: {:?}", calls(&env));
    }
}

#[test]
fn a_lost_answer_is_recovered_from_the_node_s_task_list_not_sent_twice() {
    let env = Env::start();
    take(&env, "s1");
    for (method, path) in [
        ("POST", "^/api2/json/nodes/pve1/qemu/100/snapshot$"),
        ("DELETE", "^/api2/json/nodes/pve1/qemu/100/snapshot/s1$"),
    ] {
        env.fault(json!({"method": method, "path_regex": path, "after": true, "times": 1}));
    }
    env.clear_requests();
    let t = task(&env, SNAP, "{vmid: 100, snapname: s2, retention: 1}", false);
    assert!(t.changed && !t.failed, "{}", t.result);
    assert_eq!(t.result["removed"], json!(["s1"]));
    let recovered: Vec<String> = t
        .warnings()
        .into_iter()
        .filter(|w| w.contains("Recovered by reading the cluster: its task UPID:pve1:"))
        .collect();
    assert_eq!(recovered.len(), 2, "{:?}", t.warnings());
    assert_eq!(
        env.write_counts(),
        [
            "DELETE /api2/json/nodes/pve1/qemu/100/snapshot/s1 x1",
            "POST /api2/json/nodes/pve1/qemu/100/snapshot x1"
        ],
        "each write sent once"
    );
    assert_eq!(snapshots(&env, 100), (vec!["s2".to_string()], Value::Null));
}

#[test]
fn a_snapshot_another_task_is_taking_holds_the_vm_and_is_refused_before_any_write() {
    let env = Env::start();
    // Another client's snapshot, still running: PVE holds the `snapshot` lock meanwhile.
    env.fault(json!({"task_type": "qmsnapshot", "duration_ms": 5000, "times": 1}));
    let (status, body) = env.api("POST", "/nodes/pve1/qemu/100/snapshot", &[("snapname", "other")]);
    assert_eq!(status, 200, "{body}");
    env.clear_requests();
    let t = task(&env, SNAP, "{vmid: 100, snapname: mine}", false);
    assert!(t.failed, "{}", t.result);
    assert!(t.msg().starts_with("VM 100 is locked (snapshot)"), "{}", t.msg());
    assert_eq!(writes(&calls(&env)), 0, "wrote: {:?}", calls(&env));
    let info = task(&env, INFO, "{vmid: 100, snapname: other}", false);
    assert_eq!(info.result["snapshot"]["snapstate"], "prepare", "{}", info.result);
}
