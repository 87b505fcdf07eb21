//! `placement`: proxmox_kvm chooses the node of the VMs it creates, on a five-node
//! cluster of unequal memory (`tests/pvesim/scenarios/placement.json`): pve1 64 GiB,
//! pve2 32 GiB, pve3 16 GiB, pve4 128 GiB without bridge vmbr0, pve5 96 GiB offline;
//! `nvme-pool` only on pve1 and pve4. Twenty hosts at ten forks, each creating one VM;
//! in process, a storage dead on a node and a group filling nodes of unequal memory.

use std::collections::BTreeMap;

use ferrox_integration::{Env, Play, PlayOpts};
use pvesim::scenario::Scenario;

const HOSTS: usize = 20;
const GIB: u64 = 1 << 30;

fn scenario() -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pvesim/scenarios/placement.json");
    Scenario::from_file(&path).expect("scenarios/placement.json loads")
}

fn start() -> Env {
    start_from(scenario())
}

fn start_from(scenario: Scenario) -> Env {
    Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    })
}

fn opts(prefix: &str, check: bool) -> PlayOpts {
    let hosts: String = (1..=HOSTS)
        .map(|i| format!("{prefix}{i:02} ansible_connection=local\n"))
        .collect();
    PlayOpts {
        hosts: Some(("all".into(), format!("[all]\n{hosts}"))),
        env: vec![("ANSIBLE_FORKS".into(), "10".into())],
        check,
        diff: check,
        ..Default::default()
    }
}

fn vm_task(placement: &str, bridge: &str, disk: &str) -> String {
    vm_task_of(2048, placement, bridge, disk)
}

fn vm_task_of(memory_mib: u64, placement: &str, bridge: &str, disk: &str) -> String {
    format!(
        "- name: vm\n  ferrox.proxmox.proxmox_kvm:\n    name: \"{{{{ inventory_hostname }}}}\"\n    memory: {memory_mib}\n    cores: 1\n    scsi:\n      scsi0: \"{disk}:4\"\n    net:\n      net0: virtio,bridge={bridge}\n    placement: {placement}\n"
    )
}

