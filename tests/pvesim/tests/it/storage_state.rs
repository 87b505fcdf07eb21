//! Storages disabled in storage.cfg or not active on a node (an NFS server the node
//! cannot reach), as pve-manager and pve-storage show them: `/cluster/resources`
//! (`extract_storage_stats`) leaves a disabled storage out and lists an inactive one as
//! `status: unknown` without sizes; `GET /nodes/{node}/storage` (`storage_info`) lists
//! them with `enabled: 0` / `active: 0`; a disk allocated there fails as
//! `activate_storage` dies.

use crate::common::*;
use pvesim::{Scenario, SimConfig};
use serde_json::{json, Value};

/// The default cluster with `local-lvm` unreachable from pve2 and `nvme-pool` disabled.
fn with_dead_storages() -> SimConfig {
    let mut s = Scenario::default_cluster();
    for sd in &mut s.storages {
        match sd.id.as_str() {
            "local-lvm" => sd.inactive_on = vec!["pve2".into()],
            "nvme-pool" => sd.disable = true,
            _ => {}
        }
    }
    SimConfig { scenario: s, ..quick() }
}

fn entry<'a>(list: &'a Value, node: &str, storage: &str) -> Option<&'a Value> {
    list.as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "storage" && e["node"] == node && e["storage"] == storage)
}

#[test]
fn cluster_resources_leave_a_disabled_storage_out_and_an_inactive_one_without_sizes() {
    let api = Api::start(with_dead_storages());
    let r = api.get("/cluster/resources?type=storage");
    assert_eq!(r.status, 200, "{}", r.raw);
    let list = r.data();
    let dead = entry(list, "pve2", "local-lvm").expect("an inactive storage is listed");
    assert_eq!(dead["status"], "unknown");
    assert!(dead.get("disk").is_none() && dead.get("maxdisk").is_none(), "{dead}");
    let alive = entry(list, "pve1", "local-lvm").unwrap();
    assert_eq!(alive["status"], "available");
    assert!(alive["maxdisk"].as_u64().unwrap() > 0);
    for node in ["pve1", "pve2"] {
        assert!(entry(list, node, "nvme-pool").is_none(), "disabled: left out on {node}");
    }
}

#[test]
fn the_node_listing_shows_enabled_and_active_and_content_leaves_disabled_out() {
    let api = Api::start(with_dead_storages());
    let listing = api.get("/nodes/pve2/storage");
    assert_eq!(listing.status, 200, "{}", listing.raw);
    let by_id = |l: &Value, id: &str| l.as_array().unwrap().iter().find(|s| s["storage"] == id).cloned();
    let lvm = by_id(listing.data(), "local-lvm").unwrap();
    assert_eq!(
        (lvm["enabled"].clone(), lvm["active"].clone(), lvm["total"].clone()),
        (json!(1), json!(0), json!(0))
    );
    let nvme = by_id(listing.data(), "nvme-pool").unwrap();
    assert_eq!((nvme["enabled"].clone(), nvme["active"].clone()), (json!(0), json!(0)));
    assert_eq!(
        by_id(api.get("/nodes/pve1/storage").data(), "local-lvm").unwrap()["active"],
        1
    );
    let images = api.get("/nodes/pve2/storage?content=images");
    assert!(
        by_id(images.data(), "nvme-pool").is_none(),
        "content= lists enabled storages only"
    );
    assert!(by_id(images.data(), "local-lvm").is_some());
    assert!(by_id(api.get("/nodes/pve2/storage?enabled=1").data(), "nvme-pool").is_none());
}

#[test]
fn a_disk_on_a_storage_the_node_cannot_activate_fails_as_pve_does() {
    let api = Api::start(with_dead_storages());
    let cases = [
        ("pve2", 801, "local-lvm:4", "storage 'local-lvm' is not online"),
        ("pve1", 802, "nvme-pool:4", "storage 'nvme-pool' is disabled"),
    ];
    for (node, vmid, disk, error) in cases {
        let id = vmid.to_string();
        let r = api.post(&format!("/nodes/{node}/qemu"), &[("vmid", &id), ("scsi0", disk)]);
        assert_eq!(r.status, 200, "{}", r.raw);
        let upid = r.data().as_str().unwrap().to_string();
        let status = api.wait_task(&upid);
        assert_eq!(
            status["exitstatus"],
            format!("unable to create VM {vmid} - {error}"),
            "{disk} on {node}"
        );
    }
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "803"), ("scsi0", "local-lvm:4")]),
        "OK",
        "the same storage is active on pve1"
    );
    let content = api.get("/nodes/pve2/storage/local-lvm/content");
    assert_eq!(content.status, 500, "{}", content.raw);
    assert!(
        content.message().contains("storage 'local-lvm' is not online"),
        "{}",
        content.raw
    );
}

#[test]
fn a_storage_goes_down_at_run_time_through_the_state_endpoint() {
    let api = Api::start(quick());
    let mut state = api.control("GET", "/_pvesim/state", None);
    let storages = state["storages"].as_array_mut().unwrap();
    let lvm = storages.iter_mut().find(|s| s["id"] == "local-lvm").unwrap();
    lvm["inactive_on"] = json!(["pve1"]);
    api.control("POST", "/_pvesim/state", Some(state));
    let list = api.get("/cluster/resources?type=storage");
    assert_eq!(entry(list.data(), "pve1", "local-lvm").unwrap()["status"], "unknown");
}
