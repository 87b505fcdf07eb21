//! Small input rules that hold the same in every module: an int past 64 bits fails
//! (instead of being clamped to the largest integer), `timeout` below 1 and a vmid
//! past PVE's range are refused with AnsibleModule's "value of X must be" wording,
//! and `tpmstate0.storage` may not be empty. Nothing reaches PVE.

use ferrox_integration::Env;

fn failure(env: &Env, module: &str, args: &str) -> String {
    let play = env.run(&format!("- name: t\n  ferrox.proxmox.{module}:\n{args}"));
    let t = play.task("t");
    assert!(t.failed, "{module} accepted {args}: {}", play.transcript());
    t.msg().to_string()
}

#[test]
fn bad_numbers_fail_alike_in_every_module() {
    let env = Env::start();
    env.clear_requests();
    for (module, extra) in [
        ("proxmox_kvm", "    node: pve1\n"),
        ("proxmox_disk", "    disk: scsi1\n"),
        ("proxmox_nic", "    interface: net1\n"),
        ("proxmox_vm_info", ""),
    ] {
        let msg = failure(&env, module, &format!("    vmid: 1e300\n{extra}"));
        assert!(
            msg.starts_with(
                "argument 'vmid' is of type str and we were unable to convert to int: '1e300' is out of range"
            ),
            "{module}: {msg}"
        );
        let msg = failure(&env, module, &format!("    vmid: 1000000000\n{extra}"));
        assert_eq!(
            msg, "value of vmid must be between 0 and 999999999, got: 1000000000",
            "{module}"
        );
    }
    for (module, extra) in [
        ("proxmox_kvm", "    node: pve1\n    state: started\n"),
        ("proxmox_disk", "    disk: scsi1\n    storage: local-lvm\n    size: 1\n"),
    ] {
        let msg = failure(&env, module, &format!("    vmid: 100\n    timeout: 0\n{extra}"));
        assert_eq!(msg, "value of timeout must be at least 1, got: 0", "{module}");
    }
    let msg = failure(
        &env,
        "proxmox_kvm",
        "    vmid: 180\n    node: pve1\n    tpmstate0:\n      storage: ''\n",
    );
    assert!(
        msg.contains("tpmstate0.storage is required: name the storage to allocate the TPM state on"),
        "{msg}"
    );
    let reqs = env.requests();
    let writes: Vec<&String> = reqs["counts"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !k.starts_with("GET "))
        .collect();
    assert!(
        writes.iter().all(|k| k.contains("/access/ticket")),
        "nothing was written: {writes:?}"
    );
    assert!(reqs["counts"]
        .get("GET /api2/json/nodes/pve1/qemu/180/config")
        .is_none());
}
