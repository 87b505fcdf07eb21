//! proxmox_user_info, proxmox_access_acl, proxmox_pool and proxmox_pool_member in process
//! against the simulator (`Env::run`): what community.proxmox 1.6 and 2.0 got wrong
//! (a refused read taken for a missing user, `propagate` that never converges, `absent`
//! by path that keeps entries, members re-added, a storage that cannot be added), bad
//! input refused before any write, check mode and `--diff`, and the API calls each task
//! costs.

use ferrox_integration::{Env, PlayOpts};
use pvesim::state::{GroupDef, RealmDef, UserDef};
use serde_json::{json, Value};

use crate::disk_scenario::{calls, writes, SimState};

/// The default cluster plus an AD realm with the owners of the field report's VMs
/// (`jdoe@ad`, and `jdoe@pve` of the same login name), a group, and `vmadmin@pve`, who
/// may hand out rights on VMs (`PVEVMAdmin` on `/vms`) but sees no users.
pub fn access_env() -> Env {
    let mut cfg = pvesim::SimConfig::default();
    let s = &mut cfg.scenario;
    s.realms.push(RealmDef {
        realm: "ad".into(),
        kind: "ad".into(),
        case_sensitive: true,
    });
    for id in ["jdoe@ad", "jdoe@pve", "vmadmin@pve"] {
        s.users.push(UserDef {
            userid: id.into(),
            password: Some("vmadmin-pass".into()),
            enable: true,
            totp_secret: None,
            tokens: vec![],
        });
    }
    // vmadmin's token, with its user's rights (no privilege separation).
    s.users
        .last_mut()
        .expect("vmadmin@pve")
        .tokens
        .push(pvesim::state::TokenDef {
            id: "vm".into(),
            secret: VMADMIN_TOKEN_SECRET.into(),
            privsep: false,
        });
    s.groups.push(GroupDef {
        groupid: "owners".into(),
        comment: None,
        users: vec!["jdoe@ad".into()],
    });
    s.acls.push(pvesim::state::AclDef {
        path: "/vms".into(),
        ugid: "vmadmin@pve".into(),
        roles: vec!["PVEVMAdmin".into()],
        propagate: true,
    });
    Env::start_with(cfg)
}

const VMADMIN_TOKEN_SECRET: &str = "3c1f7a52-9d0e-4b6a-8e21-7f5d0c9b2a64";

/// `module_defaults` that call as `vmadmin@pve!vm`, vmadmin's API token.
fn as_vmadmin_token(env: &Env) -> PlayOpts {
    let mut auth = env.auth();
    let a = auth.as_object_mut().unwrap();
    a.insert("api_user".into(), json!("vmadmin@pve"));
    a.insert("api_token_id".into(), json!("vm"));
    a.insert("api_token_secret".into(), json!(VMADMIN_TOKEN_SECRET));
    PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    }
}

/// `module_defaults` that log in as `vmadmin@pve` with its password.
pub fn as_vmadmin(env: &Env) -> PlayOpts {
    let mut auth = env.auth();
    let a = auth.as_object_mut().unwrap();
    a.remove("api_token_id");
    a.remove("api_token_secret");
    a.insert("api_user".into(), json!("vmadmin@pve"));
    a.insert("api_password".into(), json!("vmadmin-pass"));
    PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    }
}

fn task(module: &str, options: &str) -> String {
    format!("- name: t\n  ferrox.proxmox.{module}: {options}\n")
}

fn run(env: &Env, module: &str, options: &str) -> ferrox_integration::TaskOutcome {
    env.run(&task(module, options)).task("t").clone()
}

fn run_with(env: &Env, module: &str, options: &str, opts: &PlayOpts) -> ferrox_integration::TaskOutcome {
    env.run_with(&task(module, options), opts).task("t").clone()
}

