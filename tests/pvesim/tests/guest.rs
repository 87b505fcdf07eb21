//! What reaches the guest: the cloud-init drive's record of changes to a running VM
//! (`GET`/`PUT .../cloudinit`, regenerated at start), and the guest agent's addresses
//! as the guest comes up.

mod common;
use common::*;
use pvesim::state::GuestAgentSpec;
use pvesim::{Scenario, SimConfig};
use serde_json::{json, Value};
use std::time::Duration;

/// The listing as `key -> item without key`, for comparisons.
fn listing(api: &Api, vmid: u32) -> Value {
    let r = api.get(&format!("/nodes/pve1/qemu/{vmid}/cloudinit"));
    assert_eq!(r.status, 200, "{}", r.raw);
    let mut out = serde_json::Map::new();
    for item in r.data().as_array().unwrap() {
        let mut item = item.as_object().unwrap().clone();
        let key = item.remove("key").unwrap().as_str().unwrap().to_string();
        out.insert(key, Value::Object(item));
    }
    Value::Object(out)
}

fn running_clone(api: &Api, newid: &str) {
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/9000/clone", &[("newid", newid), ("name", "ci01")]), "OK");
    let r = api.put(&format!("/nodes/pve1/qemu/{newid}/config"), &[("ciuser", "debian"), ("cipassword", "old-secret"), ("ipconfig0", "ip=dhcp")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(api.run_task("POST", &format!("/nodes/pve1/qemu/{newid}/status/start"), &[]), "OK");
}

#[test]
fn cloud_init_changes_wait_for_the_drive() {
    let api = Api::start(quick());
    running_clone(&api, "150");
    assert_eq!(
        listing(&api, 150),
        json!({"ciuser": {"value": "debian"}, "cipassword": {"value": "**********"}}),
        "a stopped VM's changes were in the drive at start"
    );
    let r = api.put(
        "/nodes/pve1/qemu/150/config",
        &[("ciuser", "admin"), ("cipassword", "new-secret"), ("ipconfig0", "ip=192.0.2.50/24,gw=192.0.2.1"), ("ipconfig1", "ip=dhcp"), ("nameserver", "192.0.2.53")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let pending = api.get("/nodes/pve1/qemu/150/pending");
    assert!(pending.data().as_array().unwrap().iter().all(|i| i.get("pending").is_none()), "cloud-init keys are written at once: {}", pending.raw);
    // qemu-server lists the changed ci* keys with the drive's value, added keys, and
    // not a changed ipconfigN.
    assert_eq!(
        listing(&api, 150),
        json!({
            "ciuser": {"value": "debian", "pending": "admin"},
            "cipassword": {"value": "**********", "pending": "**********"},
            "ipconfig1": {"pending": "ip=dhcp"},
            "nameserver": {"pending": "192.0.2.53"},
        })
    );
    let digest = api.config("pve1", 150)["digest"].clone();
    assert_eq!(api.put("/nodes/pve1/qemu/150/config", &[("ciuser", "debian"), ("delete", "ipconfig1")]).status, 200);
    assert_eq!(listing(&api, 150), json!({"ciuser": {"value": "debian"}, "cipassword": {"value": "**********", "pending": "**********"}, "nameserver": {"pending": "192.0.2.53"}}), "reverted keys drop out");
    assert_ne!(api.config("pve1", 150)["digest"], digest, "the record is part of the config file");
    // The agent sees what the drive holds: the old ipconfig0 until the drive is regenerated.
    std::thread::sleep(Duration::from_millis(150));
    let v4 = |api: &Api| {
        let r = api.get("/nodes/pve1/qemu/150/agent/network-get-interfaces");
        r.data()["result"][1]["ip-addresses"][1]["ip-address"].as_str().unwrap().to_string()
    };
    assert_eq!(v4(&api), "192.168.10.160");
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/150/status/reboot", &[]), "OK");
    assert_eq!(listing(&api, 150), json!({"ciuser": {"value": "debian"}, "cipassword": {"value": "**********"}, "nameserver": {"value": "192.0.2.53"}}), "an API reboot regenerates");
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(v4(&api), "192.0.2.50");
    // PUT regenerates too; a removed key shows as a deletion until then.
    assert_eq!(api.put("/nodes/pve1/qemu/150/config", &[("delete", "nameserver")]).status, 200);
    assert_eq!(listing(&api, 150)["nameserver"], json!({"delete": 1}));
    let r = api.put("/nodes/pve1/qemu/150/cloudinit", &[]);
    assert_eq!((r.status, r.data().clone()), (200, Value::Null), "{}", r.raw);
    assert!(listing(&api, 150).get("nameserver").is_none());
}

#[test]
fn the_cloudinit_hotplug_feature_and_a_missing_drive_leave_nothing_recorded() {
    let api = Api::start(quick());
    running_clone(&api, "151");
    assert_eq!(api.put("/nodes/pve1/qemu/151/config", &[("hotplug", "network,disk,usb,cloudinit")]).status, 200);
    assert_eq!(api.put("/nodes/pve1/qemu/151/config", &[("ciuser", "admin")]).status, 200);
    assert_eq!(listing(&api, 151), json!({"ciuser": {"value": "admin"}, "cipassword": {"value": "**********"}}));
    // Without a drive nothing is recorded (the guest gets none of it).
    assert_eq!(api.get("/nodes/pve1/qemu/100/cloudinit").data(), &json!([]));
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    assert_eq!(api.put("/nodes/pve1/qemu/100/config", &[("ciuser", "admin")]).status, 200);
    assert_eq!(listing(&api, 100), json!({"ciuser": {"value": "admin"}}));
}

fn addresses(api: &Api, vmid: u32) -> Vec<String> {
    let r = api.get(&format!("/nodes/pve1/qemu/{vmid}/agent/network-get-interfaces"));
    assert_eq!(r.status, 200, "{}", r.raw);
    r.data()["result"][1]["ip-addresses"].as_array().unwrap().iter().map(|a| a["ip-address"].as_str().unwrap().to_string()).collect()
}

#[test]
fn guests_come_up_link_local_first_as_their_scenario_says() {
    let mut scenario = Scenario::default_cluster();
    let template = scenario.guests.iter().find(|g| g.vmid == 9000).unwrap().clone();
    let mut windows = template.clone();
    windows.vmid = 160;
    windows.config.remove("template");
    windows.config.insert("ostype".into(), json!("win11"));
    windows.config.insert("net0".into(), json!("virtio=BC:24:11:16:00:01,bridge=vmbr0"));
    windows.agent = Some(GuestAgentSpec { delay_ms: Some(50), address_delay_ms: Some(400), ..GuestAgentSpec::default() });
    let mut v6 = windows.clone();
    v6.vmid = 161;
    v6.config.insert("ostype".into(), json!("l26"));
    v6.config.insert("net0".into(), json!("virtio=BC:24:11:16:00:02,bridge=vmbr0"));
    v6.agent = Some(GuestAgentSpec { delay_ms: Some(50), address_delay_ms: Some(0), ipv4: false, ipv6: true });
    scenario.guests.extend([windows, v6]);
    let api = Api::start(SimConfig { scenario, ..quick() });
    assert_eq!(api.post("/nodes/pve1/qemu/160/agent/ping", &[]).message(), "VM 160 is not running\n");
    for id in ["160", "161"] {
        assert_eq!(api.run_task("POST", &format!("/nodes/pve1/qemu/{id}/status/start"), &[]), "OK");
    }
    std::thread::sleep(Duration::from_millis(60));
    let ping = api.post("/nodes/pve1/qemu/160/agent/ping", &[]);
    assert_eq!((ping.status, ping.body["data"].clone()), (200, json!({"result": {}})));
    assert_eq!(addresses(&api, 160), ["fe80::be24:11ff:fe16:1", "169.254.0.1"], "APIPA while Windows waits for DHCP");
    assert_eq!(addresses(&api, 161), ["fe80::be24:11ff:fe16:2", "2001:db8:a::ab"], "IPv6 only");
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(addresses(&api, 160), ["fe80::be24:11ff:fe16:1", "192.168.10.170"]);
    // qemu-server's texts when the agent cannot answer (an agent change waits for a restart).
    for (change, message) in [(("agent", "0"), "QEMU guest agent is not running\n"), (("delete", "agent"), "No QEMU guest agent configured\n")] {
        assert_eq!(api.put("/nodes/pve1/qemu/161/config", &[change]).status, 200);
        if change.0 == "agent" {
            assert_eq!(api.get("/nodes/pve1/qemu/161/agent/network-get-interfaces").status, 200, "still the running config");
        }
        assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/161/status/reboot", &[]), "OK");
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(api.get("/nodes/pve1/qemu/161/agent/network-get-interfaces").message(), message);
    }
}
