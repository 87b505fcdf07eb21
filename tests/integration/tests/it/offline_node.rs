//! A node that has just gone offline is still listed in `/cluster/resources` with its
//! `maxmem`, `maxcpu` and `level` (pmxcfs keeps its last status broadcast for 300 s) and
//! its guests with their last status; an online node whose status daemon sends nothing
//! is `unknown`. Placement takes online nodes only, so neither gets a VM.

use ferrox_integration::Env;
use serde_json::json;

#[test]
fn placement_leaves_out_a_node_gone_offline_whose_memory_is_still_listed() {
    let env = Env::start();
    env.fault(json!({"node": "pve2", "unreachable": true, "since_secs": 30}));
    let nodes = env.api_get("/cluster/resources?type=node");
    let pve2 = nodes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == "pve2")
        .unwrap()
        .clone();
    assert_eq!(pve2["status"], "offline");
    assert!(pve2["maxmem"].is_u64(), "the stale figures are listed: {pve2}");
    let play = env.run(
        "- name: vm\n  ferrox.proxmox.proxmox_kvm:\n    name: placed\n    memory: 1024\n    placement: {strategy: most_free}\n",
    );
    play.assert_ok();
    let t = play.task("vm");
    assert_eq!(t.result["node"], "pve1", "{}", t.result);
    assert!(
        t.result["placement"]["excluded"]["pve2"]
            .as_str()
            .is_some_and(|why| why.starts_with("offline")),
        "{}",
        t.result
    );
}

#[test]
fn placement_leaves_out_an_online_node_without_status_data() {
    let env = Env::start();
    env.fault(json!({"node": "pve2", "no_status": true, "since_secs": 400}));
    let play = env.run(
        "- name: vm\n  ferrox.proxmox.proxmox_kvm:\n    name: placed\n    memory: 1024\n    placement: {strategy: most_free}\n",
    );
    play.assert_ok();
    let t = play.task("vm");
    assert_eq!(t.result["node"], "pve1", "{}", t.result);
    assert!(
        t.result["placement"]["excluded"]["pve2"]
            .as_str()
            .is_some_and(|why| why.starts_with("unknown")),
        "{}",
        t.result
    );
}
