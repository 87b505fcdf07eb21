//! Containers as pve-container answers for them: the listing, config, status,
//! interfaces and snapshots (what community.proxmox's inventory reads), their
//! shapes against the official schema, VM.Audit, unknown and stopped containers.

use crate::common::*;
use pvesim::scenario::{GuestSpec, SnapshotSpec};
use pvesim::state::{AclDef, GuestKind};
use pvesim::{Scenario, SimConfig};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The default cluster plus CT 201 on pve1: stopped, static addresses, two snapshots.
fn with_containers() -> SimConfig {
    let mut s = Scenario::default_cluster();
    let config: BTreeMap<String, Value> = serde_json::from_value(json!({
        "arch": "amd64", "cores": 2, "hostname": "ct-web", "memory": 1024, "ostype": "debian",
        "net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:20:01:01,ip=192.0.2.60/24,gw=192.0.2.1,ip6=auto,type=veth",
        "net1": "name=eth1,bridge=vmbr1,hwaddr=BC:24:11:20:01:02,ip=dhcp,type=veth",
        "rootfs": "local-lvm:vm-201-disk-0,size=4G", "tags": "web", "unprivileged": 1,
    }))
    .unwrap();
    s.guests.push(GuestSpec {
        vmid: 201,
        node: "pve1".into(),
        kind: GuestKind::Lxc,
        running: false,
        config,
        snapshots: vec![
            SnapshotSpec {
                name: "fresh".into(),
                description: "as installed".into(),
                snaptime: Some(1_700_000_000),
                vmstate: false,
                config: None,
            },
            SnapshotSpec {
                name: "patched".into(),
                description: String::new(),
                snaptime: Some(1_700_100_000),
                vmstate: false,
                config: None,
            },
        ],
        agent: None,
    });
    SimConfig { scenario: s, ..quick() }
}

fn assert_conforms(method: &str, template: &str, data: &Value) {
    let bad = returns_mismatches(method, template, data);
    assert!(bad.is_empty(), "{method} {template}: {bad:?}\n{data}");
}

#[test]
fn snapshot_list_ends_with_current_as_pve_container() {
    let api = Api::start(with_containers());
    let r = api.get("/nodes/pve1/lxc/201/snapshot");
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_conforms("GET", "/nodes/{node}/lxc/{vmid}/snapshot", r.data());
    let list = r.data().as_array().unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(
        list[0],
        json!({"name": "fresh", "description": "as installed", "snaptime": 1_700_000_000})
    );
    assert_eq!(
        list[1],
        json!({"name": "patched", "description": "", "snaptime": 1_700_100_000, "parent": "fresh"})
    );
    let digest = api.get("/nodes/pve1/lxc/201/config").data()["digest"].clone();
    assert_eq!(
        list[2],
        json!({"name": "current", "description": "You are here!", "running": 0, "parent": "patched", "digest": digest})
    );
    assert!(
        list.iter().all(|s| s.get("vmstate").is_none()),
        "containers have no vmstate"
    );
    // No snapshots: `current` alone, without a parent; running as 1.
    let r = api.get("/nodes/pve2/lxc/200/snapshot");
    let list = r.data().as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(
        (list[0]["name"].as_str(), list[0]["running"].as_u64()),
        (Some("current"), Some(1))
    );
    assert!(list[0].get("parent").is_none());
}

#[test]
fn every_container_read_matches_the_schema() {
    let api = Api::start(with_containers());
    for (node, vmid) in [("pve2", 200), ("pve1", 201)] {
        let l = api.get(&format!("/nodes/{node}/lxc"));
        assert_conforms("GET", "/nodes/{node}/lxc", l.data());
        for (rest, template) in [
            ("config", "/nodes/{node}/lxc/{vmid}/config"),
            ("status/current", "/nodes/{node}/lxc/{vmid}/status/current"),
            ("snapshot", "/nodes/{node}/lxc/{vmid}/snapshot"),
        ] {
            let r = api.get(&format!("/nodes/{node}/lxc/{vmid}/{rest}"));
            assert_eq!(r.status, 200, "{rest}: {}", r.raw);
            assert_conforms("GET", template, r.data());
        }
    }
    let i = api.get("/nodes/pve2/lxc/200/interfaces");
    assert_conforms("GET", "/nodes/{node}/lxc/{vmid}/interfaces", i.data());
    // The check itself sees a wrong type and a missing required key.
    let bad = returns_mismatches(
        "GET",
        "/nodes/{node}/lxc/{vmid}/snapshot",
        &json!([{"name": "x", "snaptime": "1"}]),
    );
    assert_eq!(
        bad,
        [
            "data[0].description is required",
            "data[0].snaptime: \"1\" is not \"integer\""
        ]
    );
}

