//! The plain reads every PVE answers: `GET /version` (with datacenter.cfg's `console`),
//! `GET /storage` (storage.cfg, filtered by privilege and type) and `GET /cluster/status`.

use crate::common::*;
use pvesim::state::{AclDef, TokenDef, UserDef};
use pvesim::{Scenario, SimConfig};
use serde_json::Value;

const STORAGE_ONLY: &str = "PVEAPIToken=store@pve!t=store-secret";

/// `store@pve!t`: `Datastore.AllocateSpace` on `local-lvm` alone, nothing on `/`.
fn with_storage_user() -> SimConfig {
    let mut s = Scenario::default_cluster();
    s.users.push(UserDef {
        userid: "store@pve".into(),
        password: None,
        enable: true,
        totp_secret: None,
        tokens: vec![TokenDef {
            id: "t".into(),
            secret: "store-secret".into(),
            privsep: false,
        }],
    });
    s.roles.insert("Space".into(), vec!["Datastore.AllocateSpace".into()]);
    s.acls.push(AclDef {
        path: "/storage/local-lvm".into(),
        ugid: "store@pve".into(),
        roles: vec!["Space".into()],
        propagate: true,
    });
    SimConfig { scenario: s, ..quick() }
}

fn ids(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|e| e[key].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn version_carries_the_datacenter_console_when_set() {
    let mut api = Api::start(quick());
    let plain = api.get("/version");
    assert_eq!(plain.status, 200, "{}", plain.raw);
    assert!(
        plain.data().get("console").is_none(),
        "no console configured: {}",
        plain.raw
    );

    api.login_root();
    let put = api.put("/cluster/options", &[("console", "xtermjs")]);
    assert_eq!(put.status, 200, "{}", put.raw);
    api.with_auth(vec![("Authorization", READONLY)]);
    let v = api.get("/version");
    assert_eq!(v.data()["console"], "xtermjs", "{}", v.raw);
    assert_eq!(v.data()["release"], "9.1");
    // The node's own version call reads no datacenter.cfg.
    let node = api.get("/nodes/pve1/version");
    assert!(node.data().get("console").is_none(), "{}", node.raw);
    assert_eq!(node.data()["version"], v.data()["version"]);
}

#[test]
fn storage_lists_storage_cfg_entries_with_pves_types() {
    let api = Api::start(quick());
    let r = api.get("/storage");
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(
        ids(r.data(), "storage"),
        ["local", "local-lvm", "vmdata", "nvme-pool", "isos"]
    );
    let list = r.data().as_array().unwrap();
    let digest = list[0]["digest"].as_str().expect("digest");
    assert_eq!(digest.len(), 40, "a SHA-1: {digest}");
    assert!(list.iter().all(|s| s["digest"] == digest), "one digest, the file's");
    let by_id = |id: &str| list.iter().find(|s| s["storage"] == id).unwrap();
    let local = by_id("local");
    assert_eq!(local["type"], "dir");
    assert_eq!(local["path"], "/var/lib/vz");
    assert!(
        local["content"].as_str().unwrap().split(',').any(|c| c == "iso"),
        "{local}"
    );
    assert!(local.get("shared").is_none(), "a local dir is not shared: {local}");
    let nfs = by_id("vmdata");
    assert_eq!(nfs["shared"], 1, "nfs is always shared, as an integer: {nfs}");
    assert_eq!(nfs["content"], "images");
    assert!(by_id("local-lvm").get("path").is_none(), "block storages have no path");

    let lvm = api.get("/storage?type=lvmthin");
    assert_eq!(ids(lvm.data(), "storage"), ["local-lvm"]);
    let bad = api.get("/storage?type=floppy");
    assert_eq!(bad.status, 400, "{}", bad.raw);
}

#[test]
fn storage_shows_only_what_the_caller_may_audit_or_allocate_on() {
    let mut api = Api::start(with_storage_user());
    api.with_auth(vec![("Authorization", STORAGE_ONLY)]);
    let r = api.get("/storage");
    assert_eq!(r.status, 200, "any authenticated user may call it: {}", r.raw);
    assert_eq!(ids(r.data(), "storage"), ["local-lvm"]);
    // Permissions before parameters: this caller is refused nothing here, so a bad
    // type is a parameter error.
    assert_eq!(api.get("/storage?type=floppy").status, 400);
}

#[test]
fn cluster_status_has_the_cluster_then_each_node() {
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(serde_json::json!({"node": "pve2", "unreachable": true})),
    );
    let r = api.get("/cluster/status");
    assert_eq!(r.status, 200, "{}", r.raw);
    let list = r.data().as_array().unwrap();
    assert_eq!(list.len(), 3, "{}", r.raw);
    let cluster = &list[0];
    assert_eq!(cluster["type"], "cluster");
    assert_eq!(cluster["id"], "cluster");
    assert_eq!(cluster["name"], "pvesim");
    assert_eq!(cluster["nodes"], 2);
    assert!(cluster["version"].is_u64(), "{cluster}");
    assert_eq!(cluster["quorate"], 0, "one of two votes is no majority: {cluster}");
    let (pve1, pve2) = (&list[1], &list[2]);
    assert_eq!(pve1["id"], "node/pve1");
    assert_eq!(pve1["name"], "pve1");
    assert_eq!(pve1["type"], "node");
    assert_eq!(pve1["online"], 1);
    assert_eq!(pve1["local"], 1);
    assert_eq!(pve1["ip"], "192.0.2.11");
    assert_eq!(pve1["level"], "");
    assert!(pve1["nodeid"].is_u64());
    assert_eq!(pve2["online"], 0);
    assert_eq!(pve2["local"], 0);
    assert_ne!(pve1["nodeid"], pve2["nodeid"]);
}

#[test]
fn cluster_status_needs_sys_audit_on_root() {
    let mut api = Api::start(with_storage_user());
    api.with_auth(vec![("Authorization", STORAGE_ONLY)]);
    let r = api.get("/cluster/status");
    assert_eq!(r.status, 403, "{}", r.raw);
    assert_eq!(r.message().trim_end(), "Permission check failed (/, Sys.Audit)");
    api.with_auth(vec![("Authorization", READONLY)]);
    let quorate = api.get("/cluster/status");
    assert_eq!(quorate.status, 200, "PVEAuditor has Sys.Audit: {}", quorate.raw);
    assert_eq!(quorate.data()[0]["quorate"], 1);
}

#[test]
fn nextid_takes_the_datacenter_range_and_says_vm_for_every_guest() {
    let mut api = Api::start(quick());
    assert_eq!(api.get("/cluster/nextid").data(), "101");
    let taken = api.get("/cluster/nextid?vmid=200");
    assert_eq!(
        (taken.status, taken.error("vmid").as_str()),
        (400, "VM 200 already exists")
    );

    api.login_root();
    let put = api.put("/cluster/options", &[("next-id", "lower=9000,upper=9002")]);
    assert_eq!(put.status, 200, "{}", put.raw);
    assert_eq!(api.get("/cluster/nextid").data(), "9001", "9000 is the template");
    let create = api.post("/nodes/pve1/qemu", &[("vmid", "9001")]);
    assert_eq!(create.status, 200, "{}", create.raw);
    api.wait_task(create.data().as_str().unwrap());
    let full = api.get("/cluster/nextid");
    assert_eq!(full.status, 500, "{}", full.raw);
    assert_eq!(
        full.message().trim_end(),
        "unable to get any free VMID in range [9000, 9002]"
    );
}
