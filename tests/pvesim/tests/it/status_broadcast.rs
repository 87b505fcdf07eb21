//! What `/cluster/resources` and `GET /nodes` take from pmxcfs's status broadcast (its rrd
//! dump): a node offline for less than 300 s keeps `level`, `maxmem`, `maxcpu` and its
//! guests their last status; after that, or for an online node whose status daemon sends
//! nothing, the figures are gone (pve-manager `PVE/API2Tools.pm` `extract_node_stats`,
//! pve-cluster `src/pmxcfs/status.c` `rrd_entry_is_old`).

use crate::common::*;
use serde_json::{json, Value};

fn entry(list: &Value, id: &str) -> Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {list}"))
        .clone()
}

fn resources(api: &Api) -> Value {
    let r = api.get("/cluster/resources");
    assert_eq!(r.status, 200, "{}", r.raw);
    r.data().clone()
}

#[test]
fn a_node_offline_for_less_than_five_minutes_keeps_its_figures_and_its_guests_status() {
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"node": "pve2", "unreachable": true, "since_secs": 290})),
    );
    let all = resources(&api);
    let node = entry(&all, "node/pve2");
    assert_eq!(node["status"], "offline", "{node}");
    assert_eq!(node["maxmem"], 68_719_476_736u64, "the last broadcast stays: {node}");
    assert_eq!(node["maxcpu"], 16, "{node}");
    assert_eq!(node["level"], "", "{node}");
    for k in ["mem", "cpu", "uptime"] {
        assert!(node.get(k).is_none(), "{k} only while online: {node}");
    }
    let ct = entry(&all, "lxc/200");
    assert_eq!(ct["status"], "running", "the guest's last broadcast status: {ct}");
    assert!(ct["maxmem"].is_u64(), "{ct}");
    // The node's own calls are still refused.
    assert_eq!(api.get("/nodes/pve2/lxc/200/status/current").status, 595);
}

#[test]
fn after_five_minutes_an_offline_nodes_figures_and_its_guests_status_are_gone() {
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"node": "pve2", "unreachable": true, "since_secs": 301})),
    );
    let all = resources(&api);
    let node = entry(&all, "node/pve2");
    assert_eq!(
        node,
        json!({"id": "node/pve2", "node": "pve2", "type": "node", "status": "offline"})
    );
    let ct = entry(&all, "lxc/200");
    assert_eq!(ct["status"], "unknown", "{ct}");
    assert!(ct.get("maxmem").is_none(), "{ct}");
    let nodes = api.get("/nodes");
    let pve2 = entry(nodes.data(), "node/pve2");
    assert!(pve2.get("maxmem").is_none() && pve2.get("level").is_none(), "{pve2}");
}

#[test]
fn an_online_node_without_a_status_broadcast_is_unknown() {
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"node": "pve2", "no_status": true, "since_secs": 400})),
    );
    let node = entry(&resources(&api), "node/pve2");
    assert_eq!(
        node,
        json!({"id": "node/pve2", "node": "pve2", "type": "node", "status": "unknown"})
    );
    // Still a cluster member: its own calls are answered.
    assert_eq!(api.get("/nodes/pve2/lxc").status, 200);
    let status = api.get("/cluster/status");
    assert_eq!(entry(status.data(), "node/pve2")["online"], 1);
}

#[test]
fn level_is_listed_without_sys_audit_and_the_figures_are_not() {
    let mut api = Api::start(quick());
    api.with_auth(vec![("Authorization", READONLY)]);
    // PVEAuditor has Sys.Audit: the figures are there.
    assert!(entry(&resources(&api), "node/pve1")["maxmem"].is_u64());
    let mut cfg = quick();
    with_template_user(&mut cfg.scenario);
    let mut api = Api::start(cfg);
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);
    let r = api.get("/cluster/resources?type=node");
    let node = entry(r.data(), "node/pve1");
    assert_eq!(node["level"], "", "level is set outside `exclude_stats`: {node}");
    assert!(node.get("maxmem").is_none(), "{node}");
}

#[test]
fn ssl_fingerprint_is_in_get_nodes_and_not_in_cluster_resources() {
    let api = Api::start(quick());
    let fp = api.sim.fingerprint();
    let nodes = api.get("/nodes");
    assert_eq!(entry(nodes.data(), "node/pve1")["ssl_fingerprint"], fp.as_str());
    let r = api.get("/cluster/resources?type=node");
    assert!(
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n.get("ssl_fingerprint").is_none()),
        "{}",
        r.raw
    );
}

#[test]
fn a_vms_maxcpu_is_capped_at_the_hosts_cpus_unless_vcpus_is_set() {
    let api = Api::start(quick());
    // pve1 has 16 CPUs; 2 sockets × 12 cores are 24.
    api.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "130"), ("sockets", "2"), ("cores", "12")],
    );
    api.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "131"), ("sockets", "2"), ("cores", "12"), ("vcpus", "20")],
    );
    let status = |vmid: u32| api.get(&format!("/nodes/pve1/qemu/{vmid}/status/current"));
    assert_eq!(status(130).data()["cpus"], 16);
    assert_eq!(status(131).data()["cpus"], 20, "vcpus is taken as set");
    std::thread::sleep(std::time::Duration::from_millis(250)); // past --resources-lag-ms
    let all = resources(&api);
    assert_eq!(entry(&all, "qemu/130")["maxcpu"], 16);
    assert_eq!(entry(&all, "qemu/131")["maxcpu"], 20);
}