/// host -> the node its task reports.
fn reported(play: &Play) -> BTreeMap<String, String> {
    play.results
        .iter()
        .filter(|r| r.name == "vm")
        .map(|r| {
            (
                r.host.clone(),
                r.result["node"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn per_node(nodes: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for n in nodes.values() {
        *out.entry(n.clone()).or_default() += 1;
    }
    out
}

/// name -> node of the cluster's VMs whose name starts with `prefix`, read from each
/// node's own listing (no broadcast lag).
fn listed(env: &Env, prefix: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for node in ["pve1", "pve2", "pve3", "pve4"] {
        for g in env.api_get(&format!("/nodes/{node}/qemu")).as_array().unwrap() {
            if let Some(name) = g["name"].as_str().filter(|n| n.starts_with(prefix)) {
                assert!(out.insert(name.to_string(), node.to_string()).is_none(), "{name} twice");
            }
        }
    }
    out
}

/// Configured memory per node (every guest, running or not) against its maxmem.
fn assert_within_capacity(env: &Env) {
    let resources = env.api_get("/cluster/resources");
    let mut configured: BTreeMap<String, u64> = BTreeMap::new();
    for g in resources
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == "qemu" || r["type"] == "lxc")
    {
        *configured.entry(g["node"].as_str().unwrap().to_string()).or_default() += g["maxmem"].as_u64().unwrap_or(0);
    }
    for n in resources.as_array().unwrap().iter().filter(|r| r["type"] == "node") {
        let node = n["node"].as_str().unwrap();
        if let Some(max) = n["maxmem"].as_u64() {
            let used = configured.get(node).copied().unwrap_or(0);
            assert!(used <= max, "{node}: {used} configured > {max}");
        }
    }
}

#[test]
fn most_free_with_a_group_fills_the_eligible_nodes_and_check_mode_predicts_it() {
    let env = start();
    let task = vm_task(
        "{strategy: most_free, group: web, max_memory_ratio: 1.0}",
        "vmbr0",
        "local-lvm",
    );

    let dry = env.play_with(&task, &opts("fl", true));
    dry.assert_ok();
    let predicted = reported(&dry);
    assert_eq!(predicted.len(), HOSTS);
    assert!(listed(&env, "fl").is_empty(), "a check run creates nothing");
    let diff = dry.results.iter().find(|r| r.name == "vm").unwrap().result["diff"].to_string();
    assert!(diff.contains("node"), "--diff shows the chosen node: {diff}");

    let real = env.play_with(&task, &opts("fl", false));
    real.assert_ok();
    let placed = reported(&real);
    let made = listed(&env, "fl");
    assert_eq!(made.len(), HOSTS, "one VM per host");
    for (host, node) in &placed {
        assert_eq!(made.get(host), Some(node), "{host}: the result names the node it is on");
    }
    let counts = per_node(&placed);
    for excluded in ["pve4", "pve5"] {
        assert!(!counts.contains_key(excluded), "nothing on {excluded}: {counts:?}");
    }
    for node in ["pve1", "pve2", "pve3"] {
        assert!(
            counts.get(node).copied().unwrap_or(0) >= 1,
            "group web spreads first: {counts:?}"
        );
    }
    assert_within_capacity(&env);
    assert_eq!(per_node(&predicted), counts, "--check predicted as many VMs per node");
    let why = &real.results.iter().find(|r| r.name == "vm").unwrap().result["placement"];
    assert_eq!(why["strategy"], "most_free");
    assert!(
        why["excluded"]["pve5"].as_str().unwrap().starts_with("offline"),
        "{why}"
    );
    assert_eq!(why["excluded"]["pve4"], "lacks bridge vmbr0 (net0)", "{why}");

    let again = env.play_with(&task, &opts("fl", false));
    again.assert_ok();
    assert!(again.results.iter().all(|r| !r.changed), "a rerun changes nothing");
    assert_eq!(listed(&env, "fl"), made, "and moves nothing");
}

/// Spread VMs of 1 GiB: no node fills (9 of the 20 names hash to pve3, 16 GiB), so every
/// name is on its own node. (With 2 GiB pve3 would be full at the 9th, and which name
/// goes elsewhere would follow the order the forks got the lock in: see the in-process
/// `spread_moves_a_name_off_a_full_node_and_check_mode_predicts_it`.)
#[test]
fn spread_puts_every_name_on_the_same_node_in_check_mode_and_for_real() {
    let env = start();
    let task = vm_task_of(1024, "{strategy: spread}", "vmbr0", "local-lvm");
    let dry = env.play_with(&task, &opts("sp", true));
    dry.assert_ok();
    let real = env.play_with(&task, &opts("sp", false));
    real.assert_ok();
    let predicted = reported(&dry);
    assert_eq!(predicted.len(), HOSTS);
    assert_eq!(predicted, reported(&real));
    assert_eq!(predicted, listed(&env, "sp"));
    assert!(per_node(&predicted).len() >= 2, "names spread: {predicted:?}");
}

#[test]
fn no_candidate_fails_naming_every_node_and_creates_nothing() {
    let env = start();
    let task = vm_task("{strategy: most_free}", "vmbr9", "nvme-pool");
    let play = env.play_with(&task, &opts("none", false));
    let failed: Vec<_> = play.results.iter().filter(|r| r.name == "vm").collect();
    assert_eq!(failed.len(), HOSTS);
    let msg = failed[0].msg();
    assert!(failed.iter().all(|r| r.failed), "{msg}");
    for part in [
        "placement: no node can take VM none",
        "pve1: lacks bridge vmbr9 (net0)",
        "pve2: lacks storage nvme-pool (scsi0)",
        "pve3: lacks storage nvme-pool (scsi0)",
        "pve4: lacks bridge vmbr9 (net0)",
        "pve5: offline",
        "nothing was created",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
    assert!(listed(&env, "none").is_empty());
}

/// Two runs of the same `spread` play at once put every name on the node a check run
/// predicts: while no node is full the node comes from the name alone, so the runs need
/// no coordination with each other (1 GiB VMs: none fills). (`vmid_range` makes a name
/// one VM when both runs create it.)
#[test]
fn two_spread_runs_at_once_put_every_name_on_the_same_node() {
    let env = start();
    let task = format!(
        "{}    vmid_range: [5000, 5999]\n",
        vm_task_of(1024, "{strategy: spread}", "vmbr0", "local-lvm")
    );
    let predicted = reported(&env.play_with(&task, &opts("tw", true)));
    assert_eq!(predicted.len(), HOSTS);
    let (first, second) = std::thread::scope(|s| {
        let first = s.spawn(|| env.play_with(&task, &opts("tw", false)));
        let second = s.spawn(|| env.play_with(&task, &opts("tw", false)));
        (first.join().unwrap(), second.join().unwrap())
    });
    first.assert_ok();
    second.assert_ok();
    // A run that found the VM the other had just created reports it as existing, with
    // the node it is on: every result names the predicted node.
    for run in [&first, &second] {
        assert_eq!(reported(run), predicted);
    }
    assert_eq!(listed(&env, "tw"), predicted, "each name once, on its node");
}

/// `count` tasks in one in-process run, each creating the VM `{prefix}NN`.
fn vm_tasks(prefix: &str, count: usize, placement: &str, memory_mib: u64, disk: &str) -> String {
    (1..=count)
        .map(|i| {
            format!(
                "- name: {prefix}{i:02}\n  ferrox.proxmox.proxmox_kvm: {{name: {prefix}{i:02}, memory: {memory_mib}, cores: 1, scsi: {{scsi0: '{disk}:4'}}, net: {{net0: 'virtio,bridge=vmbr0'}}, placement: {placement}}}\n"
            )
        })
        .collect()
}

/// task name -> the node its result reports.
fn reported_by_task(play: &Play) -> BTreeMap<String, String> {
    play.results
        .iter()
        .map(|r| {
            (
                r.name.clone(),
                r.result["node"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// pve1 (the node most_free prefers: 64 GiB, nothing on it) cannot reach `local-lvm`:
/// PVE lists it there `status: unknown` without sizes, and a disk on it would fail
/// `storage 'local-lvm' is not online`. The VM goes elsewhere and the result says why
/// pve1 was left out; a disabled storage leaves every node out, naming it.
#[test]
fn a_storage_dead_on_a_node_excludes_that_node_naming_why() {
    let mut s = scenario();
    for sd in &mut s.storages {
        match sd.id.as_str() {
            "local-lvm" => sd.inactive_on = vec!["pve1".into()],
            "nvme-pool" => sd.disable = true,
            _ => {}
        }
    }
    let env = start_from(s);
    let task = vm_tasks("dead", 1, "{strategy: most_free}", 2048, "local-lvm");
    // Of the online nodes with vmbr0 (pve1..pve3), pve1 has the most memory.
    let nodes = scenario().nodes;
    let biggest = nodes.iter().take(3).max_by_key(|n| n.maxmem).map(|n| n.name.clone());
    assert_eq!(biggest.as_deref(), Some("pve1"));
    for check in [true, false] {
        let play = env.run_with(
            &task,
            &PlayOpts {
                check,
                ..Default::default()
            },
        );
        let t = play.task("dead01");
        assert!(!t.failed, "{}", t.result);
        assert_ne!(t.result["node"], "pve1", "check: {check}: {}", t.result);
        assert_eq!(
            t.result["placement"]["excluded"]["pve1"],
            "storage local-lvm is not active on it (scsi0; status unknown: the node cannot reach or activate it)",
            "check: {check}"
        );
    }
    for check in [true, false] {
        let tasks = vm_tasks("off", 1, "{strategy: most_free}", 2048, "nvme-pool");
        let disabled = env.run_with(
            &tasks,
            &PlayOpts {
                check,
                ..Default::default()
            },
        );
        let msg = disabled.task("off01").msg();
        for node in ["pve1", "pve2", "pve3"] {
            assert!(
                msg.contains(&format!("{node}: storage nvme-pool is disabled (scsi0;")),
                "check: {check}: {node} in: {msg}"
            );
        }
        assert!(msg.contains("nothing was created"), "{msg}");
    }
}

/// placement.json with the nodes of 24/48/96/256/256 GiB the memory report measured.
fn five_nodes() -> Scenario {
    let mut s = scenario();
    for (node, gib) in s.nodes.iter_mut().zip([24, 48, 96, 256, 256]) {
        node.maxmem = gib * GIB;
    }
    s
}

/// Five nodes of 24/48/96/256/256 GiB (pve4 without bridge vmbr0, pve5 offline), 4 GiB
/// already configured on pve1 (VMs 9000 and 100), 512 MiB on pve2, twenty VMs of 4 GiB in group `web` with `most_free` and
/// no `max_memory_ratio`: one per node, then by free memory; no node configured past its
/// memory; check mode predicts the same count per node; a rerun reports each VM's node.
#[test]
fn a_group_fills_by_free_memory_and_never_past_a_nodes_memory() {
    let env = start_from(five_nodes());
    let tasks = vm_tasks("grp", HOSTS, "{strategy: most_free, group: web}", 4096, "local-lvm");
    let dry = env.run_with(
        &tasks,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    dry.assert_ok();
    let predicted = per_node(&reported_by_task(&dry));
    let real = env.run_with(&tasks, &PlayOpts::default());
    real.assert_ok();
    let placed = reported_by_task(&real);
    assert_eq!(placed, listed(&env, "grp"), "each result names the node its VM is on");
    let counts = per_node(&placed);
    assert_eq!(counts, predicted, "--check predicted as many VMs per node");
    // One each on pve1..pve3 first (16, 43.5, 92 GiB free then), then by free memory:
    // pve3 takes 13 more (down to 40 GiB free), then pve2 and pve3 alternate (2 and 2);
    // pve1 takes no second.
    let expected: BTreeMap<String, usize> = [("pve1", 1), ("pve2", 3), ("pve3", 16)]
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    assert_eq!(counts, expected);
    assert_within_capacity(&env);
    let again = env.run(&tasks);
    again.assert_ok();
    assert!(again.results.iter().all(|r| !r.changed), "a rerun changes nothing");
    assert_eq!(reported_by_task(&again), placed, "a VM found existing reports its node");
}

/// Twenty spread VMs of 2 GiB: 9 names hash to pve3 (16 GiB), which is full after 8, so
/// the last of them goes to its next node; a check run, choosing in the same order over
/// the run's placements, predicts every name's node; no node is past its memory.
#[test]
fn spread_moves_a_name_off_a_full_node_and_check_mode_predicts_it() {
    let env = start();
    let tasks = vm_tasks("sp", HOSTS, "{strategy: spread}", 2048, "local-lvm");
    let dry = env.run_with(
        &tasks,
        &PlayOpts {
            check: true,
            ..Default::default()
        },
    );
    dry.assert_ok();
    let real = env.run_with(&tasks, &PlayOpts::default());
    real.assert_ok();
    let placed = reported_by_task(&real);
    assert_eq!(reported_by_task(&dry), placed);
    assert_eq!(placed, listed(&env, "sp"));
    assert_eq!(
        per_node(&placed).get("pve3"),
        Some(&8),
        "pve3 holds 8 of 2 GiB: {placed:?}"
    );
    let moved = real.results.iter().find(|r| {
        r.result["placement"]["excluded"]["pve3"]
            .as_str()
            .is_some_and(|e| e.starts_with("full:"))
    });
    assert!(moved.is_some(), "a name of pve3 went elsewhere, pve3 excluded as full");
    assert_within_capacity(&env);
}

/// The same five nodes through `ansible-playbook`, twenty hosts at ten forks, 4 GiB each,
/// `group: web` and no `max_memory_ratio`: the forks choose one at a time under the run's
/// placement lock, no node ends past its memory, and `--check` predicted the count per
/// node (which host lands where may follow the order the forks got the lock in).
#[test]
fn at_ten_forks_a_group_stays_within_every_nodes_memory_as_check_mode_predicts() {
    let env = start_from(five_nodes());
    let task = vm_task_of(4096, "{strategy: most_free, group: web}", "vmbr0", "local-lvm");
    let dry = env.play_with(&task, &opts("fv", true));
    dry.assert_ok();
    let real = env.play_with(&task, &opts("fv", false));
    real.assert_ok();
    let placed = reported(&real);
    assert_eq!(placed, listed(&env, "fv"));
    assert_eq!(
        per_node(&reported(&dry)),
        per_node(&placed),
        "--check predicted as many VMs per node"
    );
    assert_within_capacity(&env);
    for node in ["pve1", "pve2", "pve3"] {
        assert!(per_node(&placed).contains_key(node), "one per node first: {placed:?}");
    }
}