#[test]
fn container_status_as_vmstatus_reports_it() {
    let api = Api::start(with_containers());
    let d = api.get("/nodes/pve1/lxc/201/status/current").data().clone();
    assert_eq!(d["status"], "stopped");
    assert_eq!(
        (d["name"].as_str(), d["type"].as_str(), d["vmid"].as_u64()),
        (Some("ct-web"), Some("lxc"), Some(201))
    );
    assert_eq!(
        (d["mem"].as_u64(), d["disk"].as_u64(), d["uptime"].as_u64()),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(d["maxdisk"], 4u64 << 30);
    assert_eq!(d["maxmem"], 1024u64 << 20);
    assert_eq!(d["maxswap"], 0, "no `swap` in the config: none");
    assert_eq!(d["cpus"], 2);
    assert_eq!(d["tags"], "web");
    assert_eq!(d["ha"], json!({"managed": 0}));
    for k in ["pid", "pressurecpusome", "template", "lock"] {
        assert!(d.get(k).is_none(), "stopped CT has no {k}: {d}");
    }
    let d = api.get("/nodes/pve2/lxc/200/status/current").data().clone();
    assert_eq!(d["status"], "running");
    assert!(
        d["pid"].is_u64() && d["pressureiosome"].is_number() && d["uptime"].as_u64() > Some(0),
        "{d}"
    );
    assert_eq!(d["maxswap"], 512u64 << 20);
}

#[test]
fn interfaces_are_ip_a_inside_the_container() {
    let api = Api::start(with_containers());
    // Stopped: get_interfaces finds no pid, answers nothing.
    let r = api.get("/nodes/pve1/lxc/201/interfaces");
    assert_eq!((r.status, r.data()), (200, &Value::Null));
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]),
        "OK",
        "an unrelated start keeps CTs as they are"
    );
    let mut state = api.control("GET", "/_pvesim/state", None);
    state["guests"]["201"]["running"] = json!(true);
    api.control("POST", "/_pvesim/state", Some(state));
    let r = api.get("/nodes/pve1/lxc/201/interfaces");
    assert_conforms("GET", "/nodes/{node}/lxc/{vmid}/interfaces", r.data());
    let names: Vec<&str> = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lo", "eth0", "eth1"]);
    let eth0 = &r.data()[1];
    assert_eq!(eth0["hwaddr"], "bc:24:11:20:01:01");
    assert_eq!(eth0["inet"], "192.0.2.60/24", "the static address of net0");
    // inet6 keeps the last IPv6 address `ip a` lists: the link-local one.
    assert_eq!(eth0["inet6"], "fe80::be24:11ff:fe20:101/64");
    assert_eq!(
        eth0["ip-addresses"],
        json!([
            {"ip-address-type": "inet", "ip-address": "192.0.2.60", "prefix": 24},
            {"ip-address-type": "inet6", "ip-address": "2001:db8:a::d3", "prefix": 64},
            {"ip-address-type": "inet6", "ip-address": "fe80::be24:11ff:fe20:101", "prefix": 64},
        ])
    );
    assert_eq!(r.data()[2]["inet"], "192.168.11.211/24", "a DHCP lease on net1");
}

