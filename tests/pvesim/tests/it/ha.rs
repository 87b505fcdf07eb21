//! HA-managed VMs: power calls answer with `hastart`/`hastop` tasks that end before
//! the VM's state changes; the HA manager does the start/stop in its own task. A
//! resource in state `ignored`, or any while the cluster is disarmed with mode
//! `ignore`, is not managed: qemu-server powers it itself, and still removes it only
//! with `purge`.

use crate::common::*;
use pvesim::state::{HaDisarm, HaResource};
use serde_json::json;
use std::time::{Duration, Instant};

fn ha_cluster() -> Api {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: "stopped".into(),
        comment: None,
    });
    Api::start(pvesim::SimConfig { scenario, ..quick() })
}

fn status(api: &Api) -> String {
    api.get("/nodes/pve1/qemu/100/status/current").data()["status"]
        .as_str()
        .unwrap()
        .to_string()
}

fn wait_status(api: &Api, want: &str) -> Duration {
    let t0 = Instant::now();
    while status(api) != want {
        assert!(t0.elapsed() < Duration::from_secs(10), "VM 100 never became {want}");
        std::thread::sleep(Duration::from_millis(10));
    }
    t0.elapsed()
}

fn hastate(api: &Api) -> serde_json::Value {
    let r = api.get("/cluster/resources?type=vm");
    r.data().as_array().unwrap().iter().find(|e| e["vmid"] == 100).unwrap()["hastate"].clone()
}

#[test]
fn ha_power_requests_end_before_the_vm_changes_state() {
    let api = ha_cluster();
    assert_eq!(hastate(&api), "stopped");
    assert_eq!(
        api.get("/nodes/pve1/qemu/100/status/current").data()["ha"],
        json!({"managed": 1, "state": "stopped"})
    );
    assert!(hastate_absent_for_others(&api));

    // The HA manager's own start task takes a while (PVE: its 10 s loop, then the start).
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmstart", "duration_ms": 1500, "times": 1})),
    );
    let r = api.post("/nodes/pve1/qemu/100/status/start", &[]);
    let upid = r.data().as_str().unwrap().to_string();
    assert!(upid.contains(":hastart:100:"), "{upid}");
    let st = api.wait_task(&upid);
    assert_eq!(st["exitstatus"], "OK");
    assert_eq!(
        status(&api),
        "stopped",
        "the HA request is done, the VM is not running yet"
    );
    assert_eq!(api.task_log(&upid), vec!["Requesting HA start for VM 100", "TASK OK"]);
    assert_eq!(hastate(&api), "started");
    wait_status(&api, "running");

    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmshutdown", "duration_ms": 1500, "times": 1})),
    );
    let r = api.post("/nodes/pve1/qemu/100/status/shutdown", &[("timeout", "30")]);
    let upid = r.data().as_str().unwrap().to_string();
    assert!(upid.contains(":hastop:100:"), "{upid}");
    api.wait_task(&upid);
    assert_eq!(status(&api), "running");
    wait_status(&api, "stopped");
    assert_eq!(hastate(&api), "stopped");

    let r = api.post("/nodes/pve1/qemu/100/status/stop", &[("overrule-shutdown", "1")]);
    assert_eq!(
        (r.status, r.error("overrule-shutdown")),
        (400, "Not applicable for HA resources.".to_string())
    );
    // Destroying needs purge, which also drops the HA resource.
    let r = api.delete("/nodes/pve1/qemu/100", &[]);
    assert_eq!(
        r.message(),
        "unable to remove VM 100 - used in HA resources and purge parameter not set.\n"
    );
    let r = api.delete("/nodes/pve1/qemu/100", &[("purge", "1")]);
    let upid = r.data().as_str().unwrap().to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert!(api
        .task_log(&upid)
        .iter()
        .any(|l| l == "NOTE: removed VM 100 from HA resource configuration."));
}

fn hastate_absent_for_others(api: &Api) -> bool {
    let r = api.get("/cluster/resources?type=vm");
    r.data()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["vmid"] != 100)
        .all(|e| e.get("hastate").is_none())
}

