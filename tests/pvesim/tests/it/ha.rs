//! HA-managed VMs: power calls answer with `hastart`/`hastop` tasks that end before
//! the VM's state changes; the HA manager does the start/stop in its own task.

use crate::common::*;
use pvesim::state::HaResource;
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
        json!({"managed": 1, "state": "stopped", "request_state": "stopped"})
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