fn user_ids(result: &Value) -> Vec<String> {
    result["proxmox_users"]
        .as_array()
        .unwrap_or_else(|| panic!("no proxmox_users: {result}"))
        .iter()
        .map(|u| u["userid"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn user_info_reads_one_user_and_gives_an_empty_list_for_a_missing_one() {
    let env = access_env();
    env.clear_requests();
    let found = run(&env, "proxmox_user_info", "{userid: jdoe@ad}");
    assert!(!found.failed && !found.changed, "{}", found.result);
    eprintln!("API calls, user_info by id: {:?}", calls(&env));
    assert_eq!(
        found.result["proxmox_users"],
        json!([{"enabled": true, "expire": 0, "groups": ["owners"], "tokens": [],
            "userid": "jdoe@ad", "user": "jdoe", "domain": "ad"}])
    );
    let missing = run(&env, "proxmox_user_info", "{user: nobody, domain: ad}");
    assert!(!missing.failed, "{}", missing.result);
    assert_eq!(missing.result["proxmox_users"], json!([]));
}

#[test]
fn user_info_fails_a_refused_read_instead_of_calling_the_user_missing() {
    let env = access_env();
    let opts = as_vmadmin(&env);
    let refused = run_with(&env, "proxmox_user_info", "{userid: jdoe@ad}", &opts);
    assert!(refused.failed, "{}", refused.result);
    assert!(
        refused.msg().starts_with("Getting specific user 'jdoe@ad' failed: 403 Forbidden: Permission check failed")
            && refused.msg().contains("The user exists, but Proxmox VE shows it only to callers with User.Modify or Sys.Audit on /access/groups"),
        "{}",
        refused.msg()
    );
    assert!(
        refused.msg().contains("which vmadmin@pve does not have"),
        "{}",
        refused.msg()
    );
    // PVE looks the user up before the privilege: a missing one is still "no such user".
    let missing = run_with(&env, "proxmox_user_info", "{userid: nobody@ad}", &opts);
    assert!(!missing.failed, "{}", missing.result);
    assert_eq!(missing.result["proxmox_users"], json!([]));
    // An id PVE's `verify_username` refuses (the realm needs two characters) is bad
    // input, not a user whose existence is unknown.
    for (options, userid) in [("{userid: jdoe@a}", "jdoe@a"), ("{user: x, domain: y}", "x@y")] {
        let refused = run(&env, "proxmox_user_info", options);
        assert!(refused.failed, "{}", refused.result);
        assert!(
            refused
                .msg()
                .starts_with(&format!("userid '{userid}' is not a user ID Proxmox VE takes")),
            "{}",
            refused.msg()
        );
    }
    let bad = run(&env, "proxmox_user_info", "{userid: jdoe}");
    assert!(bad.failed);
    assert!(
        bad.msg()
            .starts_with("userid 'jdoe' is not a user ID: give it as name@realm"),
        "{}",
        bad.msg()
    );
}

/// PVE lists a ticket's own user to it, but a token is not its owner: a token without
/// User.Modify or Sys.Audit on /access/groups sees no user, its owner included, and
/// reading the owner is refused.
#[test]
fn user_info_through_a_token_without_user_rights_sees_no_user_not_even_its_owner() {
    let env = access_env();
    let opts = as_vmadmin_token(&env);
    let all = run_with(&env, "proxmox_user_info", "{}", &opts);
    assert!(!all.failed && !all.changed, "{}", all.result);
    assert_eq!(all.result["proxmox_users"], json!([]), "{}", all.result);
    let ticket = run_with(&env, "proxmox_user_info", "{}", &as_vmadmin(&env));
    assert_eq!(user_ids(&ticket.result), ["vmadmin@pve"], "a ticket sees its user");
    let owner = run_with(&env, "proxmox_user_info", "{userid: vmadmin@pve}", &opts);
    assert!(owner.failed, "{}", owner.result);
    assert!(
        owner
            .msg()
            .starts_with("Getting specific user 'vmadmin@pve' failed: 403 Forbidden: Permission check failed")
            && owner.msg().contains("which vmadmin@pve!vm does not have"),
        "{}",
        owner.msg()
    );
}

#[test]
fn user_info_user_without_domain_matches_the_login_name_in_every_realm() {
    let env = access_env();
    let both = run(&env, "proxmox_user_info", "{user: jdoe}");
    assert_eq!(user_ids(&both.result), ["jdoe@ad", "jdoe@pve"]);
    let ad = run(&env, "proxmox_user_info", "{domain: ad}");
    assert_eq!(user_ids(&ad.result), ["jdoe@ad"]);
    let all = run(&env, "proxmox_user_info", "{}");
    assert!(user_ids(&all.result).len() >= 5, "{}", all.result);
    let ansible = all.result["proxmox_users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["userid"] == "ansible@pve")
        .unwrap();
    assert_eq!(ansible["tokens"][0]["privsep"], json!(true));
    assert_eq!(ansible["groups"], json!([]));
    let exclusive = run(&env, "proxmox_user_info", "{user: jdoe, userid: jdoe@ad}");
    assert_eq!(exclusive.msg(), "parameters are mutually exclusive: user|userid");
}

#[allow(dead_code)]
fn unchanged_cluster(env: &Env, before: &Value) {
    assert_eq!(&env.sim_state(), before, "the cluster changed");
    assert_eq!(writes(&calls(env)), 0);
}

const ACL: &str = "proxmox_access_acl";

fn acl_on(env: &Env, path: &str) -> Vec<Value> {
    env.api_get("/access/acl")
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"] == path)
        .cloned()
        .collect()
}

#[test]
fn acl_propagate_converges_both_ways_with_check_mode_and_diff() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    let off = "{path: /vms/100, type: user, ugid: jdoe@ad, roleid: PVEVMUser, propagate: false}";
    let runs = crate::disk_scenario::converge_with(&env, &format!("ferrox.proxmox.{ACL}"), off, &root);
    assert_eq!(
        acl_on(&env, "/vms/100"),
        [json!({"path": "/vms/100", "type": "user", "ugid": "jdoe@ad", "roleid": "PVEVMUser", "propagate": 0})]
    );
    assert_eq!(runs.dry.result["new_acls"], runs.real.result["new_acls"]);
    assert_eq!(runs.real.result["old_acls"], json!([]));
    assert_eq!(runs.dry.result["diff"], runs.real.result["diff"]);
    assert_eq!(
        runs.real.result["diff"]["after"],
        json!({"user jdoe@ad: PVEVMUser": "no propagate"})
    );
    eprintln!("API calls, acl grant: {:?}", runs.real_calls);

    // The same entry with propagation: changed in place (1.6 never converged this way).
    let on = off.replace("propagate: false", "propagate: true");
    let runs = crate::disk_scenario::converge_with(&env, &format!("ferrox.proxmox.{ACL}"), &on, &root);
    assert!(runs.real.changed);
    assert_eq!(acl_on(&env, "/vms/100")[0]["propagate"], json!(1));
    assert_eq!(
        runs.real.result["diff"]["before"],
        json!({"user jdoe@ad: PVEVMUser": "no propagate"})
    );
    // And back again.
    let runs = crate::disk_scenario::converge_with(&env, &format!("ferrox.proxmox.{ACL}"), off, &root);
    assert!(runs.real.changed);
    assert_eq!(acl_on(&env, "/vms/100")[0]["propagate"], json!(0));

    // A no-op is one read after the login.
    env.clear_requests();
    let again = run_with(&env, ACL, off, &root);
    assert!(!again.changed && !again.failed, "{}", again.result);
    let reads: Vec<(String, u64)> = calls(&env)
        .into_iter()
        .filter(|(k, _)| !k.ends_with("/access/ticket"))
        .collect();
    assert_eq!(reads, [("GET /api2/json/access/acl".to_string(), 1)]);
}

#[test]
fn acl_absent_by_path_removes_every_entry_and_results_name_only_that_path() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    for (ty, ugid, role, prop) in [
        ("user", "jdoe@ad", "PVEVMUser", false),
        ("user", "jdoe@ad", "PVEAuditor", true),
        ("group", "owners", "PVEVMUser", true),
    ] {
        let set = run_with(
            &env,
            ACL,
            &format!("{{path: /vms/100, type: {ty}, ugid: {ugid}, roleid: {role}, propagate: {prop}}}"),
            &root,
        );
        assert!(set.changed && !set.failed, "{}", set.result);
    }
    let runs = crate::disk_scenario::converge_with(
        &env,
        &format!("ferrox.proxmox.{ACL}"),
        "{state: absent, path: /vms/100}",
        &root,
    );
    assert_eq!(
        acl_on(&env, "/vms/100"),
        Vec::<Value>::new(),
        "1.6 kept the non-propagating entry"
    );
    let old = runs.real.result["old_acls"].as_array().unwrap();
    assert_eq!(old.len(), 3);
    assert!(
        old.iter().all(|e| e["path"] == "/vms/100"),
        "only the task's path: {old:?}"
    );
    assert!(!acl_on(&env, "/").is_empty(), "other paths keep theirs");
    assert_eq!(runs.real.result["new_acls"], json!([]));
}

#[test]
fn acl_bad_input_fails_before_any_write_naming_the_option() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    let before = env.sim_state();
    env.clear_requests();
    for (options, start) in [
        (
            "{path: /vms/100, type: user, ugid: nobody@ad, roleid: PVEVMUser}",
            "ugid 'nobody@ad' (type user): Proxmox VE would refuse the ACL entry on /vms/100 (user 'nobody@ad' does not exist)",
        ),
        (
            "{path: /vms/100, type: group, ugid: nogroup, roleid: PVEVMUser}",
            "ugid 'nogroup' (type group): Proxmox VE would refuse the ACL entry on /vms/100 (group 'nogroup' does not exist)",
        ),
        (
            "{path: /vms/100, type: token, ugid: 'ansible@pve!nope', roleid: PVEVMUser}",
            "ugid 'ansible@pve!nope' (type token): Proxmox VE would refuse the ACL entry on /vms/100 (no such token 'nope' for user 'ansible@pve')",
        ),
        (
            "{path: /vms/100, type: user, ugid: jdoe@ad, roleid: Owner}",
            "roleid 'Owner': Proxmox VE would refuse it (role 'Owner' does not exist); the roles are: Administrator,",
        ),
        (
            "{path: /vms/9, type: user, ugid: jdoe@ad, roleid: PVEVMUser}",
            "path '/vms/9' is not a path Proxmox VE sets ACL entries on (invalid ACL path '/vms/9')",
        ),
        (
            "{path: /vms/100, type: user, ugid: jdoe, roleid: PVEVMUser}",
            "ugid 'jdoe' is not a user ID, name@realm",
        ),
        ("{path: /vms/100, roleid: PVEVMUser}", "state is present but all of the following are missing: type, ugid"),
    ] {
        for check in [true, false] {
            let t = run_with(&env, ACL, options, &PlayOpts { check, ..root.clone() });
            assert!(t.failed, "{options}: {}", t.result);
            assert!(t.msg().starts_with(start), "{options}:\n{}\nexpected: {start}", t.msg());
        }
    }
    assert_eq!(writes(&calls(&env)), 0, "{:?}", calls(&env));
    assert_eq!(env.sim_state(), before);

    // A caller who may not list users learns it from PVE, and nothing changes.
    let t = run_with(
        &env,
        ACL,
        "{path: /vms/100, type: user, ugid: nobody@ad, roleid: PVEVMUser}",
        &as_vmadmin(&env),
    );
    assert!(t.failed);
    assert_eq!(
        t.msg(),
        "Updating the ACL of /vms/100 failed: 500 Internal Server Error: ACL update failed: user 'nobody@ad' does not exist"
    );
    assert_eq!(env.sim_state(), before);
}

#[test]
fn acl_privileges_are_predicted_as_pve_refuses_them() {
    let env = access_env();
    let before = env.sim_state();
    env.clear_requests();
    // The automation token has VM.Allocate (so it may set entries on /vms/<id>) but not
    // every privilege of PVEVMUser (VM.Console), nor Datastore.Allocate.
    for check in [true, false] {
        let opts = PlayOpts {
            check,
            ..Default::default()
        };
        let t = run_with(
            &env,
            ACL,
            "{path: /vms/100, type: user, ugid: jdoe@ad, roleid: PVEVMUser}",
            &opts,
        );
        assert!(t.failed, "{}", t.result);
        assert!(
            t.msg().starts_with("proxmox_access_acl grant on ACL path /vms/100: needs Permissions.Modify on /vms/100 to hand out the role PVEVMUser (without it a caller may only hand out a role whose privileges it holds there itself (propagating "),
            "{}",
            t.msg()
        );
        assert!(
            t.msg().ends_with("which ansible@pve!automation does not have"),
            "{}",
            t.msg()
        );
        let t = run_with(
            &env,
            ACL,
            "{path: /storage/local, type: user, ugid: jdoe@ad, roleid: PVEAuditor}",
            &opts,
        );
        assert_eq!(
            t.msg(),
            "proxmox_access_acl grant on ACL path /storage/local: needs Permissions.Modify or Datastore.Allocate on /storage/local, which ansible@pve!automation does not have"
        );
    }
    assert_eq!(writes(&calls(&env)), 0);
    assert_eq!(env.sim_state(), before);
    // A role within its own privileges it may hand out.
    let t = run(
        &env,
        ACL,
        "{path: /vms/100, type: user, ugid: jdoe@ad, roleid: PVESimAutomation}",
    );
    assert!(t.changed && !t.failed, "{}", t.result);
}

/// The field report's build: create, then at once the owner check and the ACL, no pause.
const BUILD: &str = r#"
- name: create
  ferrox.proxmox.proxmox_kvm: {node: pve1, vmid: 101, name: app01, memory: 1024}
- name: owner exists
  ferrox.proxmox.proxmox_user_info: {userid: jdoe@ad}
  register: owner
- name: owner gets the VM
  ferrox.proxmox.proxmox_access_acl: {path: /vms/101, type: user, ugid: jdoe@ad, roleid: PVEVMUser, propagate: false}
- name: again in the same run
  ferrox.proxmox.proxmox_access_acl: {path: /vms/101, type: user, ugid: jdoe@ad, roleid: PVEVMUser, propagate: false}
- name: pool member, 1.6 shape
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, member: app01}
- name: pool member, 2.0 shape
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, members: [{vm: app01}]}
"#;

