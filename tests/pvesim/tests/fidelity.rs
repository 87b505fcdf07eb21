//! Keys real PVE 9 answers carry: node network (addresses, altnames), the SDN zone
//! entries of `/cluster/resources`, and the VM status fields of qemu-server's vmstatus.

mod common;
use common::*;
use serde_json::{json, Value};

fn find<'a>(list: &'a Value, key: &str, val: &str) -> &'a Value {
    list.as_array().unwrap().iter().find(|e| e[key] == val).unwrap_or_else(|| panic!("no {key}={val} in {list}"))
}

#[test]
fn node_network_reports_addresses_and_altnames() {
    let api = Api::start(quick());
    let r = api.get("/nodes/pve1/network");
    let vmbr0 = find(r.data(), "iface", "vmbr0");
    assert_eq!(vmbr0["cidr"], "192.0.2.11/24");
    assert_eq!(vmbr0["address"], "192.0.2.11");
    assert_eq!(vmbr0["netmask"], "24", "prefix length as a string, like pve-common");
    assert_eq!(vmbr0["gateway"], "192.0.2.1");
    assert_eq!(vmbr0["method"], "static");
    let vmbr1 = find(r.data(), "iface", "vmbr1");
    for k in ["address", "cidr", "gateway", "netmask"] {
        assert!(vmbr1.get(k).is_none(), "an unconfigured bridge has no {k}: {vmbr1}");
    }
    let eno1 = find(r.data(), "iface", "eno1");
    assert_eq!(eno1["altnames"], json!(["enp1s0"]));
    let r = api.get("/nodes/pve2/network?type=bridge");
    assert_eq!(find(r.data(), "iface", "vmbr0")["address"], "192.0.2.12");
    assert!(r.data().as_array().unwrap().iter().all(|e| e["type"] == "bridge"));
}

#[test]
fn cluster_resources_list_each_nodes_local_network_zone() {
    let mut api = Api::start(quick());
    let r = api.get("/cluster/resources");
    let zones: Vec<&Value> = r.data().as_array().unwrap().iter().filter(|e| e["type"] == "network").collect();
    assert_eq!(
        zones,
        vec![
            &json!({"id": "network/pve1/zone/localnetwork", "type": "network", "network-type": "zone", "network": "localnetwork", "node": "pve1", "status": "ok"}),
            &json!({"id": "network/pve2/zone/localnetwork", "type": "network", "network-type": "zone", "network": "localnetwork", "node": "pve2", "status": "ok"}),
        ]
    );
    let types: Vec<&str> = r.data().as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    let first = |t: &str| types.iter().position(|x| *x == t).unwrap();
    assert!(first("pool") < first("qemu") && first("qemu") < first("node") && first("node") < first("storage") && first("storage") < first("network"), "{types:?}");
    // A type filter (the schema's enum has no `network`) leaves them out.
    for t in ["vm", "node", "storage"] {
        let r = api.get(&format!("/cluster/resources?type={t}"));
        assert!(r.data().as_array().unwrap().iter().all(|e| e["type"] != "network"), "type={t}");
    }
    // SDN.Audit on /sdn/zones/localnetwork decides; PVEAuditor has it.
    api.with_auth(vec![("Authorization", READONLY)]);
    let r = api.get("/cluster/resources");
    assert!(r.data().as_array().unwrap().iter().any(|e| e["type"] == "network"), "PVEAuditor has SDN.Audit");
}
