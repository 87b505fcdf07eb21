//! Calls Proxmox VE provably did not act on (a 503 from what stands in front of pveproxy, a
//! 595, a lock timeout, a refused connection) are repeated for as long as the task's window
//! allows, in process against the simulator: a storm shorter than the window fails no host
//! of ten running at once, one longer fails naming the 503 and how long it was tried.

use std::sync::Barrier;

use ferrox_integration::{Env, Play, PlayOpts};
use serde_json::json;

/// One `proxmox_vm_info` task with these options (YAML flow mapping).
fn vm_info(env: &Env, options: &str) -> Play {
    env.run(&format!(
        "- name: info\n  ferrox.proxmox.proxmox_vm_info: {options}\n  ignore_errors: true\n"
    ))
}

/// How many answers of `status` the simulator gave to `GET /cluster/resources`.
fn resources_answered(env: &Env, status: u64) -> usize {
    let requests = env.requests();
    requests["log"]
        .as_array()
        .expect("the request log")
        .iter()
        .filter(|r| r["method"] == "GET" && r["path"] == "/api2/json/cluster/resources" && r["status"] == status)
        .count()
}

#[test]
fn forty_503s_on_cluster_resources_fail_no_host_of_ten_at_once() {
    let env = Env::start();
    env.fault(json!({"method": "GET", "path_regex": "^/api2/json/cluster/resources$", "status": 503, "message": "Service Unavailable", "times": 40}));
    // All ten start together, as ten forks do; each may take 20 s of 503s.
    let start = Barrier::new(10);
    let plays: Vec<Play> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..10)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    vm_info(&env, "{api_timeout: 20}")
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().expect("a run")).collect()
    });
    assert_eq!(
        resources_answered(&env, 503),
        40,
        "the storm happened: {:?}",
        env.requests()["counts"]
    );
    let failed: Vec<&str> = plays
        .iter()
        .map(|p| p.task("info"))
        .filter(|t| t.failed)
        .map(|t| t.msg())
        .collect();
    assert!(failed.is_empty(), "{} of 10 failed: {failed:?}", failed.len());
    let lines: Vec<&str> = plays
        .iter()
        .flat_map(|p| p.stdout.lines())
        .filter(|l| l.starts_with('<'))
        .collect();
    assert!(!lines.is_empty(), "the repeats leave lines for -v");
    for line in &lines {
        assert!(
            line.starts_with(
                "<localhost> ferrox.proxmox.proxmox_vm_info: GET /cluster/resources: 503 Service Unavailable on "
            ) && line.ends_with(", then answered"),
            "{line}"
        );
    }
}

#[test]
fn a_503_that_outlasts_the_window_fails_naming_the_503_and_how_long_it_was_tried() {
    let env = Env::start();
    env.fault(json!({"method": "GET", "path_regex": "^/api2/json/cluster/resources$", "status": 503, "message": "Service Unavailable", "for_ms": 600_000}));
    let play = vm_info(&env, "{api_timeout: 1}");
    let task = play.task("info");
    assert!(task.failed, "{}", task.result);
    let msg = task.msg();
    let tried = msg
        .strip_prefix("Failed to retrieve VMs information from cluster resources: 503 Service Unavailable: Service Unavailable - GET /cluster/resources failed with 503 Service Unavailable on each of ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("{msg}"));
    assert_eq!(tried, resources_answered(&env, 503), "{msg}");
    assert!(
        msg.contains(" s, until the task's api_timeout (1 s) ran out; Proxmox VE did not act on it. Raise api_timeout to wait longer"),
        "{msg}"
    );
    assert!(
        play.stdout
            .contains("ferrox.proxmox.proxmox_vm_info: GET /cluster/resources: 503 Service Unavailable on ")
            && play.stdout.contains(", gave up"),
        "{}",
        play.stdout
    );
}

/// What only Ansible shows: the line `-v` prints for a repeated call, and a result without
/// the private key that carried it.
#[test]
fn ansible_playbook_prints_one_line_per_repeated_call_under_v() {
    let env = Env::start();
    env.fault(json!({"method": "GET", "path_regex": "^/api2/json/cluster/resources$", "status": 503, "message": "Service Unavailable", "times": 2}));
    let task = "- name: info\n  ferrox.proxmox.proxmox_vm_info: {}\n";
    let play = env.play_with(
        task,
        &PlayOpts {
            verbosity: 1,
            ..Default::default()
        },
    );
    play.assert_ok();
    let lines: Vec<&str> = play
        .stdout
        .lines()
        .filter(|l| l.contains("ferrox.proxmox.proxmox_vm_info: GET /cluster/resources"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", play.stdout);
    assert!(
        lines[0].starts_with("<localhost> ferrox.proxmox.proxmox_vm_info: GET /cluster/resources: 503 Service Unavailable on 2 attempts over ")
            && lines[0].ends_with(", then answered"),
        "{}",
        lines[0]
    );
    assert!(
        play.task("info").result.get("_ferrox_progress").is_none(),
        "{}",
        play.task("info").result
    );

    let quiet = env.play(task);
    quiet.assert_ok();
    assert!(
        !quiet.stdout.contains("GET /cluster/resources"),
        "not without -v: {}",
        quiet.stdout
    );
}