#[test]
fn acl_right_after_a_create_needs_no_pause_and_a_check_run_plans_it() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    let before = env.sim_state();
    env.clear_requests();
    let dry = env.run_with(
        BUILD,
        &PlayOpts {
            check: true,
            diff: true,
            ..root.clone()
        },
    );
    assert_eq!(writes(&calls(&env)), 0, "{:?}", calls(&env));
    assert_eq!(env.sim_state(), before);
    let acl = dry.task("owner gets the VM");
    assert!(acl.changed && !acl.failed, "{}", acl.result);
    assert_eq!(
        acl.result["diff"]["after"],
        json!({"user jdoe@ad: PVEVMUser": "no propagate"})
    );
    let again = dry.task("again in the same run");
    assert!(
        !again.changed,
        "the plan holds the first task's entry: {}",
        again.result
    );

    let real = env.run_with(BUILD, &root);
    for name in ["create", "owner exists", "owner gets the VM"] {
        let t = real.task(name);
        assert!(
            !t.failed && (name == "owner exists" || t.changed),
            "{name}: {}",
            t.result
        );
    }
    assert_eq!(
        real.task("owner exists").result["proxmox_users"][0]["userid"],
        "jdoe@ad"
    );
    assert!(!real.task("again in the same run").changed);
    assert!(real.task("pool member, 1.6 shape").changed);
    assert!(!real.task("pool member, 2.0 shape").changed);
    assert_eq!(pool_members(&env, "prod"), ["qemu/101"]);
    assert_eq!(
        acl_on(&env, "/vms/101"),
        [json!({"path": "/vms/101", "type": "user", "ugid": "jdoe@ad", "roleid": "PVEVMUser", "propagate": 0})]
    );
}

