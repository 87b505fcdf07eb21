//! What reaches the guest: cloud-init changes to a running VM reported until the
//! cloud-init drive has them (and brought there by `apply_pending: reboot`), password
//! rotation, and starting a VM that waits until the guest can be reached.

#[allow(dead_code)] // each test file uses part of it
use std::collections::BTreeMap;

use crate::kvm_support::run_playbook;
use ferrox_integration::{repo_root, Env, PlayOpts};
use pvesim::scenario::GuestSpec;
use pvesim::state::{AclDef, GuestAgentSpec, GuestKind, PoolDef};
use serde_json::{json, Value};

/// A running clone of the template with a cloud-init drive, user `debian`.
fn running_cloud_init_vm(env: &Env, vmid: u64) {
    let id = vmid.to_string();
    env.run_task(
        "POST",
        "/nodes/pve1/qemu/9000/clone",
        &[("newid", &id), ("name", "civm")],
    );
    let (status, body) = env.api(
        "PUT",
        &format!("/nodes/pve1/qemu/{vmid}/config"),
        &[("ciuser", "debian"), ("cipassword", "first-pw")],
    );
    assert_eq!(status, 200, "{body}");
    env.run_task("POST", &format!("/nodes/pve1/qemu/{vmid}/status/start"), &[]);
}

fn update(vmid: u64, extra: &str) -> String {
    format!("- name: u\n  ferrox.proxmox.proxmox_kvm:\n    vmid: {vmid}\n    update: true\n    ciuser: admin\n    ipconfig:\n      ipconfig0: ip=192.0.2.50/24,gw=192.0.2.1\n{extra}")
}

