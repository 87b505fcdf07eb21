//! proxmox_vm_info (tests/anchor/vm_info.yml) on the default cluster: filters, config,
//! the whole-module failures of 1.6, and the connection variants (password, token,
//! unset validate_certs, audit-only token).

use serde_json::Value;

use super::support::Anchor;

fn guest(items: &Value, vmid: u64) -> &Value {
    items["proxmox_vms"]
        .as_array()
        .and_then(|a| a.iter().find(|g| g["vmid"] == vmid))
        .unwrap_or_else(|| panic!("no guest {vmid} in {items}"))
}

#[test]
fn proxmox_vm_info_filters_and_failures() {
    let anchor = Anchor::start();
    let run = anchor.run("vm_info.yml");

    // Everything, qemu before lxc per node listing, sorted by vmid; vmid int, template bool.
    let all = run.task("all").ok().changed(false);
    assert_eq!(all.vmids(), vec![100, 200, 9000]);
    let web = guest(&all.result, 100);
    assert_eq!(
        (
            &web["id"],
            &web["type"],
            &web["name"],
            &web["node"],
            &web["status"],
            &web["template"]
        ),
        (
            &"qemu/100".into(),
            &"qemu".into(),
            &"web01".into(),
            &"pve1".into(),
            &"stopped".into(),
            &false.into()
        ),
        "{web}"
    );
    let template = guest(&all.result, 9000);
    assert_eq!(template["template"], true, "{template}");
    let ct = guest(&all.result, 200);
    assert_eq!(
        (&ct["type"], &ct["node"], &ct["status"]),
        (&"lxc".into(), &"pve2".into(), &"running".into()),
        "{ct}"
    );
    assert!(
        ct["uptime"].as_u64().unwrap_or(0) > 0,
        "a running container has uptime: {ct}"
    );
    assert!(
        ct["pid"].is_u64() && web.get("pid").is_none(),
        "pid only for running guests: {ct} {web}"
    );

    assert_eq!(run.task("type qemu").ok().vmids(), vec![100, 9000]);
    assert_eq!(run.task("type lxc").ok().vmids(), vec![200]);
    assert_eq!(run.task("by vmid").ok().vmids(), vec![100]);
    assert_eq!(run.task("by name").ok().vmids(), vec![9000]);
    assert_eq!(run.task("by node").ok().vmids(), vec![200]);
    assert_eq!(
        run.task("by node and type without match").ok().vmids(),
        Vec::<u64>::new()
    );
    assert_eq!(run.task("unknown vmid").ok().vmids(), Vec::<u64>::new());
    run.task("unknown node")
        .failed()
        .msg_is("Node pve9 doesn't exist in PVE cluster");

    let config = run.task("config current").ok().config().clone();
    assert_eq!(config["name"], "web01");
    assert_eq!(config["scsi0"], "local-lvm:vm-100-disk-0,iothread=1,size=32G");
    assert_eq!(config["cores"], 2, "integer keys are JSON numbers: {config}");
    let digest = config["digest"].as_str().unwrap_or_default();
    assert!(
        digest.len() == 40 && digest.chars().all(|c| c.is_ascii_hexdigit()),
        "config digest: {config}"
    );
    let ct_config = run.task("config pending of lxc").ok().config().clone();
    assert_eq!(ct_config["hostname"], "ct-dns", "{ct_config}");

    // 1.6 defect: one guest without a reachable agent fails the whole module, with PVE's
    // agent checks in their order (configured, then running).
    run.task("network of stopped vm (1.6 defect)")
        .failed()
        .msg_is("Failed to retrieve QEMU VMs information: 500 Internal Server Error: No QEMU guest agent configured");
    run.task("network of stopped vm with agent (1.6 defect)")
        .failed()
        .msg_is("Failed to retrieve QEMU VMs information: 500 Internal Server Error: VM 9000 is not running");
    let net = run.task("network of running container").ok();
    let ifaces = net.result["proxmox_vms"][0]["network"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        ifaces
            .iter()
            .any(|i| i["name"] == "eth0" && i["hwaddr"] == "bc:24:11:20:00:01"),
        "container interfaces as `ip --json a` reports them (lower-case MAC): {}",
        net.result
    );

    let check = run.task("check mode").ok().changed(false);
    assert_eq!(check.vmids(), vec![100, 9000], "vm_info runs in check mode");

    // Connection variants.
    assert_eq!(run.task("password auth").ok().vmids(), vec![200]);
    run.task("wrong password").failed().msg_is(&format!(
        "Couldn't authenticate user: root@pam to https://127.0.0.1:{}/api2/json/access/ticket code: 401",
        anchor.sim().port()
    ));
    // A bad token: 401 with PVE's (>= 9.1.5) reason phrase and an empty body, which
    // proxmoxer renders as {'errors': b''}; the connection test (GET /version) fails with it.
    run.task("wrong token secret")
        .failed()
        .msg_is("401 Unauthorized: Authentication failed! - {'errors': b''}");
    // PVE answers a TFA user's password with NeedTFA; proxmoxer then fails the challenge.
    run.task("two-factor user without otp")
        .failed()
        .msg_is("Couldn't authenticate user: missing Two Factor Authentication (TFA)");
    let unverified = run.task("validate_certs unset").ok();
    assert_eq!(unverified.vmids(), vec![9000]);
    let deprecations = unverified.result["deprecations"].to_string();
    assert!(
        deprecations.contains("defaults to `false`. This default will change to `true` inin community.proxmox 2.0.0."),
        "the 1.6 deprecation (with its doubled 'inin'): {}",
        unverified.result
    );
    // An audit-only token still sees every VM (VM.Audit).
    assert_eq!(run.task("readonly token lists").ok().vmids(), vec![100, 9000]);
}

#[test]
fn proxmox_vm_info_with_an_offline_node() {
    let anchor = Anchor::start();
    anchor.fault(serde_json::json!({"node": "pve2", "unreachable": true}));
    let run = anchor.run("vm_info_offline.yml");

    // 1.6 defect: the container's node cannot be listed, so the whole module fails.
    let all = run.task("all with pve2 offline (1.6 defect)").failed();
    assert!(
        all.msg().starts_with("Failed to retrieve LXC VMs information: 595"),
        "PVE answers 595 for an unreachable node: {}",
        all.result
    );
    assert_eq!(run.task("qemu only").ok().vmids(), vec![100, 9000]);
}