const MEMBER: &str = "proxmox_pool_member";

fn pool_members(env: &Env, poolid: &str) -> Vec<String> {
    let data = env.api_get(&format!("/pools/{poolid}"));
    let mut out: Vec<String> = data["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

fn converge_root(env: &Env, module: &str, options: &str) -> crate::disk_scenario::Runs {
    crate::disk_scenario::converge_with(
        env,
        &format!("ferrox.proxmox.{module}"),
        options,
        &crate::disk_scenario::as_root(env),
    )
}

#[test]
fn pool_member_1_6_shape_adds_a_vm_by_name_and_a_storage_once() {
    let env = access_env();
    let runs = converge_root(&env, MEMBER, "{poolid: prod, member: web01}");
    assert_eq!(runs.real.msg(), "New member web01 added to the pool prod");
    assert_eq!(runs.again.msg(), "VM web01 is already part of the pool prod");
    assert_eq!(runs.real.result["member"], "web01");
    assert_eq!(runs.real.result["diff"]["after"], json!({"members": [100]}));
    eprintln!("API calls, pool member add: {:?}", runs.real_calls);
    // 1.6.0 could not add a storage at all (a TypeError, reported as a failure to add).
    let runs = converge_root(&env, MEMBER, "{poolid: prod, member: vmdata, type: storage}");
    assert_eq!(runs.real.msg(), "New member vmdata added to the pool prod");
    assert_eq!(runs.again.msg(), "Member vmdata is already part of the pool prod");
    assert_eq!(pool_members(&env, "prod"), ["qemu/100", "storage/pve1/vmdata"]);
    let runs = converge_root(&env, MEMBER, "{poolid: prod, member: 100, state: absent}");
    assert_eq!(runs.real.msg(), "Member 100 deleted from the pool prod");
    assert_eq!(runs.again.msg(), "VM 100 is not part of the pool prod");
}

#[test]
fn pool_member_2_0_shape_keeps_existing_members_and_reconciles_exclusively() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    env.api("PUT", "/pools", &[("poolid", "prod"), ("vms", "100")]);
    env.clear_requests();
    // 2.0.0 compared "100" with 100, added VM 100 again and failed.
    let same = run_with(&env, MEMBER, "{poolid: prod, members: [{vm: 100}, {vm: web01}]}", &root);
    assert!(!same.changed && !same.failed, "{}", same.result);
    assert_eq!(same.msg(), "Pool prod membership already up-to-date");
    assert_eq!(same.result["members"], json!([{"vm": "100"}]));
    let reads: Vec<(String, u64)> = calls(&env)
        .into_iter()
        .filter(|(k, _)| !k.ends_with("/access/ticket"))
        .collect();
    eprintln!("API calls, pool member no-op: {reads:?}");
    assert_eq!(writes(&reads), 0);
    let runs = converge_root(
        &env,
        MEMBER,
        "{poolid: prod, members: [{storage: local}], exclusive: true}",
    );
    assert_eq!(runs.real.msg(), "Pool prod membership updated");
    assert_eq!(
        runs.real.result["changes"],
        json!(["add storage local", "remove VM 100"])
    );
    assert_eq!(runs.real.result["members"], json!([{"storage": "local"}]));
    assert_eq!(pool_members(&env, "prod"), ["storage/pve1/local"]);
}

#[test]
fn pool_member_moves_a_vm_from_another_pool_only_with_allow_move() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    env.api("POST", "/pools", &[("poolid", "dev")]);
    env.api("PUT", "/pools", &[("poolid", "dev"), ("vms", "100")]);
    let before = env.sim_state();
    env.clear_requests();
    for check in [true, false] {
        let t = run_with(
            &env,
            MEMBER,
            "{poolid: prod, members: [{vm: 100}]}",
            &PlayOpts { check, ..root.clone() },
        );
        assert!(t.failed, "{}", t.result);
        assert!(t.msg().starts_with("VM 100 is in pool 'dev'"), "{}", t.msg());
        assert!(t.msg().ends_with("set allow_move: true to move it"), "{}", t.msg());
    }
    assert_eq!(writes(&calls(&env)), 0);
    assert_eq!(env.sim_state(), before);
    let runs = converge_root(&env, MEMBER, "{poolid: prod, members: [{vm: 100}], allow_move: true}");
    assert_eq!(runs.real.result["changes"], json!(["move VM 100 from pool dev"]));
    assert_eq!(pool_members(&env, "prod"), ["qemu/100"]);
    assert_eq!(pool_members(&env, "dev"), Vec::<String>::new());
}