#[test]
fn ha_vms_cannot_hibernate() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: "started".into(),
        comment: None,
    });
    scenario.guests.iter_mut().find(|g| g.vmid == 100).unwrap().running = true;
    let api = Api::start(pvesim::SimConfig { scenario, ..quick() });
    let r = api.post("/nodes/pve1/qemu/100/status/suspend", &[("todisk", "1")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (500, "Cannot suspend HA managed VM to disk\n")
    );
    // A reboot is not an HA request.
    let r = api.post("/nodes/pve1/qemu/100/status/reboot", &[]);
    assert!(r.data().as_str().unwrap().contains(":qmreboot:"), "{}", r.raw);
}

/// The default cluster with VM 100 an HA resource in `state`, running or not, and the
/// HA stack disarmed with `disarm` (or armed).
fn with_resource(state: &str, running: bool, disarm: Option<&str>) -> Api {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.guests.iter_mut().find(|g| g.vmid == 100).unwrap().running = running;
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: state.into(),
        comment: None,
    });
    scenario.ha_disarm = disarm.map(|mode| HaDisarm { mode: mode.into() });
    Api::start(pvesim::SimConfig { scenario, ..quick() })
}

fn configured_state(api: &Api) -> serde_json::Value {
    let r = api.get("/cluster/ha/resources");
    r.data()
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sid"] == "vm:100")
        .unwrap()["state"]
        .clone()
}

fn task_type(upid: &str) -> &str {
    upid.split(':').nth(5).unwrap_or_default()
}

#[test]
fn an_ignored_resource_is_powered_by_qemu_server_and_keeps_its_state() {
    let api = with_resource("ignored", false, None);
    assert_eq!(
        api.get("/nodes/pve1/qemu/100/status/current").data()["ha"],
        json!({"managed": 0}),
        "get_service_status: an ignored resource is not managed"
    );
    assert_eq!(hastate(&api), "ignored", "the configured state, the manager keeps none");

    let upid = api
        .post("/nodes/pve1/qemu/100/status/start", &[])
        .data()
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(task_type(&upid), "qmstart");
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert_eq!(status(&api), "running", "qmstart's task ends with the VM running");
    assert_eq!(configured_state(&api), "ignored");

    // overrule-shutdown is refused for HA resources only when they are managed.
    let r = api.post("/nodes/pve1/qemu/100/status/stop", &[("overrule-shutdown", "1")]);
    assert_eq!(task_type(r.data().as_str().unwrap()), "qmstop", "{}", r.raw);
    api.wait_task(r.data().as_str().unwrap());
    assert_eq!(
        (status(&api), configured_state(&api)),
        ("stopped".to_string(), json!("ignored"))
    );
}

#[test]
fn any_ha_resource_entry_needs_purge_to_destroy_its_vm_and_purge_removes_it() {
    for (state, disarm) in [("ignored", None), ("started", Some("ignore")), ("stopped", None)] {
        let api = with_resource(state, true, disarm);
        // `$early_checks`: the HA entry is refused before the VM's running state.
        let r = api.delete("/nodes/pve1/qemu/100", &[]);
        assert_eq!(
            (r.status, r.message().as_str()),
            (
                500,
                "unable to remove VM 100 - used in HA resources and purge parameter not set.\n"
            ),
            "{state} {disarm:?}"
        );
        let r = api.delete("/nodes/pve1/qemu/100", &[("purge", "1")]);
        assert_eq!(
            r.message(),
            "VM 100 is running - destroy failed\n",
            "{state} {disarm:?}"
        );
        let r = api.post("/nodes/pve1/qemu/100/status/stop", &[]);
        api.wait_task(r.data().as_str().unwrap());
        wait_status(&api, "stopped");
        let r = api.delete("/nodes/pve1/qemu/100", &[]);
        assert_eq!(r.status, 500, "stopped, still refused: {state} {disarm:?}");
        let upid = api
            .delete("/nodes/pve1/qemu/100", &[("purge", "1")])
            .data()
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
        assert!(api
            .task_log(&upid)
            .iter()
            .any(|l| l == "NOTE: removed VM 100 from HA resource configuration."));
        let left = api.get("/cluster/ha/resources");
        assert_eq!(left.data(), &json!([]), "{state} {disarm:?}");
    }
}

