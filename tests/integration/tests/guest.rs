//! What reaches the guest: cloud-init changes to a running VM reported until the
//! cloud-init drive has them (and brought there by `apply_pending: reboot`), password
//! rotation, and starting a VM that waits until the guest can be reached.

use ferrox_integration::{Env, PlayOpts};
use serde_json::json;

/// A running clone of the template with a cloud-init drive, user `debian`.
fn running_cloud_init_vm(env: &Env, vmid: u64) {
    let id = vmid.to_string();
    env.run_task("POST", "/nodes/pve1/qemu/9000/clone", &[("newid", &id), ("name", "civm")]);
    let (status, body) = env.api("PUT", &format!("/nodes/pve1/qemu/{vmid}/config"), &[("ciuser", "debian"), ("cipassword", "first-pw")]);
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

    let dry = env.play_with(&update(150, ""), &PlayOpts { check: true, diff: true, ..Default::default() });
    let t = dry.task("u");
    assert!(t.changed, "{}", t.result);
    assert_eq!(t.result["pending"], json!({"ciuser": "admin", "ipconfig0": "ip=192.0.2.50/24,gw=192.0.2.1"}));
    assert!(t.msg().contains("not yet in the guest: ciuser, ipconfig0"), "{}", t.msg());
    assert_eq!(t.result["diff"]["after"]["ciuser"], "admin");
    assert!(drive_lacks(&env, 150).is_empty(), "check mode wrote nothing");

    let play = env.play(&update(150, ""));
    let t = play.task("u");
    assert!(t.changed);
    assert_eq!(t.result["pending"], dry.task("u").result["pending"], "check mode predicted the real run");
    assert_eq!(t.msg(), "VM civm with vmid 150 updated; not yet in the guest: ciuser, ipconfig0 (cloud-init reads them from its drive, which PVE rebuilds when the VM starts: restart the VM with state: restarted, or use apply_pending: reboot)");
    assert_eq!(drive_lacks(&env, 150), ["ipconfig0", "ciuser"]);

    // The same task again: nothing to write, but still not in the guest.
    let again = env.play(&update(150, ""));
    assert!(!again.task("u").changed);
    assert!(again.task("u").msg().contains("is up to date; not yet in the guest: ciuser, ipconfig0"), "{}", again.task("u").msg());

    let reboot = env.play(&update(150, "    apply_pending: reboot\n"));
    let t = reboot.task("u");
    assert!(t.changed, "{}", t.result);
    assert_eq!(t.msg(), "VM civm with vmid 150 rebooted to bring its cloud-init changes to the guest: ciuser, ipconfig0");
    assert_eq!(t.result["pending"], json!({}));
    assert!(drive_lacks(&env, 150).is_empty(), "PVE's listing shows nothing pending");

    let third = env.play(&update(150, "    apply_pending: reboot\n"));
    assert!(!third.task("u").changed, "{}", third.task("u").result);
    assert_eq!(third.task("u").msg(), "VM civm with vmid 150 is up to date");

    // vm_info config: current names what the drive lacks.
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/150/config", &[("searchdomain", "example.org")]);
    assert_eq!(status, 200, "{body}");
    let info = env.play("- name: i\n  ferrox.proxmox.proxmox_vm_info:\n    vmid: 150\n    config: current\n");
    let guest = &info.task("i").result["proxmox_vms"][0];
    assert_eq!(guest["cloudinit_pending"], json!({"searchdomain": "example.org"}), "{guest}");
}

#[test]
fn passwords_rotate_on_request_and_never_show() {
    let env = Env::start();
    running_cloud_init_vm(&env, 151);
    let task = |mode: &str| {
        format!("- name: p\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 151\n    update: true\n    cipassword: N3w-Secret-pw\n    update_password: {mode}\n")
    };
    let kept = env.play(&task("on_create"));
    assert!(!kept.task("p").changed, "on_create leaves the VM's password: {}", kept.task("p").result);
    let play = env.play_with(&task("always"), &PlayOpts { diff: true, verbosity: 3, ..Default::default() });
    let t = play.task("p");
    assert!(t.changed, "{}", t.result);
    assert!(!play.stdout.contains("N3w-Secret-pw") && !t.result.to_string().contains("N3w-Secret-pw"), "secret leaked");
    assert_eq!(t.result["pending"], json!({"cipassword": "**********"}));
    assert_eq!(t.result["diff"]["before"]["cipassword"], "**********");
    assert_eq!(env.sim().state().guests[&151].conf.current["cipassword"], "N3w-Secret-pw", "sent to PVE");
}

#[test]
fn cloud_init_keys_without_a_drive_are_named_in_a_warning() {
    let env = Env::start();
    let play = env.play("- name: w\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    update: true\n    ciuser: admin\n");
    let warnings = play.task("w").result["warnings"].to_string();
    assert!(warnings.contains("VM 100 has no cloud-init drive, so ciuser reach no guest"), "{warnings}");
}