#[test]
fn pool_member_bad_input_fails_before_any_write() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    let before = env.sim_state();
    env.clear_requests();
    for (options, start) in [
        (
            "{poolid: prod, member: 100, members: [{vm: 100}]}",
            "parameters are mutually exclusive: member|members",
        ),
        ("{poolid: prod}", "one of the following is required: member, members"),
        (
            "{poolid: nope, member: 100}",
            "poolid 'nope': pool 'nope' does not exist",
        ),
        (
            "{poolid: prod, member: 4242}",
            "VM with vmid 4242 does not exist in cluster",
        ),
        ("{poolid: prod, member: ghost}", "No VM with name ghost found"),
        (
            "{poolid: prod, member: nfs9, type: storage}",
            "Storage nfs9 doesn't exist in the cluster",
        ),
        ("{poolid: prod, members: [{vm: 100, storage: local}]}", "members[0] ("),
    ] {
        for check in [true, false] {
            let t = run_with(&env, MEMBER, options, &PlayOpts { check, ..root.clone() });
            assert!(t.failed, "{options}: {}", t.result);
            assert!(t.msg().starts_with(start), "{options}:\n{}\nexpected: {start}", t.msg());
        }
    }
    // A missing privilege, predicted: the automation token has Pool.Audit, not Pool.Allocate.
    for check in [true, false] {
        let t = run_with(
            &env,
            MEMBER,
            "{poolid: prod, member: 100}",
            &PlayOpts {
                check,
                ..Default::default()
            },
        );
        assert_eq!(
            t.msg(),
            "proxmox_pool_member pool on pool prod: needs Pool.Allocate on /pool/prod, which ansible@pve!automation does not have"
        );
    }
    assert_eq!(writes(&calls(&env)), 0, "{:?}", calls(&env));
    assert_eq!(env.sim_state(), before);
}

