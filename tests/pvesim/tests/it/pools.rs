//! Resource pools: `/pools` in both forms, `pool` on create and clone, membership in
//! `/cluster/resources`, and what leaves a pool with its VM.

use crate::common::*;
use serde_json::Value;

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn pools_list_read_and_membership() {
    let api = Api::start(quick());
    let r = api.get("/pools");
    assert_eq!(
        r.data(),
        &serde_json::json!([{"poolid": "prod", "comment": "Production VMs"}]),
        "{}",
        r.raw
    );
    let r = api.get("/pools?poolid=nope");
    assert_eq!((r.status, r.message().as_str()), (500, "pool 'nope' does not exist\n"));
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "120"), ("pool", "nope")]);
    assert_eq!((r.status, r.message().as_str()), (500, "pool 'nope' does not exist\n"));
    assert!(
        api.get("/nodes/pve1/qemu/120/config").status == 500,
        "nothing was created"
    );

    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu",
            &[("vmid", "120"), ("name", "db01"), ("pool", "prod")]
        ),
        "OK"
    );
    let r = api.get("/pools?poolid=prod");
    let pool = &r.data()[0];
    assert_eq!(pool["poolid"], "prod");
    assert_eq!(ids(&pool["members"]), vec!["qemu/120"]);
    assert_eq!(pool["members"][0]["vmid"], 120);
    assert_eq!(pool["members"][0]["node"], "pve1");
    let r = api.get("/pools/prod");
    assert_eq!(ids(&r.data()["members"]), vec!["qemu/120"], "{}", r.raw);
    assert!(
        r.data().get("poolid").is_none(),
        "the old form has no poolid: {}",
        r.raw
    );
    let r = api.get("/pools?poolid=prod&type=storage");
    assert_eq!(r.data()[0]["members"], serde_json::json!([]));
    let r = api.get("/pools?type=qemu");
    assert_eq!(r.error("poolid"), "missing property required by 'type'", "{}", r.raw);

    // Membership shows in the cluster listing, with the pool itself.
    let res = api.get("/cluster/resources");
    let all = res.data().as_array().unwrap();
    assert_eq!(
        all[0],
        serde_json::json!({"id": "/pool/prod", "pool": "prod", "type": "pool"}),
        "pools come first"
    );
    let vm = all.iter().find(|e| e["id"] == "qemu/120").unwrap();
    assert_eq!(vm["pool"], "prod");
    assert!(all
        .iter()
        .find(|e| e["id"] == "qemu/100")
        .unwrap()
        .get("pool")
        .is_none());
    let vms = api.get("/cluster/resources?type=vm");
    assert!(vms.data().as_array().unwrap().iter().all(|e| e["type"] != "pool"));

    // A clone can join a pool; a destroyed VM leaves it.
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/9000/clone",
            &[("newid", "121"), ("pool", "prod")]
        ),
        "OK"
    );
    let r = api.get("/pools?poolid=prod");
    assert_eq!(ids(&r.data()[0]["members"]), vec!["qemu/120", "qemu/121"]);
    let r = api.post("/nodes/pve1/qemu/9000/clone", &[("newid", "122"), ("pool", "nope")]);
    assert_eq!(r.message(), "pool 'nope' does not exist\n");
    assert_eq!(api.run_task("DELETE", "/nodes/pve1/qemu/120", &[]), "OK");
    let r = api.get("/pools?poolid=prod");
    assert_eq!(ids(&r.data()[0]["members"]), vec!["qemu/121"]);
}

#[test]
fn scenario_pools_hold_guests() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.pools[0].vms.push(100);
    let mut api = Api::start(pvesim::SimConfig { scenario, ..quick() });
    let r = api.get("/cluster/resources?type=vm");
    let vm = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["vmid"] == 100)
        .unwrap()
        .clone();
    assert_eq!(vm["pool"], "prod", "scenario membership");
    let r = api.get("/pools?poolid=prod");
    assert_eq!(ids(&r.data()[0]["members"]), vec!["qemu/100"]);
    // PVEAuditor has Pool.Audit: the readonly token sees the pool too.
    api.with_auth(vec![("Authorization", READONLY)]);
    assert_eq!(api.get("/pools").data()[0]["poolid"], "prod");
}

/// pve-manager's update_pool: a guest in another pool moves only with `allow-move`
/// (PVE's refusal otherwise, nothing changed); `delete` takes it out; nested pools are
/// named as a parameter of `PUT /pools`.
#[test]
fn pool_update_moves_guests_only_with_allow_move() {
    let mut cfg = quick();
    cfg.scenario.pools[0].vms.push(100);
    cfg.scenario.pools.push(pvesim::state::PoolDef {
        poolid: "dev".into(),
        ..Default::default()
    });
    cfg.scenario.pools.push(pvesim::state::PoolDef {
        poolid: "dev/web".into(),
        ..Default::default()
    });
    // The token needs Pool.Allocate on the pools (the path check), VM.Allocate on the guest.
    for ugid in ["ansible@pve", "ansible@pve!automation"] {
        cfg.scenario.acls.push(pvesim::state::AclDef {
            path: "/pool".into(),
            ugid: ugid.into(),
            roles: vec!["PVEPoolAdmin".into()],
            propagate: true,
        });
    }
    let api = Api::start(cfg);
    let pool_of = |api: &Api| {
        let r = api.get("/cluster/resources?type=vm");
        r.data().as_array().unwrap().iter().find(|e| e["vmid"] == 100).unwrap()["pool"].clone()
    };
    let r = api.put("/pools/dev", &[("vms", "100")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (
            500,
            "update pools failed: VM 100 belongs already to pool 'prod' and 'allow-move' is not set\n"
        )
    );
    assert_eq!(pool_of(&api), "prod");
    assert_eq!(
        api.put("/pools/dev", &[("vms", "100"), ("allow-move", "1")]).status,
        200
    );
    assert_eq!(pool_of(&api), "dev");
    let r = api.put("/pools/dev", &[("vms", "100"), ("allow-move", "1")]);
    assert_eq!(r.message(), "update pools failed: VM 100 is already a pool member\n");
    assert_eq!(
        api.put("/pools", &[("poolid", "dev/web"), ("vms", "100"), ("allow-move", "1")])
            .status,
        200
    );
    assert_eq!(pool_of(&api), "dev/web");
    assert_eq!(
        api.put("/pools", &[("poolid", "dev/web"), ("vms", "100"), ("delete", "1")])
            .status,
        200
    );
    assert!(pool_of(&api).is_null());
    let r = api.put("/pools", &[("poolid", "nope"), ("vms", "100")]);
    assert_eq!(r.message(), "update pools failed: pool 'nope' does not exist\n");
}
