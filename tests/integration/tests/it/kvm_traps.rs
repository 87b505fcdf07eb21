//! The traps users know from community.proxmox, run in process: AnsibleModule's
//! message stays first and the option's declared hint says what to do instead; the
//! traps that are not errors warn.

use ferrox_integration::Env;

const KVM: &str = "ferrox.proxmox.proxmox_kvm";

#[test]
fn numa_true_keeps_ansible_wording_and_names_numa_enabled() {
    let env = Env::start();
    let play = env.run(&format!(
        "- name: t\n  {KVM}: {{vmid: 100, numa: true}}\n  ignore_errors: true\n"
    ));
    let t = play.task("t");
    assert!(t.failed, "{}", t.result);
    // AnsibleModule's words first (they differ between ansible-core versions), the hint last.
    assert!(t.msg().starts_with("argument 'numa' is of type "), "{}", t.msg());
    assert!(
        t.msg().contains(" and we were unable to convert to dict: "),
        "{}",
        t.msg()
    );
    assert!(
        t.msg().ends_with("to turn NUMA on, use numa_enabled: true."),
        "{}",
        t.msg()
    );
}

#[test]
fn legacy_boot_update_unsafe_and_network_boot_without_rng_warn() {
    let env = Env::start();
    let play = env.run(&format!(
        "- name: t\n  {KVM}: {{vmid: 100, update: true, update_unsafe: true, bios: ovmf, boot: cdn}}\n  check_mode: true\n"
    ));
    let t = play.task("t");
    assert!(!t.failed, "{}", t.result);
    let warnings = t.warnings();
    for expected in [
        "boot in legacy letters (c: the bootdisk, d: CD-ROM, n: network) is deprecated",
        "Network boot of a UEFI VM (bios: ovmf) needs a random number generator",
        "update_unsafe is no longer needed",
    ] {
        assert!(
            warnings.iter().any(|w| w.starts_with(expected)),
            "{expected:?} not in {warnings:?}"
        );
    }

    let quiet = env.run(&format!(
        "- name: t\n  {KVM}: {{vmid: 100, update: true, bios: ovmf, boot: 'order=scsi0;net0', rng0: source=/dev/urandom}}\n  check_mode: true\n"
    ));
    let warnings = quiet.task("t").warnings();
    assert!(
        !warnings
            .iter()
            .any(|w| w.contains("legacy letters") || w.contains("random number generator")),
        "{warnings:?}"
    );
}
