//! API calls per operation may not grow: each operation of the comparison benchmark
//! (`anchor/operations.rs`) runs once in process against the simulator (the shim makes no call), and
//! its request count must not exceed the ferrox column of `bench/results/compare.md`.
//!
//! The table is written by `bench/compare`; a change that needs more calls fails here
//! until the table is regenerated, so the growth shows as a reviewed diff of the table.
//! Tasks here run shorter than the benchmark's (a task always ends before the first
//! status poll), so a slow machine cannot add polls; the counts are then the minimum
//! each operation needs, never above the table's.

use std::collections::BTreeMap;

use crate::anchor::operations::OPERATIONS;
use ferrox_integration::{repo_root, Env};

const TABLE: &str = "bench/results/compare.md";

/// `label` -> ferrox calls, from the table's "API calls and wall time per operation".
fn table_counts() -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(repo_root().join(TABLE)).unwrap_or_else(|e| panic!("{TABLE}: {e}"));
    text.lines()
        .skip_while(|l| !l.starts_with("| operation | calls community | calls ferrox"))
        .skip(2)
        .take_while(|l| l.starts_with("| ") && !l.starts_with("| **total**"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            Some((cells.get(1)?.to_string(), cells.get(3)?.parse().ok()?))
        })
        .collect()
}

/// The simulator's request log since the last clear: total and per endpoint (task UPIDs
/// folded).
fn logged(env: &Env) -> (u64, BTreeMap<String, u64>) {
    let log = env.requests();
    let mut by_endpoint = BTreeMap::new();
    for (endpoint, n) in log["counts"].as_object().into_iter().flatten() {
        let key = match endpoint.find("/UPID:") {
            Some(at) => format!(
                "{}/{{upid}}/{}",
                &endpoint[..at],
                endpoint.rsplit('/').next().unwrap_or("")
            ),
            None => endpoint.clone(),
        };
        *by_endpoint.entry(key).or_insert(0) += n.as_u64().unwrap_or(0);
    }
    let total = log["total"].as_u64().unwrap_or_else(|| by_endpoint.values().sum());
    (total, by_endpoint)
}

#[test]
fn no_operation_makes_more_calls_than_the_table() {
    let limits = table_counts();
    let env = Env::start_with(pvesim::SimConfig {
        task_ms: 40,
        ..Default::default()
    });
    let mut report = Vec::new();
    let mut grown = Vec::new();
    for (label, task) in OPERATIONS {
        let task = task.replace("community.proxmox.", "ferrox.proxmox.");
        // The operation before may have made a VM: counted once PVE lists it by name.
        env.settle();
        env.clear_requests();
        let play = env.run(&format!("- name: {label}\n  {task}\n"));
        let outcome = play.task(label);
        assert!(!outcome.failed, "{label} failed: {}", outcome.result);
        let (calls, by_endpoint) = logged(&env);
        let limit = *limits
            .get(label)
            .unwrap_or_else(|| panic!("{label:?} is not in {TABLE}: run bench/compare to add it"));
        report.push(format!("{label}: {calls} (table {limit}) {by_endpoint:?}"));
        if calls > limit {
            grown.push(label);
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(
        grown.is_empty(),
        "more API calls than {TABLE} allows for {grown:?}: make the operation cheaper, or run bench/compare and commit the table\n{}",
        report.join("\n")
    );
}

#[test]
fn the_table_is_read() {
    let limits = table_counts();
    for (label, _) in OPERATIONS {
        assert!(
            limits.get(label).is_some_and(|n| *n > 0),
            "{label:?} missing from {TABLE}: {limits:?}"
        );
    }
}
