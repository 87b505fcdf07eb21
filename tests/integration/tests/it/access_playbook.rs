//! The field report's build, moved over to ferrox.proxmox and run by a real
//! `ansible-playbook` from a controller venv without proxmoxer or requests: the VM's
//! create, the owner check (`register` + `fail`), the owner's role on the new VM with no
//! pause before it, and the pool membership in both of community.proxmox's option shapes.
//! `--check --diff` first (it shows the ACL and the membership of the planned VM and
//! writes nothing), then the real run, then a rerun that changes nothing.

use ferrox_integration::{repo_root, PlayOpts};
use serde_json::json;

use crate::access::access_env;
use crate::disk_scenario::as_root;

const FIELD_REPORT: &str = r#"
- name: Create the VM
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    vmid: "{{ vmid }}"
    name: "{{ vm_name }}"
    memory: 1024
- name: Check that the owner exists in Proxmox
  ferrox.proxmox.proxmox_user_info:
    userid: "{{ owner }}@ad"
  register: owner_info
- name: Fail if user doesn't exist
  ansible.builtin.fail:
    msg: "The owner {{ owner }}@ad does not exist in Proxmox"
  when: owner_info.proxmox_users | length == 0
- name: Give the owner access to the VM
  ferrox.proxmox.proxmox_access_acl:
    path: "/vms/{{ vmid }}"
    type: user
    ugid: "{{ owner }}@ad"
    roleid: "{{ owner_role }}"
    propagate: false
- name: Add the VM to its pool
  ferrox.proxmox.proxmox_pool_member:
    poolid: "{{ pool }}"
    member: "{{ vmid }}"
- name: Add the VM to its pool (2.0 shape)
  ferrox.proxmox.proxmox_pool_member:
    poolid: "{{ pool }}"
    members:
      - vm: "{{ vm_name }}"
"#;

#[test]
fn the_field_reports_build_runs_checked_then_real_then_unchanged() {
    let venv = repo_root().join(".venv-2.17/bin");
    let python = venv.join("python3");
    let has = |module: &str| {
        std::process::Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(true)
    };
    assert!(
        !has("proxmoxer") && !has("requests"),
        "the controller venv {} must not have proxmoxer or requests",
        venv.display()
    );
    let env = access_env();
    let opts = PlayOpts {
        ansible: Some(venv.join("ansible-playbook")),
        vars: json!({"vmid": 101, "vm_name": "app01", "owner": "jdoe", "owner_role": "PVEVMUser", "pool": "prod"}),
        ..as_root(&env)
    };
    let before = env.api_get("/access/acl");
    env.clear_requests();
    let dry = env.play_with(
        FIELD_REPORT,
        &PlayOpts {
            check: true,
            diff: true,
            ..opts.clone()
        },
    );
    dry.assert_ok();
    assert_eq!(env.writes(), Vec::<String>::new(), "a check run writes nothing");
    assert_eq!(env.api_get("/access/acl"), before);
    let acl = dry.task("Give the owner access to the VM");
    assert!(acl.changed, "{}", acl.result);
    assert!(
        dry.stdout
            .contains("+    \"user jdoe@ad: PVEVMUser\": \"no propagate\""),
        "--diff shows the entry:\n{}",
        dry.stdout
    );
    assert!(dry.task("Add the VM to its pool").changed);
    assert!(
        !dry.task("Add the VM to its pool (2.0 shape)").changed,
        "the check run's plan holds the membership"
    );

    let real = env.play_with(FIELD_REPORT, &opts);
    real.assert_ok();
    assert_eq!(
        real.recap("changed"),
        Some(3),
        "create, ACL, pool member\n{}",
        real.transcript()
    );
    assert_eq!(
        env.api_get("/access/acl")
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["path"] == "/vms/101")
            .cloned()
            .collect::<Vec<_>>(),
        [json!({"path": "/vms/101", "type": "user", "ugid": "jdoe@ad", "roleid": "PVEVMUser", "propagate": 0})]
    );
    assert_eq!(env.api_get("/pools/prod")["members"][0]["vmid"], 101);

    let again = env.play_with(FIELD_REPORT, &opts);
    again.assert_ok();
    assert_eq!(again.recap("changed"), Some(0), "{}", again.transcript());
}
