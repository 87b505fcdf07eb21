//! Sub-keys later qemu-server releases added (`schema/newer-keys.json`): a cluster whose
//! release has them stores them as qemu-server prints them; an older one refuses them as
//! pve-common's `parse_property_string` does, before anything is made.

use crate::common::*;

fn at(version: &str) -> Api {
    let mut cfg = quick();
    cfg.scenario.pve_version = Some(version.into());
    Api::start(cfg)
}

const NEWER: &[(&str, &str)] = &[
    ("net0", "virtio,host-tunnel=off,bridge=vmbr0"),
    ("cpu", "x86-64-v2-AES,level=30"),
];

#[test]
fn a_9_2_cluster_stores_host_tunnel_and_cpu_level_as_qemu_server_prints_them() {
    let api = at("9.2.6");
    let mut form = vec![("vmid", "140"), ("name", "newer")];
    form.extend_from_slice(NEWER);
    api.run_task("POST", "/nodes/pve1/qemu", &form);
    let c = api.config("pve1", 140);
    let net = c["net0"].as_str().unwrap();
    assert!(
        net.starts_with("virtio=BC:24:11:") && net.ends_with(",bridge=vmbr0,host-tunnel=0"),
        "keys sorted, the boolean as 0: {net}"
    );
    assert_eq!(c["cpu"], "x86-64-v2-AES,level=30");
    let r = api.put(
        "/nodes/pve1/qemu/140/config",
        &[("net0", &format!("{net},host-tunnel=1"))],
    );
    assert_eq!(
        r.error("net0"),
        "invalid format - duplicate key in comma-separated list property: host-tunnel\n"
    );
    let r = api.put(
        "/nodes/pve1/qemu/140/config",
        &[("net0", "virtio,bridge=vmbr0,host-tunnel=maybe")],
    );
    assert_eq!(
        r.error("net0"),
        "invalid format - format error\nnet0.host-tunnel: type check ('boolean') failed - got 'maybe'\n"
    );
}

#[test]
fn a_9_1_cluster_refuses_them_in_pve_s_words_and_makes_nothing() {
    let api = at("9.1.5");
    let mut form = vec![("vmid", "141")];
    form.extend_from_slice(NEWER);
    let r = api.post("/nodes/pve1/qemu", &form);
    assert_eq!(
        (r.status, r.message().as_str()),
        (400, "Parameter verification failed.\n")
    );
    assert_eq!(
        r.error("net0"),
        "invalid format - invalid key in comma-separated list property: host-tunnel\n"
    );
    assert_eq!(
        r.error("cpu"),
        "invalid format - invalid key in comma-separated list property: level\n"
    );
    assert_eq!(api.get("/nodes/pve1/qemu/141/config").status, 500, "no VM was made");
    api.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "141"), ("agent", "1,freeze-fs-on-backup=0")],
    );
    let updates = [
        ("PUT", "cpu", "host,level=30", "level"),
        ("POST", "agent", "1,freeze-fs=0", "freeze-fs"),
        ("POST", "agent", "1,guest-fsfreeze=0", "guest-fsfreeze"),
    ];
    for (method, key, value, sub) in updates {
        let r = api.send(method, "/nodes/pve1/qemu/141/config", &[(key, value)]);
        assert_eq!(
            r.error(key),
            format!("invalid format - invalid key in comma-separated list property: {sub}\n"),
            "{method} {key}"
        );
    }
}

#[test]
fn cpu_level_arrives_with_pve_9_1_16_and_host_tunnel_with_9_2_4() {
    let api = at("9.1.16");
    api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "142"), ("cpu", "host,level=30")]);
    let r = api.put(
        "/nodes/pve1/qemu/142/config",
        &[("net0", "virtio,bridge=vmbr0,host-tunnel=1")],
    );
    assert_eq!(
        r.error("net0"),
        "invalid format - invalid key in comma-separated list property: host-tunnel\n"
    );
    let api = at("9.2.4");
    api.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "143"), ("net0", "e1000,bridge=vmbr0,host-tunnel=1")],
    );
    assert!(api.config("pve1", 143)["net0"]
        .as_str()
        .unwrap()
        .ends_with(",host-tunnel=1"));
}

/// API host at pve-manager 9.2.3; pve2 had qemu-server upgraded past it (pve-manager only
/// sets a floor), pve3 is behind.
fn mixed() -> Api {
    let mut cfg = quick();
    cfg.scenario.pve_version = Some("9.2.3".into());
    cfg.scenario.nodes[1].qemu_server = Some("9.1.18".into());
    let mut behind = cfg.scenario.nodes[1].clone();
    behind.name = "pve3".into();
    behind.pve_version = Some("9.1.16".into());
    behind.qemu_server = None;
    behind.addresses.clear();
    cfg.scenario.nodes.push(behind);
    Api::start(cfg)
}

#[test]
fn each_node_parses_with_its_own_qemu_server_whatever_get_version_says() {
    let api = mixed();
    assert_eq!(api.get("/version").data()["version"], "9.2.3");
    assert_eq!(api.get("/nodes/pve3/version").data()["version"], "9.1.16");
    let tunnel = [("net0", "virtio,bridge=vmbr0,host-tunnel=1")];
    // pve1 runs what 9.2.3 came with: no host-tunnel.
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "150"), tunnel[0]]);
    assert_eq!(
        (r.status, r.error("net0").as_str()),
        (
            400,
            "invalid format - invalid key in comma-separated list property: host-tunnel\n"
        )
    );
    // pve2's qemu-server 9.1.18 has it.
    api.run_task("POST", "/nodes/pve2/qemu", &[("vmid", "150"), tunnel[0]]);
    assert!(api.config("pve2", 150)["net0"]
        .as_str()
        .unwrap()
        .ends_with(",host-tunnel=1"));
    // pve3 (pve-manager 9.1.16) has cpu level but not host-tunnel, on create and update.
    api.run_task("POST", "/nodes/pve3/qemu", &[("vmid", "151"), ("cpu", "host,level=30")]);
    let r = api.put("/nodes/pve3/qemu/151/config", &tunnel);
    assert_eq!(
        r.error("net0"),
        "invalid format - invalid key in comma-separated list property: host-tunnel\n"
    );
}
