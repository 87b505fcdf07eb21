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