#[test]
fn pool_member_before_pve_8_1_uses_the_path_form() {
    let mut cfg = pvesim::SimConfig::default();
    cfg.scenario.pve_version = Some("8.0.9".into());
    let env = Env::start_with(cfg);
    let runs = converge_root(&env, MEMBER, "{poolid: prod, members: [{vm: 100}, {storage: local}]}");
    assert!(runs.real.changed);
    let paths: Vec<&String> = runs.real_calls.iter().map(|(k, _)| k).collect();
    assert!(paths.iter().any(|k| *k == "PUT /api2/json/pools/prod"), "{paths:?}");
    assert!(
        !paths
            .iter()
            .any(|k| k.starts_with("GET /api2/json/pools?") || *k == "PUT /api2/json/pools"),
        "{paths:?}"
    );
    assert_eq!(pool_members(&env, "prod"), ["qemu/100", "storage/pve1/local"]);
}

const POOL: &str = "proxmox_pool";

#[test]
fn pool_is_made_described_and_removed_only_when_empty() {
    let env = access_env();
    let runs = converge_root(&env, POOL, "{poolid: team, comment: Team VMs}");
    assert_eq!(runs.real.msg(), "Pool team successfully created");
    assert_eq!(runs.again.msg(), "Pool team already exists");
    assert_eq!(
        runs.real.result["diff"]["after"],
        json!({"state": "present", "comment": "Team VMs"})
    );
    // The comment converges (1.6 ignored it once the pool existed).
    let runs = converge_root(&env, POOL, "{poolid: team, comment: Team web VMs}");
    assert_eq!(runs.real.msg(), "Pool team comment updated");
    assert_eq!(env.api_get("/pools?poolid=team")[0]["comment"], "Team web VMs");
    eprintln!("API calls, pool comment: {:?}", runs.real_calls);

    // Members and child pools are named, before any write.
    let root = crate::disk_scenario::as_root(&env);
    env.api(
        "PUT",
        "/pools",
        &[("poolid", "team"), ("vms", "100"), ("storage", "local")],
    );
    env.api("POST", "/pools", &[("poolid", "team/web")]);
    let before = env.sim_state();
    for check in [true, false] {
        let t = run_with(
            &env,
            POOL,
            "{poolid: team, state: absent}",
            &PlayOpts { check, ..root.clone() },
        );
        assert_eq!(
            t.msg(),
            "Can't delete pool team with child pools (team/web). Please delete them first."
        );
    }
    assert_eq!(env.sim_state(), before);
    let t = run_with(&env, POOL, "{poolid: team/web, state: absent}", &root);
    assert!(t.changed && !t.failed, "{}", t.result);
    let before = env.sim_state();
    let t = run_with(&env, POOL, "{poolid: team, state: absent}", &root);
    assert_eq!(
        t.msg(),
        "Can't delete pool team with members (VM 100, storage local). Please remove members from pool first."
    );
    assert_eq!(env.sim_state(), before);
    env.api(
        "PUT",
        "/pools",
        &[
            ("poolid", "team"),
            ("vms", "100"),
            ("storage", "local"),
            ("delete", "1"),
        ],
    );
    let runs = converge_root(&env, POOL, "{poolid: team, state: absent}");
    assert_eq!(runs.real.msg(), "Pool team successfully deleted");
    assert_eq!(runs.again.msg(), "Pool team doesn't exist");
    // A missing privilege, predicted: the automation token has no Pool.Allocate.
    let t = run(&env, POOL, "{poolid: team}");
    assert_eq!(
        t.msg(),
        "proxmox_pool create on pool team: needs Pool.Allocate on /pool/team, which ansible@pve!automation does not have"
    );
}