/// PVE's own listing of what the drive lacks.
fn drive_lacks(env: &Env, vmid: u64) -> Vec<String> {
    let listing = env.api_get(&format!("/nodes/pve1/qemu/{vmid}/cloudinit"));
    listing
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i.get("pending").is_some() || i.get("delete").is_some())
        .map(|i| i["key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn cloud_init_changes_are_reported_until_a_reboot_brings_them_to_the_guest() {
    let env = Env::start();
    running_cloud_init_vm(&env, 150);

    let dry = env.run_with(
        &update(150, ""),
        &PlayOpts {
            check: true,
            diff: true,
            ..Default::default()
        },
    );
    let t = dry.task("u");
    assert!(t.changed, "{}", t.result);
    assert_eq!(
        t.result["pending"],
        json!({"ciuser": "admin", "ipconfig0": "ip=192.0.2.50/24,gw=192.0.2.1"})
    );
    assert!(
        t.msg().contains("not yet in the guest: ciuser, ipconfig0"),
        "{}",
        t.msg()
    );
    assert_eq!(t.result["diff"]["after"]["ciuser"], "admin");
    assert!(drive_lacks(&env, 150).is_empty(), "check mode wrote nothing");

    let play = env.run(&update(150, ""));
    let t = play.task("u");
    assert!(t.changed);
    assert_eq!(
        t.result["pending"],
        dry.task("u").result["pending"],
        "check mode predicted the real run"
    );
    assert_eq!(t.msg(), "VM civm with vmid 150 updated; not yet in the guest: ciuser, ipconfig0 (cloud-init reads them from its drive, which PVE rebuilds when the VM starts: restart the VM with state: restarted, or use apply_pending: reboot)");
    assert_eq!(drive_lacks(&env, 150), ["ipconfig0", "ciuser"]);

    // The same task again: nothing to write, but still not in the guest.
    let again = env.run(&update(150, ""));
    assert!(!again.task("u").changed);
    assert!(
        again
            .task("u")
            .msg()
            .contains("is up to date; not yet in the guest: ciuser, ipconfig0"),
        "{}",
        again.task("u").msg()
    );

    let reboot = env.run(&update(150, "    apply_pending: reboot\n"));
    let t = reboot.task("u");
    assert!(t.changed, "{}", t.result);
    assert_eq!(
        t.msg(),
        "VM civm with vmid 150 rebooted to bring its cloud-init changes to the guest: ciuser, ipconfig0"
    );
    assert_eq!(t.result["pending"], json!({}));
    assert!(drive_lacks(&env, 150).is_empty(), "PVE's listing shows nothing pending");

    let third = env.run(&update(150, "    apply_pending: reboot\n"));
    assert!(!third.task("u").changed, "{}", third.task("u").result);
    assert_eq!(third.task("u").msg(), "VM civm with vmid 150 is up to date");

    // vm_info config: current names what the drive lacks.
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/150/config", &[("searchdomain", "example.org")]);
    assert_eq!(status, 200, "{body}");
    let info = env.run("- name: i\n  ferrox.proxmox.proxmox_vm_info:\n    vmid: 150\n    config: current\n");
    let guest = &info.task("i").result["proxmox_vms"][0];
    assert_eq!(
        guest["cloudinit_pending"],
        json!({"searchdomain": "example.org"}),
        "{guest}"
    );
}

/// The field report's path: clone from the template and configure in the same task,
/// then re-run the task with changes. The re-run converges the clone exactly as
/// `update: true` would: pool move, cloud-init pending view, apply_pending, passwords.
#[test]
fn a_rerun_clone_task_converges_the_clone_like_update_true() {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    for pool in ["blue", "green"] {
        scenario.pools.push(PoolDef {
            poolid: pool.into(),
            ..Default::default()
        });
    }
    // PVE's pool update asks Pool.Allocate on the pool joined and on the pool left.
    for ugid in ["ansible@pve", "ansible@pve!automation"] {
        scenario.acls.push(AclDef {
            path: "/pool".into(),
            ugid: ugid.into(),
            roles: vec!["PVEPoolAdmin".into()],
            propagate: true,
        });
    }
    let env = Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    });
    let task = |pool: &str, ip: &str, extra: &str| {
        format!("- name: c\n  ferrox.proxmox.proxmox_kvm:\n    clone: base-debian13\n    name: cl1\n    node: pve1\n    full: true\n    pool: {pool}\n    ipconfig: {{ipconfig0: \"ip={ip}/24,gw=10.0.0.1\"}}\n{extra}")
    };
    let made = env.run(&task("blue", "10.0.0.5", ""));
    let vmid = made.task("c").result["vmid"].as_u64().expect("the clone's vmid");
    assert!(made.task("c").changed, "{}", made.task("c").result);
    env.run_task("POST", &format!("/nodes/pve1/qemu/{vmid}/status/start"), &[]);
    let pool_of = || {
        let listing = env.api_get("/cluster/resources?type=vm");
        listing.as_array().unwrap().iter().find(|g| g["vmid"] == vmid).unwrap()["pool"].clone()
    };
    assert_eq!(pool_of(), "blue");

    let dry = env.run_with(
        &task("green", "10.0.0.6", ""),
        &PlayOpts {
            check: true,
            diff: true,
            ..Default::default()
        },
    );
    let t = dry.task("c");
    assert!(t.changed, "{}", t.result);
    assert_eq!(
        t.result["pending"],
        json!({"ipconfig0": "gw=10.0.0.1,ip=10.0.0.6/24"}),
        "{}",
        t.result
    );
    assert_eq!(t.result["diff"]["after"]["pool"], "green", "{}", t.result);
    assert_eq!(pool_of(), "blue", "check mode moved nothing");

    let rerun = "    apply_pending: reboot\n    cipassword: Cl0ne-pw\n    update_password: always\n";
    let play = env.run(&task("green", "10.0.0.6", rerun));
    let t = play.task("c");
    assert!(t.changed, "{}", t.result);
    assert!(
        t.msg()
            .starts_with(&format!("VM cl1 with vmid {vmid} updated; rebooted to apply ")),
        "{}",
        t.msg()
    );
    assert!(t.msg().contains("ipconfig0"), "{}", t.msg());
    assert_eq!(t.result["pending"], json!({}), "{}", t.result);
    assert!(
        drive_lacks(&env, vmid).is_empty(),
        "the reboot brought the change to the guest"
    );
    assert_eq!(pool_of(), "green");
    assert_eq!(
        env.sim().state().guests[&(vmid as u32)].conf.current["cipassword"],
        "Cl0ne-pw",
        "rotated"
    );
    assert_eq!(
        env.api_get(&format!("/nodes/pve1/qemu/{vmid}/status/current"))["status"],
        "running"
    );

    let again = env.run(&task(
        "green",
        "10.0.0.6",
        "    cipassword: Cl0ne-pw\n    update_password: on_create\n",
    ));
    let t = again.task("c");
    assert!(!t.changed, "{}", t.result);
    assert_eq!(t.msg(), format!("vmid {vmid} with VM name cl1 already exists"));
}

