//! The calls of the operations the comparison benchmark does not cover — clone, the
//! power states, removal — held to `bench/results/api-calls.md` as `api_calls.rs` holds
//! the others to `compare.md`: an operation that needs more calls fails here until the
//! table is changed, so the growth shows as a reviewed diff. Each runs once, in order,
//! as an API token, in process against the simulator; tasks end before
//! their first status poll, so the counts are each operation's minimum.

use std::collections::BTreeMap;

use ferrox_integration::{repo_root, Env};
use serde_json::Value;

const TABLE: &str = "bench/results/api-calls.md";

/// In order: each runs on what the ones before it made.
const OPERATIONS: [(&str, &str); 6] = [
    (
        "clone (full, by name)",
        "ferrox.proxmox.proxmox_kvm: {clone: base-debian13, name: cl-a, node: pve1, full: true}",
    ),
    (
        "clone again (no-op)",
        "ferrox.proxmox.proxmox_kvm: {clone: base-debian13, name: cl-a, node: pve1, full: true}",
    ),
    ("start", "ferrox.proxmox.proxmox_kvm: {name: cl-a, state: started}"),
    ("restart", "ferrox.proxmox.proxmox_kvm: {name: cl-a, state: restarted}"),
    (
        "stop",
        "ferrox.proxmox.proxmox_kvm: {name: cl-a, state: stopped, force: true, timeout: 5}",
    ),
    ("remove", "ferrox.proxmox.proxmox_kvm: {name: cl-a, state: absent}"),
];

/// `label` -> calls, from the table.
fn table() -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(repo_root().join(TABLE)).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
    text.lines()
        .skip_while(|l| !l.starts_with("| operation | calls |"))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            Some((cells.get(1)?.to_string(), cells.get(2)?.parse().ok()?))
        })
        .collect()
}

#[test]
fn no_lifecycle_operation_makes_more_calls_than_the_table() {
    let limits = table();
    let env = Env::start_with(pvesim::SimConfig {
        task_ms: 40,
        ..Default::default()
    });
    let mut report = Vec::new();
    let mut grown = Vec::new();
    for (label, task) in OPERATIONS {
        // The operation before may have made a VM: counted once PVE lists it by name.
        env.settle();
        env.clear_requests();
        let play = env.run(&format!("- name: op\n  {task}\n"));
        let outcome = play.task("op");
        assert!(!outcome.failed, "{label} failed: {}", outcome.result);
        let log = env.requests();
        let counts = log["counts"].as_object().cloned().unwrap_or_default();
        let calls: u64 = counts.values().filter_map(Value::as_u64).sum();
        let limit = *limits
            .get(label)
            .unwrap_or_else(|| panic!("{label:?} is not in {TABLE}"));
        report.push(format!("| {label} | {calls} | {} |", endpoints(&counts)));
        if calls > limit {
            grown.push(label);
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(
        grown.is_empty(),
        "more API calls than {TABLE} allows for {grown:?}\n{}",
        report.join("\n")
    );
}

/// The calls per endpoint, as the table lists them (`GET /cluster/resources ×2`).
fn endpoints(counts: &serde_json::Map<String, Value>) -> String {
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    for (endpoint, n) in counts {
        let short = endpoint.replace("/api2/json", "");
        let short = match short.find("/UPID:") {
            Some(at) => format!("{}/{{upid}}/{}", &short[..at], short.rsplit('/').next().unwrap_or("")),
            None => short,
        };
        *folded.entry(short).or_insert(0) += n.as_u64().unwrap_or(0);
    }
    folded
        .iter()
        .map(|(e, n)| if *n > 1 { format!("{e} ×{n}") } else { e.clone() })
        .collect::<Vec<_>>()
        .join(", ")
}