#[test]
fn pool_before_pve_8_1_uses_the_path_form() {
    let mut cfg = pvesim::SimConfig::default();
    cfg.scenario.pve_version = Some("8.0.9".into());
    let env = Env::start_with(cfg);
    let runs = converge_root(&env, POOL, "{poolid: prod, comment: Prod}");
    let paths: Vec<&String> = runs.real_calls.iter().map(|(k, _)| k).collect();
    assert!(paths.iter().any(|k| *k == "PUT /api2/json/pools/prod"), "{paths:?}");
    let runs = converge_root(&env, POOL, "{poolid: prod, state: absent}");
    assert_eq!(runs.real.msg(), "Pool prod successfully deleted");
}

/// API calls (after the login) and time per task, no-op and change, for
/// `bench/results/access-and-pools.md`; fails when a task needs more calls than there.
#[test]
fn access_and_pool_tasks_cost_the_calls_the_bench_lists() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    let cases: [(&str, &str, &str, u64); 10] = [
        ("user_info by userid", "proxmox_user_info", "{userid: jdoe@ad}", 1),
        ("user_info listing", "proxmox_user_info", "{domain: ad}", 1),
        (
            "acl grant (change)",
            ACL,
            "{path: /vms/100, type: user, ugid: jdoe@ad, roleid: PVEVMUser}",
            5,
        ),
        (
            "acl grant (no-op)",
            ACL,
            "{path: /vms/100, type: user, ugid: jdoe@ad, roleid: PVEVMUser}",
            1,
        ),
        ("acl absent by path (change)", ACL, "{path: /vms/100, state: absent}", 4),
        ("pool create (change)", POOL, "{poolid: team, comment: Team}", 2),
        ("pool create (no-op)", POOL, "{poolid: team, comment: Team}", 1),
        ("pool member add (change)", MEMBER, "{poolid: team, member: 100}", 3),
        ("pool member add (no-op)", MEMBER, "{poolid: team, member: 100}", 2),
        (
            "pool member remove (change)",
            MEMBER,
            "{poolid: team, member: 100, state: absent}",
            3,
        ),
    ];
    for (what, module, options, most) in cases {
        env.clear_requests();
        let started = std::time::Instant::now();
        let t = run_with(&env, module, options, &root);
        let took = started.elapsed();
        assert!(!t.failed, "{what}: {}", t.result);
        assert_eq!(t.changed, what.ends_with("(change)"), "{what}: {}", t.result);
        let used: Vec<(String, u64)> = calls(&env)
            .into_iter()
            .filter(|(k, _)| !k.ends_with("/access/ticket"))
            .collect();
        let n: u64 = used.iter().map(|(_, n)| n).sum();
        eprintln!("| {what} | {n} | {} ms | {used:?}", took.as_millis());
        assert!(n <= most, "{what}: {n} calls, the bench lists {most}: {used:?}");
    }
}

