//! proxmox_snap's rollbacks in process against the simulator (`Env::run`): a snapshot
//! with RAM reported started when the rollback ends, and predicted so in a check run
//! that takes it first; a VM gone before the rollback reported with the failed task.

use ferrox_integration::{Env, PlayOpts, TaskOutcome};
use serde_json::json;

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
}

/// Start the VM, snapshot it with its RAM, roll back to that snapshot.
const RAM_ROLLBACK: &str = r#"
- name: start
  ferrox.proxmox.proxmox_kvm: {vmid: 100, state: started}
- name: take
  ferrox.proxmox.proxmox_snap: {vmid: 100, snapname: with-ram, vmstate: true}
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