#[test]
fn passwords_rotate_on_request_and_never_show() {
    let env = Env::start();
    running_cloud_init_vm(&env, 151);
    let task = |mode: &str| {
        format!("- name: p\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 151\n    update: true\n    cipassword: N3w-Secret-pw\n    update_password: {mode}\n")
    };
    let kept = env.run(&task("on_create"));
    assert!(
        !kept.task("p").changed,
        "on_create leaves the VM's password: {}",
        kept.task("p").result
    );
    let play = env.play_with(
        &task("always"),
        &PlayOpts {
            diff: true,
            verbosity: 3,
            ..Default::default()
        },
    );
    let t = play.task("p");
    assert!(t.changed, "{}", t.result);
    assert!(
        !play.stdout.contains("N3w-Secret-pw") && !t.result.to_string().contains("N3w-Secret-pw"),
        "secret leaked"
    );
    assert_eq!(t.result["pending"], json!({"cipassword": "**********"}));
    assert_eq!(t.result["diff"]["before"]["cipassword"], "**********");
    assert_eq!(
        env.sim().state().guests[&151].conf.current["cipassword"],
        "N3w-Secret-pw",
        "sent to PVE"
    );
}

#[test]
fn cloud_init_keys_without_a_drive_are_named_in_a_warning() {
    let env = Env::start();
    let play =
        env.run("- name: w\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    ciuser: admin\n");
    let warnings = play.task("w").result["warnings"].to_string();
    assert!(
        warnings.contains("VM 100 has no cloud-init drive, so ciuser reach no guest"),
        "{warnings}"
    );
}

/// A stopped VM with the guest agent enabled (unless `agent` is `None`), one NIC per MAC.
fn agent_vm(
    vmid: u32,
    name: &str,
    ostype: &str,
    agent: Option<&str>,
    macs: &[&str],
    spec: GuestAgentSpec,
) -> GuestSpec {
    let mut config: BTreeMap<String, Value> = BTreeMap::new();
    config.insert("name".into(), json!(name));
    config.insert("ostype".into(), json!(ostype));
    config.insert("memory".into(), json!("1024"));
    if let Some(a) = agent {
        config.insert("agent".into(), json!(a));
    }
    for (i, mac) in macs.iter().enumerate() {
        config.insert(format!("net{i}"), json!(format!("virtio={mac},bridge=vmbr0")));
    }
    GuestSpec {
        vmid,
        node: "pve1".into(),
        kind: GuestKind::Qemu,
        running: false,
        config,
        snapshots: vec![],
        agent: Some(spec),
    }
}

/// The usable addresses of each NIC as the simulator's agent serves them, by MAC.
fn served(env: &Env, vmid: u32) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let answer = env.api_get(&format!("/nodes/pve1/qemu/{vmid}/agent/network-get-interfaces"));
    let mut out = BTreeMap::new();
    for iface in answer["result"].as_array().unwrap() {
        let (mut v4, mut v6) = (vec![], vec![]);
        for a in iface["ip-addresses"].as_array().unwrap() {
            let ip = a["ip-address"].as_str().unwrap().to_string();
            let not_usable = ["127.", "::1", "fe80:", "169.254."].iter().any(|p| ip.starts_with(p));
            match a["ip-address-type"].as_str() {
                _ if not_usable => {}
                Some("ipv4") => v4.push(ip),
                _ => v6.push(ip),
            }
        }
        out.insert(iface["hardware-address"].as_str().unwrap().to_uppercase(), (v4, v6));
    }
    out
}

fn reach_cluster() -> Env {
    let mut cfg = pvesim::SimConfig::default();
    // The agent answers 1.5 s after a start: long enough that even on a loaded machine the
    // first poll after a reboot comes before the new boot's agent is up (asserted below).
    let linux = GuestAgentSpec {
        delay_ms: Some(1500),
        ..GuestAgentSpec::default()
    };
    let v6only = GuestAgentSpec {
        ipv4: false,
        ipv6: true,
        ..GuestAgentSpec::default()
    };
    let windows = GuestAgentSpec {
        address_delay_ms: Some(600),
        ..GuestAgentSpec::default()
    };
    let stuck = GuestAgentSpec {
        address_delay_ms: Some(600_000),
        ..GuestAgentSpec::default()
    };
    cfg.scenario.guests.extend([
        agent_vm(
            150,
            "reach-lin",
            "l26",
            Some("1"),
            &["BC:24:11:15:00:01"],
            linux.clone(),
        ),
        agent_vm(
            151,
            "reach-v6",
            "l26",
            Some("enabled=1"),
            &["BC:24:11:15:01:01", "BC:24:11:15:01:02"],
            v6only,
        ),
        agent_vm(152, "reach-win", "win11", Some("1"), &["BC:24:11:15:02:01"], windows),
        agent_vm(153, "no-agent", "l26", None, &["BC:24:11:15:03:01"], linux.clone()),
        agent_vm(154, "win-stuck", "win11", Some("1"), &["BC:24:11:15:04:01"], stuck),
        agent_vm(155, "denied", "l26", Some("1"), &["BC:24:11:15:05:01"], linux.clone()),
        agent_vm(156, "to-start", "l26", Some("1"), &["BC:24:11:15:06:01"], linux),
    ]);
    // On VM 155 the automation token may power the VM but not read its agent.
    cfg.scenario
        .roles
        .insert("PowerOnly".into(), vec!["VM.Audit".into(), "VM.PowerMgmt".into()]);
    for ugid in ["ansible@pve", "ansible@pve!automation"] {
        cfg.scenario.acls.push(AclDef {
            path: "/vms/155".into(),
            ugid: ugid.into(),
            roles: vec!["PowerOnly".into()],
            propagate: true,
        });
    }
    Env::start_with(cfg)
}

