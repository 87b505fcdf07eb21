//! The harness itself: plays run, results come back, the API helpers reach the simulator.

use ferrox_integration::{Env, PlayOpts};
use serde_json::json;

#[test]
fn a_play_reports_each_task_and_its_registered_result() {
    let env = Env::start();
    let play = env.play_with(
        r#"
        - name: say
          ansible.builtin.debug:
            msg: "hello {{ who }}"
        - name: change
          ansible.builtin.command: /bin/true
        - name: skip
          ansible.builtin.debug: {msg: never}
          when: false
        "#,
        &PlayOpts {
            vars: json!({"who": "world"}),
            ..Default::default()
        },
    );
    play.assert_ok();
    assert_eq!(play.task("say").result["msg"], json!("hello world"));
    assert!(play.task("change").changed);
    assert!(play.last().skipped);
    assert_eq!(play.recap("changed"), Some(1));
}

#[test]
fn a_failed_task_is_recorded_and_fails_the_run() {
    let env = Env::start();
    let play = env.play("- name: boom\n  ansible.builtin.fail: {msg: expected}\n");
    assert_ne!(play.rc, 0);
    assert!(play.task("boom").failed);
    assert_eq!(play.task("boom").msg(), "expected");
}

#[test]
fn api_helpers_read_and_measure_the_simulator() {
    let env = Env::start();
    let nodes = env.api_get("/nodes");
    let names: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["node"].as_str())
        .collect();
    assert!(names.contains(&"pve1") && names.contains(&"pve2"), "{nodes}");
    let (status, _) = env.api("GET", "/nodes/nope/qemu", &[]);
    assert!(status >= 400);
    env.clear_requests();
    env.api_get("/version");
    let log = env.requests();
    assert_eq!(log["counts"]["GET /api2/json/version"], json!(1), "{log}");
}

#[test]
fn tasks_run_in_process_carry_the_check_runs_plan_from_task_to_task() {
    let env = Env::start();
    let dry = env.run_with(
        r#"
        - name: create
          ferrox.proxmox.proxmox_kvm: {name: in-process, node: pve1, vmid: 901, memory: 1024}
        - name: again
          ferrox.proxmox.proxmox_kvm: {name: in-process, node: pve1, memory: 1024}
        "#,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    dry.assert_ok();
    assert!(dry.task("create").changed, "{:?}", dry.results);
    // The second task plans against the cluster as the first would leave it.
    assert!(!dry.task("again").changed, "{:?}", dry.task("again").result);
    assert_eq!(dry.task("again").result["vmid"], json!(901));
    assert_eq!(dry.recap("changed"), Some(1));
    assert!(env.writes().is_empty(), "a check run wrote: {:?}", env.writes());
}

#[test]
fn a_failed_task_in_process_stops_the_play_unless_ignored() {
    let env = Env::start();
    let play = env.run(
        r#"
        - name: unknown option
          ferrox.proxmox.proxmox_vm_info: {colour: blue}
          ignore_errors: true
        - name: unknown vm
          ferrox.proxmox.proxmox_kvm: {vmid: 4242, state: started}
        - name: never
          ferrox.proxmox.proxmox_vm_info: {}
        "#,
    );
    assert_eq!(play.rc, 2);
    assert!(
        play.task("unknown option").msg().contains("colour"),
        "{}",
        play.task("unknown option").msg()
    );
    assert_eq!(
        play.task("unknown vm").msg(),
        "VM with vmid 4242 does not exist in cluster"
    );
    assert_eq!(play.results.len(), 2);
}
