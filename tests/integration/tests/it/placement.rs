//! `placement`: proxmox_kvm chooses the node of the VMs it creates, on a five-node
//! cluster of unequal memory (`tests/pvesim/scenarios/placement.json`): pve1 64 GiB,
//! pve2 32 GiB, pve3 16 GiB, pve4 128 GiB without bridge vmbr0, pve5 96 GiB offline;
//! `nvme-pool` only on pve1 and pve4. Twenty hosts at ten forks, each creating one VM.

use std::collections::BTreeMap;

use ferrox_integration::{Env, Play, PlayOpts};
use pvesim::scenario::Scenario;

const HOSTS: usize = 20;

fn start() -> Env {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pvesim/scenarios/placement.json");
    Env::start_with(pvesim::SimConfig {
        scenario: Scenario::from_file(&path).expect("scenarios/placement.json loads"),
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
    format!(
        "- name: vm\n  ferrox.proxmox.proxmox_kvm:\n    name: \"{{{{ inventory_hostname }}}}\"\n    memory: 2048\n    cores: 1\n    scsi:\n      scsi0: \"{disk}:4\"\n    net:\n      net0: virtio,bridge={bridge}\n    placement: {placement}\n"
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

#[test]
fn spread_puts_every_name_on_the_same_node_in_check_mode_and_for_real() {
    let env = start();
    let task = vm_task("{strategy: spread}", "vmbr0", "local-lvm");
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
/// predicts: the node comes from the name alone, so the runs need no coordination.
/// (`vmid_range` makes a name one VM when both runs create it.)
#[test]
fn two_spread_runs_at_once_put_every_name_on_the_same_node() {
    let env = start();
    let task = format!(
        "{}    vmid_range: [5000, 5999]\n",
        vm_task("{strategy: spread}", "vmbr0", "local-lvm")
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
    // A run that found the VM the other had just created reports it as existing (no
    // node chosen); every node a run did choose is the predicted one.
    for run in [&first, &second] {
        for (host, node) in reported(run).iter().filter(|(_, node)| !node.is_empty()) {
            assert_eq!(Some(node), predicted.get(host), "{host}");
        }
    }
    assert_eq!(listed(&env, "tw"), predicted, "each name once, on its node");
}
