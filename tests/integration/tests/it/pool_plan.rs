//! A check run of pool tasks predicts what the real run does: the members
//! proxmox_pool_member adds or removes, VMs and storages, are what a later
//! proxmox_pool deletion of the same run sees (`Env::run`, in process, against the
//! simulator: the same play in check mode, then for real, task by task).

use ferrox_integration::{Env, Play, PlayOpts};
use serde_json::json;

use crate::access::access_env;
use crate::disk_scenario::{as_root, calls, writes, SimState};

/// Each task's name, `changed`, `failed` and message.
fn outcomes(play: &Play) -> Vec<(String, bool, bool, String)> {
    play.results
        .iter()
        .map(|t| (t.name.clone(), t.changed, t.failed, t.msg().to_string()))
        .collect()
}

/// Runs `play` in check mode, then for real, and returns both (the check run wrote
/// nothing).
fn checked_then_real(env: &Env, play: &str) -> (Play, Play) {
    let root = as_root(env);
    let before = env.sim_state();
    env.clear_requests();
    let dry = env.run_with(
        play,
        &PlayOpts {
            check: true,
            ..root.clone()
        },
    );
    assert_eq!(writes(&calls(env)), 0, "a check run writes nothing");
    assert_eq!(env.sim_state(), before, "a check run changes nothing");
    let real = env.run_with(play, &root);
    (dry, real)
}

#[test]
fn a_check_run_sees_members_removed_before_the_pool_is_deleted() {
    let env = access_env();
    env.api(
        "PUT",
        "/pools",
        &[("poolid", "prod"), ("vms", "100"), ("storage", "local")],
    );
    let play = r#"
- name: take the VM out
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, member: 100, state: absent}
- name: take the storage out
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, members: [{storage: vmdata}], exclusive: true}
- name: still a member
  ferrox.proxmox.proxmox_pool: {poolid: prod, state: absent}
  ignore_errors: true
- name: the last one out
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, members: [{storage: vmdata}], state: absent}
- name: delete
  ferrox.proxmox.proxmox_pool: {poolid: prod, state: absent}
- name: gone
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, member: 100}
  ignore_errors: true
"#;
    let (dry, real) = checked_then_real(&env, play);
    assert_eq!(outcomes(&dry), outcomes(&real));
    let still = real.task("still a member");
    assert_eq!(
        still.msg(),
        "Can't delete pool prod with members (storage vmdata). Please remove members from pool first."
    );
    let delete = real.task("delete");
    assert!(delete.changed && !delete.failed, "{}", delete.result);
    assert!(real
        .task("gone")
        .msg()
        .starts_with("poolid 'prod': pool 'prod' does not exist"));
}

#[test]
fn a_check_run_sees_members_added_before_the_pool_is_deleted() {
    let env = access_env();
    let play = r#"
- name: add the VM
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, member: 100}
- name: add a storage
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, member: local, type: storage}
- name: delete
  ferrox.proxmox.proxmox_pool: {poolid: prod, state: absent}
  ignore_errors: true
- name: a new pool
  ferrox.proxmox.proxmox_pool: {poolid: prod/web}
- name: delete again
  ferrox.proxmox.proxmox_pool: {poolid: prod, state: absent}
  ignore_errors: true
"#;
    let (dry, real) = checked_then_real(&env, play);
    assert_eq!(outcomes(&dry), outcomes(&real));
    assert_eq!(
        real.task("delete").msg(),
        "Can't delete pool prod with members (VM 100, storage local). Please remove members from pool first."
    );
    assert_eq!(
        real.task("delete again").msg(),
        "Can't delete pool prod with child pools (prod/web). Please delete them first."
    );
    assert_eq!(
        env.api_get("/pools?poolid=prod")[0]["members"]
            .as_array()
            .map(|m| m.len()),
        Some(2)
    );
    assert_eq!(
        env.api_get("/pools")
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["poolid"] == json!("prod/web"))
            .count(),
        1
    );
}