#[test]
fn started_vms_wait_until_their_guests_can_be_reached() {
    let env = reach_cluster();
    // The shipped play: start, wait for an address, add_host with it.
    let inventory = env.dir().join("reach-inventory.yml");
    std::fs::write(&inventory, "all:\n  children:\n    proxmox_vms:\n      hosts:\n        reach-lin:\n        reach-v6:\n        reach-win:\n").unwrap();
    let run = run_playbook(&env, &repo_root().join("playbooks/reach.yml"), &inventory, &[]);
    assert_eq!(run.rc, 0, "{}", run.stdout);
    let started = run.task("Start and wait until the guest has a usable address");
    assert_eq!(started.len(), 3, "{}", run.stdout);
    let mut primary = BTreeMap::new();
    for r in &started {
        let result = &r["result"];
        let vmid = result["vmid"].as_u64().unwrap() as u32;
        let serves = served(&env, vmid);
        for (nic, got) in result["ip_addresses"].as_object().unwrap() {
            let (v4, v6) = &serves[got["mac"].as_str().unwrap()];
            assert_eq!(
                (&got["ipv4"], &got["ipv6"]),
                (&json!(v4), &json!(v6)),
                "VM {vmid} {nic}: {result}"
            );
        }
        primary.insert(vmid, result["ip_address"].as_str().unwrap().to_string());
    }
    assert!(primary[&150].starts_with("192.168."), "{primary:?}");
    assert!(primary[&151].starts_with("2001:db8:"), "IPv6-only guest: {primary:?}");
    assert_eq!(
        started.iter().find(|r| r["result"]["vmid"] == 151).unwrap()["result"]["ip_addresses"]["net1"]["ipv6"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(
        primary[&152].starts_with("192.168."),
        "the Windows guest's APIPA address was not taken: {primary:?}"
    );
    let shown: Vec<String> = run
        .task("Show where each guest is reached")
        .iter()
        .map(|r| r["result"]["msg"].as_str().unwrap().to_string())
        .collect();
    for (host, vmid) in [("reach-lin", 150), ("reach-v6", 151), ("reach-win", 152)] {
        assert!(
            shown.contains(&format!("{host} at {}", primary[&vmid])),
            "add_host got the address: {shown:?}"
        );
    }

    // Already running: a no-op that waits; restarted: the new boot's agent; the failures.
    env.clear_requests();
    let play = env.run(
        "- name: again\n  ferrox.proxmox.proxmox_kvm: {vmid: 150, state: started, wait_for_ip: true}\n\
         - name: restart\n  ferrox.proxmox.proxmox_kvm: {vmid: 150, state: restarted, wait_for_agent: true}\n\
         - name: info\n  ferrox.proxmox.proxmox_vm_info: {vmid: 150, network: true}\n\
         - name: no agent\n  ferrox.proxmox.proxmox_kvm: {vmid: 153, state: started, wait_for_ip: true}\n  ignore_errors: true\n\
         - name: not running\n  ferrox.proxmox.proxmox_kvm: {vmid: 154, state: restarted, wait_for_ip: true}\n  ignore_errors: true\n\
         - name: denied\n  ferrox.proxmox.proxmox_kvm: {vmid: 155, state: started, wait_for_ip: true}\n  ignore_errors: true\n\
         - name: only apipa\n  ferrox.proxmox.proxmox_kvm: {vmid: 154, state: started, wait_for_ip: true, ip_family: ipv4, wait_timeout: 2}\n  ignore_errors: true\n",
    );
    let again = play.task("again");
    assert!(!again.changed, "{}", again.result);
    assert_eq!(again.result["ip_address"], primary[&150].as_str());
    assert!(
        again
            .msg()
            .starts_with(&format!("VM 150 is already running; its guest has {}", primary[&150])),
        "{}",
        again.msg()
    );

    let restart = play.task("restart");
    assert!(restart.changed, "{}", restart.result);
    assert!(
        restart.msg().starts_with("VM 150 is restarted; its guest has 192.168."),
        "{}",
        restart.msg()
    );
    let log = env.requests()["log"].as_array().unwrap().clone();
    let reboot_at = log
        .iter()
        .position(|e| e["method"] == "POST" && e["path"].as_str().unwrap().ends_with("/qemu/150/status/reboot"))
        .expect("rebooted");
    let agent_reads: Vec<u64> = log[reboot_at..]
        .iter()
        .filter(|e| e["path"].as_str().unwrap().contains("/qemu/150/agent/"))
        .map(|e| e["status"].as_u64().unwrap())
        .collect();
    assert_eq!(
        agent_reads.first(),
        Some(&500),
        "the first read after the reboot found the new boot's agent not yet up, not the old one: {agent_reads:?}"
    );
    assert_eq!(agent_reads.last(), Some(&200), "{agent_reads:?}");

    let info = &play.task("info").result["proxmox_vms"][0];
    assert_eq!(
        info["ip_addresses"], restart.result["ip_addresses"],
        "vm_info has the same shape: {info}"
    );
    assert!(
        info["network"].as_array().unwrap().len() >= 2,
        "1.6's network key kept: {info}"
    );

    let no_agent = play.task("no agent");
    assert!(no_agent.failed);
    assert!(
        no_agent
            .msg()
            .starts_with("wait_for_ip: VM 153 has no QEMU guest agent enabled (its config has no agent key)"),
        "{}",
        no_agent.msg()
    );
    assert_eq!(
        env.api_get("/nodes/pve1/qemu/153/status/current")["status"],
        "stopped",
        "failed before starting anything"
    );

    let not_running = play.task("not running");
    assert!(not_running.failed);
    assert!(
        not_running
            .msg()
            .starts_with("wait_for_ip: VM 154 is not running, so it is not restarted"),
        "{}",
        not_running.msg()
    );

    let denied = play.task("denied");
    assert!(denied.failed);
    assert!(denied.msg().contains("VM.GuestAgent.Audit or VM.GuestAgent.Unrestricted or VM.Monitor on /vms/155, which ansible@pve!automation does not have"), "{}", denied.msg());
    assert_eq!(
        env.api_get("/nodes/pve1/qemu/155/status/current")["status"],
        "stopped",
        "failed before starting anything"
    );

    let apipa = play.task("only apipa");
    assert!(
        apipa.failed && apipa.changed,
        "started, then timed out: {}",
        apipa.result
    );
    let m = apipa.msg();
    assert!(m.starts_with("wait_for_ip: VM 154's guest had only fe80::"), "{m}");
    assert!(
        m.contains(", 169.254.") && m.contains("after 2 s (wait_timeout), no usable IPv4 address"),
        "{m}"
    );
    for t in [no_agent, not_running, denied] {
        assert!(
            !t.msg().contains("wait_timeout"),
            "{} failed at once, not after wait_timeout: {}",
            t.name,
            t.msg()
        );
    }

    // Check mode: a running VM whose agent answers reports its addresses; one yet to
    // start has them known after apply.
    let dry = env.run_with(
        "- name: running\n  ferrox.proxmox.proxmox_kvm: {vmid: 150, state: started, wait_for_ip: true}\n\
         - name: to start\n  ferrox.proxmox.proxmox_kvm: {vmid: 156, state: started, wait_for_agent: true}\n\
         - name: refused\n  ferrox.proxmox.proxmox_kvm: {vmid: 155, state: started, wait_for_agent: true}\n  ignore_errors: true\n\
         - name: stopped\n  ferrox.proxmox.proxmox_kvm: {vmid: 153, state: started}\n",
        &PlayOpts { check: true, ..Default::default() },
    );
    assert_eq!(
        dry.task("running").result["ip_addresses"],
        restart.result["ip_addresses"]
    );
    let to_start = &dry.task("to start").result;
    assert!(
        to_start["changed"] == true && to_start["ip_address"].is_null(),
        "{to_start}"
    );
    assert_eq!(to_start["known_after_apply"], json!(["ip_addresses", "ip_address"]));
    assert!(
        dry.task("refused").failed,
        "check mode predicts the refusal: {}",
        dry.task("refused").result
    );
    assert!(
        dry.task("stopped").result.get("ip_addresses").is_none(),
        "no wait asked, no addresses"
    );
}