#[test]
fn unknown_containers_answer_as_pve() {
    let api = Api::start(with_containers());
    for rest in ["config", "status/current", "snapshot"] {
        let r = api.get(&format!("/nodes/pve1/lxc/999/{rest}"));
        assert_eq!(
            (r.status, r.message().as_str()),
            (500, "Configuration file 'nodes/pve1/lxc/999.conf' does not exist\n"),
            "{rest}"
        );
        // A CT on another node, or a VM: its config is not in this node's lxc directory.
        let r = api.get(&format!("/nodes/pve1/lxc/200/{rest}"));
        assert_eq!(
            r.message(),
            "Configuration file 'nodes/pve1/lxc/200.conf' does not exist\n",
            "{rest}"
        );
        let r = api.get(&format!("/nodes/pve1/lxc/100/{rest}"));
        assert_eq!(
            r.message(),
            "Configuration file 'nodes/pve1/lxc/100.conf' does not exist\n",
            "{rest}"
        );
    }
    // get_interfaces never loads the config: lxc-info finds no pid, the answer is null.
    let r = api.get("/nodes/pve1/lxc/999/interfaces");
    assert_eq!((r.status, r.data()), (200, &Value::Null));
    let r = api.get("/nodes/nope/lxc/201/snapshot");
    assert_eq!(r.status, 500);
    assert!(
        r.message().starts_with("hostname lookup 'nope' failed"),
        "{}",
        r.message()
    );
}

#[test]
fn container_reads_need_vm_audit() {
    let mut cfg = with_containers();
    cfg.scenario.acls.push(AclDef {
        path: "/vms/201".into(),
        ugid: "ansible@pve!readonly".into(),
        roles: vec!["NoAccess".into()],
        propagate: true,
    });
    let mut api = Api::start(cfg);
    api.with_auth(vec![("Authorization", READONLY)]);
    for rest in ["config", "status/current", "snapshot", "interfaces"] {
        let r = api.get(&format!("/nodes/pve1/lxc/201/{rest}"));
        assert_eq!(
            (r.status, r.message().as_str()),
            (403, "Permission check failed (/vms/201, VM.Audit)\n"),
            "{rest}"
        );
        assert_eq!(
            api.get(&format!("/nodes/pve2/lxc/200/{rest}")).status,
            200,
            "{rest}: PVEAuditor may audit CT 200"
        );
    }
    // The listing leaves out what the caller may not audit.
    assert_eq!(api.get("/nodes/pve1/lxc").data(), &json!([]));
    assert_eq!(api.get("/nodes/pve2/lxc").data().as_array().unwrap().len(), 1);
}

/// `scenarios/inventory.json` (QEMU VMs, running and stopped containers, snapshots, a
/// pool): every GET community.proxmox 1.6's inventory plugin makes with `want_facts`
/// answers 200, in the order the plugin makes them.
#[test]
fn the_inventory_plugins_reads_all_answer() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/inventory.json");
    let scenario = Scenario::from_file(&path).expect("scenarios/inventory.json loads");
    let api = Api::start(SimConfig { scenario, ..quick() });
    let ok = |path: &str| -> Value {
        let r = api.get(path);
        assert_eq!(r.status, 200, "GET {path}: {}", r.raw);
        r.data().clone()
    };
    let mut kinds = std::collections::BTreeSet::new();
    for node in ok("/nodes").as_array().unwrap() {
        let node = node["node"].as_str().unwrap();
        ok(&format!("/nodes/{node}/network"));
        for kind in ["lxc", "qemu"] {
            for g in ok(&format!("/nodes/{node}/{kind}")).as_array().unwrap() {
                if g.get("template").is_some_and(|t| t == 1) {
                    continue;
                }
                let base = format!("/nodes/{node}/{kind}/{}", g["vmid"]);
                let status = ok(&format!("{base}/status/current"));
                let config = ok(&format!("{base}/config"));
                let snaps = ok(&format!("{base}/snapshot"));
                assert_eq!(snaps.as_array().unwrap().last().unwrap()["name"], "current");
                if kind == "lxc" && status["status"] == "running" {
                    assert!(ok(&format!("{base}/interfaces")).is_array());
                }
                if config.get("agent").is_some() {
                    api.get(&format!("{base}/agent/network-get-interfaces"));
                }
                kinds.insert((kind, status["status"].as_str().unwrap().to_string()));
            }
        }
    }
    for pool in ok("/pools").as_array().unwrap() {
        ok(&format!("/pools/{}", pool["poolid"].as_str().unwrap()));
    }
    let want = [
        ("lxc", "running"),
        ("lxc", "stopped"),
        ("qemu", "running"),
        ("qemu", "stopped"),
    ];
    assert_eq!(
        kinds,
        want.iter().map(|(k, s)| (*k, s.to_string())).collect(),
        "the scenario holds each kind in each state"
    );
}