#[test]
fn a_cluster_disarmed_with_ignore_manages_no_resource_and_with_freeze_holds_them() {
    let api = with_resource("started", false, Some("ignore"));
    assert_eq!(
        api.get("/nodes/pve1/qemu/100/status/current").data()["ha"],
        json!({"managed": 0})
    );
    assert_eq!(hastate(&api), "started", "the manager keeps its state while disarmed");
    let upid = api
        .post("/nodes/pve1/qemu/100/status/start", &[])
        .data()
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(task_type(&upid), "qmstart");

    let api = with_resource("started", false, Some("freeze"));
    assert_eq!(
        api.get("/nodes/pve1/qemu/100/status/current").data()["ha"],
        json!({"managed": 1, "state": "freeze"})
    );
    assert_eq!(hastate(&api), "freeze");
    let upid = api
        .post("/nodes/pve1/qemu/100/status/start", &[])
        .data()
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(task_type(&upid), "hastart");
}

#[test]
fn a_scenario_names_only_the_ha_states_and_disarm_modes_pve_has() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.ha_resources.push(HaResource {
        sid: "vm:100".into(),
        state: "ignore".into(),
        comment: None,
    });
    let err = scenario.to_cluster().unwrap_err().to_string();
    assert!(
        err.contains("state 'ignore', not one of started, stopped, enabled, disabled, ignored"),
        "{err}"
    );
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    scenario.ha_disarm = Some(HaDisarm { mode: "off".into() });
    let err = scenario.to_cluster().unwrap_err().to_string();
    assert!(err.contains("ha_disarm mode 'off'"), "{err}");
}

#[test]
fn disarm_ha_with_ignore_unmanages_every_resource_until_arm_ha() {
    let mut api = with_resource("started", false, None);
    // Sys.Console on /: the automation token has none.
    let r = api.post("/cluster/ha/status/disarm-ha", &[("resource-mode", "ignore")]);
    assert_eq!(r.status, 403, "{}", r.raw);
    api.login_root();
    let managed = |api: &Api| api.get("/nodes/pve1/qemu/100/status/current").data()["ha"]["managed"].clone();
    assert_eq!(managed(&api), 1);
    let r = api.post("/cluster/ha/status/disarm-ha", &[("resource-mode", "ignore")]);
    assert_eq!((r.status, r.data()), (200, &serde_json::Value::Null));
    assert_eq!(managed(&api), 0);
    // The CRM ignores a disarm while disarmed: the mode stays `ignore`.
    api.post("/cluster/ha/status/disarm-ha", &[("resource-mode", "freeze")]);
    assert_eq!(managed(&api), 0);
    let upid = api
        .post("/nodes/pve1/qemu/100/status/start", &[])
        .data()
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(task_type(&upid), "qmstart");
    api.wait_task(&upid);
    api.post("/cluster/ha/status/arm-ha", &[]);
    assert_eq!(managed(&api), 1);
    let r = api.post("/cluster/ha/status/disarm-ha", &[("resource-mode", "off")]);
    assert_eq!(r.status, 400, "the schema's enum: {}", r.raw);
}

#[test]
fn creating_a_resource_is_refused_in_pve_words() {
    let mut api = Api::start(quick());
    api.login_root();
    let refused = |sid: &str| api.post("/cluster/ha/resources", &[("sid", sid)]).message();
    assert_eq!(
        refused("4242"),
        "unable to detect SID from VMID - VM/CT 4242 does not exist\n"
    );
    assert_eq!(refused("vm:4242"), "resource 'vm:4242' does not exist in cluster\n");
    assert_eq!(refused("vm:7"), "invalid VMID\n");
    let r = api.post("/cluster/ha/resources", &[("sid", "100"), ("state", "ignored")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(refused("vm:100"), "resource ID 'vm:100' already defined\n");
    assert_eq!(
        api.get("/nodes/pve1/qemu/100/status/current").data()["ha"],
        json!({"managed": 0})
    );
}