#[test]
fn a_check_run_sees_the_pool_an_earlier_task_makes_or_removes() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    let before = env.sim_state();
    let play = env.run_with(
        r#"
- name: make
  ferrox.proxmox.proxmox_pool: {poolid: team, comment: Team}
- name: join
  ferrox.proxmox.proxmox_pool_member: {poolid: team, member: 100}
- name: describe again
  ferrox.proxmox.proxmox_pool: {poolid: team, comment: Team}
- name: drop prod
  ferrox.proxmox.proxmox_pool: {poolid: prod, state: absent}
- name: join prod
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, member: 100}
  ignore_errors: true
"#,
        &PlayOpts { check: true, ..root },
    );
    assert!(play.task("make").changed);
    let join = play.task("join");
    assert!(
        join.changed && !join.failed,
        "the planned pool is there: {}",
        join.result
    );
    assert!(
        !play.task("describe again").changed,
        "{}",
        play.task("describe again").result
    );
    assert!(play.task("drop prod").changed);
    let gone = play.task("join prod");
    assert!(gone.failed);
    assert!(
        gone.msg().starts_with("poolid 'prod': pool 'prod' does not exist"),
        "{}",
        gone.msg()
    );
    assert_eq!(env.sim_state(), before, "a check run changes nothing");
}

#[test]
fn a_check_run_sees_a_vm_created_into_the_pool_as_a_member() {
    let env = access_env();
    let root = crate::disk_scenario::as_root(&env);
    let play = env.run_with(
        r#"
- name: create into prod
  ferrox.proxmox.proxmox_kvm: {node: pve1, vmid: 102, name: app02, pool: prod}
- name: member
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, members: [{vm: app02}]}
- name: exclusive without it
  ferrox.proxmox.proxmox_pool_member: {poolid: prod, members: [{storage: local}], exclusive: true}
"#,
        &PlayOpts { check: true, ..root },
    );
    assert!(play.task("create into prod").changed);
    let member = play.task("member");
    assert!(
        !member.changed && !member.failed,
        "the create put it there: {}",
        member.result
    );
    let exclusive = play.task("exclusive without it");
    assert_eq!(
        exclusive.result["changes"],
        json!(["add storage local", "remove VM 102"])
    );
    assert_eq!(writes(&calls(&env)), 0);
}
