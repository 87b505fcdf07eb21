//! Keys real PVE 9 answers carry: node network (addresses, altnames), the SDN zone
//! entries of `/cluster/resources`, and the VM status fields of qemu-server's vmstatus.

use crate::common::*;
use serde_json::{json, Value};

fn find<'a>(list: &'a Value, key: &str, val: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|e| e[key] == val)
        .unwrap_or_else(|| panic!("no {key}={val} in {list}"))
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
    let zones: Vec<&Value> = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "network")
        .collect();
    assert_eq!(
        zones,
        vec![
            &json!({"id": "network/pve1/zone/localnetwork", "type": "network", "network-type": "zone", "network": "localnetwork", "node": "pve1", "status": "ok"}),
            &json!({"id": "network/pve2/zone/localnetwork", "type": "network", "network-type": "zone", "network": "localnetwork", "node": "pve2", "status": "ok"}),
        ]
    );
    let types: Vec<&str> = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    let first = |t: &str| types.iter().position(|x| *x == t).unwrap();
    assert!(
        first("pool") < first("qemu")
            && first("qemu") < first("node")
            && first("node") < first("storage")
            && first("storage") < first("network"),
        "{types:?}"
    );
    // A type filter (the schema's enum has no `network`) leaves them out.
    for t in ["vm", "node", "storage"] {
        let r = api.get(&format!("/cluster/resources?type={t}"));
        assert!(
            r.data().as_array().unwrap().iter().all(|e| e["type"] != "network"),
            "type={t}"
        );
    }
    // SDN.Audit on /sdn/zones/localnetwork decides; PVEAuditor has it.
    api.with_auth(vec![("Authorization", READONLY)]);
    let r = api.get("/cluster/resources");
    assert!(
        r.data().as_array().unwrap().iter().any(|e| e["type"] == "network"),
        "PVEAuditor has SDN.Audit"
    );
}

#[test]
fn vm_listing_and_status_carry_vmstatus_keys() {
    let api = Api::start(quick());
    // Stopped: config-derived keys only.
    let r = api.put(
        "/nodes/pve1/qemu/100/config",
        &[
            ("balloon", "1024"),
            ("serial0", "socket"),
            ("vga", "qxl,clipboard=vnc"),
            ("agent", "1"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let st = api.get("/nodes/pve1/qemu/100/status/current");
    let d = st.data();
    assert_eq!(d["status"], "stopped");
    assert_eq!(d["qmpstatus"], "stopped");
    assert_eq!(d["serial"], 1);
    assert_eq!(d["agent"], 1);
    assert_eq!(d["spice"], 1);
    assert_eq!(d["clipboard"], "vnc");
    assert_eq!(d["balloon_min"], 1024u64 << 20);
    assert_eq!(d["shares"], 1000);
    assert_eq!(d["ha"], json!({"managed": 0}));
    for k in [
        "pid",
        "balloon",
        "ballooninfo",
        "blockstat",
        "freemem",
        "nics",
        "proxmox-support",
        "pressurecpusome",
        "running-qemu",
    ] {
        assert!(d.get(k).is_none(), "stopped VM has no {k}: {d}");
    }
    let t = api.get("/nodes/pve1/qemu/9000/status/current");
    assert_eq!(t.data()["template"], 1);
    assert_eq!(t.data()["clipboard"], Value::Null, "vga set without clipboard: null");
    assert!(t.data().get("spice").is_none(), "vga serial0 is not SPICE");

    // Running: QMP-derived keys, numbers where PVE has numbers.
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    let st = api.get("/nodes/pve1/qemu/100/status/current");
    let d = st.data();
    assert!(d["pid"].is_u64());
    for k in [
        "pressurecpusome",
        "pressurecpufull",
        "pressureiosome",
        "pressureiofull",
        "pressurememorysome",
        "pressurememoryfull",
    ] {
        assert!(d[k].is_number(), "{k}: {d}");
    }
    assert_eq!(d["balloon"], 2048u64 << 20);
    assert_eq!(d["ballooninfo"]["max_mem"], 2048u64 << 20);
    assert_eq!(d["freemem"], d["ballooninfo"]["free_mem"]);
    assert!(d["blockstat"]["scsi0"]["rd_bytes"].is_u64(), "{d}");
    assert!(d["nics"]["tap100i0"]["netin"].is_u64(), "{d}");
    assert_eq!(d["proxmox-support"]["pbs-dirty-bitmap"], true);
    assert_eq!(d["qmpstatus"], "running");
    // The plain listing: pid, serial, pressure; full=1 adds the QMP keys.
    let list = api.get("/nodes/pve1/qemu");
    let e = find(list.data(), "name", "web01");
    assert!(
        e["pid"].is_u64() && e["pressureiofull"].is_number() && e["serial"] == 1,
        "{e}"
    );
    assert!(e.get("blockstat").is_none() && e.get("qmpstatus").is_none());
    let list = api.get("/nodes/pve1/qemu?full=1");
    let e = find(list.data(), "name", "web01");
    assert!(
        e["blockstat"].is_object() && e["ballooninfo"].is_object() && e["running-machine"].is_string(),
        "{e}"
    );
    // A VM without a balloon device has no balloon answer.
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("balloon", "0"), ("start", "1")]);
    api.wait_task(r.data().as_str().unwrap());
    for _ in 0..100 {
        if api.get("/nodes/pve1/qemu/130/status/current").data()["status"] == "running" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let d = api.get("/nodes/pve1/qemu/130/status/current").data().clone();
    assert_eq!(d["status"], "running");
    assert!(
        d.get("balloon").is_none() && d.get("ballooninfo").is_none() && d.get("balloon_min").is_none(),
        "{d}"
    );
}
